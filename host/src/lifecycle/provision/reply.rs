//! The replies of provisioning: `setup`'s, `start`'s once its effort exists, and the refusal of
//! any verb whose setup or ensure step failed (what failed, that the effort is kept, and the
//! command that runs it again).

use std::path::Path;

use super::{Failure, Kind, Ran};
use crate::config::WorktreeSettings;
use crate::git::Repo;
use crate::lifecycle::steps::{Outcome, Step};
use crate::result::{Action, ErrorSlug, Hint, HintId, Refused, Reply, Report, Section};
use crate::setup_record as marker;

/// `data` of `setup` (and of `start`'s provisioning): the effort's port and how setup ended.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct SetupData {
    /// `done`, `failed`, or `none` (no setup steps configured).
    pub setup: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub env_files: Vec<String>,
}

impl SetupData {
    /// How `provisioned` ended, under `settings`.
    pub(crate) fn of(settings: &WorktreeSettings, provisioned: &Provisioned) -> Self {
        let setup = match (&provisioned.ran.failure, settings.setup.is_empty()) {
            (Some(_), _) => "failed",
            (None, true) => "none",
            (None, false) => "done",
        };
        Self {
            setup,
            port: provisioned.port,
            env_files: provisioned.env_files.clone(),
        }
    }
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
    let copied = match super::env_files::copy(main, effort, &settings.env_files) {
        Ok(copied) => copied,
        Err(e) => {
            let failure = super::env_failure(&e.to_string());
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
    let ran = super::setup(effort, settings, lock, progress);
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
) -> Result<Reply, Refused> {
    let ran = &provisioned.ran;
    let data = SetupData::of(settings, provisioned);
    if let Some(failure) = &ran.failure {
        let mut refused = failed(verb, worktree, failure).with_data(&data);
        if !ran.steps.is_empty() {
            refused = refused.with_steps(&ran.steps);
            refused.sections.push(step_lines(&ran.steps));
        }
        refused.advisories.extend(provisioned.advisories.clone());
        return Err(refused);
    }
    let state = match ran.steps.is_empty() && provisioned.env_files.is_empty() {
        true => "Nothing to provision: discern.toml's [worktree] has no setup or ensure step and no env file to copy.".to_owned(),
        false => format!(
            "Provisioned {}: {} step(s) passed.",
            worktree.display(),
            ran.steps.len()
        ),
    };
    let report = Report {
        state,
        sections: Vec::new(),
    };
    let mut envelope = Reply::new(data, report);
    if !ran.steps.is_empty() {
        envelope = envelope.with_steps(&ran.steps);
        envelope.report.sections.push(step_lines(&ran.steps));
    }
    envelope.advisories.extend(provisioned.advisories.clone());
    Ok(envelope)
}

/// The refusal for a failed setup or ensure step: what failed, that the effort is kept, and
/// the command that runs it again.
pub(crate) fn failed(verb: &str, worktree: &Path, failure: &Failure) -> Refused {
    let kept = match failure.kind {
        Kind::Setup => " The effort is kept, marked setup failed (`discern status` shows it).",
        Kind::Ensure => "",
    };
    // An ensure step runs again with the verb it failed (`start`'s, with the setup).
    let (retry, again) = match failure.kind {
        Kind::Ensure if verb != "start" => (verb, format!("run `discern {verb}` again")),
        _ => (marker::VERB, "run the setup again".to_owned()),
    };
    let mut envelope = Refused::new(
        ErrorSlug::SetupFailed,
        format!(
            "{} in {}.{kept}",
            upper_first(&failure.sentence()),
            worktree.display()
        ),
        Hint::next_step(
            HintId::RetrySetup,
            format!(
                "Fix what the step's output names (the step itself is in discern.toml's [worktree]), then {again} in {}",
                worktree.display()
            ),
        )
        .with_action(Action::new(retry)),
    );
    envelope.diagnostics.push(failure.diagnostic.clone());
    envelope
}

/// `text` with its first character upper-cased (a clause opening a sentence).
pub(crate) fn upper_first(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

fn step_lines(steps: &[Step]) -> Section {
    Section {
        table: None,
        title: "Worktree".to_owned(),
        lines: steps
            .iter()
            .map(|s| {
                let outcome = match s.outcome {
                    Outcome::Ok => "ok    ",
                    Outcome::Failed => "FAILED",
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
