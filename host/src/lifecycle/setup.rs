//! `discern setup`: provision this effort's worktree again — the env files it lacks copied from
//! the main checkout, the `[worktree]` setup steps run in order, then the ensure steps. The way
//! past a setup that failed or was interrupted at `start`, once the step is fixed; its replies
//! (and `start`'s when provisioning fails) are built here.

use std::path::Path;

use super::provision::{self, Failure, Ran, marker};
use crate::config::{Config, WorktreeSettings};
use crate::git::Repo;
use crate::result::{Action, Envelope, ErrorSlug, Hint, HintId, Report, Section};
use crate::workspace::Workspace;

pub(crate) const VERB: &str = "setup";

/// `discern setup` takes no arguments: it provisions the effort it runs in.
#[derive(Debug, Clone, Default, clap::Args, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SetupRequest {}

/// `data` of `setup` (and of `start`'s provisioning): the effort's port and how setup ended.
#[derive(Debug, serde::Serialize)]
pub(crate) struct SetupData<'a> {
    /// `done`, `failed`, or `none` (no setup steps configured).
    pub setup: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub env_files: &'a [String],
}

pub(crate) fn setup(
    ws: &Workspace,
    config: Option<&Config>,
    progress: &(dyn Fn(&str) + Sync),
) -> Envelope {
    let repo = &ws.repo;
    let Some(main) = crate::identity::main_checkout(repo).filter(|_| !repo.is_main_checkout())
    else {
        return Envelope::refusal(
            VERB,
            ErrorSlug::WrongCheckout,
            format!(
                "{} is not an effort's worktree; setup provisions an effort.",
                repo.root().display()
            ),
            Hint::next_step(
                HintId::RetrySetup,
                "Run it in the effort's worktree (its path is in `discern status`)",
            ),
        );
    };
    let settings = config.map(|c| c.worktree.clone()).unwrap_or_default();
    let lock = match marker::lock(repo.git_dir()) {
        Ok(lock) => lock,
        Err(e) => {
            return Envelope::refusal(
                VERB,
                ErrorSlug::WriterBusy,
                format!("Cannot run the setup: {e}."),
                Hint::next_step(HintId::RetrySetup, "Run it again once that setup has ended")
                    .with_action(Action::new(VERB)),
            );
        }
    };
    let provisioned = provision(&main, repo, &settings, &lock, progress);
    reply(VERB, repo.root(), &settings, &provisioned)
}

/// What provisioning an effort did: the env files copied and advisories, and the steps.
#[derive(Debug, Default)]
pub(crate) struct Provisioned {
    pub env_files: Vec<String>,
    pub advisories: Vec<String>,
    pub ran: Ran,
    pub port: Option<u16>,
}

/// Copy the env files, then run setup (recorded) and ensure, in `effort`'s worktree.
pub(crate) fn provision(
    main: &Path,
    effort: &Repo,
    settings: &WorktreeSettings,
    lock: &marker::SetupLock,
    progress: &(dyn Fn(&str) + Sync),
) -> Provisioned {
    let port = crate::task::load(effort).and_then(|t| t.port);
    let copied = match provision::env_files::copy(main, effort, &settings.env_files) {
        Ok(copied) => copied,
        Err(e) => {
            let failure = provision::env_failure(&e.to_string());
            let record = marker::SetupRecord {
                version: marker::VERSION,
                state: marker::SetupState::Failed,
                steps: settings.setup.len(),
                at: Some(failure.stopped.clone()),
            };
            let _ = marker::save(effort.git_dir(), &record);
            return Provisioned {
                ran: Ran {
                    steps: Vec::new(),
                    failure: Some(failure),
                },
                port,
                ..Provisioned::default()
            };
        }
    };
    let ran = provision::setup(effort, settings, lock, progress);
    Provisioned {
        env_files: copied.files,
        advisories: copied.advisories,
        ran,
        port,
    }
}

/// The reply of `verb` (`setup`, or `start` once its effort exists) for `provisioned`.
pub(crate) fn reply(
    verb: &str,
    worktree: &Path,
    settings: &WorktreeSettings,
    provisioned: &Provisioned,
) -> Envelope {
    let ran = &provisioned.ran;
    let state = match (&ran.failure, settings.setup.is_empty()) {
        (Some(_), _) => "failed",
        (None, true) => "none",
        (None, false) => "done",
    };
    let data = serde_json::to_value(SetupData {
        setup: state,
        port: provisioned.port,
        env_files: &provisioned.env_files,
    })
    .unwrap_or(serde_json::Value::Null);
    let mut envelope = match &ran.failure {
        Some(failure) => failed(verb, worktree, failure, data),
        None => Envelope::ok(
            verb,
            data,
            Report {
                state: format!(
                    "Provisioned {}: {} step(s) passed.",
                    worktree.display(),
                    ran.steps.len()
                ),
                sections: Vec::new(),
            },
        ),
    };
    if !ran.steps.is_empty() {
        envelope.steps = serde_json::to_value(&ran.steps).ok();
        envelope.report.sections.push(step_lines(&ran.steps));
    }
    envelope.advisories.extend(provisioned.advisories.clone());
    envelope
}

/// The refusal for a failed setup or ensure step: what failed, that the effort is kept, and
/// the command that runs it again.
pub(crate) fn failed(
    verb: &str,
    worktree: &Path,
    failure: &Failure,
    data: serde_json::Value,
) -> Envelope {
    let kept = match failure.kind {
        provision::Kind::Setup => {
            " The effort is kept, marked setup failed (`discern status` shows it)."
        }
        provision::Kind::Ensure => "",
    };
    let mut envelope = Envelope::refusal(
        verb,
        ErrorSlug::SetupFailed,
        format!(
            "In {}, {}.{kept}",
            worktree.display(),
            failure.sentence()
        ),
        Hint::next_step(
            HintId::RetrySetup,
            format!(
                "Fix the step (its output is in the diagnostic; the command is in [worktree] of discern.toml), then run `{}` in {}",
                marker::RETRY,
                worktree.display()
            ),
        )
        .with_action(Action::new(VERB)),
    );
    envelope.data = Some(data);
    envelope.diagnostics.push(failure.diagnostic.clone());
    envelope
}

fn step_lines(steps: &[super::steps::Step]) -> Section {
    Section {
        table: None,
        title: "Worktree".to_owned(),
        lines: steps
            .iter()
            .map(|s| {
                let outcome = match s.outcome {
                    super::steps::Outcome::Ok => "ok    ",
                    super::steps::Outcome::Failed => "FAILED",
                };
                format!(
                    "{outcome} {}: {}",
                    s.label,
                    s.note.clone().unwrap_or_default()
                )
            })
            .collect(),
    }
}
