//! One reading's findings compared with the baseline's: the baseline's findings placed in its
//! snapshot (`place.rs`), git's line maps read for the files with placed findings on both sides
//! (`line_map.rs`), then paired (`diff.rs`).

use std::collections::HashMap;

use gix::ObjectId;

use super::diff::{self, Diff, Side};
use super::line_map::{LineMap, LineMapError, Versions, line_maps};
use super::{Place, ReadLines, Renames, once_per_run, places, places_at};
use crate::git::Repo;
use crate::runtime::Finding;
use crate::snapshot::{EntryKind, Snapshot};

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
    /// The paths whose entry differs between the baseline's tree and the one measured (content,
    /// mode or presence), sorted; `None` when that diff could not be read (each file is then
    /// looked up on both sides).
    pub changed: Option<&'a [String]>,
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
            let unchanged = |path: &str, blob| unchanged_since(baseline, path, blob);
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
    let diff = match baseline.snapshot {
        Some(snapshot) => diff_changed(baseline, snapshot, head, base_side, &maps),
        None => diff::diff(head, base_side, baseline.renames, &maps),
    };
    Ok(Compared { diff, base_places })
}

/// The findings of each side that take part in the pairing, by index and in order, when the
/// change touched a few files: those not on a file it left alone ([`diff_changed`]), told
/// before any is placed. `None` when the trees' diff is not known, or the findings on the files
/// left alone are not the same list on both sides: then every finding takes part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Touched {
    pub head: Vec<usize>,
    pub base: Vec<usize>,
}

/// [`Touched`] of `head` and `base`. A finding on a file left alone is placed exactly when it
/// names a line of a file (or symlink) of the snapshots, which are the same there: such files
/// are placed unread on both sides (see [`compare`]), so this split is the one [`split`] makes
/// of the placed lists.
pub(crate) fn touched(baseline: &Baseline, head: &[Finding], base: &[Finding]) -> Option<Touched> {
    let (head_left, head_alone) = split_alone(head, placed_alone(baseline)?);
    let (base_left, base_alone) = split_alone(base, placed_alone(baseline)?);
    same_list((head, &head_alone), (base, &base_alone)).then_some(Touched {
        head: head_left,
        base: base_left,
    })
}

/// `findings`, by index: those left to pair, and those with a line on a file `alone` says the
/// change left alone.
fn split_alone<'p>(
    findings: &'p [Finding],
    mut alone: impl FnMut(&'p str) -> bool,
) -> (Vec<usize>, Vec<usize>) {
    partition(findings, |i| {
        findings[i].line.is_some() && findings[i].path.as_deref().is_some_and(&mut alone)
    })
}

/// Whether a finding with a line on `path` is placed on a file the change left alone (see
/// [`touched`]), asked once per run of findings on one path; `None` when that cannot be told
/// (the first commit, or the trees' diff unknown): every finding then takes part.
pub(crate) fn placed_alone<'p>(baseline: &Baseline) -> Option<impl FnMut(&'p str) -> bool> {
    let snapshot = baseline.snapshot?;
    baseline.changed?;
    let near = std::cell::Cell::new(0);
    Some(once_per_run(move |path| {
        same_file(baseline, snapshot, path)
            && baseline
                .head
                .entry_from(path, &near)
                .is_some_and(|(_, e)| matches!(e.kind, EntryKind::Blob | EntryKind::Symlink))
    }))
}

/// [`compare`] of the `touched` findings alone ([`touched`]): the baseline's others are not
/// placed (their places are `None`), and `head` needs places only for `touched.head`. The
/// pairing is the one [`compare`] makes.
pub(crate) fn compare_touched(
    baseline: &Baseline,
    head: Side,
    base: &[Finding],
    touched: &Touched,
    read: &mut ReadLines,
) -> Result<Compared, CompareError> {
    let Some(snapshot) = baseline.snapshot else {
        return compare(baseline, head, base, read);
    };
    let unchanged = |path: &str, blob| unchanged_since(baseline, path, blob);
    let base_places = places_at(snapshot, (base, &touched.base), read, &unchanged);
    let maps = by_path(baseline, snapshot, head.places, &base_places)?;
    let base_side = Side {
        findings: base,
        places: &base_places,
    };
    let left = (&touched.head[..], &touched.base[..]);
    let diff = diff_of((head, base_side), left, baseline.renames, &maps);
    Ok(Compared { diff, base_places })
}

/// Whether the baseline's file `path` (blob `blob`) is this commit's, unchanged (under its new
/// name, if renamed): it is paired by line alone, not read.
fn unchanged_since(baseline: &Baseline, path: &str, blob: ObjectId) -> bool {
    let path = baseline.renames.new_path(path).unwrap_or(path);
    baseline.head.entry(path).is_some_and(|e| e.id == blob)
}

/// [`diff::diff`] over the findings on files the change touched (and those without a place),
/// when the placed findings on every other file are the same list on both sides: there each
/// is on a line git's diff keeps, beside its twin with the same message, so the first step of
/// the pairing pairs them among themselves and they take no part in the rest. A change of a
/// few files then pairs a few files' findings, not all of them. Where the lists differ, the
/// whole lists are paired.
fn diff_changed(
    baseline: &Baseline,
    snapshot: &Snapshot,
    head: Side,
    base: Side,
    maps: &HashMap<String, LineMap>,
) -> Diff {
    let reduced = baseline.changed.and_then(|_| {
        let mut alone = once_per_run(|path| same_file(baseline, snapshot, path));
        diff_touched(head, base, baseline.renames, maps, &mut alone)
    });
    reduced.unwrap_or_else(|| diff::diff(head, base, baseline.renames, maps))
}

/// [`diff::diff`] of the findings not placed on a file `alone` says the change left alone, with
/// the indices of the whole lists; `None` when the placed findings on those files are not the
/// same list on both sides.
fn diff_touched<'p>(
    head: Side<'p>,
    base: Side<'p>,
    renames: &Renames,
    maps: &HashMap<String, LineMap>,
    alone: &mut dyn FnMut(&'p str) -> bool,
) -> Option<Diff> {
    let (head_left, head_alone) = split(head, alone);
    let (base_left, base_alone) = split(base, alone);
    if !same_list((head.findings, &head_alone), (base.findings, &base_alone)) {
        return None;
    }
    Some(diff_of(
        (head, base),
        (&head_left, &base_left),
        renames,
        maps,
    ))
}

/// Whether the findings `head.1` of `head.0` are, in order, the findings `base.1` of `base.0`.
fn same_list(head: (&[Finding], &[usize]), base: (&[Finding], &[usize])) -> bool {
    head.1.len() == base.1.len()
        && head
            .1
            .iter()
            .zip(base.1)
            .all(|(&h, &b)| head.0[h] == base.0[b])
}

/// [`diff::diff`] of the findings `left` of each side, with the indices of the whole lists.
fn diff_of(
    (head, base): (Side, Side),
    (head_left, base_left): (&[usize], &[usize]),
    renames: &Renames,
    maps: &HashMap<String, LineMap>,
) -> Diff {
    let part = |side: Side, left: &[usize]| -> (Vec<Finding>, Vec<Option<Place>>) {
        left.iter()
            .map(|&i| {
                (
                    side.findings[i].clone(),
                    side.places.get(i).cloned().flatten(),
                )
            })
            .unzip()
    };
    let (head_findings, head_places) = part(head, head_left);
    let (base_findings, base_places) = part(base, base_left);
    let paired = diff::diff(
        Side {
            findings: &head_findings,
            places: &head_places,
        },
        Side {
            findings: &base_findings,
            places: &base_places,
        },
        renames,
        maps,
    );
    Diff {
        new: paired.new.iter().map(|&i| head_left[i]).collect(),
        fixed: paired.fixed.iter().map(|&i| base_left[i]).collect(),
    }
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
    // HEAD's own list when the reading is shared (`measure/swaps.rs`): nothing to compare.
    if !std::ptr::eq(head, base) && head != base {
        return false;
    }
    let Some(same) = same_files(baseline) else {
        return false;
    };
    head.iter().filter_map(|f| f.path.as_deref()).all(same)
}

/// Whether a path is the same file on both sides ([`same_file`]), asked once per run of
/// findings on one path; `None` on the first commit, which has no baseline snapshot.
pub(crate) fn same_files<'p>(baseline: &Baseline) -> Option<impl FnMut(&'p str) -> bool> {
    let snapshot = baseline.snapshot?;
    Some(once_per_run(move |path| {
        same_file(baseline, snapshot, path)
    }))
}

/// Whether `path` is the same blob (or equally absent) in the baseline's `snapshot` and the one
/// measured, no rename touching it: read from the trees' diff when it is known (a change is a
/// few paths), else from both listings.
fn same_file(baseline: &Baseline, snapshot: &Snapshot, path: &str) -> bool {
    let renames = baseline.renames;
    if !renames.is_empty() && (renames.old_path(path).is_some() || renames.new_path(path).is_some())
    {
        return false;
    }
    match baseline.changed {
        Some(changed) => changed.binary_search_by(|c| c.as_str().cmp(path)).is_err(),
        None => {
            let blob = |side: &Snapshot| side.entry(path).map(|e| (e.id, e.kind, e.executable));
            blob(baseline.head) == blob(snapshot)
        }
    }
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
    let mut by_path = HashMap::with_capacity(files.len());
    for f in files {
        // `line_maps` maps every changed pair; a file whose blob is the same is unchanged. A
        // changed pair it did not map is refused, never read as unchanged.
        let map = match maps.get(&(f.old, f.new)) {
            Some(map) => map.clone(),
            None if f.old == f.new => LineMap::unchanged(),
            None => return Err(LineMapError::Unmapped(f.new_path).into()),
        };
        by_path.insert(f.new_path, map);
    }
    Ok(by_path)
}

/// `side`'s findings, by index: those left to pair, and those placed on a file the change left
/// alone (see [`diff_changed`]), each in order.
fn split<'p>(side: Side<'p>, alone: &mut dyn FnMut(&'p str) -> bool) -> (Vec<usize>, Vec<usize>) {
    partition(side.findings, |i| {
        let placed =
            side.places.get(i).is_some_and(Option::is_some) && side.findings[i].line.is_some();
        placed && side.findings[i].path.as_deref().is_some_and(&mut *alone)
    })
}

/// The indices of `findings`: those `alone` does not hold for, and those it holds for.
fn partition(
    findings: &[Finding],
    mut alone: impl FnMut(usize) -> bool,
) -> (Vec<usize>, Vec<usize>) {
    let (mut left, mut untouched) = (Vec::new(), Vec::new());
    for i in 0..findings.len() {
        match alone(i) {
            true => untouched.push(i),
            false => left.push(i),
        }
    }
    (left, untouched)
}

#[cfg(test)]
pub(super) mod tests;
