//! The git facade: the repository discern runs in (discovery isolated from global config,
//! HEAD, branches, status, worktrees), the in-process clean check, and the git commands that
//! are not ref writes (worktrees, merges, a checkout's files), typed, with their rollbacks.
//! Producers read commits through `snapshot`; refs are written only by `commit`.

mod changes;
mod clean;
mod refs;
mod repo;
mod settle;
mod settled;
#[cfg(test)]
mod tests;
pub mod worktree;

pub use refs::Resolved;
pub use repo::{Repo, RepoError, WorktreeInfo};
pub use worktree::{GitCommandError, Merge, Removal};

/// A commit id shortened for people (12 hex digits).
pub fn short(id: &str) -> String {
    id.chars().take(12).collect()
}
