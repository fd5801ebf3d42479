//! One reading's findings compared with the baseline's: the baseline's findings placed in its
//! snapshot (`place.rs`), git's line map read for each file with placed findings on both sides
//! (`line_map.rs`), then paired (`diff.rs`) and fingerprinted (`identity.rs`).

use std::collections::HashMap;

use gix::ObjectId;

use super::diff::{self, Diff, Side};
use super::line_map::{LineMap, LineMapError, line_map};
use super::{Renames, fingerprints, places};
use crate::git::Repo;
use crate::runtime::Finding;
use crate::snapshot::Snapshot;

/// What findings are compared with.
#[derive(Debug, Clone, Copy)]
pub struct Baseline<'a> {
    pub repo: &'a Repo,
    /// The baseline's snapshot; `None` on the first commit, which nothing came before.
    pub snapshot: Option<&'a Snapshot>,
    /// The renames from the baseline to the snapshot measured.
    pub renames: &'a Renames,
}

/// A comparison: which findings are new and fixed, and the fingerprints of the baseline's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compared {
    pub diff: Diff,
    /// The baseline's findings' fingerprints, by index (see `identity.rs`).
    pub base_fingerprints: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
#[error("git's diff of {path} since the baseline cannot be read: {source}")]
pub struct CompareError {
    path: String,
    #[source]
    source: LineMapError,
}

/// `head` (this commit's findings, placed) versus `base`, the baseline's.
pub fn compare(
    baseline: &Baseline,
    head: Side,
    base: &[Finding],
) -> Result<Compared, CompareError> {
    let base_places = match baseline.snapshot {
        Some(snapshot) => places(snapshot, base),
        None => vec![None; base.len()],
    };
    let base_side = Side {
        findings: base,
        places: &base_places,
    };
    let maps = line_maps(baseline, head, base_side)?;
    Ok(Compared {
        diff: diff::diff(head, base_side, baseline.renames, &maps),
        base_fingerprints: fingerprints(base, &base_places),
    })
}

/// Git's line map for each of this commit's files with placed findings whose baseline file
/// (under its old name, if renamed) has placed findings too.
fn line_maps(
    baseline: &Baseline,
    head: Side,
    base: Side,
) -> Result<HashMap<String, LineMap>, CompareError> {
    let base_blobs: HashMap<&str, ObjectId> = base
        .places
        .iter()
        .flatten()
        .map(|place| (place.path.as_str(), place.blob))
        .collect();
    let mut maps = HashMap::new();
    for place in head.places.iter().flatten() {
        if maps.contains_key(&place.path) {
            continue;
        }
        let old_path = baseline
            .renames
            .old_path(&place.path)
            .unwrap_or(&place.path);
        let Some(&old) = base_blobs.get(old_path) else {
            continue;
        };
        let map = line_map(baseline.repo, old, place.blob).map_err(|source| CompareError {
            path: place.path.clone(),
            source,
        })?;
        maps.insert(place.path.clone(), map);
    }
    Ok(maps)
}
