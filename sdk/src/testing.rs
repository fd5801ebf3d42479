//! An in-memory [`Snapshot`] for unit-testing a producer's logic natively.
//!
//! It follows the host's pathspec dialect: `*` stays within a path component, `**/` spans
//! directories, a glob without wildcards names a file or a directory, and `:!glob` (or
//! `:^glob`, `:(exclude)glob`) excludes.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeMap;

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
        self.files
            .iter()
            .filter(|(path, _)| matches_any(globs, path))
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

fn matches_any(globs: &[String], path: &str) -> bool {
    let mut includes = 0;
    let mut included = false;
    for glob in globs {
        match exclusion(glob) {
            Some(excluded) if matches(excluded, path) => return false,
            Some(_) => {}
            None => {
                includes += 1;
                included |= matches(glob, path);
            }
        }
    }
    included || (includes == 0 && !globs.is_empty())
}

fn exclusion(glob: &str) -> Option<&str> {
    [":!", ":^", ":(exclude)"]
        .iter()
        .find_map(|magic| glob.strip_prefix(magic))
}

fn matches(glob: &str, path: &str) -> bool {
    if glob.contains(['*', '?', '[']) {
        gix_glob::wildmatch(
            glob.as_bytes().into(),
            path.as_bytes().into(),
            gix_glob::wildmatch::Mode::NO_MATCH_SLASH_LITERAL,
        )
    } else {
        let dir = glob.trim_end_matches('/');
        path == dir
            || path
                .strip_prefix(dir)
                .is_some_and(|rest| rest.starts_with('/'))
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
    }
}
