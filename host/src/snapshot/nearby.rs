//! The snapshot of a commit near one already open (a baseline, a parent), built from the open
//! snapshot's entries and the diff of the two trees: only the subtrees whose ids differ are
//! read, where listing the commit would read every tree. The result is the listing itself:
//! the same sorted entries, or the commit is listed whole (a name that is not UTF-8 on either
//! side, a tree that cannot be read).

use std::collections::BTreeMap;

use gix::ObjectId;
use gix::objs::tree::EntryMode;

use super::entry::Listing;
use super::{EntryKind, NonUtf8, Snapshot, SnapshotError, diff_trees};

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
        // Both sides are sorted by path: merged, the unchanged entries shared (their paths are
        // in the same buffer), not copied and sorted again.
        let mut listing = Listing::default();
        for (path, side) in &changes {
            if let Some((mode, id)) = *side {
                let kind = EntryKind::of(mode);
                listing.push(path, (id, mode.is_executable(), kind)).ok()?;
            }
        }
        let mut added = listing.entries().into_iter().peekable();
        let mut entries = Vec::with_capacity(self.entries.len() + added.len());
        let kept = (self.entries.iter()).filter(|e| !changes.contains_key(e.path()));
        for entry in kept {
            entries.extend(std::iter::from_fn(|| {
                added.next_if(|a| a.path() < entry.path())
            }));
            entries.push(entry.clone());
        }
        entries.extend(added);
        let sizes = std::sync::Arc::new(super::sizes::Sizes::unknown(entries.len()));
        Some(Snapshot {
            repo: self.repo.clone(),
            objects: std::sync::Arc::clone(&self.objects),
            commit,
            tree,
            worktree: false,
            verify: self.verify,
            entries: entries.into(),
            sizes,
            skipped: self.skipped.clone(),
            offline: self.offline,
            share: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use discern_tests::TestRepo;

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
