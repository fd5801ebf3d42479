//! A snapshot's listing checked against the object ids it came from: the commit and every tree
//! read back and hashed as git hashes them, so a listing taken from an object store something
//! else may have written to (an earlier step of a CI job, say) is the commit's or a refusal.

use gix::ObjectId;
use gix::objs::Kind;

use super::{EntryKind, Snapshot};

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
        let mut listed = Vec::with_capacity(self.entries.len());
        walk(&repo, self.tree, "", &mut listed)?;
        listed.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut ours = self.entries.iter();
        for (path, id, kind, executable) in listed {
            match ours.next() {
                Some(e) if e.path == path && e.id == id && e.kind == kind => {
                    if e.executable != executable {
                        return Err(ListingError::Differs { path });
                    }
                }
                _ => return Err(ListingError::Differs { path }),
            }
        }
        match ours.next() {
            Some(extra) => Err(ListingError::Differs {
                path: extra.path.clone(),
            }),
            None => Ok(()),
        }
    }
}

/// One listed file: path, id, kind, executable.
type Listed = (String, ObjectId, EntryKind, bool);

/// List the files under tree `id` (checked) into `out`, each under `prefix`.
fn walk(
    repo: &gix::Repository,
    id: ObjectId,
    prefix: &str,
    out: &mut Vec<Listed>,
) -> Result<(), ListingError> {
    let data = verified(repo, id, Kind::Tree)?;
    let tree = gix::objs::TreeRef::from_bytes(&data, id.kind()).map_err(|e| unreadable(id, e))?;
    for entry in tree.entries {
        // A name that is not UTF-8 is left out of every snapshot (and named in an advisory).
        let Ok(name) = std::str::from_utf8(entry.filename) else {
            continue;
        };
        let path = format!("{prefix}{name}");
        let oid = entry.oid.to_owned();
        if entry.mode.is_tree() {
            walk(repo, oid, &format!("{path}/"), out)?;
            continue;
        }
        let kind = if entry.mode.is_commit() {
            EntryKind::Submodule
        } else if entry.mode.is_link() {
            EntryKind::Symlink
        } else {
            EntryKind::Blob
        };
        out.push((path, oid, kind, entry.mode.is_executable()));
    }
    Ok(())
}

/// The bytes of object `id`, which must be a `kind` whose content hashes to `id`.
fn verified(repo: &gix::Repository, id: ObjectId, kind: Kind) -> Result<Vec<u8>, ListingError> {
    let object = repo.find_object(id).map_err(|e| unreadable(id, e))?;
    if object.kind != kind {
        return Err(ListingError::Unreadable {
            id,
            message: format!("it is a {}, not a {kind}", object.kind),
        });
    }
    let found =
        gix::objs::compute_hash(id.kind(), kind, &object.data).map_err(|e| unreadable(id, e))?;
    match found == id {
        true => Ok(object.detach().data),
        false => Err(ListingError::Tampered { id, found }),
    }
}

fn unreadable(id: ObjectId, e: impl std::fmt::Display) -> ListingError {
    ListingError::Unreadable {
        id,
        message: e.to_string(),
    }
}

#[cfg(test)]
#[path = "verified_tests.rs"]
mod tests;
