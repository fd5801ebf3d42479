//! Blob sizes by entry, each looked up once (from the object's header) when a producer lists
//! the entry: a measurement that reuses evidence never pays for them. Eight bytes an entry.

use std::sync::atomic::{AtomicU64, Ordering};

/// A size not looked up yet. No blob is this large; one that were would only be looked up
/// again each time it is listed.
const UNKNOWN: u64 = u64::MAX;

/// The sizes of a listing's entries, by index.
#[derive(Debug)]
pub(crate) struct Sizes(Box<[AtomicU64]>);

impl Sizes {
    /// `count` sizes, none looked up.
    pub(super) fn unknown(count: usize) -> Self {
        Self((0..count).map(|_| AtomicU64::new(UNKNOWN)).collect())
    }

    /// The size of entry `index`, if looked up.
    pub(super) fn get(&self, index: usize) -> Option<u64> {
        let size = self.0.get(index)?.load(Ordering::Relaxed);
        (size != UNKNOWN).then_some(size)
    }

    /// Entry `index` is `size` bytes (every thread that looks it up finds the same).
    pub(super) fn set(&self, index: usize, size: u64) {
        if let Some(slot) = self.0.get(index) {
            slot.store(size, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Sizes;

    #[test]
    fn a_size_is_unknown_until_set_and_past_the_end_is_none() {
        let sizes = Sizes::unknown(3);
        assert_eq!(sizes.get(1), None);
        sizes.set(1, 0);
        sizes.set(2, 42);
        sizes.set(7, 1);
        assert_eq!(
            (0..4).map(|i| sizes.get(i)).collect::<Vec<_>>(),
            [None, Some(0), Some(42), None]
        );
    }
}
