//! Worktree provisioning (`[worktree]`): what makes a fresh effort worktree able to run the
//! gate. `start` copies the env files, runs the `setup` steps once and then the `ensure` steps;
//! `update`, `prepare`, `test` and `done` (before its jobs) run the `ensure` steps again;
//! `discern setup` runs a failed or interrupted setup again. Every step is `sh -c` in the
//! worktree through the jobs' runner (`crate::jobs`: its process group, output capture, log
//! file and the effort's `DISCERN_*` identity), and stops at the first failure.

pub(crate) mod env_files;
mod port;
pub(crate) mod reply;

pub(crate) use port::choose as choose_port;

use super::steps::{Outcome, Step};
use crate::config::{Job, Stage, WorktreeSettings};
use crate::git::Repo;
use crate::jobs::{self, JobRun};
use crate::result::{Diagnostic, Severity};
use crate::setup_record::{self as marker, SetupLock, SetupRecord, SetupState, StoppedAt};

/// Which list of `[worktree]` a step comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Setup,
    Ensure,
}

impl Kind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Kind::Setup => "setup",
            Kind::Ensure => "ensure",
        }
    }
}

/// What a run of steps did: every step's record, and the failure that stopped it.
#[derive(Debug, Default)]
pub(crate) struct Ran {
    pub steps: Vec<Step>,
    pub failure: Option<Failure>,
}

/// The step that failed, as the reply names it.
#[derive(Debug, Clone)]
pub(crate) struct Failure {
    pub kind: Kind,
    pub stopped: StoppedAt,
    pub diagnostic: Diagnostic,
}

impl Failure {
    /// `the setup step 2 (`bun install`) failed with exit code 1`.
    pub(crate) fn sentence(&self) -> String {
        let at = &self.stopped;
        if at.index == 0 {
            return format!(
                "the {} could not {}: {}",
                self.kind.as_str(),
                at.command,
                at.output_tail
            );
        }
        let how = match (at.timed_out, at.exit_code) {
            (true, _) => "timed out".to_owned(),
            (false, Some(code)) => format!("failed with exit code {code}"),
            (false, None) => "was killed or could not start".to_owned(),
        };
        format!(
            "the {} step {} (`{}`) {how}",
            self.kind.as_str(),
            at.index,
            at.command
        )
    }
}

/// Run `[worktree].ensure` in `repo`'s worktree.
pub(crate) fn ensure(
    repo: &Repo,
    settings: &WorktreeSettings,
    progress: &(dyn Fn(&str) + Sync),
) -> Ran {
    run(
        Kind::Ensure,
        &settings.ensure,
        repo,
        progress,
        &mut |_, _| {},
    )
}

/// `envelope`, the reply of a verb that passed, after `[worktree].ensure` ran in `repo`'s
/// worktree: its steps added, or the verb failed with the step's output and the command that
/// runs it again.
pub(crate) fn ensured(
    verb: &str,
    mut envelope: crate::result::Reply,
    repo: &Repo,
    config: Option<&crate::config::Config>,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<crate::result::Reply, crate::result::Refused> {
    let Some(settings) = config.map(|c| &c.worktree) else {
        return Ok(envelope);
    };
    let ran = ensure(repo, settings, progress);
    let mut steps = match envelope.steps.take() {
        Some(serde_json::Value::Array(steps)) => steps,
        _ => Vec::new(),
    };
    steps.extend(
        ran.steps
            .iter()
            .filter_map(|s| serde_json::to_value(s).ok()),
    );
    let steps = (!steps.is_empty()).then_some(serde_json::Value::Array(steps));
    if let Some(failure) = ran.failure {
        // The verb's own reply so far becomes its refusal: the same data, the steps with this one.
        let mut failed = reply::failed(verb, repo.root(), &failure);
        failed.data = Some(envelope.data.take().unwrap_or(serde_json::Value::Null));
        failed.advisories = envelope.advisories;
        failed.steps = steps;
        return Err(failed);
    }
    envelope.steps = steps;
    Ok(envelope)
}

/// Run `[worktree].setup` in `effort`'s worktree under its setup lock, keeping its record
/// (`running` before each step, then `done` or `failed`), then `ensure` when setup passed.
pub(crate) fn setup(
    effort: &Repo,
    settings: &WorktreeSettings,
    _lock: &SetupLock,
    progress: &(dyn Fn(&str) + Sync),
) -> Ran {
    let git_dir = effort.git_dir();
    let total = settings.setup.len();
    let record = |state, at| SetupRecord {
        version: marker::VERSION,
        state,
        steps: total,
        at,
    };
    let mut note = |index: usize, command: &str| {
        let at = StoppedAt {
            index,
            command: command.to_owned(),
            exit_code: None,
            timed_out: false,
            output_tail: String::new(),
            output_path: None,
        };
        let _ = marker::save(git_dir, &record(SetupState::Running, Some(at)));
    };
    let mut ran = run(Kind::Setup, &settings.setup, effort, progress, &mut note);
    let (state, at) = match &ran.failure {
        Some(failure) => (SetupState::Failed, Some(failure.stopped.clone())),
        None => (SetupState::Done, None),
    };
    if let Err(e) = marker::save(git_dir, &record(state, at)) {
        ran.failure
            .get_or_insert_with(|| before_steps("record the setup", &e.to_string()));
    }
    if ran.failure.is_none() {
        let ensured = ensure(effort, settings, progress);
        ran.steps.extend(ensured.steps);
        ran.failure = ensured.failure;
    }
    ran
}

/// The failure of a copied env file (before the first setup step).
pub(crate) fn env_failure(why: &str) -> Failure {
    before_steps("copy the env files", why)
}

/// A failure of provisioning outside any step (`what` it was doing, and why).
fn before_steps(what: &str, why: &str) -> Failure {
    Failure {
        kind: Kind::Setup,
        stopped: StoppedAt {
            index: 0,
            command: what.to_owned(),
            exit_code: None,
            timed_out: false,
            output_tail: why.to_owned(),
            output_path: None,
        },
        diagnostic: Diagnostic {
            tool: "setup".to_owned(),
            severity: Severity::Error,
            message: format!("cannot {what}: {why}"),
            reproduce_cmd: marker::RETRY.to_owned(),
            file: None,
            line: None,
        },
    }
}

/// Run `commands` in order in `repo`'s worktree, stopping at the first that fails; `before`
/// is told each step (1-based) before it runs.
fn run(
    kind: Kind,
    commands: &[String],
    repo: &Repo,
    progress: &(dyn Fn(&str) + Sync),
    before: &mut dyn FnMut(usize, &str),
) -> Ran {
    let log_dir = repo.admin_path("jobs");
    let mut ran = Ran::default();
    for (at, command) in commands.iter().enumerate() {
        let index = at + 1;
        progress(&format!("{} step {index}: {command}", kind.as_str()));
        before(index, command);
        let job = Job {
            name: format!("{}-{index}", kind.as_str()),
            stage: Stage::Build,
            run: command.clone(),
            artifacts: Vec::new(),
            inputs: None,
            timeout: 0.0,
        };
        let outcome = jobs::run(&job, repo.root(), &log_dir);
        ran.steps.push(step(kind, index, &outcome));
        if !outcome.ok {
            ran.failure = Some(failure(kind, index, &outcome));
            break;
        }
    }
    ran
}

fn step(kind: Kind, index: usize, run: &JobRun) -> Step {
    Step {
        label: format!("{}:{index}", kind.as_str()),
        stage: None,
        outcome: if run.ok { Outcome::Ok } else { Outcome::Failed },
        duration_s: Some((run.duration_s * 1000.0).round() / 1000.0),
        output_path: Some(run.output_path.display().to_string()),
        reproduce_cmd: Some(run.reproduce_cmd.clone()),
        note: Some(run.summary().replacen(
            &format!("job {}", run.name),
            &format!("`{}`", run.reproduce_cmd),
            1,
        )),
    }
}

fn failure(kind: Kind, index: usize, run: &JobRun) -> Failure {
    let stopped = StoppedAt {
        index,
        command: run.reproduce_cmd.clone(),
        exit_code: run.exit_code,
        timed_out: run.timed_out,
        output_tail: run.output_tail.clone(),
        output_path: Some(run.output_path.clone()),
    };
    let diagnostic = Diagnostic {
        tool: format!("{}:{index}", kind.as_str()),
        severity: Severity::Error,
        message: format!(
            "`{}` {} (full output: {}):\n{}",
            run.reproduce_cmd,
            match (run.timed_out, run.exit_code) {
                (true, _) => "timed out".to_owned(),
                (false, Some(code)) => format!("failed with exit code {code}"),
                (false, None) => "was killed or could not start".to_owned(),
            },
            run.output_path.display(),
            run.output_tail
        ),
        reproduce_cmd: run.reproduce_cmd.clone(),
        file: None,
        line: None,
    };
    Failure {
        kind,
        stopped,
        diagnostic,
    }
}
