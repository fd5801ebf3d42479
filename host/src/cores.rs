//! How many threads the machine runs at once, asked once per process.
//!
//! `std::thread::available_parallelism` reads the cgroup's CPU quota from `/proc` on every call
//! (several files opened and parsed); a status of 100 worktrees asked it once per worktree.

use std::sync::OnceLock;

/// The cores this process may use (at least 1), read on the first call.
pub(crate) fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}
