//! `start` as one journaled transaction: the effort's branch, its worktree and its task
//! metadata, all or nothing. Under the writer lock the journal
//! (`<common-dir>/discern/forks/<id>.json`) is written first; a failure unwinds what was made;
//! a crash is unwound by the next writing call from any checkout (the caller never learned
//! of the effort, so nothing of it is kept): the worktree removed, the branch deleted if it
//! still points where it was forked, the folder removed only if the claim proves the fork
//! made it.

use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use gix::ObjectId;
use serde::{Deserialize, Serialize};

use super::journal_file;
use super::landing::same_dir;
use super::lock::WriterLock;
use super::{CommitError, Faults, create_branch, delete_branch};
use crate::git::Repo;
use crate::git::worktree::{self, Removal};

pub(crate) const DIR: &str = "forks";
pub(crate) const VERSION: u32 = 1;

/// Named steps of a fork, for the crash tests.
pub(crate) mod step {
    pub(crate) const JOURNAL_WRITTEN: &str = "fork-journal-written";
    pub(crate) const BRANCH_CREATED: &str = "fork-branch-created";
    pub const WORKTREE_ADDED: &str = "fork-worktree-added";
    pub const ALL: &[&str] = &[JOURNAL_WRITTEN, BRANCH_CREATED, WORKTREE_ADDED];
}

/// What a fork makes, written before it makes anything.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ForkJournal {
    pub version: u32,
    pub id: String,
    pub branch: String,
    pub path: PathBuf,
    pub from: String,
    /// When the fork began (ns since the epoch): a folder at `path` no older than this is its.
    pub since_ns: u128,
    /// The git lock files creating the branch may leave, claimed before they could exist.
    #[serde(default)]
    pub locks: Vec<super::owned_lock::Claim>,
}

impl ForkJournal {
    pub(crate) fn new(repo: &Repo, id: &str, branch: &str, path: &Path, from: ObjectId) -> Self {
        let locks = super::owned_lock::claim([
            repo.common_dir().join(format!("refs/heads/{branch}.lock")),
            repo.common_dir().join("packed-refs.lock"),
        ]);
        Self {
            version: VERSION,
            id: id.to_owned(),
            branch: branch.to_owned(),
            path: path.to_owned(),
            from: from.to_string(),
            since_ns: std::time::SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
            locks,
        }
    }
}

/// Which step of a fork failed, and why.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ForkError {
    #[error("cannot create the branch {branch}: {why}")]
    Branch { branch: String, why: String },
    #[error("cannot create the worktree {path}: {why}")]
    Worktree { path: String, why: String },
    #[error("cannot record the task metadata: {0}")]
    Metadata(String),
    #[error("{0}")]
    Journal(String),
}

/// Make the branch at `from`, the worktree on it, and its metadata (`record`, given the new
/// worktree's path); on any failure nothing is left.
pub(crate) fn fork(
    repo: &Repo,
    journal: &ForkJournal,
    record: &dyn Fn(&Path) -> Result<(), String>,
    faults: &Faults,
) -> Result<(), ForkError> {
    let from = parse(&journal.from).map_err(|e| ForkError::Journal(e.to_string()))?;
    let _lock = WriterLock::acquire(repo).map_err(|e| ForkError::Journal(e.to_string()))?;
    // Under the lock: a concurrent start of the same name that got here first keeps its
    // effort; this one makes (and so unwinds) nothing.
    let taken =
        journal.path.exists() || repo.branch_commit(&journal.branch).ok().flatten().is_some();
    if taken {
        return Err(ForkError::Branch {
            branch: journal.branch.clone(),
            why: format!("it or the folder {} already exists", journal.path.display()),
        });
    }
    let path = journal_path(repo, &journal.id);
    journal_file::write(&path, journal, "the fork journal")
        .map_err(|e| ForkError::Journal(e.to_string()))?;
    faults.point(step::JOURNAL_WRITTEN);
    let reason = format!("discern start: {} from {}", journal.id, journal.from);
    if let Err(e) = create_branch(repo, &journal.branch, from, &reason) {
        let _ = std::fs::remove_file(&path);
        return Err(ForkError::Branch {
            branch: journal.branch.clone(),
            why: e.to_string(),
        });
    }
    faults.point(step::BRANCH_CREATED);
    let made = worktree::add(repo, &journal.path, &journal.branch)
        .map_err(|e| ForkError::Worktree {
            path: journal.path.display().to_string(),
            why: e.to_string(),
        })
        .and_then(|()| {
            faults.point(step::WORKTREE_ADDED);
            record(&journal.path).map_err(ForkError::Metadata)
        });
    if made.is_err() {
        unwind(repo, journal, from);
    }
    let _ = std::fs::remove_file(&path);
    made
}

/// Unwind every fork a crash interrupted; what was done, one line each.
pub(crate) fn recover(repo: &Repo) -> Result<Vec<String>, CommitError> {
    let journals = pending(repo).map_err(CommitError::Git)?;
    let dir = repo.shared_path(DIR);
    if journals.is_empty() && journal_file::orphans(&dir).is_empty() {
        return Ok(Vec::new());
    }
    let _lock = WriterLock::acquire(repo).map_err(|e| CommitError::Git(e.to_string()))?;
    journal_file::remove_orphans(&dir);
    let mut done = Vec::new();
    // Under the lock, only journals that are still there (a live fork holds the lock).
    for (path, journal) in pending(repo).map_err(CommitError::Git)? {
        let from = parse(&journal.from)?;
        if let Some(lock) = super::owned_lock::still_held(&journal.locks) {
            return Err(CommitError::Locked(lock));
        }
        unwind(repo, &journal, from);
        journal_file::remove(&path, "the fork journal")?;
        done.push(format!(
            "An interrupted start of {} was unwound: its branch {} and worktree {} are gone.",
            journal.id,
            journal.branch,
            journal.path.display()
        ));
    }
    Ok(done)
}

/// Remove what the fork made: the worktree (registered, or a folder the fork created), then
/// the branch if it still points where it was forked.
fn unwind(repo: &Repo, journal: &ForkJournal, from: ObjectId) {
    // A list that cannot be read is "maybe registered": git's own removal decides (it refuses
    // a folder that is no worktree), rather than removing the folder under a registration.
    let registered = repo.worktrees().map_or(true, |worktrees| {
        worktrees.iter().any(|w| same_dir(&w.path, &journal.path))
    });
    // A killed `git worktree add` leaves its worktree locked ("initializing"): the unwind of
    // what this fork made removes it even so.
    let removed =
        registered && worktree::remove(repo, &journal.path, Removal::DiscardLocked).is_ok();
    if !removed && made_by_fork(&journal.path, journal.since_ns) {
        let _ = std::fs::remove_dir_all(&journal.path);
    }
    // A registration whose folder is gone but which is still locked is not pruned: unlock it
    // (it is this fork's own, made for this path).
    if registered && !removed {
        let _ = repo.git(&["worktree", "unlock", &journal.path.display().to_string()]);
    }
    if !removed {
        remove_own_registrations(repo, journal);
    }
    let _ = repo.git(&["worktree", "prune"]);
    if repo.branch_commit(&journal.branch).ok().flatten() == Some(from) {
        let _ = delete_branch(repo, &journal.branch, from);
    }
}

/// Remove the administrative folders (`<common-dir>/worktrees/<name>`) this fork's `git
/// worktree add` made for a worktree that is gone. A kill inside git can leave one half
/// written (an empty `commondir`), and then every worktree command git runs dies on it —
/// `unlock`, `prune`, `branch -D` and the next `add` alike — so git cannot clean it up. Only
/// folders that are provably this fork's are touched: their `gitdir` names the journal's
/// worktree, or they have none yet and were made after the fork began.
fn remove_own_registrations(repo: &Repo, journal: &ForkJournal) {
    if journal.path.exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(repo.common_dir().join("worktrees")) else {
        return;
    };
    let ours = journal.path.join(".git");
    for admin in entries.flatten().map(|e| e.path()) {
        // A `gitdir` that cannot be read says nothing about whose folder it is: kept.
        let Ok(gitdir) = crate::fsutil::read_or_empty(&admin.join("gitdir")) else {
            continue;
        };
        let gitdir = gitdir.trim();
        let own = if gitdir.is_empty() {
            made_by_fork(&admin, journal.since_ns)
        } else {
            same_place(Path::new(gitdir), &ours)
        };
        if own {
            let _ = std::fs::remove_dir_all(&admin);
        }
    }
}

/// Whether two paths, either of which may no longer exist, name one place as the file system
/// resolves what of them is left.
fn same_place(a: &Path, b: &Path) -> bool {
    resolved(a) == resolved(b)
}

/// A path as the file system resolves it, or (when it is gone) its parent's resolution joined
/// with its name.
fn resolved(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| match (path.parent(), path.file_name()) {
        (Some(up), Some(name)) => resolved(up).join(name),
        _ => path.to_owned(),
    })
}

/// Whether the folder at `path` exists and is no older than the fork (it did not exist when
/// the fork was planned, so the fork made it).
fn made_by_fork(path: &Path, since_ns: u128) -> bool {
    std::fs::symlink_metadata(path)
        .ok()
        .filter(std::fs::Metadata::is_dir)
        .and_then(|m| m.created().or_else(|_| m.modified()).ok())
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .is_some_and(|t| t.as_nanos() + 1_000_000_000 >= since_ns)
}

/// The fork journals a crash left, for read-only verbs to report.
pub(crate) fn pending(repo: &Repo) -> Result<Vec<(PathBuf, ForkJournal)>, String> {
    super::journal_file::read_all(
        &repo.shared_path(DIR),
        "inspect it and delete it",
        |j: &ForkJournal| j.version,
        VERSION,
    )
}

fn journal_path(repo: &Repo, id: &str) -> PathBuf {
    repo.shared_path(DIR).join(format!("{id}.json"))
}

fn parse(id: &str) -> Result<ObjectId, CommitError> {
    id.parse()
        .map_err(|e| CommitError::Git(format!("a fork journal names an invalid commit ({e})")))
}
