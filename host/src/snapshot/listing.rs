//! A tree listed into a snapshot's entries: one depth-first walk, each file pushed as it is
//! met, in git's tree order (which is the order of the full paths, so the listing comes out
//! sorted). No intermediate record of the walk is held: at 200,000 files that record was a
//! second listing, alive while the first was built.

use gix::ObjectId;
use gix::objs::Kind;
use gix::objs::tree::EntryMode;

use super::entry::{ListingBuilder, TooLarge};
use super::{Entries, EntryKind, escape};

/// How many directories deep a path may be: git's own `core.maxTreeDepth` default (git 2.47
/// lists a file 2,048 directories deep and refuses one 2,049 deep). A deeper tree is refused,
/// as git refuses it.
pub(super) const MAX_DEPTH: usize = 2048;

/// Why a tree cannot be listed, or its listing is not the commit's.
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
        "{path}: directories nest deeper than {max} levels, deeper than git itself reads (core.maxTreeDepth); a commit with such a tree cannot be measured: flatten the directories in a new commit",
        max = MAX_DEPTH
    )]
    TooDeep { path: String },
    #[error("{0}: a listing this large cannot be measured")]
    TooLarge(#[from] TooLarge),
}

/// Whether each object read is hashed and compared with its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Check {
    /// As the object store gives it.
    AsStored,
    /// Hashed as git hashes it: an object rewritten in place is refused.
    Hashed,
}

/// The files below one tree, sorted by path.
#[derive(Debug, Default)]
pub(super) struct Listed {
    pub entries: Entries,
    /// Paths whose names are not UTF-8, escaped: no snapshot holds them.
    pub skipped: Vec<String>,
}

/// A tree being walked: its entries not yet visited, and where its path ends.
struct Frame {
    entries: std::vec::IntoIter<gix::objs::tree::Entry>,
    prefix: usize,
}

/// List every file below `root`.
pub(super) fn list(
    repo: &gix::Repository,
    root: ObjectId,
    check: Check,
) -> Result<Listed, ListingError> {
    let mut listing = ListingBuilder::default();
    let mut skipped = Vec::new();
    let mut path = Vec::new();
    let mut stack = vec![frame(repo, root, check, 0)?];
    while let Some(top) = stack.last_mut() {
        let Some(entry) = top.entries.next() else {
            stack.pop();
            continue;
        };
        path.truncate(top.prefix);
        path.extend_from_slice(&entry.filename);
        if entry.mode.is_tree() {
            // The stack holds the root and a tree a directory: this one is `stack.len()` deep.
            if stack.len() > MAX_DEPTH {
                return Err(ListingError::TooDeep {
                    path: escape(&path),
                });
            }
            path.push(b'/');
            stack.push(frame(repo, entry.oid, check, path.len())?);
            continue;
        }
        match std::str::from_utf8(&path) {
            Ok(name) => {
                let kind = EntryKind::of(entry.mode);
                listing.push(name, (entry.oid, entry.mode.is_executable(), kind))?;
            }
            Err(_) => skipped.push(escape(&path)),
        }
    }
    // Already in order for any tree git wrote; a tree whose entries are out of order (crafted)
    // is listed in order all the same.
    let entries = listing.entries();
    skipped.sort_unstable();
    Ok(Listed { entries, skipped })
}

/// The walk's frame for tree `id`, whose path ends at `prefix`.
fn frame(
    repo: &gix::Repository,
    id: ObjectId,
    check: Check,
    prefix: usize,
) -> Result<Frame, ListingError> {
    let object = object(repo, id, Kind::Tree, check)?;
    let tree =
        gix::objs::TreeRef::from_bytes(&object.data, id.kind()).map_err(|e| unreadable(id, e))?;
    Ok(Frame {
        entries: gix::objs::Tree::from(tree).entries.into_iter(),
        prefix,
    })
}

/// Object `id`, which must be a `kind` (and, `Check::Hashed`, hash to `id`).
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

impl EntryKind {
    /// What a tree entry of `mode` is in a listing (a subtree is walked, never listed).
    pub(super) fn of(mode: EntryMode) -> EntryKind {
        if mode.is_commit() {
            EntryKind::Submodule
        } else if mode.is_link() {
            EntryKind::Symlink
        } else {
            EntryKind::Blob
        }
    }
}

#[cfg(test)]
#[path = "listing_tests.rs"]
mod tests;
