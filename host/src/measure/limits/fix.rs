//! The git command that makes the trunk and its history readable in *this* clone: a CI clone
//! is shallow, single-branch and has only `refs/remotes/origin/*`, so `git fetch origin main`
//! alone fixes nothing there.

use crate::git::Repo;

/// Where the trunk is fetched from: a remote and a branch on it, or a ref fetched as itself.
enum Source {
    Branch { remote: String, branch: String },
    Ref(String),
}

fn source(repo: &Repo, trunk: &str) -> Source {
    if let Some(rest) = trunk.strip_prefix("refs/remotes/")
        && let Some((remote, branch)) = rest.split_once('/')
    {
        return Source::Branch {
            remote: remote.to_owned(),
            branch: branch.to_owned(),
        };
    }
    if let Some(branch) = trunk.strip_prefix("refs/heads/") {
        return origin(branch);
    }
    if trunk.starts_with("refs/") {
        return Source::Ref(trunk.to_owned());
    }
    if let Some((remote, branch)) = trunk.split_once('/')
        && repo.remote_names().iter().any(|r| r == remote)
    {
        return Source::Branch {
            remote: remote.to_owned(),
            branch: branch.to_owned(),
        };
    }
    origin(trunk)
}

fn origin(branch: &str) -> Source {
    Source::Branch {
        remote: "origin".to_owned(),
        branch: branch.to_owned(),
    }
}

/// The command that fetches the trunk (and, in a shallow clone, the history a merge base and
/// a baseline need).
pub(super) fn fetch(repo: &Repo, trunk: &str) -> String {
    let depth = if repo.is_shallow() {
        " --unshallow"
    } else {
        ""
    };
    match source(repo, trunk) {
        Source::Branch { remote, branch } => {
            format!("git fetch{depth} {remote} {branch}:refs/remotes/{remote}/{branch}")
        }
        Source::Ref(reference) => format!("git fetch{depth} origin {reference}:{reference}"),
    }
}
