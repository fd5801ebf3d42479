//! The git facade: the repository discern runs in (discovery isolated from global config,
//! HEAD, branches, status, worktrees), the in-process clean check, and the git commands that
//! are not ref writes (worktrees, merges, a checkout's files), typed, with their rollbacks.
//! Producers read commits through `snapshot`; refs are written only by `commit`.

mod changes;
mod clean;
mod fsmonitor;
#[cfg(test)]
mod fsmonitor_tests;
mod held;
mod history;
mod ignores;
#[cfg(test)]
mod ignores_tests;
mod lstat;
pub(crate) mod promisor;
mod refs;
mod repo;
mod settle;
mod settled;
#[cfg(test)]
mod tests;
pub(crate) mod worktree;
mod worktrees;

pub(crate) use held::Held;
pub(crate) use refs::DivergedTrunk;
pub(crate) use repo::WorktreeInfo;
pub use repo::{Repo, RepoError};
pub(crate) use worktree::Merge;

/// The environment variable holding the key that signs published evidence (`discern sync
/// --push`): no child process discern starts inherits it.
pub(crate) const EVIDENCE_KEY: &str = "DISCERN_EVIDENCE_KEY";

/// `git` as discern runs it: replace refs off (`GIT_NO_REPLACE_OBJECTS`), so no
/// `refs/replace/` entry an agent wrote can stand in for an object discern reads; never with
/// the evidence key.
pub(crate) fn command() -> std::process::Command {
    let mut cmd = std::process::Command::new("git");
    cmd.env("GIT_NO_REPLACE_OBJECTS", "1")
        .env_remove(EVIDENCE_KEY);
    cmd
}

/// git's options that keep a child from asking the fsmonitor hook a worktree configures: the
/// git commands the survey and the proof run compare only the paths they name, by lstat and
/// content, and must neither trust the hook nor wait for it (with no time limit).
const NO_FSMONITOR: [&str; 2] = ["-c", "core.fsmonitor=false"];

/// A commit id shortened for people (12 hex digits).
pub(crate) fn short(id: &str) -> String {
    id.chars().take(12).collect()
}
