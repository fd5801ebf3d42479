//! The trunk as the forge has it, for deciding whether this run publishes: the branch the
//! config at the forge's default branch names (the forge's `HEAD`, which a pull request cannot
//! move), and that branch's tip on the forge, both read from the remote by this sync. Nothing
//! the clone holds decides it: not HEAD's config (a pull request can name its own branch the
//! trunk), not a local branch (a test can create `main` at HEAD), not `DISCERN_TRUNK`.

use gix::ObjectId;

use super::super::SyncError;
use super::super::seal::Seal;
use super::super::transport;
use crate::config::Config;
use crate::git::{Repo, short};

/// The trunk's branch on `remote` and its tip there, or why that cannot be told (then nothing is
/// published).
pub(super) fn on_forge(
    (repo, seal): (&Repo, &Seal),
    remote: &str,
) -> Result<Result<(String, ObjectId), String>, SyncError> {
    let Some((default, default_tip)) = transport::default_branch((repo, seal), remote)? else {
        return Ok(Err(format!(
            "{remote}'s HEAD names no branch it has, so its trunk cannot be told"
        )));
    };
    let named = match named_at(repo, remote, &default, default_tip) {
        Ok(named) => named,
        Err(why) => return Ok(Err(why)),
    };
    let Some(branch) = branch_of(repo, remote, &named) else {
        return Ok(Err(format!(
            "the trunk {named:?} that {remote}'s {default} names is not a branch of {remote}"
        )));
    };
    if branch == default {
        return Ok(Ok((branch, default_tip)));
    }
    let name = format!("refs/heads/{branch}");
    let Some(tip) = transport::remote_refs((repo, seal), remote, &[name.as_str()])?.remove(&name)
    else {
        return Ok(Err(format!(
            "{remote} has no branch {branch}, the trunk its {default} names"
        )));
    };
    // The trunk's own config must name it too (as a landing's trunk must).
    Ok(match named_at(repo, remote, &branch, tip) {
        Ok(again) if branch_of(repo, remote, &again).as_deref() == Some(branch.as_str()) => {
            Ok((branch, tip))
        }
        Ok(again) => Err(format!(
            "{remote}'s {default} names the trunk {branch}, whose own discern.toml names {again:?}"
        )),
        Err(why) => Err(why),
    })
}

/// The trunk the committed config at `commit` (the tip of `branch` on `remote`) names.
fn named_at(repo: &Repo, remote: &str, branch: &str, commit: ObjectId) -> Result<String, String> {
    let at = short(&commit.to_string());
    if !repo.local().has_object(commit) {
        return Err(format!(
            "{remote}'s {branch} is at {at}, which this clone does not have: fetch it (`git fetch {remote} {branch}`)"
        ));
    }
    Config::at_or_absent(repo, commit)
        .map(|config| config.trunk)
        .map_err(|e| format!("the discern.toml of {remote}'s {branch} ({at}) cannot be read: {e}"))
}

/// The branch of `remote` a trunk written `name` stands for: `main`, `refs/heads/main`,
/// `origin/main` or `refs/remotes/origin/main` for `origin`; `None` for another remote's branch
/// or a ref that is no branch.
fn branch_of(repo: &Repo, remote: &str, name: &str) -> Option<String> {
    if let Some(branch) = name.strip_prefix("refs/heads/") {
        return Some(branch.to_owned());
    }
    if let Some(rest) = name.strip_prefix("refs/remotes/") {
        return rest
            .strip_prefix(remote)
            .and_then(|r| r.strip_prefix('/'))
            .map(str::to_owned);
    }
    if name.starts_with("refs/") || name.is_empty() || name == "HEAD" {
        return None;
    }
    match name.split_once('/') {
        Some((first, rest)) if first == remote => Some(rest.to_owned()),
        Some((first, _)) if repo.remote_names().iter().any(|r| r == first) => None,
        _ => Some(name.to_owned()),
    }
}
