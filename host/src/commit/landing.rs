//! A landing as a journaled transaction, ordered so that every prefix is safe: the journal,
//! the Proof note, the trunk's compare-and-swap, then the main checkout (its index refreshed
//! first, so a touched file never turns into a staged revert), the worktree and the branch.
//! A crash anywhere is finished by the next writing call from any checkout: once the trunk has
//! moved it only rolls forward; before, it unwinds (the note on a commit that did not land is
//! harmless: it records what the owner approved of that exact commit).

use std::path::{Path, PathBuf};

use gix::ObjectId;
use serde::{Deserialize, Serialize};

use super::journal_file;
use super::{
    CommitError, Faults, delete_branch, git_error, lock::WriterLock, move_branch, write_note,
};
use crate::git::Repo;
use crate::git::worktree::{self, Removal};

/// `<common-dir>/discern/landings/<branch>.json`, one per landing in flight.
pub(crate) const DIR: &str = "landings";
pub(crate) const VERSION: u32 = 1;

/// Named steps of a landing where a test build can stop the process.
pub(crate) mod step {
    pub const JOURNAL_WRITTEN: &str = "landing-journal-written";
    pub const NOTE_WRITTEN: &str = "landing-note-written";
    pub(crate) const TRUNK_MOVED: &str = "landing-trunk-moved";
    pub(crate) const MAIN_UPDATED: &str = "landing-main-updated";
    pub(crate) const WORKTREE_REMOVED: &str = "landing-worktree-removed";
    pub const ALL: &[&str] = &[
        JOURNAL_WRITTEN,
        NOTE_WRITTEN,
        TRUNK_MOVED,
        MAIN_UPDATED,
        WORKTREE_REMOVED,
    ];
}

/// Everything a landing does, written before it does any of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct LandingJournal {
    pub version: u32,
    pub branch: String,
    /// The local trunk branch that moves.
    pub trunk: String,
    pub trunk_from: String,
    pub head: String,
    pub worktree: PathBuf,
    pub main: PathBuf,
    /// Whether the main checkout has the trunk checked out (and so follows it).
    pub main_on_trunk: bool,
    /// The Proof note attached to `head`.
    pub note: String,
    /// The git lock files the landing may create (the refs it moves, the main checkout's
    /// index), claimed before they could exist: recovery removes the ones a crash left.
    #[serde(default)]
    pub locks: Vec<super::owned_lock::Claim>,
}

/// What a landing did after the trunk moved: each step's outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Landed {
    pub note_written: bool,
    /// Why the note could not be written, when it could not.
    pub note_error: Option<String>,
    /// `None`: the main checkout does not have the trunk checked out.
    pub main_updated: Option<Result<(), String>>,
    pub worktree_removed: bool,
    pub branch_deleted: bool,
}

fn ids(journal: &LandingJournal) -> Result<(ObjectId, ObjectId), CommitError> {
    let parse = |id: &str| {
        id.parse::<ObjectId>()
            .map_err(|e| git_error("the landing journal names an invalid commit", e))
    };
    Ok((parse(&journal.trunk_from)?, parse(&journal.head)?))
}

fn journal_path(repo: &Repo, branch: &str) -> PathBuf {
    let name: String = branch
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '.'
            }
        })
        .collect();
    repo.shared_path(DIR).join(format!("{name}.json"))
}

/// Land `journal.head` on the trunk, under the writer lock the caller holds (it decided
/// under it). `Err`: nothing landed (the trunk did not move).
pub(crate) fn land(
    repo: &Repo,
    main: Option<&Repo>,
    journal: &LandingJournal,
    faults: &Faults,
    _lock: &WriterLock,
) -> Result<Landed, CommitError> {
    let (from, head) = ids(journal)?;
    let path = journal_path(repo, &journal.branch);
    journal_file::write(&path, journal, "the landing journal")?;
    faults.point(step::JOURNAL_WRITTEN);
    let note_error = write_note(repo, head, journal.note.as_bytes())
        .err()
        .map(|e| e.to_string());
    faults.point(step::NOTE_WRITTEN);
    let reason = format!(
        "discern accept: fast-forward {} to {}",
        journal.trunk, journal.branch
    );
    if let Err(e) = move_branch(repo, &journal.trunk, from, head, &reason) {
        let _ = std::fs::remove_file(&path);
        return Err(e);
    }
    faults.point(step::TRUNK_MOVED);
    let landed = finish(main, journal, from, head, note_error, faults);
    let _ = std::fs::remove_file(&path);
    Ok(landed)
}

/// The steps after the trunk moved: each tried once, its outcome reported.
fn finish(
    main: Option<&Repo>,
    journal: &LandingJournal,
    from: ObjectId,
    head: ObjectId,
    note_error: Option<String>,
    faults: &Faults,
) -> Landed {
    let main_updated = journal.main_on_trunk.then(|| {
        main.map_or(Err("the main checkout cannot be opened".to_owned()), |m| {
            follow(m, from, head)
        })
    });
    faults.point(step::MAIN_UPDATED);
    // A branch landed from a plain checkout (the main one) keeps its checkout and branch.
    let plain = same_dir(&journal.worktree, &journal.main);
    let worktree_removed = !plain && main.is_some_and(|m| remove_worktree(m, &journal.worktree));
    faults.point(step::WORKTREE_REMOVED);
    let branch_deleted =
        worktree_removed && main.is_some_and(|m| delete_branch(m, &journal.branch, head).is_ok());
    Landed {
        note_written: note_error.is_none(),
        note_error,
        main_updated,
        worktree_removed,
        branch_deleted,
    }
}

/// The main checkout follows the trunk from `from` to `to`, its index refreshed first (a file
/// touched but unchanged would otherwise stop `read-tree` or be staged as a revert).
fn follow(main: &Repo, from: ObjectId, to: ObjectId) -> Result<(), String> {
    let _ = main.git(&["update-index", "-q", "--refresh"]);
    worktree::follow(main, from, to).map_err(|e| e.to_string())
}

/// Remove the landed effort's worktree if it is clean, or if a removal a kill cut short left
/// it with tracked files deleted and nothing else changed (everything in it is in the landed
/// commit, so nothing is lost).
pub(super) fn remove_worktree(main: &Repo, path: &Path) -> bool {
    if !path.exists() || worktree::remove(main, path, Removal::IfClean).is_ok() {
        return true;
    }
    // git removes the worktree's `.git` link last but one: without it, what is left is the
    // rest of a removal that was cut short (it only started on a clean worktree).
    if !path.join(".git").exists() {
        let removed = std::fs::remove_dir_all(path).is_ok();
        let _ = main.git(&["worktree", "prune"]);
        return removed;
    }
    let only_deletions = Repo::discover(path)
        .and_then(|wt| wt.git(&["status", "--porcelain"]))
        .is_ok_and(|status| {
            status
                .lines()
                .all(|l| l.starts_with(" D ") || l.starts_with("D  "))
        });
    only_deletions && worktree::remove(main, path, Removal::Discard).is_ok()
}

/// How many of the trunk's recent commits are searched for an effort's landing note.
const LANDED_SEARCH: usize = 500;

/// Where one of `branches` landed: the commit among the trunk's recent history (from
/// `trunk_tip`, every parent: a later effort that brought the trunk in with `update` has the
/// earlier landing as its merge's second parent) whose Proof note names it, with that branch.
/// A landed effort has no branch or worktree left; its note is what remains. `Err`: a commit's
/// parents cannot be read, so whether it landed cannot be told (never "not landed").
pub(crate) fn landed_by_note(
    repo: &Repo,
    trunk_tip: ObjectId,
    branches: &[String],
) -> Result<Option<(ObjectId, String)>, crate::git::RepoError> {
    let boundary = repo.shallow_boundary()?;
    let mut queue = std::collections::VecDeque::from([trunk_tip]);
    let mut seen = std::collections::HashSet::from([trunk_tip]);
    while let Some(at) = queue.pop_front() {
        if seen.len() > LANDED_SEARCH {
            break;
        }
        if let Ok(Some(bytes)) = repo.note(super::NOTES_REF, at)
            && let Ok(note) = serde_json::from_slice::<serde_json::Value>(&bytes)
            && let Some(branch) = note["subject"]["branch"].as_str()
            && branches.iter().any(|b| b == branch)
        {
            return Ok(Some((at, branch.to_owned())));
        }
        if boundary.contains(&at) {
            continue;
        }
        for parent in repo.parents(at)? {
            if seen.insert(parent) {
                queue.push_back(parent);
            }
        }
    }
    Ok(None)
}

/// The command that brings the main checkout to the landed trunk by hand.
pub(crate) fn follow_command(main: &Path, from: &str, to: &str) -> String {
    let main = main.display();
    format!("git -C {main} update-index -q --refresh && git -C {main} read-tree -m -u {from} {to}")
}

/// Every landing a crash interrupted, finished (the trunk moved: roll forward) or unwound
/// (it did not). What was done, one line each.
pub(crate) fn recover(
    repo: &Repo,
    faults: &Faults,
    here: Here,
) -> Result<Vec<Recovered>, CommitError> {
    let journals = pending(repo).map_err(CommitError::Git)?;
    let dir = repo.shared_path(DIR);
    if journals.is_empty() && journal_file::orphans(&dir).is_empty() {
        return Ok(Vec::new());
    }
    let _lock = WriterLock::acquire(repo).map_err(|e| CommitError::Git(e.to_string()))?;
    journal_file::remove_orphans(&dir);
    let mut done = Vec::new();
    // Under the lock, only journals that are still there: one read before it may be a live
    // landing's (it holds the lock while its journal exists) or one another call recovered.
    for (path, journal) in pending(repo).map_err(CommitError::Git)? {
        let (message, complete, landed) = recover_one(repo, &journal, faults, here)?;
        done.push(Recovered {
            branch: journal.branch.clone(),
            landed,
            message,
        });
        if complete {
            std::fs::remove_file(&path)
                .map_err(|e| git_error("cannot remove the landing journal", e))?;
        }
    }
    Ok(done)
}

/// Whether recovery may remove the worktree the caller stands in: only `accept` itself, which
/// removes its own worktree when it lands, may.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Here {
    Keep,
    Remove,
}

/// One interrupted landing, settled.
#[derive(Debug, Clone)]
pub(crate) struct Recovered {
    pub branch: String,
    /// The landed commit, when the trunk had moved (the landing was finished, not unwound).
    pub landed: Option<ObjectId>,
    /// What was done, for people.
    pub message: String,
}

/// What recovering one landing did, and whether it is complete (a call inside the landed
/// effort's own worktree leaves its removal to a call from elsewhere).
fn recover_one(
    repo: &Repo,
    journal: &LandingJournal,
    faults: &Faults,
    here: Here,
) -> Result<(String, bool, Option<ObjectId>), CommitError> {
    let (from, head) = ids(journal)?;
    // A lock the crashed landing itself left (its claim proves it) would stop the repair;
    // one it cannot prove is discern's stops recovery, journal kept, claim and all.
    if let Some(lock) = super::owned_lock::still_held(&journal.locks) {
        return Err(CommitError::Locked(lock));
    }
    let trunk = repo
        .branch_commit(&journal.trunk)
        .map_err(|e| git_error("cannot read the trunk", e))?;
    let moved = trunk.is_some_and(|t| t == head || repo.is_ancestor(head, t));
    if !moved {
        let message = format!(
            "An interrupted landing of {} was unwound: the trunk {} never moved.",
            journal.branch, journal.trunk
        );
        return Ok((message, true, None));
    }
    let note_error = match repo.note(super::NOTES_REF, head) {
        Ok(Some(_)) => None,
        _ => write_note(repo, head, journal.note.as_bytes())
            .err()
            .map(|e| e.to_string()),
    };
    let main = Repo::discover(&journal.main).ok();
    // The main checkout follows only if it still shows the trunk as it was before the landing.
    let behind = main.as_ref().is_some_and(|m| {
        journal.main_on_trunk
            && m.git(&["diff-index", "--cached", "--quiet", &from.to_string()])
                .is_ok()
    });
    // A follow killed midway may have written files it adds before the index: they go first
    // (only untracked ones at added paths, written since the landing began).
    let since = journal.locks.first().map(|c| c.since_ns);
    if let (true, Some(main), Some(since)) = (behind, main.as_ref(), since) {
        super::merging::remove_added_leftovers(main, from, head, since)?;
    }
    let mut finishing = journal.clone();
    finishing.main_on_trunk = behind;
    // Inside the landed effort's worktree, that worktree is not removed from under the caller
    // (unless the caller is the landing's own verb, which removes it when it lands).
    let inside = here == Here::Keep && same_dir(repo.root(), &journal.worktree);
    let landed = match inside {
        true => Landed {
            note_written: note_error.is_none(),
            note_error,
            main_updated: behind.then(|| {
                main.as_ref()
                    .map_or(Err(String::new()), |m| follow(m, from, head))
            }),
            worktree_removed: false,
            branch_deleted: false,
        },
        false => finish(main.as_ref(), &finishing, from, head, note_error, faults),
    };
    let message = format!(
        "An interrupted landing of {} on {} was finished (note {}, main checkout {}, worktree {}, branch {}).",
        journal.branch,
        journal.trunk,
        if landed.note_written {
            "written"
        } else {
            "NOT written"
        },
        match landed.main_updated {
            None => "unchanged",
            Some(Ok(())) => "updated",
            Some(Err(_)) => "NOT updated",
        },
        if landed.worktree_removed {
            "removed"
        } else {
            "kept"
        },
        if landed.branch_deleted {
            "deleted"
        } else {
            "kept"
        },
    );
    Ok((message, !inside, Some(head)))
}

pub(super) fn same_dir(a: &Path, b: &Path) -> bool {
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_owned());
    canonical(a) == canonical(b)
}

/// The landing journals a crash left, for read-only verbs to report (they write nothing).
pub(crate) fn pending(repo: &Repo) -> Result<Vec<(PathBuf, LandingJournal)>, String> {
    super::journal_file::read_all(
        &repo.shared_path(DIR),
        "inspect the trunk and delete it",
        |j: &LandingJournal| j.version,
        VERSION,
    )
}
