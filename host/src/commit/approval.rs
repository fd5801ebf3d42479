//! The approval commit: the owner's signed approval written as one file under
//! `.discern/approvals/` in an approval-only commit on the branch it approves. One journaled
//! transaction under the writer lock, with the same journal and recovery as a config-only
//! commit: a crash is finished (the branch moved: the checkout that has it out follows) or
//! unwound (it did not) by the next writing call.

use gix::ObjectId;

use super::transaction::{JOURNAL_VERSION, Journal, write_journal};
use super::{CommitError, Faults, git_error, move_branch, step, sync_file, write_file_objects};
use crate::git::Repo;

/// The folder approvals are written to.
pub(crate) const DIR: &str = ".discern/approvals";

/// The journal's `kind` for an approval commit.
pub(crate) const KIND: &str = "approval";

/// What an approval commit needs.
pub(crate) struct ApprovalCommit<'a> {
    pub branch: &'a str,
    /// The branch's commit the approval is for: the parent, and the ref's expected value.
    pub head: ObjectId,
    pub path: &'a str,
    pub content: &'a [u8],
    pub message: &'a str,
}

/// Commit the approval file on top of `head` and move the branch there (compare-and-swap);
/// the checkout that has the branch out gets the file and its index entry.
pub(crate) fn approval_commit(
    repo: &Repo,
    commit: &ApprovalCommit<'_>,
    faults: &Faults,
) -> Result<ObjectId, CommitError> {
    let _lock =
        super::lock::WriterLock::acquire(repo).map_err(|e| CommitError::Git(e.to_string()))?;
    let existing = repo
        .file_at(commit.head, commit.path)
        .map_err(|e| git_error("cannot read the branch", e))?;
    if existing.as_deref() == Some(commit.content) {
        return Err(CommitError::Unchanged);
    }
    let (new, blob) = write_file_objects(
        repo,
        commit.head,
        commit.path,
        commit.content,
        commit.message,
    )?;
    faults.point(step::OBJECTS_WRITTEN);
    let checked_out = repo.branch().ok().flatten().as_deref() == Some(commit.branch);
    let mut locks = vec![
        repo.common_dir()
            .join(format!("refs/heads/{}.lock", commit.branch)),
        repo.common_dir().join("packed-refs.lock"),
    ];
    if checked_out {
        locks.push(repo.git_dir().join("index.lock"));
    }
    let journal = Journal {
        version: JOURNAL_VERSION,
        kind: KIND.to_owned(),
        branch: commit.branch.to_owned(),
        head: commit.head.to_string(),
        commit: new.to_string(),
        path: commit.path.to_owned(),
        content: String::from_utf8_lossy(commit.content).into_owned(),
        files: Vec::new(),
        locks: super::owned_lock::claim(locks),
    };
    let journal_path = write_journal(repo, &journal)?;
    faults.point(step::JOURNAL_WRITTEN);
    let reason = format!(
        "commit: {}",
        commit.message.lines().next().unwrap_or("approval")
    );
    if let Err(e) = move_branch(repo, commit.branch, commit.head, new, &reason) {
        let _ = std::fs::remove_file(&journal_path);
        return Err(e);
    }
    faults.point(step::REF_MOVED);
    if checked_out {
        sync_file(repo, commit.path, commit.content, blob)?;
    }
    faults.point(step::WORKTREE_SYNCED);
    std::fs::remove_file(&journal_path).map_err(|e| git_error("cannot remove the journal", e))?;
    Ok(new)
}

/// The commit beneath any approval-only commits on top of `head` (each with one parent and
/// nothing changed but files under [`DIR`]): what was proven and proposed. An approval commit
/// adds no code, so the Proof and the proposals of the commit below it still hold for it (the
/// landing judges HEAD's Standards again regardless).
pub(crate) fn beneath_approvals(
    repo: &Repo,
    head: ObjectId,
) -> Result<ObjectId, crate::git::RepoError> {
    let prefix = format!("{DIR}/");
    let mut at = head;
    loop {
        let parents = repo.parents(at)?;
        let [parent] = parents[..] else {
            return Ok(at);
        };
        let changed = repo.changed_between(parent, at)?;
        if changed.is_empty() || !changed.iter().all(|p| p.starts_with(&prefix)) {
            return Ok(at);
        }
        at = parent;
    }
}
