//! A listing's entries, their paths one after another in one buffer that the entries share: a
//! path costs its bytes, not an allocation of its own beside each entry (at 200,000 files, 5 MB
//! less, and no 200,000 small allocations interleaved with the trees read while listing). A
//! nearby snapshot's unchanged entries share the buffer of the listing they came from.

use std::fmt;
use std::sync::Arc;

use gix::ObjectId;

use super::entries::{CHUNK, Entries};

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
        let mut listing = ListingBuilder::default();
        listing
            .push(path, (id, executable, kind))
            .expect("a test's path is short");
        listing.entries()[0].clone()
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

/// A listing of 2^32 entries or more (read sets count them in four bytes), or a chunk whose
/// paths pass 4 GiB: refused, not cut.
#[derive(Debug, thiserror::Error)]
#[error("the listing has more entries than 4,294,967,295, or paths longer than 4 GiB")]
pub struct TooLarge;

/// Entries being listed, a chunk at a time: each chunk's paths one after another in one
/// buffer its entries share, sealed once full, so a listing never holds a second copy of
/// itself on its way to [`Entries`].
#[derive(Default)]
pub(crate) struct ListingBuilder {
    chunks: Vec<Arc<[Entry]>>,
    /// The chunk being filled, its entries pointing at `unset` until sealed.
    entries: Vec<Entry>,
    /// Its paths.
    text: String,
    unset: Arc<String>,
    /// Whether a path came before the one pushed before it (a crafted tree's order).
    unsorted: bool,
}

impl ListingBuilder {
    /// An entry at `path`: its blob or commit id, executable bit and kind.
    pub(crate) fn push(
        &mut self,
        path: &str,
        (id, executable, kind): (ObjectId, bool, EntryKind),
    ) -> Result<(), TooLarge> {
        // A listing holds fewer than 2^32 entries: each index fits in four bytes (read sets and
        // shared reads keep them so).
        u32::try_from(self.chunks.len() * CHUNK + self.entries.len() + 1).map_err(|_| TooLarge)?;
        let start = u32::try_from(self.text.len()).map_err(|_| TooLarge)?;
        let len = u32::try_from(path.len()).map_err(|_| TooLarge)?;
        start.checked_add(len).ok_or(TooLarge)?;
        let before = match self.entries.last() {
            Some(last) => Some(&self.text[last.start as usize..start as usize]),
            None => self.chunks.last().and_then(|c| c.last()).map(Entry::path),
        };
        self.unsorted |= before.is_some_and(|before| before > path);
        self.text.push_str(path);
        self.entries.push(Entry {
            paths: Arc::clone(&self.unset),
            start,
            len,
            id,
            executable,
            kind,
        });
        if self.entries.len() == CHUNK {
            self.seal();
        }
        Ok(())
    }

    /// The chunk being filled, done: its entries pointed at its paths.
    fn seal(&mut self) {
        if self.entries.is_empty() {
            return;
        }
        // The next chunk's paths likely take about as much room: sized so, they are not grown
        // by doubling; this chunk's keep only what they use.
        let room = self.text.len() + self.text.len() / 8;
        let mut text = std::mem::replace(&mut self.text, String::with_capacity(room));
        text.shrink_to_fit();
        let paths = Arc::new(text);
        let mut entries = std::mem::take(&mut self.entries);
        for entry in &mut entries {
            entry.paths = Arc::clone(&paths);
        }
        self.chunks.push(Arc::from(entries));
    }

    /// The entries pushed, sorted by path (in the order pushed, for a tree git wrote).
    pub(crate) fn entries(mut self) -> Entries {
        self.seal();
        match self.unsorted {
            false => Entries::of_chunks(self.chunks),
            true => {
                let mut all: Vec<Entry> =
                    self.chunks.iter().flat_map(|c| c.iter().cloned()).collect();
                all.sort_unstable_by(|a, b| a.path().cmp(b.path()));
                Entries::from(all)
            }
        }
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
        let paths = ["", "a.rs", "src/é/ß.rs", "src/é/ß.rs", "z/"];
        let mut listing = ListingBuilder::default();
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
        assert!(entries[2].executable);
        assert_eq!(entries[2], own);
        assert!(!own.shares_paths_with(&entries[2]));
        assert_ne!(entries[2], entries[3], "the executable bit differs");
        assert_eq!(
            format!("{:?}", entries[1]),
            format!("Entry {{ path: \"a.rs\", id: {id:?}, executable: false, kind: Blob }}")
        );
    }

    #[test]
    fn a_long_listing_is_sealed_chunk_by_chunk_and_one_out_of_order_is_sorted() {
        let id = ObjectId::null(gix::hash::Kind::Sha1);
        let paths: Vec<String> = (0..CHUNK + 3).map(|i| format!("f{i:06}")).collect();
        let list = |paths: &[String]| {
            let mut listing = ListingBuilder::default();
            for path in paths {
                listing.push(path, (id, false, EntryKind::Blob)).unwrap();
            }
            listing.entries()
        };
        let entries = list(&paths);
        assert!(
            entries
                .iter()
                .map(Entry::path)
                .eq(paths.iter().map(String::as_str))
        );
        // A chunk's entries share its buffer; the next chunk has its own.
        assert!(entries[CHUNK - 1].shares_paths_with(&entries[0]));
        assert!(!entries[CHUNK].shares_paths_with(&entries[CHUNK - 1]));
        assert!(entries[CHUNK + 2].shares_paths_with(&entries[CHUNK]));
        // A crafted tree's order: listed in path order all the same.
        let mut shuffled = paths.clone();
        shuffled.swap(1, CHUNK + 1);
        assert_eq!(list(&shuffled), entries);
    }
}
