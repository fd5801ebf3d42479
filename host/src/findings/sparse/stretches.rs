//! [`sparse`](super::sparse) in one pass over each side, for lists whose findings that name a
//! file come in the order of their paths: a file's findings are then one stretch of its list
//! (with any findings that name no file among them), and a file's twins are its stretches on
//! both sides. Each side is read a stretch at a time and only what is decoded is held.
//!
//! It gives what the indexed comparison gives (the tests hold the two to each other): a
//! finding is left out where it names a line of a file left alone, that file's such findings
//! are the same list on both sides, and no result shows it first.

use std::collections::HashSet;

use super::Sparse;
use crate::evidence::findings::{Of, Record, RecordIter};
use crate::findings::{Baseline, placed_alone};
use crate::runtime::Finding;

/// [`Sparse`] of `head` and `base`, both in the order of their paths; `None` when the files
/// left alone cannot be told or a finding cannot be read.
pub(super) fn sparse(baseline: &Baseline, (head, base): (Of, Of), shown: usize) -> Option<Sparse> {
    let shown_files = head
        .iter()
        .take(shown)
        .map(|record| record.map(|record| record.path))
        .collect::<Option<HashSet<_>>>()?;
    let mut head = Stretches::new(head.iter(), placed_alone(baseline)?);
    let mut base = Stretches::new(base.iter(), placed_alone(baseline)?);
    let mut out = Sparse {
        head: Vec::new(),
        base: Vec::new(),
        omitted: 0,
    };
    let (mut more_head, mut more_base) = (head.advance()?, base.advance()?);
    while more_head || more_base {
        let same_file = more_head && more_base && head.path.is_some() && head.path == base.path;
        if same_file {
            let twins = !shown_files.contains(&head.path) && head.twin_of(&base);
            out.omitted += head.emit(&mut out.head, twins)?;
            base.emit(&mut out.base, twins)?;
            (more_head, more_base) = (head.advance()?, base.advance()?);
        } else if more_head && (!more_base || head.path < base.path) {
            head.emit(&mut out.head, false)?;
            more_head = head.advance()?;
        } else {
            base.emit(&mut out.base, false)?;
            more_base = base.advance()?;
        }
    }
    Some(out)
}

/// One side's findings, read a file's stretch at a time.
struct Stretches<'k, F> {
    records: RecordIter<'k>,
    /// The first finding of the next stretch, read past the end of this one.
    next: Option<Record<'k>>,
    /// Whether a path is a file the change left alone.
    alone: F,
    /// The file of the stretch held (`None`: its findings name none).
    path: Option<&'k str>,
    /// Whether that file was left alone.
    path_alone: bool,
    stretch: Vec<Record<'k>>,
}

impl<'k, F: FnMut(&'k str) -> bool> Stretches<'k, F> {
    fn new(records: RecordIter<'k>, alone: F) -> Self {
        Stretches {
            records,
            next: None,
            alone,
            path: None,
            path_alone: false,
            stretch: Vec::new(),
        }
    }

    /// Read the next stretch: `Some(false)` at the end of the list, `None` when a finding
    /// cannot be read.
    fn advance(&mut self) -> Option<bool> {
        self.stretch.clear();
        self.path = None;
        loop {
            let record = match self.next.take() {
                Some(record) => record,
                None => match self.records.next() {
                    Some(record) => record?,
                    None => break,
                },
            };
            match (self.path, record.path) {
                (Some(path), Some(other)) if path != other => {
                    self.next = Some(record);
                    break;
                }
                (None, Some(path)) => self.path = Some(path),
                _ => {}
            }
            self.stretch.push(record);
        }
        self.path_alone = self.path.is_some_and(&mut self.alone);
        Some(!self.stretch.is_empty())
    }

    /// Whether `record` of the stretch names a line of a file left alone.
    fn placed_alone(&self, record: &Record) -> bool {
        self.path_alone && record.line && record.path.is_some()
    }

    /// The stretch's findings that name a line of a file left alone.
    fn alone_ones(&self) -> impl Iterator<Item = &Record<'k>> {
        self.stretch.iter().filter(|r| self.placed_alone(r))
    }

    /// Whether this stretch's findings placed on the file left alone are `other`'s, in order.
    fn twin_of<G>(&self, other: &Stretches<'k, G>) -> bool
    where
        G: FnMut(&'k str) -> bool,
    {
        let mut mine = self.alone_ones();
        let mut theirs = other.alone_ones();
        loop {
            match (mine.next(), theirs.next()) {
                (None, None) => return true,
                (Some(a), Some(b)) if a.same(b) => {}
                _ => return false,
            }
        }
    }

    /// Decode the stretch into `out`, leaving out its findings placed on the file left alone
    /// when `twins`; how many were left out, `None` when one cannot be decoded.
    fn emit(&self, out: &mut Vec<Finding>, twins: bool) -> Option<usize> {
        let mut omitted = 0;
        for record in &self.stretch {
            if twins && self.placed_alone(record) {
                omitted += 1;
            } else {
                out.push(record.decode()?);
            }
        }
        Some(omitted)
    }
}
