//! An effort's identity as the commands discern runs for it see it: `[worktree]` setup and
//! ensure steps and every `[jobs]` command get `DISCERN_EFFORT` (the effort's id, which is its
//! name), `DISCERN_BRANCH`, `DISCERN_PORT` (from `[worktree].ports`, recorded at `start`),
//! `DISCERN_WORKTREE` and `DISCERN_MAIN_CHECKOUT`. A variable with nothing to say (the main
//! checkout has no effort id, an effort without a port band no port) is removed, never
//! inherited from the caller's environment: a job run inside another discern's job sees its
//! own identity only.

use std::path::{Path, PathBuf};

use crate::git::Repo;

/// Every variable the identity sets or clears.
pub(crate) const VARS: &[&str] = &[
    "DISCERN_EFFORT",
    "DISCERN_BRANCH",
    "DISCERN_PORT",
    "DISCERN_WORKTREE",
    "DISCERN_MAIN_CHECKOUT",
];

/// Who a worktree is, for the commands run in it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Identity {
    /// The effort's id (its name); `None` in the main checkout or a plain clone.
    pub effort: Option<String>,
    pub branch: Option<String>,
    pub port: Option<u16>,
    pub worktree: PathBuf,
    pub main_checkout: Option<PathBuf>,
}

impl Identity {
    /// The identity of the checkout at `dir` (its task metadata says the id and port).
    pub(crate) fn of(dir: &Path) -> Self {
        let Ok(repo) = Repo::discover(dir) else {
            return Self {
                worktree: dir.to_owned(),
                ..Self::default()
            };
        };
        Self::of_repo(&repo)
    }

    /// The identity of `repo`'s checkout.
    pub(crate) fn of_repo(repo: &Repo) -> Self {
        let task = (!repo.is_main_checkout())
            .then(|| crate::task::load(repo))
            .flatten();
        Self {
            effort: task.as_ref().map(|t| t.id.clone()),
            branch: repo.branch().ok().flatten(),
            port: task.and_then(|t| t.port),
            worktree: repo.root().to_owned(),
            main_checkout: main_checkout(repo),
        }
    }

    /// The variables to set, by name; every other name of [`VARS`] is cleared.
    pub(crate) fn env(&self) -> Vec<(&'static str, String)> {
        let path = |p: &Path| p.display().to_string();
        [
            ("DISCERN_EFFORT", self.effort.clone()),
            ("DISCERN_BRANCH", self.branch.clone()),
            ("DISCERN_PORT", self.port.map(|p| p.to_string())),
            ("DISCERN_WORKTREE", Some(path(&self.worktree))),
            (
                "DISCERN_MAIN_CHECKOUT",
                self.main_checkout.as_deref().map(path),
            ),
        ]
        .into_iter()
        .filter_map(|(name, value)| value.map(|v| (name, v)))
        .collect()
    }

    /// Set this identity on `command`, clearing what it does not say.
    pub(crate) fn apply(&self, command: &mut std::process::Command) {
        for var in VARS {
            command.env_remove(var);
        }
        command.envs(self.env());
    }
}

/// The main checkout of `repo`'s repository: the folder its common `.git` dir is in.
pub(crate) fn main_checkout(repo: &Repo) -> Option<PathBuf> {
    let common = repo.common_dir();
    (common.file_name()? == ".git").then(|| common.parent().map(Path::to_path_buf))?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_variable_with_nothing_to_say_is_left_out() {
        let identity = Identity {
            worktree: PathBuf::from("/w"),
            ..Identity::default()
        };
        assert_eq!(identity.env(), vec![("DISCERN_WORKTREE", "/w".to_owned())]);
        let full = Identity {
            effort: Some("e".into()),
            branch: Some("agent/e".into()),
            port: Some(4100),
            worktree: PathBuf::from("/w"),
            main_checkout: Some(PathBuf::from("/m")),
        };
        let names: Vec<_> = full.env().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, VARS);
    }
}
