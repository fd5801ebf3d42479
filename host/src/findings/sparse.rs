//! Two long findings lists compared without decoding them all: HEAD's and the baseline's
//! findings, both still encoded (a reused reading's, a grouped run's), are skimmed for their
//! paths, and the findings with a line on a file the change left alone are left out where that
//! file's findings are the same list on both sides. Findings with a place pair only with the
//! baseline's on the same file (`diff.rs`, steps 1–3), and on a file left alone each pairs with
//! its twin, as `compare.rs`'s `touched` proves for decoded lists; so leaving such a file out
//! of both sides changes no pairing. What is decoded is what the comparison reads: the
//! findings on the files the change touched, on files left alone whose lists differ (a list cut
//! by a cap ends in one), and on the files whose findings a result shows first (their
//! fingerprints count occurrences along the file). A change of a few files on a reading of
//! 100,000 findings then decodes a few files' findings, not 200,000.
//!
//! Where both lists come in the order of their paths (as a producer that reports file by file
//! gives them), each file's findings are one stretch of its list, and the lists are compared
//! stretch by stretch in one pass (`stretches.rs`): only the findings decoded are held, not an
//! index of every finding on both sides. Otherwise every finding is indexed by its file first.

use std::collections::HashSet;

use super::{Baseline, placed_alone};
use crate::evidence::findings::{Of, Record};
use crate::runtime::Finding;

/// The findings of both sides a comparison reads, each list in its order, and how many of each
/// were left out (the same number on both sides: they pair with themselves).
#[derive(Debug, PartialEq)]
pub(crate) struct Sparse {
    pub(crate) head: Vec<Finding>,
    pub(crate) base: Vec<Finding>,
    pub(crate) omitted: usize,
}

/// HEAD's findings `head` and the baseline's `base`, decoded as far as their comparison reads
/// them; the first `shown` of HEAD's are kept (a result shows them). `None` when the files left
/// alone cannot be told (the first commit, the trees' diff unknown) or a finding cannot be
/// read: every finding then takes part.
pub(crate) fn sparse(baseline: &Baseline, sides: (Of, Of), shown: usize) -> Option<Sparse> {
    if sides.0.in_path_order() && sides.1.in_path_order() {
        return stretches::sparse(baseline, sides, shown);
    }
    indexed(baseline, sides, shown)
}

/// [`sparse`] of lists in any order: every finding of both sides indexed by its file.
fn indexed(baseline: &Baseline, (head, base): (Of, Of), shown: usize) -> Option<Sparse> {
    let head = head.records()?;
    let base = base.records()?;
    let head_alone = alone(baseline, &head)?;
    let base_alone = alone(baseline, &base)?;
    // Every finding on a file a result shows first stays: its fingerprint counts along it.
    let shown_files: HashSet<&str> = head
        .iter()
        .take(shown)
        .filter_map(|record| record.path)
        .collect();
    let mut head_left = vec![true; head.len()];
    let mut base_left = vec![true; base.len()];
    let files = (by_file(&head, &head_alone), by_file(&base, &base_alone));
    for (file, head_twins, base_twins) in twins(&files, (&head, &base)) {
        if shown_files.contains(file) {
            continue;
        }
        head_twins.iter().for_each(|&i| head_left[i] = false);
        base_twins.iter().for_each(|&i| base_left[i] = false);
    }
    let omitted = head_left.iter().filter(|&&left| !left).count();
    Some(Sparse {
        head: decode(&head, &head_left)?,
        base: decode(&base, &base_left)?,
        omitted,
    })
}

/// One side's findings with a line on a file left alone, as (path, index), by path (in order
/// within a path).
type Files<'k> = Vec<(&'k str, usize)>;

/// [`Files`] of one side's `records`.
fn by_file<'k>(records: &[Record<'k>], alone: &[bool]) -> Files<'k> {
    let mut files: Vec<(&str, usize)> = records
        .iter()
        .enumerate()
        .filter(|&(i, _)| alone[i])
        .filter_map(|(i, record)| Some((record.path?, i)))
        .collect();
    // Stable, and linear on a list already in path order (a producer lists file by file).
    files.sort_by(|a, b| a.0.cmp(b.0));
    files
}

/// The files left alone whose findings are the same list on both sides: each one's path and
/// indices on each side.
fn twins<'k>(
    (head, base): &(Files<'k>, Files<'k>),
    (head_records, base_records): (&[Record], &[Record]),
) -> Vec<(&'k str, Vec<usize>, Vec<usize>)> {
    let mut head_files = head.chunk_by(|a, b| a.0 == b.0).peekable();
    let mut base_files = base.chunk_by(|a, b| a.0 == b.0).peekable();
    let mut same = Vec::new();
    while let (Some(h), Some(b)) = (head_files.peek(), base_files.peek()) {
        match h[0].0.cmp(b[0].0) {
            std::cmp::Ordering::Less => drop(head_files.next()),
            std::cmp::Ordering::Greater => drop(base_files.next()),
            std::cmp::Ordering::Equal => {
                let equal = h.len() == b.len()
                    && h.iter()
                        .zip(b.iter())
                        .all(|(&(_, i), &(_, j))| head_records[i].same(&base_records[j]));
                if equal {
                    let indices = |file: &[(&str, usize)]| file.iter().map(|&(_, i)| i).collect();
                    same.push((h[0].0, indices(h), indices(b)));
                }
                head_files.next();
                base_files.next();
            }
        }
    }
    same
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

/// The records `left` says, decoded.
fn decode(records: &[Record], left: &[bool]) -> Option<Vec<Finding>> {
    records
        .iter()
        .zip(left)
        .filter(|&(_, &left)| left)
        .map(|(record, _)| record.decode())
        .collect()
}

mod stretches;

#[cfg(test)]
mod tests;
