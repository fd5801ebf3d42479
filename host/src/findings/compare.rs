//! One reading's findings compared with the baseline's: the baseline's findings placed in its
//! snapshot (`place.rs`), git's line maps read for the files with placed findings on both sides
//! (`line_map.rs`), then paired (`diff.rs`).

use std::collections::HashMap;

use gix::ObjectId;

use super::diff::{self, Diff, Side};
use super::line_map::{LineMap, LineMapError, Versions, line_maps};
use super::{Place, ReadLines, Renames, places};
use crate::git::Repo;
use crate::runtime::Finding;
use crate::snapshot::Snapshot;

/// What findings are compared with, and between which trees.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Baseline<'a> {
    pub repo: &'a Repo,
    /// The snapshot measured.
    pub head: &'a Snapshot,
    /// The baseline's snapshot; `None` on the first commit, which nothing came before.
    pub snapshot: Option<&'a Snapshot>,
    /// The renames from the baseline to the snapshot measured.
    pub renames: &'a Renames,
}

/// A comparison: which findings are new and fixed, and where the baseline's are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Compared {
    pub diff: Diff,
    /// The baseline's findings' places, by index (their fingerprints: `identity.rs`).
    pub base_places: Vec<Option<Place>>,
}

#[derive(Debug, thiserror::Error)]
#[error("git's diff since the baseline cannot be read: {0}")]
pub(crate) struct CompareError(#[from] LineMapError);

/// `head` (this commit's findings, placed) versus `base`, the baseline's; `read` holds the
/// lines read for `head`, which an unchanged file shares with the baseline.
pub(crate) fn compare(
    baseline: &Baseline,
    head: Side,
    base: &[Finding],
    read: &mut ReadLines,
) -> Result<Compared, CompareError> {
    if let Some(unchanged) = unchanged(baseline, head, base) {
        return Ok(unchanged);
    }
    let (base_places, maps) = match baseline.snapshot {
        Some(snapshot) => {
            // A file unchanged since the baseline is paired by line alone: not read.
            let unchanged = |path: &str, blob| {
                let path = baseline.renames.new_path(path).unwrap_or(path);
                baseline.head.entry(path).is_some_and(|e| e.id == blob)
            };
            let base_places = places(snapshot, base, read, &unchanged);
            let maps = by_path(baseline, snapshot, head.places, &base_places)?;
            (base_places, maps)
        }
        None => (vec![None; base.len()], HashMap::new()),
    };
    let base_side = Side {
        findings: base,
        places: &base_places,
    };
    let diff = diff::diff(head, base_side, baseline.renames, &maps);
    Ok(Compared { diff, base_places })
}

/// The comparison when nothing can differ, without reading or diffing anything (see
/// [`untouched`]): nothing is new or fixed, and the baseline's places are this commit's (as
/// far as `head` has them: a caller that knew may have placed only the findings it shows).
fn unchanged(baseline: &Baseline, head: Side, base: &[Finding]) -> Option<Compared> {
    untouched(baseline, head.findings, base).then(|| Compared {
        diff: Diff::default(),
        base_places: head.places.to_vec(),
    })
}

/// Whether the baseline's findings are this commit's, in the same order, and every file they
/// name is the same blob (or equally absent) at the same path on both sides, no rename touching
/// it. Every finding is then on a line git's diff keeps, beside its twin with the same message
/// (or, unplaced, the same producer fingerprint): the pairing of `diff.rs` pairs each with its
/// twin, so nothing is new or fixed. (A fully reused reading on a commit that changed none of
/// its inputs, the common case, costs a comparison of the lists.)
pub(crate) fn untouched(baseline: &Baseline, head: &[Finding], base: &[Finding]) -> bool {
    let Some(snapshot) = baseline.snapshot else {
        return false;
    };
    // HEAD's own list when the reading is shared (`measure/swaps.rs`): nothing to compare.
    if !std::ptr::eq(head, base) && head != base {
        return false;
    }
    let mut last: Option<&str> = None;
    for path in head.iter().filter_map(|f| f.path.as_deref()) {
        if last == Some(path) {
            continue;
        }
        let renamed =
            baseline.renames.old_path(path).is_some() || baseline.renames.new_path(path).is_some();
        let blob = |side: &Snapshot| side.entry(path).map(|e| (e.id, e.kind, e.executable));
        if renamed || blob(baseline.head) != blob(snapshot) {
            return false;
        }
        last = Some(path);
    }
    true
}

/// Git's line map for each of this commit's files with placed findings whose baseline file
/// (under its old name, if renamed) has placed findings too, by this commit's path.
fn by_path(
    baseline: &Baseline,
    base_snapshot: &Snapshot,
    head: &[Option<Place>],
    base: &[Option<Place>],
) -> Result<HashMap<String, LineMap>, CompareError> {
    let base_blobs: HashMap<&str, ObjectId> = base
        .iter()
        .flatten()
        .map(|place| (place.path.as_str(), place.blob))
        .collect();
    let mut files: HashMap<&str, Versions> = HashMap::new();
    for place in head.iter().flatten() {
        let old_path = baseline
            .renames
            .old_path(&place.path)
            .unwrap_or(&place.path);
        if let Some(&old) = base_blobs.get(old_path) {
            files.entry(&place.path).or_insert_with(|| Versions {
                old_path: old_path.to_owned(),
                new_path: place.path.clone(),
                old,
                new: place.blob,
            });
        }
    }
    let files: Vec<Versions> = files.into_values().collect();
    let trees = (base_snapshot.tree(), baseline.head.tree());
    let maps = line_maps(baseline.repo, trees, &files)?;
    Ok(files
        .into_iter()
        .map(|f| {
            // `line_maps` maps every changed pair; a file whose blob is the same is unchanged.
            let map = maps.get(&(f.old, f.new)).cloned().unwrap_or_default();
            (f.new_path, map)
        })
        .collect())
}
