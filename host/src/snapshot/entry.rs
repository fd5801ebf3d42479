//! A listing's entries, their paths one after another in one buffer that the entries share: a
//! path costs its bytes, not an allocation of its own beside each entry (at 200,000 files, 5 MB
//! less, and no 200,000 small allocations interleaved with the trees read while listing). A
//! nearby snapshot's unchanged entries share the buffer of the listing they came from.

use std::fmt;
use std::sync::Arc;

use gix::ObjectId;

/// What a tracked path is in the commit's tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    Blob,
    Symlink,
    /// A gitlink: listed, never followed; its `id` is the submodule's commit.
    Submodule,
}

/// One tracked file of the snapshot commit.
#[derive(Clone)]
pub struct Entry {
    /// The listing's paths: this entry's is the `len` bytes at `start`.
    paths: Arc<String>,
    start: u32,
    len: u32,
    pub id: ObjectId,
    pub executable: bool,
    pub kind: EntryKind,
}

impl Entry {
    /// An entry whose path is its own, not in a listing's buffer (for tests).
    #[cfg(test)]
    pub fn new(path: &str, id: ObjectId, executable: bool, kind: EntryKind) -> Entry {
        let mut listing = Listing::default();
        listing
            .push(path, (id, executable, kind))
            .expect("a test's path is short");
        listing.entries().remove(0)
    }

    /// Its path, repository-relative with `/` separators.
    pub fn path(&self) -> &str {
        let start = self.start as usize;
        // The range is where the path was pushed, whole, into the buffer.
        &self.paths[start..start + self.len as usize]
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Entry) -> bool {
        (self.path(), self.id, self.executable, self.kind)
            == (other.path(), other.id, other.executable, other.kind)
    }
}

impl Eq for Entry {}

impl fmt::Debug for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Entry")
            .field("path", &self.path())
            .field("id", &self.id)
            .field("executable", &self.executable)
            .field("kind", &self.kind)
            .finish()
    }
}

/// Paths past 4 GiB in one listing (about a hundred million files): refused, not cut.
#[derive(Debug, thiserror::Error)]
#[error("the listing's paths take more than 4 GiB")]
pub struct TooLarge;

/// Entries being listed, their paths pushed into one buffer.
#[derive(Default)]
pub(crate) struct Listing {
    text: String,
    /// What the entries point at until [`Listing::entries`] points them at `text`.
    unset: Arc<String>,
    entries: Vec<Entry>,
}

impl Listing {
    /// A listing with room for `capacity` entries.
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Listing {
            entries: Vec::with_capacity(capacity),
            ..Listing::default()
        }
    }

    /// An entry at `path`: its blob or commit id, executable bit and kind.
    pub(crate) fn push(
        &mut self,
        path: &str,
        (id, executable, kind): (ObjectId, bool, EntryKind),
    ) -> Result<(), TooLarge> {
        let start = u32::try_from(self.text.len()).map_err(|_| TooLarge)?;
        let len = u32::try_from(path.len()).map_err(|_| TooLarge)?;
        start.checked_add(len).ok_or(TooLarge)?;
        self.text.push_str(path);
        self.entries.push(Entry {
            paths: Arc::clone(&self.unset),
            start,
            len,
            id,
            executable,
            kind,
        });
        Ok(())
    }

    /// The entries pushed, in the order pushed, sharing one buffer of their paths.
    pub(crate) fn entries(mut self) -> Vec<Entry> {
        self.text.shrink_to_fit();
        let paths = Arc::new(self.text);
        for entry in &mut self.entries {
            entry.paths = Arc::clone(&paths);
        }
        self.entries
    }
}

#[cfg(test)]
impl Entry {
    /// Whether its path is in the same buffer as `other`'s.
    pub(crate) fn shares_paths_with(&self, other: &Entry) -> bool {
        Arc::ptr_eq(&self.paths, &other.paths)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_s_entries_keep_their_paths_in_one_buffer() {
        let id = ObjectId::null(gix::hash::Kind::Sha1);
        let paths = ["a.rs", "", "src/é/ß.rs", "src/é/ß.rs", "z/"];
        let mut listing = Listing::with_capacity(2);
        for (i, path) in paths.iter().enumerate() {
            listing
                .push(path, (id, i % 2 == 0, EntryKind::Blob))
                .unwrap();
        }
        let entries = listing.entries();
        let read: Vec<&str> = entries.iter().map(Entry::path).collect();
        assert_eq!(read, paths);
        assert!(entries.iter().all(|e| e.shares_paths_with(&entries[0])));
        // Equal as their parts are, wherever their paths are kept.
        let own = Entry::new("src/é/ß.rs", id, true, EntryKind::Blob);
        assert_eq!(entries[2], own);
        assert!(!own.shares_paths_with(&entries[2]));
        assert_ne!(entries[2], entries[3], "the executable bit differs");
        assert_eq!(
            format!("{:?}", entries[0]),
            format!("Entry {{ path: \"a.rs\", id: {id:?}, executable: true, kind: Blob }}")
        );
    }
}
