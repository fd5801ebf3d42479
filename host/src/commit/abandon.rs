//! `abandon` as one journaled transaction: an effort's worktree removed, then its branch
//! deleted (only while it still points at the commit that was judged). Under the writer lock
//! the journal (`<common-dir>/discern/abandons/<id>.json`) is written first. A crash is
//! finished by the next writing call from any checkout — the worktree removed (discarding its
//! changes only when the abandon was forced; otherwise a worktree that changed since is kept
//! and the abandon rolled back), then the branch deleted if it has not moved.

use std::path::PathBuf;

use gix::ObjectId;
use serde::{Deserialize, Serialize};

use super::journal_file;
use super::landing::{remove_worktree, same_dir};
use super::lock::WriterLock;
use super::{CommitError, Faults, delete_branch, git_error};
use crate::git::Repo;
use crate::git::worktree::{self, Removal};

pub(crate) const DIR: &str = "abandons";
pub(crate) const VERSION: u32 = 1;

/// Named steps of an abandon, for the crash tests.
pub(crate) mod step {
    pub(crate) const JOURNAL_WRITTEN: &str = "abandon-journal-written";
    pub(crate) const WORKTREE_REMOVED: &str = "abandon-worktree-removed";
    pub(crate) const BRANCH_DELETED: &str = "abandon-branch-deleted";
}

/// What an abandon removes, written before it removes anything.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct AbandonJournal {
    pub version: u32,
    pub id: String,
    pub branch: String,
    pub path: PathBuf,
    /// The branch's commit when it was judged: the branch is deleted only while it is here.
    pub head: String,
    /// Forced: uncommitted changes in the worktree are discarded.
    pub discard: bool,
    /// The git lock files deleting the branch may leave, claimed before they could exist.
    #[serde(default)]
    pub locks: Vec<super::owned_lock::Claim>,
}

impl AbandonJournal {
    pub(crate) fn new(main: &Repo, id: &str, branch: &str, path: PathBuf, head: ObjectId) -> Self {
        let locks = super::owned_lock::claim([
            main.common_dir().join(format!("refs/heads/{branch}.lock")),
            main.common_dir().join("packed-refs.lock"),
        ]);
        Self {
            version: VERSION,
            id: id.to_owned(),
            branch: branch.to_owned(),
            path,
            head: head.to_string(),
            discard: false,
            locks,
        }
    }
}

/// What an abandon removed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Abandoned {
    pub worktree_removed: bool,
    pub branch_deleted: bool,
}

fn journal_path(main: &Repo, id: &str) -> PathBuf {
    let name: String = id
        .chars()
        .map(
            |c| match c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                true => c,
                false => '.',
            },
        )
        .collect();
    main.shared_path(DIR).join(format!("{name}.json"))
}

/// Remove the worktree, then the branch, from the main checkout `main`. `Err`: nothing was
/// removed (the worktree refused to go: changes, or git failed).
pub(crate) fn abandon(
    main: &Repo,
    journal: &AbandonJournal,
    faults: &Faults,
) -> Result<Abandoned, CommitError> {
    let head = parse(&journal.head)?;
    let _lock = WriterLock::acquire(main).map_err(|e| CommitError::Git(e.to_string()))?;
    let found = main
        .local_branch_commit(&journal.branch)
        .map_err(|e| git_error("cannot read the branch", e))?;
    if found != Some(head) {
        return Err(CommitError::Moved {
            branch: journal.branch.clone(),
            expected: journal.head.clone(),
            found: found.map_or_else(|| "nothing".to_owned(), |c| c.to_string()),
        });
    }
    let path = journal_path(main, &journal.id);
    journal_file::write(&path, journal, "the abandon journal")?;
    faults.point(step::JOURNAL_WRITTEN);
    let removal = match journal.discard {
        true => Removal::Discard,
        false => Removal::IfClean,
    };
    if let Err(e) = worktree::remove(main, &journal.path, removal) {
        let _ = std::fs::remove_file(&path);
        return Err(git_error("cannot remove the worktree", e));
    }
    faults.point(step::WORKTREE_REMOVED);
    let branch_deleted = delete_branch(main, &journal.branch, head).is_ok();
    faults.point(step::BRANCH_DELETED);
    journal_file::remove(&path, "the abandon journal")?;
    Ok(Abandoned {
        worktree_removed: true,
        branch_deleted,
    })
}

fn parse(id: &str) -> Result<ObjectId, CommitError> {
    id.parse::<ObjectId>()
        .map_err(|e| git_error("the abandon journal names an invalid commit", e))
}

/// Finish every abandon a crash interrupted; what was done, one line each.
pub(crate) fn recover(main: &Repo) -> Result<Vec<String>, CommitError> {
    let dir = main.shared_path(DIR);
    if pending(main).map_err(CommitError::Git)?.is_empty()
        && super::journal_file::orphans(&dir).is_empty()
    {
        return Ok(Vec::new());
    }
    let _lock = WriterLock::acquire(main).map_err(|e| CommitError::Git(e.to_string()))?;
    super::journal_file::remove_orphans(&dir);
    let mut done = Vec::new();
    for (path, journal) in pending(main).map_err(CommitError::Git)? {
        if let Some(lock) = super::owned_lock::still_held(&journal.locks) {
            return Err(CommitError::Locked(lock));
        }
        done.push(finish(main, &journal)?);
        std::fs::remove_file(&path)
            .map_err(|e| git_error("cannot remove the abandon journal", e))?;
    }
    Ok(done)
}

/// One interrupted abandon, finished (or rolled back when its worktree changed since and the
/// abandon was not forced).
fn finish(main: &Repo, journal: &AbandonJournal) -> Result<String, CommitError> {
    let head = parse(&journal.head)?;
    // Whether the worktree is still there decides what goes: unreadable, nothing does.
    let registered = main
        .worktrees()
        .map_err(|e| git_error("cannot list the worktrees", e))?
        .iter()
        .any(|w| same_dir(&w.path, &journal.path));
    let removed = match (registered, journal.discard) {
        (false, _) => true,
        (true, true) => worktree::remove(main, &journal.path, Removal::Discard).is_ok(),
        (true, false) => remove_worktree(main, &journal.path),
    };
    let _ = main.git(&["worktree", "prune"]);
    if !removed {
        return Ok(format!(
            "An interrupted abandon of {} was rolled back: its worktree {} has changes now, so it and its branch stay.",
            journal.id,
            journal.path.display()
        ));
    }
    let deleted = main.local_branch_commit(&journal.branch).ok().flatten() == Some(head)
        && delete_branch(main, &journal.branch, head).is_ok();
    Ok(format!(
        "An interrupted abandon of {} was finished: its worktree is gone, its branch {} {}.",
        journal.id,
        journal.branch,
        match deleted {
            true => "deleted",
            false => "kept (it moved, or was gone already)",
        }
    ))
}

/// The abandon journals a crash left, for read-only verbs to report.
pub(crate) fn pending(main: &Repo) -> Result<Vec<(PathBuf, AbandonJournal)>, String> {
    super::journal_file::read_all(
        &main.shared_path(DIR),
        "inspect it and delete it",
        |j: &AbandonJournal| j.version,
        VERSION,
    )
}
