//! Blob sizes by entry, each looked up once (from the object's header) when a producer lists
//! the entry: a measurement that reuses evidence never pays for them. Four bytes an entry.

use std::sync::atomic::{AtomicU32, Ordering};

/// A size not looked up yet, or too large to keep here: a blob of 4 GiB or more is looked up
/// again each time it is listed (no source file is that large; the answer is the same).
const UNKNOWN: u32 = u32::MAX;

/// The sizes of a listing's entries, by index.
#[derive(Debug)]
pub(crate) struct Sizes(Box<[AtomicU32]>);

impl Sizes {
    /// `count` sizes, none looked up.
    pub(super) fn unknown(count: usize) -> Self {
        Self((0..count).map(|_| AtomicU32::new(UNKNOWN)).collect())
    }

    /// The size of entry `index`, if looked up.
    pub(super) fn get(&self, index: usize) -> Option<u64> {
        let size = self.0.get(index)?.load(Ordering::Relaxed);
        (size != UNKNOWN).then_some(u64::from(size))
    }

    /// Entry `index` is `size` bytes (every thread that looks it up finds the same).
    pub(super) fn set(&self, index: usize, size: u64) {
        let Ok(size) = u32::try_from(size) else {
            return;
        };
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
        // Too large to keep: looked up again each time.
        sizes.set(0, 1 << 32);
        sizes.set(0, u64::from(u32::MAX));
        assert_eq!(
            (0..4).map(|i| sizes.get(i)).collect::<Vec<_>>(),
            [None, Some(0), Some(42), None]
        );
        sizes.set(2, u64::from(u32::MAX - 1));
        assert_eq!(sizes.get(2), Some(u64::from(u32::MAX - 1)));
    }
}
