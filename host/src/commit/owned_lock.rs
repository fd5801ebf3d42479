//! Git lock files discern itself may leave behind. Before a transaction can create one (a ref
//! edit's `<ref>.lock`, `packed-refs.lock`, a checkout's `index.lock`), its journal *claims*
//! it: the path, the claiming process and the time. A crash leaves the claim in the journal;
//! recovery removes the lock only when the claim proves it discern's: the lock is no older than
//! the claim, the claiming process is gone, and no process has the file open (as `fuser`
//! would see it through `/proc`). Anything it cannot prove — an older lock, a live claimer, an
//! open file, an unreadable `/proc` — is left alone, and the refusal names the file.

use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};

/// A lock file a transaction may create, claimed before it could exist.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Claim {
    pub path: PathBuf,
    /// The process that claimed it (the discern that wrote the journal).
    pub pid: u32,
    /// When it was claimed, in nanoseconds since the epoch: the lock cannot be older.
    pub since_ns: u128,
}

/// Claim `paths` for this process, now.
pub(crate) fn claim(paths: impl IntoIterator<Item = PathBuf>) -> Vec<Claim> {
    let now = std::time::SystemTime::now().duration_since(UNIX_EPOCH).ok();
    claim_at(paths, now.map(|d| d.as_nanos()))
}

/// Claim `paths` as claimed at `now` (nanoseconds since the epoch; `None`: the clock reads
/// before 1970). A claim whose time cannot be told is as late as can be: no lock is younger,
/// so recovery never proves one discern's by it and leaves the file, naming it.
fn claim_at(paths: impl IntoIterator<Item = PathBuf>, now: Option<u128>) -> Vec<Claim> {
    let since_ns = now.unwrap_or(u128::MAX);
    paths
        .into_iter()
        .map(|path| Claim {
            path,
            pid: std::process::id(),
            since_ns,
        })
        .collect()
}

/// Remove every claimed lock a crashed discern provably left; the paths removed.
pub(crate) fn release_left(claims: &[Claim]) -> Vec<PathBuf> {
    claims
        .iter()
        .filter(|c| left_by_crash(c) && std::fs::remove_file(&c.path).is_ok())
        .map(|c| c.path.clone())
        .collect()
}

/// The claimed locks that still exist once the provable leftovers are removed: a recovery
/// that finds one stops (keeping its journal, so the claim survives) and names it.
pub(crate) fn still_held(claims: &[Claim]) -> Option<PathBuf> {
    release_left(claims);
    claims
        .iter()
        .find(|c| std::fs::symlink_metadata(&c.path).is_ok())
        .map(|c| c.path.clone())
}

/// Whether `claim`'s lock exists and provably belongs to a discern that is gone.
fn left_by_crash(claim: &Claim) -> bool {
    let Ok(metadata) = std::fs::symlink_metadata(&claim.path) else {
        return false;
    };
    let modified = metadata
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map(|d| d.as_nanos());
    // File systems with coarse timestamps round down: allow one second.
    let young = modified.is_some_and(|m| m + 1_000_000_000 >= claim.since_ns);
    metadata.is_file()
        && young
        && claim.pid != std::process::id()
        && !alive(claim.pid)
        && held(&claim.path) == Some(false)
}

/// Whether a process `pid` exists (a zombie counts as gone).
pub(crate) fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesised command name.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_none_or(|(_, rest)| rest.split_whitespace().next() != Some("Z")),
        Err(_) => false,
    }
}

/// Whether any process has `path` open; `None` when that cannot be told.
fn held(path: &Path) -> Option<bool> {
    let target = std::fs::canonicalize(path).ok()?;
    let processes = std::fs::read_dir("/proc").ok()?;
    for process in processes.flatten() {
        let name = process.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(process.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if std::fs::read_link(fd.path()).is_ok_and(|l| l == target) {
                return Some(true);
            }
        }
    }
    Some(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stale(dir: &Path, name: &str) -> Claim {
        let path = dir.join(name);
        let mut claim = claim([path.clone()]).remove(0);
        std::fs::write(&path, "").expect("test lock");
        // A claimer that is gone: pid 0 is never a user process.
        claim.pid = 0;
        claim
    }

    #[test]
    fn only_a_lock_a_gone_claimer_left_after_its_claim_is_removed() {
        let dir = tempfile::tempdir().expect("temp dir");
        let left = stale(dir.path(), "a.lock");
        assert_eq!(
            release_left(std::slice::from_ref(&left)),
            vec![left.path.clone()]
        );
        assert!(!left.path.exists());

        // Older than the claim: somebody else's.
        let mut older = stale(dir.path(), "b.lock");
        older.since_ns += 10_000_000_000;
        assert!(release_left(std::slice::from_ref(&older)).is_empty());

        // Claimed when the clock could not be read: no lock is proven younger.
        let mut untimed = stale(dir.path(), "d.lock");
        untimed.since_ns = claim_at([untimed.path.clone()], None)[0].since_ns;
        assert!(release_left(std::slice::from_ref(&untimed)).is_empty());
        assert!(untimed.path.exists());
        // As a journal keeps it, and reads it back after a crash.
        let kept = serde_json::to_string(&untimed).expect("serialises");
        let back: Claim = serde_json::from_str(&kept).expect("reads back");
        assert_eq!(back, untimed);

        // A live claimer (this very process).
        let mut live = stale(dir.path(), "c.lock");
        live.pid = std::process::id();
        assert!(release_left(std::slice::from_ref(&live)).is_empty());

        // Open in a process: held.
        let open = stale(dir.path(), "d.lock");
        let _file = std::fs::File::open(&open.path).expect("open");
        assert!(release_left(std::slice::from_ref(&open)).is_empty());
        assert!(open.path.exists() && older.path.exists() && live.path.exists());
    }
}
