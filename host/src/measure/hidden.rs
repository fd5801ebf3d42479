//! Files whose content a Standard's paths match but no producer sees: a Git LFS pointer (the
//! file itself is not in the repository; what is measured is the pointer) and, for the built-ins
//! that read text, a file they skip as binary (a NUL byte in its first 8,000 bytes, as
//! `git grep` decides). Each is named in an advisory with its path, so a change cannot hide what
//! it adds behind either.
//!
//! Computed by the host from the snapshot, not reported by producers: the producer contract
//! stays as it is, and a reused reading says the same as a fresh one. Only the files that
//! changed since the limits check's baseline are read (every file, where there is none): what a
//! change brings in is what it is answerable for.

use std::collections::BTreeMap;

use crate::config::{Per, ProducerRef, StandardDef};
use crate::git::short;
use crate::snapshot::{EntryKind, Snapshot};

/// The built-ins that skip a binary file's text.
const TEXT_BUILTINS: [&str; 2] = ["pattern", "extent"];

/// What `git grep` and the built-ins read of a file before calling it binary.
const BINARY_PROBE: usize = 8000;

/// How a Git LFS pointer starts (the spec's first line).
const LFS_POINTER: &[u8] = b"version https://git-lfs.github.com/spec/";

/// The most paths one advisory names.
const SHOWN: usize = 10;

/// Why a file's content is hidden from a producer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hidden {
    LfsPointer,
    Binary,
}

impl Hidden {
    fn why(self) -> &'static str {
        match self {
            Hidden::LfsPointer => "a Git LFS pointer: its content is not in the repository",
            Hidden::Binary => "binary: a NUL byte in its first 8,000 bytes",
        }
    }
}

/// One advisory per Standard of `selected` whose paths match a file (changed since `baseline`,
/// or any when there is none) that hides its content from what measures it.
pub(super) fn advisories(
    selected: &[&StandardDef],
    snapshot: &Snapshot,
    baseline: Option<&str>,
) -> Vec<String> {
    let lists: Vec<(&StandardDef, Vec<String>, bool)> =
        selected.iter().flat_map(|s| lists(s)).collect();
    if lists.is_empty() {
        return Vec::new();
    }
    // A baseline whose tree cannot be read leaves every file to read: never "nothing changed".
    let changed = baseline.and_then(|b| snapshot.changed_since(b));
    let candidates: Vec<&str> = match &changed {
        Some(paths) => paths.iter().map(String::as_str).collect(),
        None => snapshot.entries().iter().map(|e| e.path()).collect(),
    };
    let mut reader = snapshot.reader();
    let mut seen: BTreeMap<&str, Option<Hidden>> = BTreeMap::new();
    let mut found: Vec<(&StandardDef, Vec<(&str, Hidden)>)> = Vec::new();
    for (standard, paths, text) in &lists {
        let Ok(spec) = snapshot.pathspec(paths) else {
            continue;
        };
        for &path in candidates.iter().filter(|p| spec.matches(p)) {
            let hidden = *seen.entry(path).or_insert_with(|| {
                let entry = snapshot.entry(path)?;
                if entry.kind != EntryKind::Blob {
                    return None;
                }
                let (_, bytes) = reader.read(path).ok()?;
                hidden(&bytes)
            });
            let Some(hidden) = hidden.filter(|h| *text || *h == Hidden::LfsPointer) else {
                continue;
            };
            match found.iter_mut().find(|(s, _)| std::ptr::eq(*s, *standard)) {
                Some((_, files)) if !files.iter().any(|(p, _)| *p == path) => {
                    files.push((path, hidden));
                }
                Some(_) => {}
                None => found.push((standard, vec![(path, hidden)])),
            }
        }
    }
    found
        .into_iter()
        .map(|(standard, files)| advisory(standard, &files, baseline))
        .collect()
}

/// The pathspec lists of `standard` whose files' content it measures, each with whether a
/// binary file is skipped there (the text built-ins, `per` lines and words).
fn lists(standard: &StandardDef) -> Vec<(&StandardDef, Vec<String>, bool)> {
    let mut lists = Vec::new();
    if let ProducerRef::Builtin(name) = &standard.producer
        && let Some(paths) = super::unmatched::config_paths(&standard.config)
    {
        lists.push((standard, paths, TEXT_BUILTINS.contains(&name.as_str())));
    }
    if let Some(Per::Extent { kind, paths }) = &standard.per {
        let text = ["lines", "words"].contains(&kind.as_str());
        lists.push((standard, paths.clone(), text));
    }
    if let Some(inputs) = &standard.inputs {
        lists.push((standard, inputs.clone(), false));
    }
    lists
}

/// Why `bytes` hide a file's content, if they do.
fn hidden(bytes: &[u8]) -> Option<Hidden> {
    if bytes.len() < 1024 && bytes.starts_with(LFS_POINTER) {
        return Some(Hidden::LfsPointer);
    }
    bytes[..bytes.len().min(BINARY_PROBE)]
        .contains(&0)
        .then_some(Hidden::Binary)
}

fn advisory(standard: &StandardDef, files: &[(&str, Hidden)], baseline: Option<&str>) -> String {
    let mut named: Vec<String> = files
        .iter()
        .take(SHOWN)
        .map(|(path, hidden)| format!("\"{path}\" ({})", hidden.why()))
        .collect();
    if files.len() > SHOWN {
        named.push(format!("and {} more", files.len() - SHOWN));
    }
    let since = match baseline {
        Some(b) => format!(", changed since {},", short(b)),
        None => String::new(),
    };
    format!(
        "standards.{}: {} file(s) its paths match{since} hide their content from what measures them: {}. What is measured there is not the file you see: commit it as text (without LFS), or leave it out of the Standard's paths",
        standard.name,
        files.len(),
        named.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::{Hidden, hidden};

    #[test]
    fn an_lfs_pointer_and_a_nul_in_the_first_line_hide_a_file() {
        let pointer = b"version https://git-lfs.github.com/spec/v1\noid sha256:4d7a\nsize 12345\n";
        assert_eq!(hidden(pointer), Some(Hidden::LfsPointer));
        assert_eq!(hidden(b"\0// mark 1\n// mark 2\n"), Some(Hidden::Binary));
        assert_eq!(hidden(b"// mark\n"), None);
        let mut late = vec![b'a'; 8000];
        late.push(0);
        assert_eq!(hidden(&late), None, "git grep reads 8,000 bytes");
    }
}
