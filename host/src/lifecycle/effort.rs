//! Naming an effort from anywhere in the repository: by its worktree id, its branch (with or
//! without the branch prefix) or its worktree path. The owner's verbs (`approve`, `accept
//! --effort`) work from the main checkout this way.

use std::path::PathBuf;

use gix::ObjectId;

use crate::git::{Repo, RepoError};
use crate::result::{ErrorSlug, Hint, HintId, Refused};
use crate::workspace::Workspace;

/// An effort found: its worktree path (if it still has one) and its tip.
pub(crate) type Found = (Option<PathBuf>, Option<ObjectId>);

/// The effort `target` names (`None`: none), or why the worktrees cannot be listed (never
/// read as "no effort").
pub(crate) fn find(repo: &Repo, prefix: &str, target: &str) -> Result<Option<Found>, RepoError> {
    let worktrees = repo.worktrees()?;
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
        return Ok(Some((Some(w.path.clone()), w.head)));
    }
    let branch = target.trim_start_matches("refs/heads/");
    Ok([branch.to_owned(), format!("{prefix}{branch}")]
        .iter()
        .find_map(|b| repo.branch_commit(b).ok().flatten())
        .map(|tip| (None, Some(tip))))
}

/// The workspace of the effort `target` names, seen from `ws` (any checkout, the main one
/// included), or the refusal naming what was not found.
pub(crate) fn workspace(ws: &Workspace, target: &str) -> Result<Workspace, Refused> {
    // The branch prefix names the efforts: an unreadable config is refused, never the default.
    let prefix = crate::config::Config::load(ws.root())
        .map_err(|e| crate::preflight::config_refusal(&e))?
        .map_or_else(
            || crate::config::DEFAULT_BRANCH_PREFIX.to_owned(),
            |c| c.branch_prefix,
        );
    let path = find(&ws.repo, &prefix, target)
        .map_err(|e| {
            Refused::new(
                ErrorSlug::CannotTell,
                format!("The efforts cannot be listed, so {target:?} cannot be found: {e}."),
                Hint::next_step(
                    HintId::CheckRepository,
                    "Run `git worktree list` and fix what it reports, then run this again.",
                ),
            )
        })?
        .and_then(|(path, _)| path);
    path.and_then(|path| Workspace::open(&path, ws.settings.clone()).ok())
        .ok_or_else(|| {
            Refused::new(
                ErrorSlug::NotFound,
                format!("No effort worktree is named {target:?}."),
                Hint::next_step(
                    HintId::AskOwner,
                    format!(
                        "Name an effort by its id, branch or worktree path (`{}` lists them).",
                        crate::result::spelled::spell(
                            &crate::result::Action::new("status").flag("all")
                        )
                    ),
                ),
            )
        })
}
