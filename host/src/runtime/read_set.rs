//! What one producer run read: the input closure that evidence reuse and proposal attribution
//! are built on. Recorded by the host's snapshot implementation, so it is complete by
//! construction: a producer can read nothing else.
//!
//! It names what it read by the index of the snapshot's entry (the path and blob id are the
//! snapshot's own): 4 bytes a file while the run reads, and once it is over runs of consecutive
//! indices (`runs.rs`), so a run over hundreds of thousands of files that read what it listed
//! holds a few runs, not a map of path and id strings per file.

use std::collections::{BTreeMap, BTreeSet};

use crate::snapshot::runs::Runs;
use crate::snapshot::{Entries, Entry};

/// What one run read, over the entries of the snapshot it read.
#[derive(Debug, Clone)]
pub struct ReadSet {
    /// The snapshot's entries, sorted by path, that the indices below are into.
    entries: Entries,
    /// Every distinct glob list the producer listed, with the entries it matched.
    pub listings: Vec<Listing>,
    /// Every entry the producer read (whole or a range, or failed to read).
    reads: Reads,
    /// Paths the producer asked to read that the snapshot does not hold.
    absent: BTreeSet<String>,
    /// Every artifact the producer asked for: the sha256 of its content, or `None` if absent.
    pub artifacts: BTreeMap<String, Option<String>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    pub globs: Vec<String>,
    /// The entries it matched.
    matched: Runs,
}

/// The entries a run read: in read order while it runs, as runs of indices once it is over.
#[derive(Debug, Clone)]
enum Reads {
    /// In read order, and whether that is ascending (searchable by halves).
    Open { order: Vec<u32>, ascending: bool },
    /// Ascending, each once ([`ReadSet::sealed`]).
    Sealed(Runs),
}

impl Default for ReadSet {
    fn default() -> Self {
        Self::over(Entries::default())
    }
}

/// An index into a snapshot's entries as a read set keeps it: a snapshot lists fewer than 2^32
/// entries (`snapshot/entry.rs` refuses more, `TooLarge`; a nearby listing that would hold more
/// is listed whole), so no index of one saturates here.
fn index(at: usize) -> u32 {
    u32::try_from(at).unwrap_or(u32::MAX)
}

impl ReadSet {
    /// An empty read set of a run over a snapshot of `entries`.
    pub(crate) fn over(entries: Entries) -> Self {
        Self {
            entries,
            listings: Vec::new(),
            reads: Reads::Open {
                order: Vec::new(),
                ascending: true,
            },
            absent: BTreeSet::new(),
            artifacts: BTreeMap::new(),
        }
    }

    /// Record a listing of `globs` that matched the entries `matched` (ascending indices); a
    /// glob list listed before is kept as first listed.
    pub(crate) fn record_listing(
        &mut self,
        globs: &[String],
        matched: impl IntoIterator<Item = usize>,
    ) {
        if !self.listings.iter().any(|l| l.globs == globs) {
            let mut matched: Vec<u32> = matched.into_iter().map(index).collect();
            // Ascending whatever order the caller listed in (already so, in every caller).
            matched.sort_unstable();
            self.listings.push(Listing {
                globs: globs.to_vec(),
                matched: Runs::of_ascending(matched),
            });
        }
    }

    /// Record a read of `path` (done, or failed): the entry at that path, or an absent path.
    pub(crate) fn record_read(&mut self, path: &str) {
        match self.entries.binary_search_by(|e| e.path().cmp(path)) {
            Ok(at) => self.record_entry(at),
            Err(_) => {
                self.absent.insert(path.to_owned());
            }
        }
    }

    /// Record a read of the entry at `at`. A file streamed range by range is one read.
    pub(crate) fn record_entry(&mut self, at: usize) {
        let at = index(at);
        if let Reads::Sealed(runs) = &self.reads {
            let order = runs.iter().collect();
            self.reads = Reads::Open {
                order,
                ascending: true,
            };
        }
        let Reads::Open { order, ascending } = &mut self.reads else {
            return;
        };
        match order.last() {
            Some(&last) if last == at => {}
            Some(&last) => {
                *ascending &= last < at;
                order.push(at);
            }
            None => order.push(at),
        }
    }

    /// This read set with its reads in order and once each, as runs of indices (what a
    /// finished run hands over).
    pub(crate) fn sealed(mut self) -> Self {
        if let Reads::Open { order, .. } = &mut self.reads {
            order.sort_unstable();
            self.reads = Reads::Sealed(Runs::of_ascending(std::mem::take(order)));
        }
        self
    }

    /// The indices of the entries read, in read order (ascending once sealed).
    fn read_order(&self) -> Box<dyn Iterator<Item = u32> + '_> {
        match &self.reads {
            Reads::Open { order, .. } => Box::new(order.iter().copied()),
            Reads::Sealed(runs) => Box::new(runs.iter()),
        }
    }

    /// Whether the entry at `at` was read.
    fn was_read(&self, at: u32) -> bool {
        match &self.reads {
            Reads::Open {
                order,
                ascending: true,
            } => order.binary_search(&at).is_ok(),
            Reads::Open { order, .. } => order.contains(&at),
            Reads::Sealed(runs) => runs.contains(at),
        }
    }

    /// Whether the producer asked for a path the snapshot does not hold.
    pub fn read_absent(&self) -> bool {
        !self.absent.is_empty()
    }

    /// How many entries the listings matched, summed over the listings.
    pub fn listed_count(&self) -> usize {
        self.listings.iter().map(|l| l.matched.len()).sum()
    }

    /// How many distinct paths the producer read (present or not).
    pub fn read_count(&self) -> usize {
        let read = match &self.reads {
            Reads::Open { order, .. } => order.len(),
            Reads::Sealed(runs) => runs.len(),
        };
        read + self.absent.len()
    }

    /// The indices of the entries the producer read, ascending once sealed.
    pub(crate) fn read_indices(&self) -> Vec<u32> {
        self.read_order().collect()
    }

    /// The entries the producer read (each with the blob id it read), in path order.
    pub fn entries_read(&self) -> impl Iterator<Item = &Entry> {
        self.entries_at(self.read_order())
    }

    /// The entries `listing` matched (each with its blob id), in path order.
    pub fn entries_listed<'a>(&'a self, listing: &'a Listing) -> impl Iterator<Item = &'a Entry> {
        self.entries_at(listing.matched.iter())
    }

    fn entries_at<'a>(
        &'a self,
        at: impl Iterator<Item = u32> + 'a,
    ) -> impl Iterator<Item = &'a Entry> {
        at.filter_map(|i| self.entries.get(usize::try_from(i).ok()?))
    }

    fn path(&self, at: u32) -> Option<&str> {
        let at = usize::try_from(at).ok()?;
        self.entries.get(at).map(|e| e.path())
    }

    /// Every path the producer read (present or not), sorted.
    pub fn read_paths(&self) -> Vec<&str> {
        self.read_paths_outside(|_| false)
    }

    /// [`read_paths`](Self::read_paths) but those a listing that `covers` matched.
    pub(crate) fn read_paths_outside(&self, covers: impl Fn(&Listing) -> bool) -> Vec<&str> {
        let covering: Vec<&Listing> = self.listings.iter().filter(|l| covers(l)).collect();
        let listed = |at: u32| covering.iter().any(|l| l.matched.contains(at));
        let mut paths: Vec<&str> = (self.read_order())
            .filter(|&at| !listed(at))
            .filter_map(|i| self.path(i))
            .collect();
        paths.extend(self.absent.iter().map(String::as_str));
        paths.sort_unstable();
        paths.dedup();
        paths
    }

    /// Whether this run depended on `path`: read it, or listed it.
    pub fn depends_on(&self, path: &str) -> bool {
        let Ok(at) = self.entries.binary_search_by(|e| e.path().cmp(path)) else {
            return self.absent.contains(path);
        };
        let at = index(at);
        self.was_read(at) || self.listings.iter().any(|l| l.matched.contains(at))
    }

    /// Every snapshot path this run depended on: listed or read.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        let listed = self
            .listings
            .iter()
            .flat_map(|l| l.matched.iter().filter_map(|i| self.path(i)));
        let read = self.read_order().filter_map(|i| self.path(i));
        listed
            .chain(read)
            .chain(self.absent.iter().map(String::as_str))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(paths: &[&str]) -> Entries {
        paths
            .iter()
            .map(|path| {
                Entry::new(
                    path,
                    gix::ObjectId::null(gix::hash::Kind::Sha1),
                    false,
                    crate::snapshot::EntryKind::Blob,
                )
            })
            .collect()
    }

    #[test]
    fn reads_are_named_by_entry_once_each_and_absent_paths_by_name() {
        let mut set = ReadSet::over(entries(&["a.rs", "b.rs", "c.rs"]));
        for path in ["c.rs", "c.rs", "a.rs", "nope", "c.rs"] {
            set.record_read(path);
        }
        set.record_listing(&["*.rs".to_owned()], [0, 1, 2]);
        set.record_listing(&["*.rs".to_owned()], [0]);
        let set = set.sealed();
        assert_eq!(set.read_indices(), [0, 2]);
        assert_eq!(set.read_paths(), ["a.rs", "c.rs", "nope"]);
        assert_eq!((set.read_count(), set.read_absent()), (3, true));
        assert_eq!((set.listings.len(), set.listed_count()), (1, 3));
        let mut all: Vec<&str> = set.paths().collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all, ["a.rs", "b.rs", "c.rs", "nope"]);
        for path in ["a.rs", "b.rs", "c.rs", "nope"] {
            assert!(set.depends_on(path), "{path}");
        }
        assert!(!set.depends_on("d.rs"));
    }

    /// Sealed (its reads and listings kept as runs of indices), a read set answers as it did
    /// while it was read: out of order, repeated, with gaps and long stretches.
    #[test]
    fn a_sealed_read_set_answers_as_the_reads_it_was_made_of() {
        let paths: Vec<String> = (0..1000).map(|i| format!("f{i:04}")).collect();
        let all: Vec<&str> = paths.iter().map(String::as_str).collect();
        let mut set = ReadSet::over(entries(&all));
        let reads = (100..600)
            .rev()
            .chain((0..1000).step_by(3))
            .chain([5, 5, 999]);
        for at in reads {
            set.record_read(&paths[at]);
        }
        set.record_read("gone");
        set.record_listing(&["f0*".to_owned()], (0..1000).filter(|i| i % 2 == 0));
        let open = set.clone();
        let sealed = set.sealed();
        for path in all.iter().chain(&["gone", "f1000"]) {
            assert_eq!(open.depends_on(path), sealed.depends_on(path), "{path}");
        }
        assert_eq!(open.read_paths(), sealed.read_paths());
        assert_eq!(open.listed_count(), 500);
        assert_eq!(sealed.listed_count(), 500);
        let mut indices = open.read_indices();
        indices.sort_unstable();
        indices.dedup();
        assert_eq!(sealed.read_indices(), indices);
        assert_eq!(sealed.read_count(), indices.len() + 1);
        let listing = &sealed.listings[0];
        assert!(
            sealed
                .entries_listed(listing)
                .map(|e| e.path())
                .eq(all.iter().copied().step_by(2))
        );
    }

    /// A read set asked before it is sealed (reads out of order) still knows every read.
    #[test]
    fn an_unsealed_read_set_knows_reads_made_out_of_order() {
        let mut set = ReadSet::over(entries(&["a.rs", "b.rs", "c.rs", "d.rs"]));
        for path in ["d.rs", "b.rs", "c.rs"] {
            set.record_read(path);
        }
        for path in ["b.rs", "c.rs", "d.rs"] {
            assert!(set.depends_on(path), "{path}");
        }
        assert!(!set.depends_on("a.rs"));
    }
}
