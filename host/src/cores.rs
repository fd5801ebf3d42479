//! How many threads the machine runs at once (asked once per process), and the cores a fleet's
//! surveys lend each other.
//!
//! `std::thread::available_parallelism` reads the cgroup's CPU quota from `/proc` on every call
//! (several files opened and parsed); a status of 100 worktrees asked it once per worktree.
//!
//! A status of many worktrees reads them on as many threads as there are cores, a worktree
//! each. A thread that finds no worktree left gives its core to [`Spare`], and a survey still
//! reading borrows it for a thread that reads its folders too: the last worktrees are read on
//! every core, however unevenly the work trees took.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The cores this process may use (at least 1), read on the first call.
pub(crate) fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// Cores nobody is reading on, lent to a survey still reading.
#[derive(Debug, Default)]
pub(crate) struct Spare(AtomicUsize);

impl Spare {
    /// `idle` cores to lend from the start.
    pub(crate) fn new(idle: usize) -> Self {
        Self(AtomicUsize::new(idle))
    }

    /// A core for one more thread, if one is idle; it is given back as the loan is dropped.
    pub(crate) fn borrow(&self) -> Option<Loan<'_>> {
        self.0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |idle| {
                idle.checked_sub(1)
            })
            .ok()
            .map(|_| Loan(self))
    }

    /// The caller's core is idle from now on.
    pub(crate) fn give(&self) {
        self.0.fetch_add(1, Ordering::AcqRel);
    }
}

/// One core borrowed from [`Spare`] (given back when dropped).
#[derive(Debug)]
pub(crate) struct Loan<'a>(&'a Spare);

impl Drop for Loan<'_> {
    fn drop(&mut self) {
        self.0.give();
    }
}

/// The threads a survey reads its folders on.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Threads<'a> {
    /// This many (at least the caller's), from the start.
    Fixed(usize),
    /// The caller's, and one more for every core `Spare` lends while folders are left.
    Lent(&'a Spare),
}

impl Threads<'_> {
    /// The threads to start with, the caller's among them.
    pub(crate) fn at_start(self) -> usize {
        match self {
            Self::Fixed(n) => n.max(1),
            Self::Lent(_) => 1,
        }
    }

    /// A core for one more thread, while the survey reads.
    pub(crate) fn borrow(&self) -> Option<Loan<'_>> {
        match self {
            Self::Fixed(_) => None,
            Self::Lent(spare) => spare.borrow(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_core_is_lent_once_and_comes_back_with_its_loan() {
        let spare = Spare::new(1);
        let loan = spare.borrow();
        assert!(loan.is_some());
        assert!(spare.borrow().is_none(), "one idle core lent twice");
        drop(loan);
        assert!(spare.borrow().is_some(), "the loan did not give it back");
        assert!(Threads::Fixed(3).borrow().is_none());
        assert_eq!(Threads::Fixed(0).at_start(), 1);
        assert_eq!(Threads::Lent(&spare).at_start(), 1);
    }
}
