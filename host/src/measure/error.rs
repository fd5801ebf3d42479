//! Why a batch could not be measured, typed: each verb that measures refuses with it in its
//! own words ([`MeasureError::refused_by`]), so a failing measurement in `done` says `done`.

use std::path::PathBuf;

use crate::config::ConfigError;
use crate::git::RepoError;
use crate::preflight::{self, CleanError};
use crate::result::{Action, ErrorSlug, Hint, HintId, Refusal, Refused};

/// Why nothing was measured.
#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    #[error("This repository has no commit yet; Standards measure a commit.")]
    NoCommit,
    /// HEAD or its tree could not be read.
    #[error("{0}")]
    Unreadable(String),
    /// The work tree is dirty, or whether it is cannot be told.
    #[error("{error}")]
    Unclean { root: PathBuf, error: CleanError },
    /// The work tree is dirty and a selected Standard runs a job in it.
    #[error("{} runs a job in the work tree, whose output would not describe the committed HEAD.", jobs.join(", "))]
    JobsInDirtyTree {
        dirty: Vec<String>,
        jobs: Vec<String>,
    },
    /// A repository component's `config` breaks the schema the component publishes.
    #[error("{0}")]
    ComponentConfig(ConfigError),
}

impl MeasureError {
    pub(super) fn unclean(root: &std::path::Path, error: CleanError) -> Self {
        Self::Unclean {
            root: root.to_path_buf(),
            error,
        }
    }

    pub(super) fn cannot_tell(root: &std::path::Path, error: RepoError) -> Self {
        Self::unclean(root, CleanError::CannotTell(error))
    }
}

impl Refusal for MeasureError {
    fn slug(&self) -> ErrorSlug {
        match self {
            Self::NoCommit => ErrorSlug::NothingCommitted,
            Self::Unreadable(_) => ErrorSlug::Internal,
            Self::Unclean {
                error: CleanError::CannotTell(_),
                ..
            } => ErrorSlug::CannotTell,
            Self::Unclean { .. } | Self::JobsInDirtyTree { .. } => ErrorSlug::DirtyWorktree,
            Self::ComponentConfig(_) => ErrorSlug::InvalidConfig,
        }
    }

    fn hint(&self) -> Hint {
        match self {
            Self::NoCommit => Hint::next_step(
                HintId::CommitFirst,
                "Commit your work (`git commit`), then measure",
            )
            .with_action(Action::new("standards")),
            _ => Hint::next_step(
                HintId::ReportBug,
                "This is a bug in discern or a damaged repository; report it with the message.",
            ),
        }
    }
}

impl MeasureError {
    /// The refusal when `verb` measured: the shared preflight refusals (a dirty or unreadable
    /// tree, a bad config) say the verb's own way out.
    pub(crate) fn refused_by(&self, verb: &str) -> Refused {
        match self {
            Self::Unclean { root, error } => preflight::clean_refusal_at(verb, root, error),
            Self::JobsInDirtyTree { dirty, .. } => {
                let mut refusal = preflight::dirty_refusal(verb, dirty);
                refusal.message = format!("{} {self}", refusal.message);
                refusal
            }
            Self::ComponentConfig(error) => preflight::config_refusal(error),
            _ => self.refused(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigIssue;

    fn dirty() -> Vec<String> {
        vec!["src/lib.rs".to_owned()]
    }

    #[test]
    fn each_verb_refuses_a_failed_measurement_with_its_slug_and_a_way_out() {
        let errors = [
            MeasureError::NoCommit,
            MeasureError::Unreadable("tree abc is missing".to_owned()),
            MeasureError::unclean(std::path::Path::new("/r"), CleanError::Dirty(dirty())),
            MeasureError::JobsInDirtyTree {
                dirty: dirty(),
                jobs: vec!["coverage".to_owned()],
            },
            MeasureError::ComponentConfig(ConfigError {
                issues: vec![ConfigIssue {
                    table: "standards.x".to_owned(),
                    key: Some("config".to_owned()),
                    line: Some(3),
                    message: "needs config.paths".to_owned(),
                }],
            }),
        ];
        for verb in ["standards", "done", "accept", "standards propose"] {
            for error in &errors {
                let refusal = error.refused_by(verb);
                assert_eq!(refusal.error, error.slug(), "{error:?}");
                assert!(
                    !refusal.hints.is_empty(),
                    "{verb}: {error:?} has no way out"
                );
            }
        }
    }

    #[test]
    fn only_measuring_is_offered_force_for_a_dirty_tree() {
        let error = MeasureError::JobsInDirtyTree {
            dirty: dirty(),
            jobs: vec!["coverage".to_owned()],
        };
        let hint = |verb: &str| error.refused_by(verb).hints[0].text().to_owned();
        assert!(hint("standards").contains("--force"));
        for verb in ["done", "accept"] {
            assert!(!hint(verb).contains("--force"), "{verb}: {}", hint(verb));
        }
        let message = error.refused_by("done").message.clone();
        assert!(message.contains("src/lib.rs") && message.contains("coverage runs a job"));
        assert!(message.contains("done works on a commit"), "{message}");
    }

    #[test]
    fn a_tree_that_cannot_be_told_clean_names_git_status_in_the_checkout() {
        let error = MeasureError::cannot_tell(
            std::path::Path::new("/work/checkout"),
            RepoError::Status {
                root: "/work/checkout".into(),
                message: "index is locked".to_owned(),
            },
        );
        let refusal = error.refused_by("done");
        assert_eq!(refusal.error, ErrorSlug::CannotTell);
        assert!(
            refusal.hints[0]
                .text()
                .contains("`git status` in /work/checkout")
        );
    }
}
