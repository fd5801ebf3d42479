//! Two long findings lists compared without decoding them all: HEAD's and the baseline's
//! findings, both still encoded (a reused reading's, a grouped run's), are skimmed for their
//! paths, and a finding with a line on a file the change left alone is left out when the
//! findings left alone are the same list on both sides — there each pairs with its twin, as
//! `compare.rs`'s `touched` proves for decoded lists. What is decoded is what the comparison reads:
//! the findings the change may have touched, and every finding on a file whose findings a
//! result shows first (their fingerprints count occurrences along the file). A change of a few
//! files on a reading of 100,000 findings then decodes a few files' findings, not 200,000.

use std::collections::HashSet;

use super::{Baseline, placed_alone};
use crate::evidence::findings::{Of, Record};
use crate::runtime::Finding;

/// The findings of both sides a comparison reads, each list in its order, and how many of each
/// were left out (the same number on both sides: they pair with themselves).
#[derive(Debug)]
pub(crate) struct Sparse {
    pub(crate) head: Vec<Finding>,
    pub(crate) base: Vec<Finding>,
    pub(crate) omitted: usize,
}

/// HEAD's findings `head` and the baseline's `base`, decoded as far as their comparison reads
/// them; the first `shown` of HEAD's are kept (a result shows them). `None` when the findings
/// on files left alone are not the same list on both sides, or that cannot be told, or a
/// finding cannot be read: every finding then takes part.
pub(crate) fn sparse(baseline: &Baseline, (head, base): (Of, Of), shown: usize) -> Option<Sparse> {
    let head = head.records()?;
    let base = base.records()?;
    let head_alone = alone(baseline, &head)?;
    let base_alone = alone(baseline, &base)?;
    let twins = |side: &[Record], alone: &[bool]| -> Vec<usize> {
        (0..side.len()).filter(|&i| alone[i]).collect()
    };
    let (head_twins, base_twins) = (twins(&head, &head_alone), twins(&base, &base_alone));
    let same = head_twins.len() == base_twins.len()
        && head_twins
            .iter()
            .zip(&base_twins)
            .all(|(&h, &b)| head[h].same(&base[b]));
    if !same {
        return None;
    }
    // Every finding on a file a result shows first stays: its fingerprint counts along it.
    let shown_files: HashSet<&str> = head
        .iter()
        .zip(&head_alone)
        .take(shown)
        .filter_map(|(record, &alone)| record.path.filter(|_| alone))
        .collect();
    let kept = |side: &[Record], alone: &[bool], first: usize| -> Vec<usize> {
        (0..side.len())
            .filter(|&i| {
                !alone[i] || i < first || side[i].path.is_some_and(|p| shown_files.contains(p))
            })
            .collect()
    };
    let head_kept = kept(&head, &head_alone, shown);
    let base_kept = kept(&base, &base_alone, 0);
    let omitted = head.len() - head_kept.len();
    if base.len() - base_kept.len() != omitted {
        return None;
    }
    Some(Sparse {
        head: decode(&head, &head_kept)?,
        base: decode(&base, &base_kept)?,
        omitted,
    })
}

/// For each record: whether it names a line of a file the change left alone.
fn alone(baseline: &Baseline, records: &[Record]) -> Option<Vec<bool>> {
    let mut on_file_alone = placed_alone(baseline)?;
    Some(
        records
            .iter()
            .map(|r| r.line && r.path.is_some_and(&mut on_file_alone))
            .collect(),
    )
}

fn decode(records: &[Record], at: &[usize]) -> Option<Vec<Finding>> {
    at.iter().map(|&i| records[i].decode()).collect()
}

#[cfg(test)]
mod tests;
