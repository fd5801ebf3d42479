//! `discern done`: the gate. On the exact clean commit of an effort branch ahead of the trunk:
//! merge check, never-loosen, fix → build → check ∥ test, every Standard; on success a Proof
//! marker for that commit and the Proof line.

use serde::Serialize;

use super::steps::{self, Step};
use crate::config::{Config, Stage};
use crate::git::short;
use crate::measure;
use crate::preflight::{self, Cleanliness, Journaling, Prepared};
use crate::proof::{self, Proof, ProofState, ProvenProposal, ProvenStandard};
use crate::result::{
    Action, Diagnostic, ErrorSlug, Hint, HintId, Refusal, Refused, Reply, Report, Section, WithNext,
};
use crate::runtime::Runtime;

mod by_trunk;
mod gains;
mod stages;

pub(crate) const VERB: &str = "done";
/// Proof is for a commit: no tracked change, no untracked file that is not ignored.
pub(crate) const CLEANLINESS: Cleanliness = Cleanliness::Full;

#[derive(Debug, Clone, Copy, Default, clap::Args, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DoneRequest {
    /// Run the gate even when Proof for this exact commit is current.
    #[arg(long)]
    #[serde(default)]
    pub rerun: bool,
    /// Preview only: the stages and Standards the gate would run; nothing runs or is written.
    #[arg(long)]
    #[serde(default)]
    pub dry_run: bool,
    /// Run the jobs even when a Standard measured before them already fails, for the full
    /// picture (the gate still fails).
    #[arg(long)]
    #[serde(default)]
    pub all: bool,
}

fn refuse(slug: ErrorSlug, message: impl Into<String>, id: HintId, hint: &str) -> Refused {
    Refused::new(slug, message, Hint::next_step(id, hint))
}

pub(crate) fn done(
    prepared: &Prepared,
    runtime: &Runtime,
    request: &DoneRequest,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Reply, Refused> {
    // The table journals it for `progress` (a dry run records nothing).
    gate(prepared, runtime, request, &prepared.journal, progress)
}

/// `data` of a `done` result.
#[derive(Debug, Default, Serialize)]
struct DoneData<'a> {
    gate_ran: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    failed_stage: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    commit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    branch: Option<&'a str>,
    /// What the failed stage found: how far behind the trunk, the limits, the Standards.
    #[serde(flatten)]
    found: Found<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    proof: Option<&'a Proof>,
    #[serde(skip_serializing_if = "Option::is_none")]
    proof_line: Option<&'a str>,
}

/// What a failed stage found, in its data.
#[derive(Debug, Default, Serialize)]
struct Found<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    behind: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    limits: Option<&'a measure::LimitsSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    standards: Option<&'a [measure::StandardResult]>,
}

/// What the gate established before it runs anything: the exact commit and its trunk.
pub(super) struct Subject {
    config: Option<Config>,
    trunk: String,
    branch: String,
    head: gix::ObjectId,
    trunk_commit: gix::ObjectId,
    behind: u64,
    /// The cleanliness the gate needs (its table row's), checked again after each stage.
    level: Cleanliness,
}

/// The gate's record so far: the steps that ran and what they found.
struct Run<'a> {
    subject: &'a Subject,
    steps: Vec<Step>,
    diagnostics: Vec<Diagnostic>,
    /// Who approved the branch's loosenings and protected changes in its tree, if anyone.
    approved_by: Option<String>,
}

impl Run<'_> {
    /// The failure at `stage`, with every step and diagnostic so far and `extra` data.
    fn fail(self, stage: &str, message: String, found: Found) -> Refused {
        let mut envelope = Refused::new(
            ErrorSlug::GateFailed,
            message,
            Hint::next_step(
                HintId::FixGate,
                format!("Fix what the {stage} stage reports, commit, and run the gate again"),
            ),
        )
        .with_next(Action::new(VERB));
        let subject = self.subject;
        envelope = envelope.with_data(&DoneData {
            gate_ran: true,
            failed_stage: Some(stage),
            commit: Some(subject.head.to_string()),
            branch: Some(&subject.branch),
            found,
            ..DoneData::default()
        });
        envelope = envelope.with_steps(&self.steps);
        envelope.diagnostics = self.diagnostics;
        envelope
    }
}

fn gate(
    prepared: &Prepared,
    runtime: &Runtime,
    request: &DoneRequest,
    journal: &Journaling,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Reply, Refused> {
    let ws = &prepared.ws;
    let subject = subject(prepared)?;
    // An existing Proof is handed back only once HEAD's Standards hold when measured afresh:
    // the marker is a file an agent can write, and its line is what the owner is told.
    if !request.rerun
        && let (ProofState::Honored, Some(proof)) = proof::state(&ws.repo)
        && let Some(config) = subject.config.as_ref()
        && matches!(
            crate::lifecycle::accept::failing(ws, runtime, config, &subject.trunk, progress),
            Ok(None)
        )
    {
        return Ok(current_proof(&proof));
    }
    if request.dry_run {
        return Ok(dry_run(&ws.repo, &subject));
    }
    journal.phase("pin");
    let (subject, gained) = gains::stick(ws, runtime, subject, progress)?;
    let mut run = Run {
        subject: &subject,
        steps: gained.into_iter().collect(),
        diagnostics: Vec::new(),
        approved_by: None,
    };
    let proven = stages::merge_check(&mut run, &ws.repo, journal)
        .and_then(|()| stages::limits_check(&mut run, ws, journal))
        .and_then(|()| {
            // Every reading is taken before a job of the repository runs (the trunk's
            // definitions included): nothing a job does can change it.
            let by_trunk = by_trunk::judged(ws, runtime, &subject, progress);
            let stages = stages::Stages {
                ws,
                runtime,
                journal,
                progress,
                all: request.all,
            };
            stages.standards_and_jobs(&mut run).map(|p| (p, by_trunk))
        });
    let ((standards, proposals), by_trunk) = proven?;
    record_proof(run, &ws.repo, standards, (proposals, by_trunk))
}

/// Why the gate cannot run on this checkout (its own preconditions; cleanliness, config and
/// recovery are refused by `preflight`).
#[derive(Debug, thiserror::Error)]
enum NotProvable {
    #[error("HEAD is detached; the gate proves a commit on an effort branch.")]
    Detached,
    #[error("{branch} is the trunk; the gate proves work on an effort branch before it lands.")]
    OnTrunk { branch: String },
    #[error("This branch has no commit yet.")]
    NoCommit,
    #[error(
        "The trunk {trunk} cannot be read, so the gate cannot check that this work contains it."
    )]
    TrunkUnreadable { trunk: String },
    #[error("The gate cannot check that this work contains the trunk: {0}.")]
    TrunkDiverged(crate::git::DivergedTrunk),
    #[error("How far {branch} is ahead of {trunk} cannot be told: {source}.")]
    AheadUnknown {
        branch: String,
        trunk: String,
        source: crate::git::RepoError,
    },
    #[error("{branch} has no commit ahead of {trunk}: there is nothing to prove.")]
    NothingAhead { branch: String, trunk: String },
}

/// The refusal of `done` for each reason the gate cannot run.
fn refusal(why: &NotProvable) -> Refused {
    why.refused()
}

impl Refusal for NotProvable {
    fn slug(&self) -> ErrorSlug {
        match self {
            NotProvable::Detached | NotProvable::OnTrunk { .. } => ErrorSlug::WrongCheckout,
            NotProvable::NoCommit | NotProvable::NothingAhead { .. } => ErrorSlug::NothingCommitted,
            NotProvable::TrunkUnreadable { .. } | NotProvable::TrunkDiverged(_) => {
                ErrorSlug::TrunkUnreadable
            }
            NotProvable::AheadUnknown { .. } => ErrorSlug::CannotTell,
        }
    }

    /// The hint and the step past it.
    fn hint(&self) -> Hint {
        let (id, hint, step) = match self {
            NotProvable::Detached => (
                HintId::WorkInEffort,
                "Check out your effort branch, then run the gate".to_owned(),
                VERB,
            ),
            NotProvable::OnTrunk { .. } => (
                HintId::WorkInEffort,
                "Start an effort and run the gate there".to_owned(),
                "start",
            ),
            NotProvable::NoCommit | NotProvable::NothingAhead { .. } => (
                HintId::CommitFirst,
                "Commit your work, then run the gate".to_owned(),
                VERB,
            ),
            NotProvable::TrunkUnreadable { .. } => (
                HintId::UpdateFromTrunk,
                "Fetch the trunk or set DISCERN_TRUNK, then run the gate again".to_owned(),
                VERB,
            ),
            NotProvable::TrunkDiverged(diverged) => (
                HintId::UpdateFromTrunk,
                diverged.hint("run the gate again"),
                VERB,
            ),
            NotProvable::AheadUnknown { trunk, .. } => (
                HintId::CheckRepository,
                format!(
                    "Run `git rev-list --left-right --count {trunk}...HEAD` and fix what it reports, then run the gate again"
                ),
                VERB,
            ),
        };
        Hint::next_step(id, hint).with_action(Action::new(step))
    }
}

/// Every precondition of the gate, in order (after the table's preflight recovered the
/// checkout, loaded its config and observed its cleanliness): an effort branch (not the
/// trunk), a clean tree, a commit ahead of a readable trunk.
pub(super) fn subject(prepared: &Prepared) -> Result<Subject, Refused> {
    let (ws, repo) = (&prepared.ws, &prepared.ws.repo);
    let config = prepared.config().cloned();
    // DISCERN_TRUNK never changes what the gate and the landing trust; a branch of a release
    // line the trunk declares is proven against that line.
    let trunk = ws.landing_trunk(config.as_ref());
    let trunk = crate::measure::limits::landing_line(ws, trunk, repo.head().ok().flatten());
    let Some(branch) = repo.branch().ok().flatten() else {
        return Err(refusal(&NotProvable::Detached));
    };
    if branch == trunk {
        return Err(refusal(&NotProvable::OnTrunk { branch }));
    }
    prepared.require_clean(VERB)?;
    let Some(head) = repo.head().ok().flatten() else {
        return Err(refusal(&NotProvable::NoCommit));
    };
    let trunk_commit = match repo.trunk_commit(&trunk) {
        Ok(Some(commit)) => commit,
        Err(e) if let Some(diverged) = crate::git::DivergedTrunk::of(&e) => {
            return Err(refusal(&NotProvable::TrunkDiverged(diverged)));
        }
        _ => return Err(refusal(&NotProvable::TrunkUnreadable { trunk })),
    };
    let (ahead, behind) = match repo.ahead_behind(trunk_commit, head) {
        Ok(counts) => counts,
        Err(source) => {
            let (branch, trunk) = (branch.clone(), trunk.clone());
            return Err(refusal(&NotProvable::AheadUnknown {
                branch,
                trunk,
                source,
            }));
        }
    };
    if ahead == 0 {
        return Err(refusal(&NotProvable::NothingAhead { branch, trunk }));
    }
    Ok(Subject {
        config,
        trunk,
        branch,
        head,
        trunk_commit,
        behind,
        level: prepared.level(),
    })
}

/// Proof is already current for this exact commit: the gate does not run again.
fn current_proof(proof: &Proof) -> Reply {
    let mut envelope = Reply::new(
        &DoneData {
            proof: Some(proof),
            proof_line: Some(&proof.line),
            ..DoneData::default()
        },
        Report {
            state: format!(
                "Proof is current for {} (the gate did not run again). {}",
                short(&proof.commit),
                proof.line
            ),
            sections: Vec::new(),
        },
    );
    envelope.hints.push(land_it());
    envelope
}

/// `--dry-run`: the steps the gate would run; nothing runs or is written.
/// `plan` of a dry run: the gate's steps in order.
#[derive(serde::Serialize)]
struct DonePlan {
    steps: Vec<String>,
}

fn dry_run(repo: &crate::git::Repo, subject: &Subject) -> Reply {
    let config = subject.config.as_ref();
    // The Standards that need no job are measured before any job runs; those that do, after.
    let standards = |after_jobs: bool| {
        config
            .into_iter()
            .flat_map(|c| c.standards.iter())
            .filter(move |s| (!s.needs.is_empty() || s.run.is_some()) == after_jobs)
            .map(|s| format!("standard:{}", s.name))
    };
    let jobs = [Stage::Fix, Stage::Build, Stage::Check, Stage::Test]
        .iter()
        .flat_map(|s| {
            steps::jobs_of(config, &[*s])
                .into_iter()
                .map(|j| format!("job:{} ({})", j.name, j.stage.as_str()))
        });
    // `[worktree].ensure` runs right before the jobs, each step as the gate labels it.
    let ensure = config
        .into_iter()
        .flat_map(|c| c.worktree.ensure.iter().enumerate())
        .map(|(at, command)| format!("ensure:{} ({command})", at + 1));
    let plan: Vec<String> = standards(false)
        .chain(ensure)
        .chain(jobs)
        .chain(standards(true))
        .collect();
    let envelope = Reply::new(
        DoneData::default(),
        Report {
            state: format!(
                "Dry run: the gate would run {} step(s) on {}.",
                plan.len() + 2,
                short(&subject.head.to_string())
            ),
            sections: vec![Section {
                table: None,
                title: "Plan".to_owned(),
                lines: plan.clone(),
            }],
        },
    );
    let steps: Vec<String> = ["merge", "standards-limits"]
        .into_iter()
        .map(String::from)
        .chain(plan)
        .collect();
    let mut envelope = envelope.with_plan(DonePlan { steps });
    envelope.dry_run = Some(true);
    envelope
        .advisories
        .extend(preflight::pending_transaction(repo));
    envelope
}

/// Proof for the same clean commit the gate ran on (HEAD and tree unchanged meanwhile).
fn record_proof(
    run: Run,
    repo: &crate::git::Repo,
    proven: Vec<ProvenStandard>,
    (pending, by_trunk): (Vec<ProvenProposal>, Vec<proof::TrunkVerdict>),
) -> Result<Reply, Refused> {
    let Subject {
        branch,
        trunk,
        head,
        trunk_commit,
        ..
    } = run.subject;
    let still_clean =
        preflight::dirty_paths(repo, run.subject.level).is_ok_and(|dirty| dirty.is_empty());
    if repo.head().ok().flatten() != Some(*head) || !still_clean {
        let message = "HEAD or the tree changed while the gate ran; no Proof was recorded.";
        return Err(run.fail("proof", message.to_owned(), Found::default()));
    }
    let base = repo
        .merge_base(*trunk_commit, *head)
        .unwrap_or(*trunk_commit);
    let diffstat = proof::diffstat(repo, &base.to_string(), &head.to_string());
    // The gate's own definition as changed versus the trunk: recorded, each for the owner.
    let protected = match crate::proposals::required::required(repo, trunk, *trunk_commit, *head) {
        Ok(required) => required.protected,
        Err(e) => {
            let message = format!("What needs the owner's approval cannot be told: {e}.");
            return Err(run.fail("proof", message, Found::default()));
        }
    };
    let tested = run
        .subject
        .config
        .as_ref()
        .is_some_and(|c| c.jobs.iter().any(|j| j.stage == crate::config::Stage::Test));
    let line = proof::line(
        branch,
        &head.to_string(),
        trunk,
        &diffstat,
        &proven,
        &proof::LineFacts {
            proposals: &pending,
            protected: &protected,
            by_trunk: &by_trunk,
            tested,
            approved_by: run.approved_by.as_deref(),
        },
    );
    let record = Proof {
        version: proof::VERSION,
        commit: head.to_string(),
        branch: branch.clone(),
        trunk: trunk.clone(),
        trunk_commit: trunk_commit.to_string(),
        diffstat,
        standards: proven,
        proposals: pending,
        protected,
        by_trunk,
        tested,
        line: line.clone(),
    };
    if let Err(e) = proof::save(repo, &record) {
        return Err(refuse(
            ErrorSlug::Internal,
            format!("The gate passed but the Proof could not be written: {e}"),
            HintId::ReportBug,
            "Check the git admin directory's permissions.",
        ));
    }
    let lines = run.steps.iter().map(step_line).collect();
    let mut envelope = Reply::new(
        &DoneData {
            gate_ran: true,
            proof: Some(&record),
            proof_line: Some(&line),
            ..DoneData::default()
        },
        Report {
            state: line.clone(),
            sections: vec![Section {
                table: None,
                title: "Steps".to_owned(),
                lines,
            }],
        },
    );
    envelope = envelope.with_steps(&run.steps);
    envelope.hints.push(land_it());
    Ok(envelope)
}

/// The next step after Proof: the owner decides, the caller relays.
fn land_it() -> Hint {
    Hint::next_step(
        HintId::Accept,
        "Report the Proof line to the owner; with their consent, land it",
    )
    .with_action(Action::new("accept").flag("confirmed"))
}

/// `ok build` / `FAILED lint: …`: one step as the report shows it.
fn step_line(step: &Step) -> String {
    let outcome = match step.outcome {
        steps::Outcome::Failed => "FAILED",
        _ => "ok",
    };
    let note = step
        .note
        .as_ref()
        .map(|n| format!(": {n}"))
        .unwrap_or_default();
    format!("{outcome} {}{note}", step.label)
}
