//! A snapshot's listing checked against the object ids it came from: the commit and every tree
//! read back and hashed as git hashes them, so a listing taken from an object store something
//! else may have written to (an earlier step of a CI job, say) is the commit's or a refusal.

use gix::ObjectId;
use gix::objs::Kind;

use super::Snapshot;
use super::listing::{Check, MAX_DEPTH};

/// Why a snapshot's listing is not the commit's.
#[derive(Debug, thiserror::Error)]
pub enum ListingError {
    #[error("object {id} cannot be read: {message}")]
    Unreadable { id: ObjectId, message: String },
    #[error(
        "object {id} reads back as content whose id is {found}: the object store was changed after it was written"
    )]
    Tampered { id: ObjectId, found: ObjectId },
    #[error("commit {commit} names tree {named}, not the tree {listed} that was listed")]
    OtherTree {
        commit: ObjectId,
        named: ObjectId,
        listed: ObjectId,
    },
    #[error("the listing differs from the trees it was read from at {path}")]
    Differs { path: String },
    #[error(
        "{path}: trees nest deeper than {max} levels, deeper than git itself reads (core.maxTreeDepth); a commit with such a tree cannot be measured: flatten the directories in a new commit",
        max = MAX_DEPTH
    )]
    TooDeep { path: String },
}

impl Snapshot {
    /// Check that the commit names this snapshot's tree and that every tree below it, read back
    /// and hashed, lists exactly this snapshot's entries (names that are not UTF-8 excepted, as
    /// when listing). Blob contents are checked as they are read ([`Snapshot::verifying`]).
    pub fn verify_listing(&self) -> Result<(), ListingError> {
        let repo = self.repo.to_thread_local();
        if !self.worktree {
            let data = verified(&repo, self.commit, Kind::Commit)?;
            let named = gix::objs::CommitRef::from_bytes(&data, self.commit.kind())
                .map_err(|e| unreadable(self.commit, e))?
                .tree();
            if named != self.tree {
                return Err(ListingError::OtherTree {
                    commit: self.commit,
                    named,
                    listed: self.tree,
                });
            }
        }
        let listed = super::listing::list(&repo, self.tree, Check::Hashed, self.entries.len())?;
        let (theirs, ours) = (&listed.entries[..], &self.entries[..]);
        let differs = (0..theirs.len().max(ours.len())).find_map(|i| {
            let (a, b) = (theirs.get(i), ours.get(i));
            (a != b).then_some(a.or(b)).flatten()
        });
        match differs {
            Some(entry) => Err(ListingError::Differs {
                path: entry.path.to_string(),
            }),
            None => Ok(()),
        }
    }
}

/// The bytes of object `id`, which must be a `kind` whose content hashes to `id`.
fn verified(repo: &gix::Repository, id: ObjectId, kind: Kind) -> Result<Vec<u8>, ListingError> {
    Ok(object(repo, id, kind, Check::Hashed)?.detach().data)
}

/// Object `id`, which must be a `kind` (and, `Verified`, hash to `id`).
pub(super) fn object(
    repo: &gix::Repository,
    id: ObjectId,
    kind: Kind,
    check: Check,
) -> Result<gix::Object<'_>, ListingError> {
    let object = repo.find_object(id).map_err(|e| unreadable(id, e))?;
    if object.kind != kind {
        return Err(ListingError::Unreadable {
            id,
            message: format!("it is a {}, not a {kind}", object.kind),
        });
    }
    if check == Check::Hashed {
        check_hash(id, kind, &object.data)?;
    }
    Ok(object)
}

/// `data`, a `kind`, must hash to `id`.
fn check_hash(id: ObjectId, kind: Kind, data: &[u8]) -> Result<(), ListingError> {
    let found = gix::objs::compute_hash(id.kind(), kind, data).map_err(|e| unreadable(id, e))?;
    match found == id {
        true => Ok(()),
        false => Err(ListingError::Tampered { id, found }),
    }
}

pub(super) fn unreadable(id: ObjectId, e: impl std::fmt::Display) -> ListingError {
    ListingError::Unreadable {
        id,
        message: e.to_string(),
    }
}

#[cfg(test)]
#[path = "verified_tests.rs"]
mod tests;
