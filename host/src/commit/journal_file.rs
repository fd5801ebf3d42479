//! The one way a transaction keeps its journal: written atomically (temp file + rename, its
//! folder made first) before the transaction changes anything, removed once it is done, and
//! read back by recovery. Every transaction (config commit, fork, merge, landing, abandon)
//! writes through here.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{CommitError, git_error};

/// Write `journal` to `path`; `what` names it in an error ("the fork journal").
pub(crate) fn write<T: Serialize>(path: &Path, journal: &T, what: &str) -> Result<(), CommitError> {
    let failed = |e: &dyn std::fmt::Display| git_error(&format!("cannot write {what}"), e);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| failed(&e))?;
    }
    let bytes = serde_json::to_vec_pretty(journal).map_err(|e| failed(&e))?;
    crate::fsutil::write_atomic(path, &bytes).map_err(|e| failed(&e))
}

/// Remove the journal at `path` once its transaction is done.
pub(crate) fn remove(path: &Path, what: &str) -> Result<(), CommitError> {
    std::fs::remove_file(path).map_err(|e| git_error(&format!("cannot remove {what}"), e))
}

/// The temp files in the journal folder `dir` that a writer killed between writing its journal
/// and renaming it into place left: that journal never existed, so its transaction never began.
pub(crate) fn orphans(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(crate::fsutil::TEMP_PREFIX)
        })
        .map(|e| e.path())
        .collect()
}

/// Remove [`orphans`] of `dir`. Only under the writer lock: every writer of a journal folder
/// holds it while it writes, so no temp file there belongs to a live one.
pub(crate) fn remove_orphans(dir: &Path) {
    for orphan in orphans(dir) {
        let _ = std::fs::remove_file(orphan);
    }
}

/// Every `*.json` journal in `dir` a crash left, read as `T`; `advice` says what to do with an
/// unreadable one, `version` reads a journal's format, newer than `max` is refused.
pub(crate) fn read_all<T: DeserializeOwned>(
    dir: &Path,
    advice: &str,
    version: impl Fn(&T) -> u32,
    max: u32,
) -> Result<Vec<(PathBuf, T)>, String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut found = Vec::new();
    for path in entries.flatten().map(|e| e.path()) {
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let bytes =
            std::fs::read(&path).map_err(|e| format!("{} cannot be read ({e})", path.display()))?;
        let journal: T = serde_json::from_slice(&bytes)
            .map_err(|e| format!("{} is unreadable ({e}); {advice}", path.display()))?;
        if version(&journal) > max {
            return Err(format!("{} was written by a newer discern", path.display()));
        }
        found.push((path, journal));
    }
    Ok(found)
}
