//! A snapshot's listing checked against the object ids it came from: the commit and every tree
//! read back and hashed as git hashes them, so a listing taken from an object store something
//! else may have written to (an earlier step of a CI job, say) is the commit's or a refusal.

use gix::ObjectId;
use gix::objs::Kind;

use super::Snapshot;
use super::listing::ListingError;
use super::listing::{Check, object, unreadable};

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
        let listed = super::listing::list(&repo, self.tree, Check::Hashed)?;
        let (mut theirs, mut ours) = (listed.entries.iter(), self.entries.iter());
        let differs = std::iter::from_fn(|| match (theirs.next(), ours.next()) {
            (None, None) => None,
            pair => Some(pair),
        })
        .find_map(|(a, b)| (a != b).then_some(a.or(b)).flatten());
        match differs {
            Some(entry) => Err(ListingError::Differs {
                path: entry.path().to_string(),
            }),
            None => Ok(()),
        }
    }
}

/// The bytes of object `id`, which must be a `kind` whose content hashes to `id`.
fn verified(repo: &gix::Repository, id: ObjectId, kind: Kind) -> Result<Vec<u8>, ListingError> {
    Ok(object(repo, id, kind, Check::Hashed)?.detach().data)
}

#[cfg(test)]
#[path = "verified_tests.rs"]
mod tests;
