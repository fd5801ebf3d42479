//! An approved change landed by a merge of the approved head itself: a merge queue's entry
//! (`gh-readonly-queue/<trunk>/pr-N-…`: the previous entry, or the trunk, with the pull request
//! merged) or the merge button after the trunk moved. The approval names the net change from
//! the trunk commit it was judged against to the approved head; when the trunk moved on a path
//! the change touches too (two approved loosenings both edit `discern.toml`), the merge's net
//! change is another digest, yet what lands is exactly the approved change brought onto the
//! moved trunk. It counts when the merge's second parent is a head whose net change is the
//! approved one, its first parent is the range's start, outside `discern.toml` the merge does to
//! the tree exactly what the approved change does (the trunk moved on no other path the change
//! touches: other code would not be what the owner approved), and its tree is the one git's own
//! merge of the two gives — the merge adds nothing of its own. `discern.toml` is judged by its
//! items, as before: exactly the range's changes to the gate, against the moved trunk's limits.

use gix::ObjectId;

use crate::git::{Repo, RepoError};

/// What an approval names: the trunk commit it was judged against, and the digest of the net
/// change from there to the head it approved.
pub(crate) struct Approved<'a> {
    pub base_commit: &'a str,
    pub change: &'a str,
}

/// Whether `from..to` is a merge of the head `approved` names onto `from`, adding nothing of
/// its own.
pub(crate) fn lands_approved_head(
    repo: &Repo,
    approved: Approved<'_>,
    (from, to): (ObjectId, ObjectId),
) -> Result<bool, RepoError> {
    let [first, head] = repo.parents(to)?[..] else {
        return Ok(false);
    };
    let Ok(base) = approved.base_commit.parse::<ObjectId>() else {
        return Ok(false);
    };
    if first != from || super::change::net_change(repo, base, head)? != approved.change {
        return Ok(false);
    }
    let config = Some(crate::config::FILE);
    let outside = super::change::net_change_outside(repo, base, head, config)?;
    if super::change::net_change_outside(repo, from, to, config)? != outside {
        return Ok(false);
    }
    Ok(merged_tree(repo, first, head)? == Some(repo.tree_of(to)?))
}

/// The tree git's merge of `ours` and `theirs` gives (`git merge-tree --write-tree`); `None`
/// when it conflicts.
fn merged_tree(
    repo: &Repo,
    ours: ObjectId,
    theirs: ObjectId,
) -> Result<Option<ObjectId>, RepoError> {
    let (ours, theirs) = (ours.to_string(), theirs.to_string());
    let args = [
        "merge-tree",
        "--write-tree",
        "--no-messages",
        &ours,
        &theirs,
    ];
    // A conflict exits 1: no tree stands for the merge.
    let Ok(out) = repo.git(&args) else {
        return Ok(None);
    };
    Ok(out
        .lines()
        .next()
        .and_then(|line| line.trim().parse::<ObjectId>().ok()))
}
