//! The git commands discern runs that are not ref writes, typed, each with its rollback: add
//! and remove a worktree, merge into the checked-out branch (a conflict is aborted, leaving
//! nothing), and bring a checkout's index and files from one commit to another.
//!
//! git itself does these (it owns worktree administration, the merge machinery and checkout
//! safety); every ref discern moves goes through `commit`.

use std::path::Path;

use gix::ObjectId;

use crate::git::Repo;

/// A git command that failed, and what it said.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`git {command}` failed: {message}")]
pub struct GitCommandError {
    pub command: String,
    pub message: String,
}

fn run(repo: &Repo, args: &[&str]) -> Result<String, GitCommandError> {
    repo.git(args).map_err(|e| GitCommandError {
        command: args.join(" "),
        message: e.to_string(),
    })
}

/// `git worktree add <path> <branch>`: a new checkout of an existing branch. On failure git
/// leaves no worktree behind.
pub fn add(repo: &Repo, path: &Path, branch: &str) -> Result<(), GitCommandError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| GitCommandError {
            command: format!("worktree add {}", path.display()),
            message: format!("cannot create {}: {e}", parent.display()),
        })?;
    }
    let path = path.display().to_string();
    run(repo, &["worktree", "add", "--quiet", &path, branch]).map(|_| ())
}

/// Whether a removal may discard the worktree's uncommitted files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Removal {
    /// Only a clean worktree is removed (git refuses otherwise).
    IfClean,
    /// The rollback of a worktree this call just created: whatever is in it goes.
    Discard,
}

/// `git worktree remove [--force] <path>`, run from `main` (a worktree cannot remove itself).
pub fn remove(main: &Repo, path: &Path, removal: Removal) -> Result<(), GitCommandError> {
    let path = path.display().to_string();
    match removal {
        Removal::IfClean => run(main, &["worktree", "remove", &path]),
        Removal::Discard => run(main, &["worktree", "remove", "--force", &path]),
    }
    .map(|_| ())
}

/// What a merge did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Merge {
    /// The branch now contains `incoming` in a merge commit.
    Merged,
    /// It conflicted in these paths; the merge was aborted and nothing changed.
    Conflicted(Vec<String>),
    /// It failed for another reason (`message`); aborted, nothing changed.
    Failed(String),
}

/// `git merge --no-ff --no-edit -m <message> <incoming>` into the checked-out branch; any
/// failure is aborted (`git merge --abort`), so no conflict state is ever left.
pub fn merge(repo: &Repo, incoming: ObjectId, message: &str) -> Merge {
    let incoming = incoming.to_string();
    let args = ["merge", "--no-edit", "--no-ff", "-m", message, &incoming];
    match run(repo, &args) {
        Ok(_) => Merge::Merged,
        Err(e) => {
            let conflicts =
                run(repo, &["diff", "--name-only", "--diff-filter=U"]).unwrap_or_default();
            let _ = run(repo, &["merge", "--abort"]);
            let files: Vec<String> = conflicts.lines().map(str::to_owned).collect();
            match files.is_empty() {
                true => Merge::Failed(e.message),
                false => Merge::Conflicted(files),
            }
        }
    }
}

/// Bring `checkout`'s index and files from `from` to `to` (`git read-tree -m -u`), the way a
/// fast-forward updates a checkout. git refuses when a local change would be overwritten.
pub fn follow(checkout: &Repo, from: ObjectId, to: ObjectId) -> Result<(), GitCommandError> {
    let (from, to) = (from.to_string(), to.to_string());
    run(checkout, &["read-tree", "-m", "-u", &from, &to]).map(|_| ())
}
