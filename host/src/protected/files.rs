//! The file side of the protected set: the allowed-signers file (whichever side names it) and
//! every path the old side's `[acceptance].protected` pathspecs match, by what it holds — a
//! file's blob and executable bit, a submodule's commit, a link's text and what its target
//! holds (`links.rs`).

use super::{ProtectedChange, Side, links};
use crate::git::{Repo, RepoError};
use crate::snapshot::Pathspec;

/// Every protected path whose value differs between the two sides, and every protected link on
/// the new side whose target the repository cannot show.
pub(super) fn changes(
    repo: &Repo,
    old: Side,
    new: Side,
) -> Result<Vec<ProtectedChange>, RepoError> {
    let mut paths: Vec<String> = [&old.config.allowed_signers, &new.config.allowed_signers]
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    // The trunk side's list decides what is protected; the branch cannot shrink it.
    if !old.config.protected_paths.is_empty() && old.commit != new.commit {
        let spec = Pathspec::new(&old.config.protected_paths);
        for path in repo.changed_between(old.commit, new.commit)? {
            // A submodule or a link where protected files may lie (`vendor/tool` under
            // `vendor/tool/**`) holds them.
            if spec.matches(&path)
                || (spec.may_match_below(&path)
                    && links::not_a_file(repo, [old.commit, new.commit], &path)?)
            {
                paths.push(path);
            }
        }
        // A link's target may change where no protected path does.
        let wanted = |path: &str| spec.matches(path) || spec.may_match_below(path);
        for side in [old, new] {
            let found = repo.links_where(side.commit, &wanted)?;
            paths.extend(found.into_iter().map(|(path, _)| path));
        }
    }
    paths.sort();
    paths.dedup();
    let mut found = Vec::new();
    for path in paths {
        let a = links::value(repo, old.commit, &path)?;
        let b = links::value(repo, new.commit, &path)?;
        if a != b || links::refused(&b).is_some() {
            found.push(ProtectedChange::new("file", format!("file:{path}"), a, b));
        }
    }
    Ok(found)
}
