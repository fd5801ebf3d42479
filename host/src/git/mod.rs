//! The git facade beyond reading snapshots: the commands discern runs that are not ref writes
//! (worktrees, merges, a checkout's files), typed, with their rollbacks.

pub mod worktree;

pub use worktree::{GitCommandError, Merge, Removal};
