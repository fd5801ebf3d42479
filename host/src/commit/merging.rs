//! `update`'s merge as a journaled transaction. git moves the branch itself (`git merge`),
//! so the journal (`<git-dir>/discern/merge-transaction.json`) records what the merge starts
//! from, under the writer lock, before git runs; a crash is settled by the next writing call:
//! a merge git had not concluded is aborted (the tree was clean of tracked changes when it
//! began, so only the merge's own changes go), a concluded one is kept.

use gix::ObjectId;
use serde::{Deserialize, Serialize};

use super::journal_file;
use super::lock::WriterLock;
use super::owned_lock::{self, Claim};
use super::{CommitError, Faults, git_error};
use crate::git::Repo;

pub(crate) const FILE: &str = "merge-transaction.json";
const VERSION: u32 = 1;

/// The lock files `git merge` takes in the worktree's git dir.
const GIT_DIR_LOCKS: &[&str] = &[
    "index.lock",
    "HEAD.lock",
    "ORIG_HEAD.lock",
    "AUTO_MERGE.lock",
    "MERGE_HEAD.lock",
    "MERGE_MSG.lock",
    "MERGE_MODE.lock",
    "MERGE_AUTOSTASH.lock",
];

/// The named step of a merge, for the crash tests.
pub const JOURNAL_WRITTEN: &str = "merge-journal-written";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct MergeJournal {
    pub version: u32,
    pub branch: String,
    /// HEAD when the merge began, and what it merges.
    pub head: String,
    pub incoming: String,
    /// When the merge began (ns since the epoch): an untracked file the merge adds that is no
    /// older than this was written by it.
    #[serde(default)]
    pub since_ns: u128,
    /// The lock files git's merge may leave, claimed before it ran.
    #[serde(default)]
    pub locks: Vec<Claim>,
}

/// Run `merge` (git's merge of `incoming` into `branch` at `head`) inside the journal.
pub(crate) fn journaled<T>(
    repo: &Repo,
    (branch, head, incoming): (&str, ObjectId, ObjectId),
    faults: &Faults,
    merge: impl FnOnce() -> T,
) -> Result<T, CommitError> {
    let _lock = WriterLock::acquire(repo).map_err(|e| CommitError::Git(e.to_string()))?;
    let journal = MergeJournal {
        version: VERSION,
        branch: branch.to_owned(),
        head: head.to_string(),
        incoming: incoming.to_string(),
        since_ns: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
        locks: owned_lock::claim(
            GIT_DIR_LOCKS
                .iter()
                .map(|name| repo.git_dir().join(name))
                .chain([
                    repo.common_dir().join(format!("refs/heads/{branch}.lock")),
                    repo.common_dir().join("packed-refs.lock"),
                ]),
        ),
    };
    let path = repo.admin_path(FILE);
    journal_file::write(&path, &journal, "the merge journal")?;
    faults.point(JOURNAL_WRITTEN);
    let merged = merge();
    journal_file::remove(&path, "the merge journal")?;
    Ok(merged)
}

/// Settle a merge a crash interrupted; what was done.
pub(crate) fn recover(repo: &Repo) -> Result<Option<String>, CommitError> {
    let path = repo.admin_path(FILE);
    if !path.exists() {
        return Ok(None);
    }
    let _lock = WriterLock::acquire(repo).map_err(|e| CommitError::Git(e.to_string()))?;
    let Ok(bytes) = std::fs::read(&path) else {
        return Ok(None);
    };
    let journal: MergeJournal = serde_json::from_slice(&bytes).map_err(|e| {
        CommitError::Git(format!(
            "the merge journal {} is unreadable ({e}); inspect the branch, then delete it",
            path.display()
        ))
    })?;
    if let Some(lock) = owned_lock::still_held(&journal.locks) {
        return Err(CommitError::Locked(lock));
    }
    let message = settle(repo, &journal)?;
    journal_file::remove(&path, "the merge journal")?;
    Ok(Some(message))
}

/// The files a killed checkout (a merge, a landing's main-checkout update) had begun to write
/// for the paths `from..to` adds: untracked, and no older than `since_ns`, when it began. (An
/// untracked file that was there before makes git refuse before it writes anything, so none
/// of these is the user's.)
pub(super) fn remove_added_leftovers(
    repo: &Repo,
    from: ObjectId,
    to: ObjectId,
    since_ns: u128,
) -> Result<(), CommitError> {
    let added = repo
        .git(&[
            "diff",
            "--name-only",
            "--no-renames",
            "--diff-filter=A",
            &from.to_string(),
            &to.to_string(),
        ])
        .map_err(|e| git_error("cannot list what the checkout adds", e))?;
    let untracked = repo
        .git(&["ls-files", "--others", "--exclude-standard"])
        .map_err(|e| git_error("cannot list untracked files", e))?;
    let untracked: std::collections::HashSet<&str> = untracked.lines().collect();
    for path in added.lines().filter(|p| untracked.contains(p)) {
        let full = repo.root().join(path);
        let written = std::fs::symlink_metadata(&full)
            .ok()
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .is_some_and(|t| t.as_nanos() + 1_000_000_000 >= since_ns);
        if written {
            std::fs::remove_file(&full)
                .map_err(|e| git_error("cannot remove a file the interrupted checkout wrote", e))?;
        }
    }
    Ok(())
}

fn settle(repo: &Repo, journal: &MergeJournal) -> Result<String, CommitError> {
    let parse = |id: &str| {
        id.parse::<ObjectId>().map_err(|e| {
            CommitError::Git(format!("the merge journal names an invalid commit ({e})"))
        })
    };
    let (head, incoming) = (parse(&journal.head)?, parse(&journal.incoming)?);
    let now = repo.head().map_err(|e| git_error("cannot read HEAD", e))?;
    if now == Some(head) {
        // Not concluded: whatever the merge began goes (a merge in progress, or files it
        // had started to write), back to HEAD exactly.
        let aborted = match repo.git_dir().join("MERGE_HEAD").exists() {
            true => repo.git(&["merge", "--abort"]),
            false => repo.git(&["reset", "--merge", "HEAD"]),
        };
        aborted.map_err(|e| git_error("cannot undo the interrupted merge", e))?;
        remove_added_leftovers(repo, head, incoming, journal.since_ns)?;
        return Ok(format!(
            "An interrupted update of {} was undone: the merge had not concluded, so {} is as it was.",
            journal.branch,
            crate::git::short(&journal.head)
        ));
    }
    // No HEAD at all: the branch was moved by another writer, as below.
    let Some(now) = now else {
        return Err(moved_by_another(journal));
    };
    let parents = repo
        .git(&["rev-list", "--parents", "-n", "1", &now.to_string()])
        .map_err(|e| git_error("cannot read HEAD's parents", e))?;
    let expected = format!("{head} {incoming}");
    match parents.split_once(' ').map(|(_, p)| p.trim()) {
        Some(p) if p == expected => {
            // Killed between the merge commit and git's cleanup: the merge state it left
            // (MERGE_HEAD naming this very merge) is forgotten, the commit kept.
            let left = std::fs::read_to_string(repo.git_dir().join("MERGE_HEAD"))
                .is_ok_and(|m| m.trim() == journal.incoming);
            if left {
                repo.git(&["merge", "--quit"])
                    .map_err(|e| git_error("cannot clear the concluded merge's state", e))?;
            }
            Ok(format!(
                "An interrupted update of {} had concluded its merge; it is kept.",
                journal.branch
            ))
        }
        _ => Err(moved_by_another(journal)),
    }
}

/// The refusal for a journal whose merge is neither pending nor HEAD.
fn moved_by_another(journal: &MergeJournal) -> CommitError {
    CommitError::Git(format!(
        "the merge journal of {} describes a merge that is neither pending nor HEAD (another writer moved the branch); inspect it, then delete {}",
        journal.branch, FILE
    ))
}
