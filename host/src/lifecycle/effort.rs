//! Naming an effort from anywhere in the repository: by its worktree id, its branch (with or
//! without the branch prefix) or its worktree path. The owner's verbs (`approve`, `accept
//! --effort`) work from the main checkout this way.

use std::path::PathBuf;

use gix::ObjectId;

use crate::git::Repo;

/// The effort `target` names: its worktree path (if it still has one) and its tip.
pub fn find(
    repo: &Repo,
    prefix: &str,
    target: &str,
) -> Option<(Option<PathBuf>, Option<ObjectId>)> {
    let worktrees = repo.worktrees().unwrap_or_default();
    let found = worktrees.iter().filter(|w| !w.is_main).find(|w| {
        w.path.file_name().is_some_and(|n| n == target)
            || w.path == std::path::Path::new(target)
            || w.branch.as_deref() == Some(target)
            || w.branch.as_deref() == Some(&format!("{prefix}{target}"))
            || w.branch
                .as_deref()
                .map(|b| format!("refs/heads/{b}"))
                .as_deref()
                == Some(target)
    });
    if let Some(w) = found {
        return Some((Some(w.path.clone()), w.head));
    }
    let branch = target.trim_start_matches("refs/heads/");
    [branch.to_owned(), format!("{prefix}{branch}")]
        .iter()
        .find_map(|b| repo.branch_commit(b).ok().flatten())
        .map(|tip| (None, Some(tip)))
}

/// The worktree of the effort `target` names, when it has one.
pub fn worktree(repo: &Repo, prefix: &str, target: &str) -> Option<PathBuf> {
    find(repo, prefix, target).and_then(|(path, _)| path)
}
