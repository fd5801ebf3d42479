//! Ascending entry indices kept as runs of consecutive ones: what a listing of `**` matched, or
//! every file a run over it read, is one run, not four bytes a file.

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

#[cfg(test)]
mod tests {
    use super::Runs;

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
}
