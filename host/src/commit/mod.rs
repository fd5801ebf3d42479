//! The only code that writes refs: one config-only commit with a compare-and-swap.
//!
//! Build the new `discern.toml` blob, tree and commit (parent = the measured HEAD), move the
//! branch only if it still points at that HEAD, then bring the index entry and the work-tree
//! file in line. If anything fails after the ref moved, the guard moves it back (again with a
//! compare-and-swap) and restores the file and the index: the repository is left exactly as
//! it was, or exactly as intended.

#[cfg(debug_assertions)]
use std::process::Command;

use gix::ObjectId;
use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};

use crate::config::FILE;
use crate::git::Repo;

pub(crate) mod abandon;
pub(crate) mod approval;
pub(crate) mod fork;
mod journal_file;
pub(crate) mod landing;
pub(crate) mod lock;
pub(crate) mod merging;
pub(crate) mod owned_lock;
pub(crate) mod shared_refs;
mod transaction;
mod worktree_file;

pub(crate) use approval::{ApprovalCommit, approval_commit};
pub(crate) use transaction::{
    ConfigCommit, RENEWAL, Recovery, StateFile, check_shape, config_only_commit, pending, recover,
};
pub(crate) use worktree_file::{sync_file, sync_worktree, unstage};

/// Named steps where a test build can stop the process (see [`Faults`]).
pub(crate) mod step {
    pub(crate) const OBJECTS_WRITTEN: &str = "objects-written";
    pub(crate) const JOURNAL_WRITTEN: &str = "journal-written";
    pub const REF_MOVED: &str = "ref-moved";
    pub(crate) const WORKTREE_SYNCED: &str = "worktree-synced";
    pub(crate) const PAYLOAD_WRITTEN: &str = "payload-written";
    /// Every step, in order.
    pub const ALL: &[&str] = &[
        OBJECTS_WRITTEN,
        JOURNAL_WRITTEN,
        REF_MOVED,
        WORKTREE_SYNCED,
        PAYLOAD_WRITTEN,
    ];
}

/// Fault injection for tests, compiled into debug builds only (release builds have no hook):
/// `DISCERN_FAULT=<step>` aborts the process when the transaction reaches that step, the way a
/// crash or a kill would; `DISCERN_FAULT_EXEC=<step>:<command>` runs a shell command there (a
/// concurrent writer, say).
#[derive(Debug, Clone, Default)]
pub struct Faults {
    #[cfg(debug_assertions)]
    pub abort_at: Option<String>,
    #[cfg(debug_assertions)]
    pub exec_at: Option<(String, String)>,
}

impl Faults {
    pub fn from_env() -> Self {
        Self {
            #[cfg(debug_assertions)]
            abort_at: std::env::var("DISCERN_FAULT")
                .ok()
                .filter(|s| !s.is_empty()),
            #[cfg(debug_assertions)]
            exec_at: std::env::var("DISCERN_FAULT_EXEC").ok().and_then(|v| {
                v.split_once(':')
                    .map(|(step, command)| (step.to_owned(), command.to_owned()))
            }),
        }
    }

    pub fn point(&self, _step: &str) {
        #[cfg(debug_assertions)]
        {
            if let Some((step, command)) = &self.exec_at
                && step == _step
            {
                let _ = Command::new("sh").arg("-c").arg(command).status();
            }
            if self.abort_at.as_deref() == Some(_step) {
                eprintln!("discern: injected fault at {_step}");
                std::process::abort();
            }
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CommitError {
    #[error("HEAD is detached; limits change only on a named branch: check out a branch first")]
    Detached,
    #[error("a {0} is in progress; finish or abort it first")]
    InProgress(&'static str),
    #[error("staged changes exist ({0}); commit or unstage them first")]
    Staged(String),
    #[error(
        "the branch {branch} moved from {expected} to {found} since it was measured; nothing was written, measure again"
    )]
    Moved {
        branch: String,
        expected: String,
        found: String,
    },
    #[error(
        "the commit would change nothing: the limits are already exactly these (another writer made the same change first)"
    )]
    Unchanged,
    #[error(
        "discern.toml at HEAD is not the one these limits were edited from (another writer committed first); nothing was written, measure again"
    )]
    ConfigChanged,
    #[error(
        "{path} exists: another git process holds it, or one was killed while holding it. Check with `fuser {path}` (or `lsof {path}`); only if no process holds it, delete it, then run the command again",
        path = .0.display()
    )]
    Locked(std::path::PathBuf),
    #[error("{0}")]
    Git(String),
}

pub(crate) fn git_error(what: &str, e: impl std::fmt::Display) -> CommitError {
    CommitError::Git(format!("{what}: {e}"))
}

/// The branch HEAD is on, if a config-only commit may be made on it now.
pub(crate) fn preflight(repo: &Repo) -> Result<String, CommitError> {
    let branch = repo
        .branch()
        .map_err(|e| git_error("cannot read HEAD", e))?
        .ok_or(CommitError::Detached)?;
    let git_dir = repo.git_dir();
    for (marker, what) in [
        ("MERGE_HEAD", "merge"),
        ("rebase-merge", "rebase"),
        ("rebase-apply", "rebase"),
        ("CHERRY_PICK_HEAD", "cherry-pick"),
        ("REVERT_HEAD", "revert"),
        ("BISECT_LOG", "bisect"),
    ] {
        if git_dir.join(marker).exists() {
            return Err(CommitError::InProgress(what));
        }
    }
    let staged = staged_when_settled(repo)?;
    if !staged.is_empty() {
        return Err(CommitError::Staged(staged.join(", ")));
    }
    Ok(branch)
}

/// The paths the index stages against HEAD, read again under the writer lock when there are
/// any: another writer's transaction moves the branch before it brings the index along, and
/// what shows between the two is that writer's, not the caller's.
fn staged_when_settled(repo: &Repo) -> Result<Vec<String>, CommitError> {
    let read = || {
        repo.staged_paths()
            .map_err(|e| git_error("cannot read the index", e))
    };
    let staged = read()?;
    if staged.is_empty() {
        return Ok(staged);
    }
    let _settled = lock::WriterLock::acquire(repo).map_err(|e| CommitError::Git(e.to_string()))?;
    read()
}

/// Write blob, tree and commit for `content` as the new `discern.toml` on top of `parent`.
pub(crate) fn write_objects(
    repo: &Repo,
    parent: ObjectId,
    content: &[u8],
    message: &str,
) -> Result<(ObjectId, ObjectId), CommitError> {
    write_file_objects(repo, parent, FILE, content, message)
}

/// Write blob, tree and commit for `content` as the new `path` on top of `parent`.
pub(crate) fn write_file_objects(
    repo: &Repo,
    parent: ObjectId,
    path: &str,
    content: &[u8],
    message: &str,
) -> Result<(ObjectId, ObjectId), CommitError> {
    let local = repo.local();
    let blob = local
        .write_blob(content)
        .map_err(|e| git_error("cannot write the config blob", e))?
        .detach();
    let parent_tree = local
        .find_commit(parent)
        .and_then(|c| c.tree_id())
        .map_err(|e| git_error("cannot read the parent commit", e))?
        .detach();
    let mut editor = local
        .edit_tree(parent_tree)
        .map_err(|e| git_error("cannot edit the tree", e))?;
    editor
        .upsert(path, gix::object::tree::EntryKind::Blob, blob)
        .map_err(|e| git_error("cannot edit the tree", e))?;
    let tree = editor
        .write()
        .map_err(|e| git_error("cannot write the tree", e))?
        .detach();
    let commit = gix::objs::Commit {
        tree,
        parents: [parent].into_iter().collect(),
        author: identity("GIT_AUTHOR_IDENT", repo),
        committer: identity("GIT_COMMITTER_IDENT", repo),
        encoding: None,
        message: message.into(),
        extra_headers: Vec::new(),
    };
    let id = local
        .write_object(&commit)
        .map_err(|e| git_error("cannot write the commit", e))?
        .detach();
    Ok((id, blob))
}

/// Move `branch` from `expected` to `new`, only if it still points at `expected`.
pub(crate) fn move_branch(
    repo: &Repo,
    branch: &str,
    expected: ObjectId,
    new: ObjectId,
    reason: &str,
) -> Result<(), CommitError> {
    let edit = ref_edit(
        &format!("refs/heads/{branch}"),
        update(
            reason,
            PreviousValue::MustExistAndMatch(gix::refs::Target::Object(expected)),
            new,
        ),
    )?;
    apply(repo, edit).map_err(|e| {
        let found = repo.branch_commit(branch).ok().flatten();
        if found != Some(expected) {
            CommitError::Moved {
                branch: branch.to_owned(),
                expected: expected.to_string(),
                found: found.map_or_else(|| "nothing".to_owned(), |c| c.to_string()),
            }
        } else {
            e
        }
    })
}

/// A ref update with a reflog entry, refused unless the ref's current value is `expected`.
fn update(message: &str, expected: PreviousValue, new: ObjectId) -> Change {
    Change::Update {
        log: LogChange {
            mode: RefLog::AndReference,
            force_create_reflog: false,
            message: message.into(),
        },
        expected,
        new: gix::refs::Target::Object(new),
    }
}

fn ref_edit(name: &str, change: Change) -> Result<RefEdit, CommitError> {
    let name: gix::refs::FullName = name
        .try_into()
        .map_err(|e| git_error("invalid ref name", e))?;
    Ok(RefEdit {
        change,
        name,
        deref: false,
    })
}

fn apply(repo: &Repo, edit: RefEdit) -> Result<(), CommitError> {
    let committer = identity("GIT_COMMITTER_IDENT", repo);
    let mut time = gix::date::parse::TimeBuf::default();
    let lock = repo
        .common_dir()
        .join(format!("{}.lock", edit.name.as_bstr()));
    let packed = repo.common_dir().join("packed-refs.lock");
    repo.local()
        .edit_references_as(Some(edit), Some(committer.to_ref(&mut time)))
        .map(|_| ())
        .map_err(|e| {
            let error = git_error("cannot update the ref", with_causes(&e));
            locked_or(packed.clone(), locked_or(lock.clone(), error))
        })
}

/// An error and every cause beneath it, `: `-separated (gix's top-level messages alone do not
/// say what was wrong).
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text.push_str(&format!(": {c}"));
        cause = c.source();
    }
    text
}

/// Create `refs/heads/<branch>` at `at`; refuses if it exists.
pub(crate) fn create_branch(
    repo: &Repo,
    branch: &str,
    at: ObjectId,
    reason: &str,
) -> Result<(), CommitError> {
    let edit = ref_edit(
        &format!("refs/heads/{branch}"),
        update(reason, PreviousValue::MustNotExist, at),
    )?;
    apply(repo, edit).map_err(|e| match repo.branch_commit(branch) {
        Ok(Some(_)) => CommitError::Git(format!("the branch {branch} already exists")),
        _ => e,
    })
}

/// Delete `refs/heads/<branch>` if it still points at `expected`.
pub(crate) fn delete_branch(
    repo: &Repo,
    branch: &str,
    expected: ObjectId,
) -> Result<(), CommitError> {
    let edit = ref_edit(
        &format!("refs/heads/{branch}"),
        Change::Delete {
            expected: PreviousValue::MustExistAndMatch(gix::refs::Target::Object(expected)),
            log: RefLog::AndReference,
        },
    )?;
    apply(repo, edit)
}

/// The ref the Proof notes live on.
pub(crate) const NOTES_REF: &str = "refs/notes/discern";

/// Attach `note` to `commit` on [`NOTES_REF`] (replacing an earlier note on that commit), as a
/// new notes commit whose parent is the previous notes tip; the ref moves by compare-and-swap.
pub(crate) fn write_note(
    repo: &Repo,
    commit: ObjectId,
    note: &[u8],
) -> Result<ObjectId, CommitError> {
    write_note_on(repo, NOTES_REF, commit, note)
}

/// [`write_note`] on the notes ref `notes_ref`.
pub(crate) fn write_note_on(
    repo: &Repo,
    notes_ref: &str,
    commit: ObjectId,
    note: &[u8],
) -> Result<ObjectId, CommitError> {
    let local = repo.local();
    let previous = local
        .try_find_reference(notes_ref)
        .map_err(|e| git_error("cannot read the notes ref", e))?
        .map(|mut r| r.peel_to_id().map(|id| id.detach()))
        .transpose()
        .map_err(|e| git_error("cannot read the notes ref", e))?;
    let base_tree = match previous {
        Some(tip) => local
            .find_commit(tip)
            .and_then(|c| c.tree_id())
            .map_err(|e| git_error("cannot read the notes tree", e))?
            .detach(),
        None => ObjectId::empty_tree(gix::hash::Kind::Sha1),
    };
    let blob = local
        .write_blob(note)
        .map_err(|e| git_error("cannot write the note", e))?
        .detach();
    let mut editor = local
        .edit_tree(base_tree)
        .map_err(|e| git_error("cannot edit the notes tree", e))?;
    editor
        .upsert(commit.to_string(), gix::object::tree::EntryKind::Blob, blob)
        .map_err(|e| git_error("cannot edit the notes tree", e))?;
    let tree = editor
        .write()
        .map_err(|e| git_error("cannot write the notes tree", e))?
        .detach();
    let notes_commit = gix::objs::Commit {
        tree,
        parents: previous.into_iter().collect(),
        author: identity("GIT_AUTHOR_IDENT", repo),
        committer: identity("GIT_COMMITTER_IDENT", repo),
        encoding: None,
        message: format!("discern: note for {commit}\n").into(),
        extra_headers: Vec::new(),
    };
    let id = local
        .write_object(&notes_commit)
        .map_err(|e| git_error("cannot write the notes commit", e))?
        .detach();
    let expected = match previous {
        Some(tip) => PreviousValue::MustExistAndMatch(gix::refs::Target::Object(tip)),
        None => PreviousValue::MustNotExist,
    };
    apply(
        repo,
        ref_edit(notes_ref, update("discern: note", expected, id))?,
    )?;
    Ok(id)
}

/// `error`, unless the git lock file `lock` exists: then that is what stopped the write.
/// discern never deletes a lock file it did not create; the refusal says how to check it.
pub(super) fn locked_or(lock: std::path::PathBuf, error: CommitError) -> CommitError {
    match lock.exists() {
        true => CommitError::Locked(lock),
        false => error,
    }
}

/// An identity for commits and reflogs, as git itself would use: `git var` honors
/// `GIT_*_NAME/EMAIL/DATE` and the user's config. Falls back to a discern identity.
pub(crate) fn identity(var: &str, repo: &Repo) -> gix::actor::Signature {
    let output = crate::git::command()
        .arg("var")
        .arg(var)
        .current_dir(repo.root())
        .output();
    let text = output
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    text.and_then(|t| parse_ident(&t))
        .unwrap_or_else(|| gix::actor::Signature {
            name: "discern".into(),
            email: "discern@localhost".into(),
            time: gix::date::Time::now_local_or_utc(),
        })
}

/// `Name <email> 1700000000 +0100`.
fn parse_ident(text: &str) -> Option<gix::actor::Signature> {
    let (name, rest) = text.split_once(" <")?;
    let (email, rest) = rest.split_once("> ")?;
    let (seconds, offset) = rest.split_once(' ')?;
    let seconds: i64 = seconds.parse().ok()?;
    let sign = if offset.starts_with('-') { -1 } else { 1 };
    let digits = offset.trim_start_matches(['+', '-']);
    let hours: i32 = digits.get(..2)?.parse().ok()?;
    let minutes: i32 = digits.get(2..4)?.parse().ok()?;
    Some(gix::actor::Signature {
        name: name.into(),
        email: email.into(),
        time: gix::date::Time {
            seconds,
            offset: sign * (hours * 3600 + minutes * 60),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_git_var_identities() {
        let s = parse_ident("Test Author <a@example.com> 1767225600 -0130").expect("test fixture");
        assert_eq!(s.name, "Test Author");
        assert_eq!(s.email, "a@example.com");
        assert_eq!(s.time.seconds, 1_767_225_600);
        assert_eq!(s.time.offset, -5400);
        assert!(parse_ident("garbage").is_none());
    }
}
