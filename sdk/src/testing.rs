//! An in-memory [`Snapshot`] for unit-testing a producer's logic natively.
//!
//! It matches pathspecs with the host's own implementation (`discern-pathspec`: git's
//! pathspecs read with `:(glob)` magic), so a producer's unit tests list what the host lists.
//! A pathspec the host refuses panics here with the host's message, as the host stops the run.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeMap;

use discern_pathspec::Pathspec;

use crate::{Entry, Snapshot};

#[derive(Debug, Default, Clone)]
pub struct MemorySnapshot {
    files: BTreeMap<String, Vec<u8>>,
    artifacts: BTreeMap<String, Vec<u8>>,
}

impl MemorySnapshot {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn file(mut self, path: &str, content: impl Into<Vec<u8>>) -> Self {
        self.files.insert(path.to_owned(), content.into());
        self
    }

    pub fn artifact(mut self, name: &str, content: impl Into<Vec<u8>>) -> Self {
        self.artifacts.insert(name.to_owned(), content.into());
        self
    }
}

impl Snapshot for MemorySnapshot {
    fn files(&self, globs: &[String]) -> Vec<Entry> {
        let pathspec = match Pathspec::parse(globs, None) {
            Ok(pathspec) => pathspec,
            Err(e) => panic!("snapshot.files: the host would stop this run: {e}"),
        };
        self.files
            .iter()
            .filter(|(path, _)| pathspec.matches(path))
            .map(|(path, content)| Entry {
                path: path.clone(),
                size: content.len() as u64,
                id: format!("{:040x}", content.len()),
                executable: false,
            })
            .collect()
    }

    fn read(&self, path: &str) -> Result<Vec<u8>, String> {
        self.files
            .get(path)
            .cloned()
            .ok_or_else(|| format!("{path}: no such file in the snapshot"))
    }

    fn read_range(&self, path: &str, offset: u64, len: u64) -> Result<Vec<u8>, String> {
        let all = self.read(path)?;
        let start = usize::try_from(offset).unwrap_or(usize::MAX).min(all.len());
        let end = start
            .saturating_add(usize::try_from(len).unwrap_or(usize::MAX))
            .min(all.len());
        Ok(all[start..end].to_vec())
    }

    fn artifact(&self, name: &str) -> Result<Vec<u8>, String> {
        self.artifacts
            .get(name)
            .cloned()
            .ok_or_else(|| format!("no artifact named {name:?}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pathspec_dialect() {
        let s = MemorySnapshot::new()
            .file("src/a.rs", "a")
            .file("src/deep/b.rs", "b")
            .file("README.md", "r");
        let paths = |globs: &[&str]| -> Vec<String> {
            let globs: Vec<String> = globs.iter().map(|g| (*g).to_owned()).collect();
            s.files(&globs).into_iter().map(|e| e.path).collect()
        };
        assert_eq!(paths(&["src/*.rs"]), ["src/a.rs"]);
        assert_eq!(paths(&["src/**/*.rs"]), ["src/a.rs", "src/deep/b.rs"]);
        assert_eq!(paths(&["src"]), ["src/a.rs", "src/deep/b.rs"]);
        assert_eq!(paths(&["**", ":!src/deep"]), ["README.md", "src/a.rs"]);
        assert_eq!(paths(&[":(exclude)*.md"]), ["src/a.rs", "src/deep/b.rs"]);
        assert!(paths(&[]).is_empty());
        assert_eq!(paths(&["./src/deep/"]), ["src/deep/b.rs"]);
        assert!(paths(&["README.md/"]).is_empty());
    }

    #[test]
    #[should_panic(expected = "braces are not expanded")]
    fn refused_pathspecs_stop_the_run_as_in_the_host() {
        MemorySnapshot::new().files(&["*.{rs,toml}".to_owned()]);
    }
}
