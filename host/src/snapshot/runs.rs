//! Ascending entry indices kept as runs of consecutive ones: what a listing of `**` matched, or
//! every file a run over it read, is one run, not four bytes a file. [`Counted`] runs also
//! answer "the how-manyth index" (the entries a batch's shared reads expect, a grouped run's
//! groups), by a binary search over how many come before each run.

use std::ops::Range;

/// Ascending, distinct indices, as inclusive runs `(first, last)`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Runs(Vec<(u32, u32)>);

impl Runs {
    /// The runs of `indices`, which ascend (an index equal to the one before is left out).
    pub(crate) fn of_ascending(indices: impl IntoIterator<Item = u32>) -> Runs {
        let mut runs: Vec<(u32, u32)> = Vec::new();
        for at in indices {
            match runs.last_mut() {
                Some((_, last)) if at <= *last => {}
                Some((_, last)) if at - 1 == *last => *last = at,
                _ => runs.push((at, at)),
            }
        }
        runs.shrink_to_fit();
        Runs(runs)
    }

    /// Whether `at` is one of them.
    pub(crate) fn contains(&self, at: u32) -> bool {
        let run = self.0.partition_point(|&(_, last)| last < at);
        self.0.get(run).is_some_and(|&(first, _)| first <= at)
    }

    /// Each index, ascending.
    pub(crate) fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().flat_map(|&(first, last)| first..=last)
    }

    /// How many indices.
    pub(crate) fn len(&self) -> usize {
        (self.0.iter())
            .map(|&(first, last)| (last - first) as usize + 1)
            .sum()
    }
}

/// [`Runs`] that also know how many indices come before each run: the `n`th index, and where
/// an index stands among them, each a binary search (12 bytes a run, where a listing of `**`
/// is one run; never more than 6 bytes an index, as every other entry would be).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Counted {
    runs: Vec<(u32, u32)>,
    /// How many indices the runs before each run hold.
    before: Vec<usize>,
    len: usize,
}

impl Counted {
    /// The runs of `indices`, which ascend (an index equal to the one before is left out).
    pub(crate) fn of_ascending(indices: impl IntoIterator<Item = u32>) -> Counted {
        let Runs(runs) = Runs::of_ascending(indices);
        let mut before = Vec::with_capacity(runs.len());
        let mut len = 0;
        for &(first, last) in &runs {
            before.push(len);
            len += (last - first) as usize + 1;
        }
        Counted { runs, before, len }
    }

    /// How many indices.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The index at place `at` (counted from 0), if there are that many.
    pub(crate) fn nth(&self, at: usize) -> Option<u32> {
        if at >= self.len {
            return None;
        }
        let run = self.before.partition_point(|&before| before <= at) - 1;
        let (first, _) = self.runs[run];
        u32::try_from(at - self.before[run])
            .ok()
            .map(|offset| first + offset)
    }

    /// The place of `index` among them, if it is one of them.
    pub(crate) fn position(&self, index: u32) -> Option<usize> {
        let run = self.runs.partition_point(|&(_, last)| last < index);
        let (first, _) = *self.runs.get(run).filter(|&&(first, _)| first <= index)?;
        Some(self.before[run] + (index - first) as usize)
    }

    /// The indices at the places `places`, in order (as far as there are any).
    pub(crate) fn places(&self, places: Range<usize>) -> impl Iterator<Item = u32> + '_ {
        let start = places.start.min(self.len);
        let count = places.end.min(self.len).saturating_sub(start);
        // The run that holds place `start`; with no runs at all, `start` is 0 and nothing is
        // taken.
        let run = (self.before.partition_point(|&before| before <= start)).saturating_sub(1);
        let skip = self.before.get(run).map_or(0, |&before| start - before);
        (self.runs.get(run..).unwrap_or_default())
            .iter()
            .flat_map(|&(first, last)| first..=last)
            .skip(skip)
            .take(count)
    }

    /// Each index, ascending.
    pub(crate) fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.runs.iter().flat_map(|&(first, last)| first..=last)
    }
}

#[cfg(test)]
mod tests {
    use super::{Counted, Runs};

    #[test]
    fn runs_hold_the_indices_they_were_made_of() {
        let indices = [0, 1, 2, 5, 7, 8, 8, 9, 20, u32::MAX - 1, u32::MAX];
        let runs = Runs::of_ascending(indices);
        assert_eq!(
            runs.0,
            [(0, 2), (5, 5), (7, 9), (20, 20), (u32::MAX - 1, u32::MAX)]
        );
        let mut distinct = indices.to_vec();
        distinct.dedup();
        assert!(runs.iter().eq(distinct.iter().copied()));
        assert_eq!(runs.len(), distinct.len());
        for at in [0, 2, 3, 4, 5, 6, 9, 10, 19, 20, 21, u32::MAX - 2, u32::MAX] {
            assert_eq!(runs.contains(at), distinct.contains(&at), "{at}");
        }
        assert!(!Runs::default().contains(0) && Runs::default().len() == 0);
        let all = Runs::of_ascending(0..200_000);
        assert_eq!((all.0.len(), all.len()), (1, 200_000));
    }

    #[test]
    fn counted_runs_answer_places_as_the_indices_they_were_made_of() {
        let shapes: [Vec<u32>; 5] = [
            vec![],
            vec![7],
            (0..5000).collect(),
            (0..5000).filter(|i| i % 3 != 1).collect(),
            [0, 1, 2, 9, 10, 40, 41, 42, 43, 1000, u32::MAX - 1, u32::MAX].to_vec(),
        ];
        for indices in shapes {
            let counted = Counted::of_ascending(indices.iter().copied());
            assert_eq!(counted.len(), indices.len());
            assert!(counted.iter().eq(indices.iter().copied()));
            for (at, &index) in indices.iter().enumerate() {
                assert_eq!(counted.nth(at), Some(index), "{at}");
                assert_eq!(counted.position(index), Some(at), "{index}");
            }
            assert_eq!(counted.nth(indices.len()), None);
            for absent in [3, 8, 11, 39, 999, 1001, 4999, 5000, u32::MAX - 2] {
                let expected = indices.iter().position(|&i| i == absent);
                assert_eq!(counted.position(absent), expected, "{absent}");
            }
            let len = indices.len();
            for places in [0..0, 0..1, 0..len, 1..4, 2..3, len / 2..len, len..len + 3] {
                let expected: Vec<u32> = (indices.get(places.start..places.end.min(len)))
                    .unwrap_or_default()
                    .to_vec();
                let got: Vec<u32> = counted.places(places.clone()).collect();
                assert_eq!(got, expected, "{places:?} of {len}");
            }
        }
    }
}
