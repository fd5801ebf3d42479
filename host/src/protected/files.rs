//! The file side of the protected set: the allowed-signers file's content (whichever side names
//! it) and every file the old side's `[acceptance].protected` pathspecs match, by blob id.

use serde_json::{Value, json};

use super::{ProtectedChange, Side};
use crate::git::{Repo, RepoError};
use crate::snapshot::Pathspec;

/// Every protected file whose content (blob id) differs between the two sides.
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
        paths.extend(
            repo.changed_between(old.commit, new.commit)?
                .into_iter()
                .filter(|path| spec.matches(path)),
        );
    }
    paths.sort();
    paths.dedup();
    let mut found = Vec::new();
    for path in paths {
        let (a, b) = (blob(repo, old, &path)?, blob(repo, new, &path)?);
        if a != b {
            found.push(ProtectedChange::new("file", format!("file:{path}"), a, b));
        }
    }
    Ok(found)
}

fn blob(repo: &Repo, side: Side, path: &str) -> Result<Value, RepoError> {
    Ok(match repo.blob_at(side.commit, path)? {
        Some(id) => json!(id.to_string()),
        None => Value::Null,
    })
}
