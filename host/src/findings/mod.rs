//! Findings compared with a baseline: which are new on this commit, which were fixed, and
//! what a Standard's result shows of them.
//!
//! A finding is identified by where it is. The host reads the line a finding names from the
//! snapshot it was measured on (`place.rs`: the blob, the line's normalized content and its
//! rank among the identical lines of the file, `lines.rs`), fingerprints it from that
//! (`identity.rs`, as GitHub code scanning's `primaryLocationLineHash` does: never a line
//! number), and pairs this commit's findings with the baseline's along git's diff of each file
//! (`line_map.rs`, `diff.rs`): a finding on a line the change added is new even when an
//! untouched line reads the same. A finding the host cannot place (no path or line, a path
//! outside the snapshot) is compared by the producer's fingerprint, as producers define it
//! (`spec/producers.md`). Either way the lists are multisets: two equal findings are two, and
//! the totals are exact.

mod compare;
mod diff;
mod identity;
mod line_map;
mod lines;
mod place;
mod renames;
mod sparse;

use serde::Serialize;

use crate::runtime::Finding;

pub(crate) use compare::{
    Baseline, Compared, Touched, compare, compare_touched, placed_alone, same_files, touched,
    untouched,
};
pub(crate) use diff::{Diff, Side};
pub(crate) use identity::Fingerprints;
pub(crate) use line_map::LineMap;
pub(crate) use place::{Place, ReadLines, complete, places, places_at};
pub(crate) use renames::{Renames, renames};
pub(crate) use sparse::sparse;

/// How many new and fixed findings a Standard's result lists (the totals are exact).
pub(crate) const SHOWN: usize = 20;

/// `data.standards[].findings`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FindingsSummary {
    /// Findings behind this reading (kept ones; see `dropped`).
    pub total: usize,
    /// Findings the producer reported past the cap, counted but not kept.
    #[serde(skip_serializing_if = "is_zero")]
    pub dropped: usize,
    /// New versus the baseline; `None` when there is no baseline to compare with.
    pub new_total: Option<usize>,
    pub fixed_total: Option<usize>,
    /// The first [`SHOWN`] new findings.
    pub new: Vec<Finding>,
    /// The first [`SHOWN`] fixed findings.
    pub fixed: Vec<Finding>,
    /// The commit compared with: the merge base on a branch, the first parent on the trunk.
    pub baseline: Option<String>,
    /// For a `down` Standard without `per` whose value counts its findings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swap_check: Option<SwapCheck>,
    /// Why there is no baseline, or why the swap check is unverified.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The swap check of a `down` Standard without `per` whose value counts its findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SwapCheck {
    /// No new finding was hidden by a fixed one.
    Passed,
    /// New findings would breach the limit, but fixed ones held the count: failing.
    Swapped,
    /// The findings could not all be compared (no baseline, a list cut short): not guessed.
    Unverified,
    /// `findings = "count"`: the count alone is judged.
    Off,
}

/// One finding of a reading, and whether it is new versus the baseline (for `--explain`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explained {
    #[serde(flatten)]
    pub finding: Finding,
    /// `None` without a baseline.
    pub new: Option<bool>,
}

/// `answer` asked once per run of equal keys, the last answer given again while the key
/// repeats: findings come file by file, so a question about a finding's path is asked once a
/// file, not once a finding.
pub(crate) fn once_per_run<K: PartialEq + Copy, T: Copy>(
    answer: impl Fn(K) -> T,
) -> impl FnMut(K) -> T {
    let mut last: Option<(K, T)> = None;
    move |key| match last {
        Some((seen, value)) if seen == key => value,
        _ => {
            let value = answer(key);
            last = Some((key, value));
            value
        }
    }
}
