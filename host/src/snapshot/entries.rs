//! A snapshot's entries, sorted by path, held in chunks that snapshots share: a nearby commit's
//! listing (a baseline, a parent) is the listing it was built from with the chunks a change
//! falls in rebuilt, every other chunk shared. At 200,000 files a baseline one commit away then
//! holds a few chunks of its own, not a second array of every entry (8 MB).

use std::cmp::Ordering;
use std::fmt;
use std::ops::Index;
use std::sync::Arc;

use super::Entry;

/// How many entries a listing's chunk holds (160 KB): what a nearby listing copies for each
/// chunk a change falls in.
pub(super) const CHUNK: usize = 4096;

/// Entries sorted by path, chunk by chunk.
#[derive(Clone, Default)]
pub struct Entries {
    /// None of them empty.
    chunks: Vec<Arc<[Entry]>>,
    /// The index of each chunk's first entry.
    starts: Vec<usize>,
    len: usize,
}

impl Entries {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The entry at `index`.
    pub fn get(&self, index: usize) -> Option<&Entry> {
        let (chunk, at) = self.place(index)?;
        self.chunks.get(chunk)?.get(at)
    }

    /// Every entry, in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Entry> + Clone + '_ {
        self.chunks.iter().flat_map(|chunk| chunk.iter())
    }

    /// The entries from `index` on, in order (none past the end).
    pub fn iter_from(&self, index: usize) -> impl Iterator<Item = &Entry> + '_ {
        let (chunk, at) = self.place(index).unwrap_or((self.chunks.len(), 0));
        (self.chunks.iter().skip(chunk).enumerate())
            .flat_map(move |(n, c)| c.iter().skip(if n == 0 { at } else { 0 }))
    }

    /// [`slice::binary_search_by`] over the entries in order.
    pub fn binary_search_by(
        &self,
        mut compare: impl FnMut(&Entry) -> Ordering,
    ) -> Result<usize, usize> {
        // The first chunk whose last entry is not below what is looked for holds it, if any.
        let chunk = self
            .chunks
            .partition_point(|c| c.last().is_some_and(|last| compare(last) == Ordering::Less));
        let (Some(entries), Some(&start)) = (self.chunks.get(chunk), self.starts.get(chunk)) else {
            return Err(self.len);
        };
        entries
            .binary_search_by(compare)
            .map(|at| start + at)
            .map_err(|at| start + at)
    }

    /// The chunks, in order.
    pub(super) fn chunks(&self) -> &[Arc<[Entry]>] {
        &self.chunks
    }

    /// Entries made of `chunks`, in order (empty ones left out).
    pub(crate) fn of_chunks(chunks: impl IntoIterator<Item = Arc<[Entry]>>) -> Entries {
        let mut entries = Entries::default();
        for chunk in chunks.into_iter().filter(|c| !c.is_empty()) {
            entries.starts.push(entries.len);
            entries.len += chunk.len();
            entries.chunks.push(chunk);
        }
        entries
    }

    /// The chunk `index` is in, and its place in it.
    fn place(&self, index: usize) -> Option<(usize, usize)> {
        if index >= self.len {
            return None;
        }
        let chunk = self
            .starts
            .partition_point(|&start| start <= index)
            .checked_sub(1)?;
        Some((chunk, index - self.starts.get(chunk)?))
    }
}

impl From<Vec<Entry>> for Entries {
    fn from(entries: Vec<Entry>) -> Entries {
        Entries::of_chunks(entries.chunks(CHUNK).map(Arc::from).collect::<Vec<_>>())
    }
}

impl FromIterator<Entry> for Entries {
    fn from_iter<I: IntoIterator<Item = Entry>>(entries: I) -> Entries {
        Entries::from(entries.into_iter().collect::<Vec<_>>())
    }
}

impl Index<usize> for Entries {
    type Output = Entry;

    /// The entry at `index`; past the end, a panic as a slice's.
    fn index(&self, index: usize) -> &Entry {
        let (chunk, at) = self.place(index).unwrap_or((self.chunks.len(), 0));
        &self.chunks[chunk][at]
    }
}

impl<'a> IntoIterator for &'a Entries {
    type Item = &'a Entry;
    type IntoIter = std::iter::FlatMap<
        std::slice::Iter<'a, Arc<[Entry]>>,
        std::slice::Iter<'a, Entry>,
        fn(&'a Arc<[Entry]>) -> std::slice::Iter<'a, Entry>,
    >;

    fn into_iter(self) -> Self::IntoIter {
        let each: fn(&'a Arc<[Entry]>) -> std::slice::Iter<'a, Entry> = |chunk| chunk.iter();
        self.chunks.iter().flat_map(each)
    }
}

impl PartialEq for Entries {
    fn eq(&self, other: &Entries) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl Eq for Entries {}

impl fmt::Debug for Entries {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::EntryKind;

    #[test]
    fn chunked_entries_read_as_the_slice_they_were_made_of() {
        let id = gix::ObjectId::null(gix::hash::Kind::Sha1);
        let all: Vec<Entry> = (0..2 * CHUNK + 5)
            .map(|i| Entry::new(&format!("f{:06}", 2 * i), id, false, EntryKind::Blob))
            .collect();
        let entries = Entries::from(all.clone());
        assert_eq!((entries.len(), entries.chunks().len()), (all.len(), 3));
        assert!(entries.iter().eq(&all) && (&entries).into_iter().eq(&all));
        for at in [
            0,
            1,
            CHUNK - 1,
            CHUNK,
            CHUNK + 1,
            2 * CHUNK + 4,
            2 * CHUNK + 5,
        ] {
            assert_eq!(entries.get(at), all.get(at), "{at}");
            assert!(entries.iter_from(at).eq(&all[at.min(all.len())..]), "{at}");
            if at < all.len() {
                assert_eq!(&entries[at], &all[at]);
            }
        }
        for probe in [
            "", "f000000", "f000001", "f008192", "f008193", "f016394", "g",
        ] {
            let by = |e: &Entry| e.path().cmp(probe);
            assert_eq!(
                entries.binary_search_by(by),
                all.binary_search_by(by),
                "{probe}"
            );
        }
        assert_eq!(
            Entries::default().binary_search_by(|_| Ordering::Less),
            Err(0)
        );
        assert_eq!(entries, all.into_iter().collect::<Entries>());
    }
}
