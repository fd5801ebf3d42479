//! The snapshot of a commit near one already open (a baseline, a parent), built from the open
//! snapshot's entries and the diff of the two trees: only the subtrees whose ids differ are
//! read, where listing the commit would read every tree. The result is the listing itself:
//! the same sorted entries, or the commit is listed whole (a name that is not UTF-8 on either
//! side, a tree that cannot be read).

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use gix::ObjectId;
use gix::objs::tree::EntryMode;

use super::entry::ListingBuilder;
use super::{Entries, Entry, EntryKind, NonUtf8, Snapshot, SnapshotError, diff_trees};

/// Per changed path: its entry on the other side, or `None` where it has none.
type Changes = BTreeMap<String, Option<(EntryMode, ObjectId)>>;

impl Snapshot {
    /// The snapshot of `commit`, from this one's entries and the diff of the trees (listed
    /// whole when that cannot give exactly its listing).
    pub fn nearby(&self, commit: ObjectId) -> Result<Snapshot, SnapshotError> {
        match self.by_diff(commit) {
            Some(snapshot) => Ok(snapshot),
            None => Snapshot::of_rev(self.repo.clone(), &commit.to_string()),
        }
    }

    fn by_diff(&self, commit: ObjectId) -> Option<Snapshot> {
        if !self.skipped.is_empty() {
            return None;
        }
        let local = self.repo.to_thread_local();
        let tree = local.find_commit(commit).ok()?.tree_id().ok()?.detach();
        let mut changes = Changes::new();
        let mut record = |path, entry| {
            changes.insert(path, entry);
        };
        diff_trees(
            &local,
            (Some(self.tree), Some(tree)),
            "",
            NonUtf8::Fail,
            &mut record,
        )?;
        let mut listing = ListingBuilder::default();
        for (path, side) in &changes {
            if let Some((mode, id)) = *side {
                let kind = EntryKind::of(mode);
                listing.push(path, (id, mode.is_executable(), kind)).ok()?;
            }
        }
        let entries = changed(&self.entries, &changes, &listing.entries());
        // Fewer than 2^32 entries, as a listing holds (`entry.rs`); else it is listed whole,
        // which refuses it.
        u32::try_from(entries.len()).ok()?;
        let sizes = std::sync::Arc::new(super::sizes::Sizes::unknown(entries.len()));
        Some(Snapshot {
            repo: self.repo.clone(),
            objects: std::sync::Arc::clone(&self.objects),
            commit,
            tree,
            worktree: false,
            verify: self.verify,
            entries,
            sizes,
            skipped: self.skipped.clone(),
            offline: self.offline,
            share: None,
        })
    }
}

/// `entries` with `changes` made: each changed path's entry left out, and `added` (the changed
/// paths' entries on the other side, sorted) put in at its place. Both are sorted by path, so
/// they are merged, not sorted again; a chunk no change falls in is shared, not copied (nor the
/// paths of the entries kept: they stay in the listing's buffer).
fn changed<V>(entries: &Entries, changes: &BTreeMap<String, V>, added: &Entries) -> Entries {
    let chunks = entries.chunks();
    let mut added = added.iter().cloned().peekable();
    let mut out = Vec::with_capacity(chunks.len() + 1);
    for (at, chunk) in chunks.iter().enumerate() {
        // The paths this chunk covers: from its first (from none, the first chunk) up to the
        // next one's first (to every path, the last chunk).
        let next = chunks.get(at + 1).and_then(|c| c.first()).map(Entry::path);
        let from = match (at, chunk.first()) {
            (0, _) | (_, None) => Bound::Unbounded,
            (_, Some(first)) => Bound::Included(first.path()),
        };
        let to = next.map_or(Bound::Unbounded, Bound::Excluded);
        if changes.range::<str, _>((from, to)).next().is_none() {
            out.push(Arc::clone(chunk));
            continue;
        }
        let mut rebuilt = Vec::with_capacity(chunk.len());
        for entry in chunk.iter().filter(|e| !changes.contains_key(e.path())) {
            rebuilt.extend(std::iter::from_fn(|| {
                added.next_if(|a| a.path() < entry.path())
            }));
            rebuilt.push(entry.clone());
        }
        rebuilt.extend(std::iter::from_fn(|| {
            added.next_if(|a| next.is_none_or(|next| a.path() < next))
        }));
        out.extend(Entries::from(rebuilt).chunks().iter().cloned());
    }
    // No chunk to put them in (the listing was empty): the added entries are the listing.
    out.extend(
        Entries::from(added.collect::<Vec<_>>())
            .chunks()
            .iter()
            .cloned(),
    );
    Entries::of_chunks(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use discern_tests::TestRepo;

    fn entry(path: &str, version: u8) -> Entry {
        let id = ObjectId::from_bytes_or_panic(&[version; 20]);
        Entry::new(path, id, false, EntryKind::Blob)
    }

    #[test]
    fn a_changed_listing_is_the_merge_and_shares_every_chunk_no_change_falls_in() {
        let head: Vec<Entry> = (0..10_000).map(|i| entry(&format!("f{i:05}"), 0)).collect();
        let entries = Entries::from(head.clone());
        assert_eq!(entries.chunks().len(), 3);
        // Removed, changed and added paths: before the first, inside the first chunk, between
        // the first two, at the start of the last, after the last.
        let cases: [&[(&str, Option<u8>)]; 5] = [
            &[("a", Some(1)), ("f00010", None), ("f00011", Some(1))],
            &[("f04095x", Some(1))],
            &[("f08192", None), ("f08192a", Some(1))],
            &[("z", Some(1)), ("f09999", Some(2))],
            &[],
        ];
        for changes in cases {
            let map: BTreeMap<String, Option<u8>> =
                changes.iter().map(|(p, v)| ((*p).to_owned(), *v)).collect();
            let added: Vec<Entry> = (map.iter())
                .filter_map(|(p, v)| Some(entry(p, (*v)?)))
                .collect();
            let got = changed(&entries, &map, &Entries::from(added.clone()));
            let mut expected: Vec<Entry> = (head.iter())
                .filter(|e| !map.contains_key(e.path()))
                .cloned()
                .chain(added)
                .collect();
            expected.sort_by(|a, b| a.path().cmp(b.path()));
            assert!(got.iter().eq(&expected), "{changes:?}");
            assert_eq!(got.len(), expected.len());
            // The chunks no change falls in are the same allocations.
            let shared = (got.chunks().iter())
                .filter(|c| entries.chunks().iter().any(|h| Arc::ptr_eq(c, h)))
                .count();
            // A path's chunk: the one its entry is in, or the one before its place.
            let touched: std::collections::BTreeSet<usize> = (map.keys())
                .map(|p| match entries.binary_search_by(|e| e.path().cmp(p)) {
                    Ok(at) => at / 4096,
                    Err(at) => at.saturating_sub(1) / 4096,
                })
                .collect();
            assert_eq!(shared, 3 - touched.len(), "{changes:?}");
        }
        // An empty listing: the added entries are the listing.
        let added = vec![entry("a", 1), entry("b", 1)];
        let map: BTreeMap<String, Option<u8>> =
            [("a".to_owned(), Some(1)), ("b".to_owned(), Some(1))].into();
        let got = changed(&Entries::default(), &map, &Entries::from(added.clone()));
        assert!(got.iter().eq(&added));
    }

    #[test]
    fn a_nearby_snapshot_lists_what_the_commit_lists() {
        let repo = TestRepo::new();
        repo.write("a.rs", "a\n")
            .write("keep.rs", "k\n")
            .write("src/b.rs", "b\n")
            .write("src/deep/c.rs", "c\n")
            .write("d/e.rs", "e\n")
            .write("run.sh", "#!/bin/sh\n");
        let first = repo.commit("first");
        repo.write("src/b.rs", "b changed\n")
            .write("new/f.rs", "f\n")
            .remove("src/deep/c.rs")
            .remove("d/e.rs");
        std::fs::remove_dir(repo.path().join("d")).unwrap();
        repo.write("d", "now a file\n");
        repo.git(&["mv", "a.rs", "moved.rs"]);
        repo.git(&["update-index", "--chmod=+x", "run.sh"]);
        let second = repo.commit("second");
        let open = |rev: &str| Snapshot::open(repo.path(), rev).unwrap();
        for (from, to) in [(&second, &first), (&first, &second), (&first, &first)] {
            let near = open(from);
            let nearby = near.nearby(to.parse().unwrap()).unwrap();
            let listed = open(to);
            assert_eq!(nearby.entries(), listed.entries(), "{from} -> {to}");
            // An entry both commits hold keeps its path where the open snapshot keeps it; a
            // changed one has its own.
            let (kept, changed) = (
                near.entry("keep.rs").unwrap(),
                near.entry("src/b.rs").unwrap(),
            );
            assert!(nearby.entry("keep.rs").unwrap().shares_paths_with(kept));
            let changed_there = nearby.entry("src/b.rs").unwrap();
            assert_eq!(changed_there.shares_paths_with(changed), from == to);
            assert_eq!(
                (nearby.commit(), nearby.tree()),
                (listed.commit(), listed.tree())
            );
        }
    }
}
