//! A revert judged as what it is. When the trunk's tip undoes a change of the gate that never
//! had the owner's approval — the tip's gate is exactly that of a first-parent ancestor from
//! before the change — the tip changes nothing: it is judged from that ancestor, never as a
//! second change against the unapproved one. Only what was never in force may be undone so: the
//! stretch undone carries no approval (no landing's Proof note, no approval in the tree), and
//! going back to the ancestor loosens no limit and deletes nothing the stretch did not add; and
//! the ancestor's gate itself got there legitimately (`trunk::legitimate`), so re-applying a
//! change after its revert is no revert.

use gix::ObjectId;

use super::range::net_change;
use crate::git::{Repo, RepoError};

/// How far back the gate the tip restores is looked for.
const SEARCH: usize = 200;

/// The first-parent ancestor of `base` whose gate `head` restores exactly, when everything
/// from it to `base` is an unapproved change that restoring it undoes; `None` otherwise.
pub(super) fn restored(
    repo: &Repo,
    base: ObjectId,
    head: ObjectId,
) -> Result<Option<ObjectId>, RepoError> {
    let mut stepped = base;
    for _ in 0..SEARCH {
        // A landing's note on a commit stepped over: what it landed may have been approved.
        if repo.note(crate::commit::NOTES_REF, stepped)?.is_some() {
            return Ok(None);
        }
        let Some(candidate) = repo.first_parent(stepped)? else {
            return Ok(None);
        };
        if same_gate(repo, candidate, head)? {
            return Ok(undoes_only_unapproved(repo, candidate, base)?.then_some(candidate));
        }
        stepped = candidate;
    }
    Ok(None)
}

/// The commit that made `at`'s gate what it is: walking back the first-parent chain while the
/// gate stays the same, the last commit reached (`None` past [`SEARCH`] commits).
pub(super) fn establishing(repo: &Repo, at: ObjectId) -> Result<Option<ObjectId>, RepoError> {
    let mut commit = at;
    for _ in 0..SEARCH {
        match repo.first_parent(commit)? {
            Some(parent) if same_gate(repo, parent, commit)? => commit = parent,
            _ => return Ok(Some(commit)),
        }
    }
    Ok(None)
}

/// Whether `a` and `b` define the same gate: nothing only the owner may change differs either
/// way (a tighter limit one way is a looser one the other).
fn same_gate(repo: &Repo, a: ObjectId, b: ObjectId) -> Result<bool, RepoError> {
    Ok(net_change(repo, a, b)?.is_empty() && net_change(repo, b, a)?.is_empty())
}

/// Whether going back from `base` to its ancestor `restored` only undoes changes that needed an
/// approval they never had: no approval was added in between, and the way back loosens no limit
/// and makes no protected change the way forward did not make.
fn undoes_only_unapproved(
    repo: &Repo,
    restored: ObjectId,
    base: ObjectId,
) -> Result<bool, RepoError> {
    if !crate::approval::tree::added(repo, restored, base)?.is_empty() {
        return Ok(false);
    }
    let forward = net_change(repo, restored, base)?;
    let back = net_change(repo, base, restored)?;
    let made = |key: &str| forward.protected.iter().any(|p| p.key == key);
    Ok(!forward.is_empty()
        && back.loosened.is_empty()
        && back.protected.iter().all(|p| made(&p.key)))
}
