//! The refs `discern sync` moves: discern's notes and published evidence, and their remote-
//! tracking copies. Each move is a compare-and-swap on the ref, so a concurrent writer (a
//! landing writing its Proof note) makes the move fail and the sync start over, never lose a
//! note.

use gix::ObjectId;
use gix::refs::transaction::PreviousValue;

use super::{CommitError, apply, git_error, identity, ref_edit, update};
use crate::git::Repo;

/// Point `name` at `new`, if it still points at `expected` (`None`: if it does not exist).
pub fn set_ref(
    repo: &Repo,
    name: &str,
    expected: Option<ObjectId>,
    new: ObjectId,
    message: &str,
) -> Result<(), CommitError> {
    let expected = match expected {
        Some(old) => PreviousValue::MustExistAndMatch(gix::refs::Target::Object(old)),
        None => PreviousValue::MustNotExist,
    };
    apply(repo, ref_edit(name, update(message, expected, new))?)
}

/// A commit of `tree` with `parents`, as discern's identity wrote it.
pub fn write_commit(
    repo: &Repo,
    tree: ObjectId,
    parents: &[ObjectId],
    message: &str,
) -> Result<ObjectId, CommitError> {
    let commit = gix::objs::Commit {
        tree,
        parents: parents.iter().copied().collect(),
        author: identity("GIT_AUTHOR_IDENT", repo),
        committer: identity("GIT_COMMITTER_IDENT", repo),
        encoding: None,
        message: format!("{message}\n").into(),
        extra_headers: Vec::new(),
    };
    Ok(repo
        .local()
        .write_object(&commit)
        .map_err(|e| git_error("cannot write a commit", e))?
        .detach())
}

/// The tree of `base` (empty for `None`) with `files` written (path → content) and `removed`
/// paths taken out.
pub fn edit_tree(
    repo: &Repo,
    base: Option<ObjectId>,
    files: &[(String, Vec<u8>)],
    removed: &[String],
) -> Result<ObjectId, CommitError> {
    let local = repo.local();
    let base = base.unwrap_or_else(|| ObjectId::empty_tree(gix::hash::Kind::Sha1));
    let mut editor = local
        .edit_tree(base)
        .map_err(|e| git_error("cannot edit a tree", e))?;
    for (path, content) in files {
        let blob = local
            .write_blob(content)
            .map_err(|e| git_error("cannot write a blob", e))?
            .detach();
        editor
            .upsert(path.as_str(), gix::object::tree::EntryKind::Blob, blob)
            .map_err(|e| git_error("cannot edit a tree", e))?;
    }
    for path in removed {
        editor
            .remove(path.as_str())
            .map_err(|e| git_error("cannot edit a tree", e))?;
    }
    Ok(editor
        .write()
        .map_err(|e| git_error("cannot write a tree", e))?
        .detach())
}

/// The tree of the commit `commit`.
pub fn tree_of(repo: &Repo, commit: ObjectId) -> Result<ObjectId, CommitError> {
    Ok(repo
        .local()
        .find_commit(commit)
        .and_then(|c| c.tree_id())
        .map_err(|e| git_error("cannot read a commit's tree", e))?
        .detach())
}
