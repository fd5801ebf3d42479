//! `prepare` (fix then check jobs) and `test` (test-stage jobs): fast loops on the work tree as
//! it is, uncommitted changes included. Neither issues Proof.

use super::steps::{self, Outcome, Step};
use crate::config::{Config, Stage};
use crate::result::{Action, ErrorSlug, Hint, HintId, Refused, Reply, Report, Section};
use crate::workspace::Workspace;

/// `data` of `prepare` and `test`: they issue no Proof, and how many jobs ran.
#[derive(Debug, serde::Serialize)]
struct StageData {
    proof: &'static str,
    jobs: usize,
}

/// `discern prepare` and `discern test` take no arguments: they run jobs on the work tree as it is.
#[derive(Debug, Clone, Default, clap::Args, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct StageRequest {}

/// `discern prepare`, with the config the table's preflight loaded (`None`: there is none).
pub(crate) fn prepare(
    ws: &Workspace,
    config: Option<&Config>,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Reply, Refused> {
    let stages: &[&[Stage]] = &[&[Stage::Fix], &[Stage::Check]];
    run_stages(ws, config, "prepare", stages, progress)
}

/// `discern test` (journalled for `progress` by the table).
pub(crate) fn test(
    ws: &Workspace,
    config: Option<&Config>,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Reply, Refused> {
    run_stages(ws, config, "test", &[&[Stage::Test]], progress)
}

fn run_stages(
    ws: &Workspace,
    config: Option<&Config>,
    verb: &str,
    stages: &[&[Stage]],
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Reply, Refused> {
    let mut all = Vec::new();
    let mut diagnostics = Vec::new();
    let ensured = config
        .map(|c| super::provision::ensure(&ws.repo, &c.worktree, progress))
        .unwrap_or_default();
    all.extend(ensured.steps);
    let ensure_failed = ensured.failure.is_some();
    diagnostics.extend(ensured.failure.map(|f| f.diagnostic));
    for stage in stages.iter().filter(|_| !ensure_failed) {
        let jobs = steps::jobs_of(config, stage);
        let (steps, failures) = steps::run(&jobs, &ws.repo, false, progress);
        let ok = steps::all_ok(&steps);
        all.extend(steps);
        diagnostics.extend(failures);
        if !ok {
            break;
        }
    }
    let data = StageData {
        proof: "not-issued",
        jobs: all.len(),
    };
    if !all.is_empty() && !steps::all_ok(&all) {
        let mut refused = failed(verb, &data, &all).with_steps(&all);
        refused.diagnostics = diagnostics;
        return Err(refused);
    }
    let mut envelope = match all.is_empty() {
        true => none_configured(verb, &data),
        false => passed(verb, &data, &all),
    }
    .with_steps(&all);
    envelope.diagnostics = diagnostics;
    Ok(envelope)
}

/// One line per job that ran: its outcome, label and note.
fn job_lines(all: &[Step]) -> Section {
    let lines = all
        .iter()
        .map(|s| {
            let outcome = match s.outcome == Outcome::Ok {
                true => "ok    ",
                false => "FAILED",
            };
            let note = s.note.clone().unwrap_or_default();
            format!("{outcome} {}: {note}", s.label)
        })
        .collect();
    Section {
        table: None,
        title: "Jobs".to_owned(),
        lines,
    }
}

fn none_configured(verb: &str, data: &StageData) -> Reply {
    let state = format!("No {verb} jobs are configured; nothing ran.");
    let report = Report {
        state,
        sections: Vec::new(),
    };
    let mut e = Reply::new(data, report);
    e.hints.push(Hint::next_step(
        HintId::ConfigureJobs,
        "Add the commands to [jobs] in discern.toml (format, lint, typecheck, test, …).",
    ));
    e
}

fn passed(verb: &str, data: &StageData, all: &[Step]) -> Reply {
    let report = Report {
        state: format!("{} job(s) passed; no Proof is issued by {verb}.", all.len()),
        sections: vec![job_lines(all)],
    };
    let mut e = Reply::new(data, report);
    e.hints.push(
        Hint::next_step(HintId::CommitFirst, "Commit, then run the gate for Proof")
            .with_action(Action::new("done")),
    );
    e
}

fn failed(verb: &str, data: &StageData, all: &[Step]) -> Refused {
    let failed: Vec<&str> = all
        .iter()
        .filter(|s| s.outcome == Outcome::Failed)
        .map(|s| s.label.as_str())
        .collect();
    let e = Refused::new(
        ErrorSlug::GateFailed,
        format!("{} failed.", failed.join(", ")),
        Hint::next_step(
            HintId::FixGate,
            "Fix what the failing jobs report (each diagnostic has its reproduce command), then run it again",
        )
        .with_action(Action::new(verb)),
    );
    let mut e = e.with_data(data);
    e.sections = vec![job_lines(all)];
    e
}
