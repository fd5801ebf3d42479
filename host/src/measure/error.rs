//! Why a batch could not be measured, typed: each verb that measures refuses with it under its
//! own name ([`MeasureError::refusal`]), so a failing measurement in `done` says `done`.

use std::path::PathBuf;

use crate::config::ConfigError;
use crate::git::RepoError;
use crate::preflight::{self, CleanError};
use crate::result::{Action, Envelope, ErrorSlug, Hint, HintId, Refusal};

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

    /// The refusal of `verb`: the shared preflight refusals (a dirty or unreadable tree, a bad
    /// config) say the verb's own way out.
    fn refusal(&self, verb: &str) -> Envelope {
        match self {
            Self::Unclean { root, error } => preflight::clean_refusal_at(verb, root, error),
            Self::JobsInDirtyTree { dirty, .. } => {
                let mut refusal = preflight::dirty_refusal(verb, dirty);
                refusal.message = Some(format!("{} {self}", refusal.message.unwrap_or_default()));
                refusal
            }
            Self::ComponentConfig(error) => preflight::config_refusal(verb, error),
            _ => Envelope::refusal(verb, self.slug(), self.to_string(), self.hint()),
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
    fn each_verb_refuses_a_failed_measurement_under_its_own_name() {
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
                let refusal = error.refusal(verb);
                assert_eq!(refusal.verb, verb, "{error:?}");
                assert!(!refusal.ok);
                assert_eq!(refusal.error, Some(error.slug()), "{error:?}");
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
        let hint = |verb: &str| error.refusal(verb).hints[0].text().to_owned();
        assert!(hint("standards").contains("--force"));
        for verb in ["done", "accept"] {
            assert!(!hint(verb).contains("--force"), "{verb}: {}", hint(verb));
        }
        let message = error.refusal("done").message.unwrap_or_default();
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
        let refusal = error.refusal("done");
        assert_eq!(refusal.error, Some(ErrorSlug::CannotTell));
        assert!(
            refusal.hints[0]
                .text()
                .contains("`git status` in /work/checkout")
        );
    }
}
