//! The gate's stages after its preconditions: the merge check, never-loosen, the jobs
//! (fix → build → check ∥ test), and every Standard. Each adds its steps to the run, or fails
//! it with what it found.

use super::{Found, Run, Subject, VERB, refuse};
use crate::config::Stage;
use crate::lifecycle::steps::{self, Step};
use crate::measure::{self, EvidenceUse, Measurement, Verdict};
use crate::preflight::{self, Journaling};
use crate::proof::{ProvenProposal, ProvenStandard};
use crate::proposals;
use crate::result::{Action, Diagnostic, ErrorSlug, Hint, HintId, Refused, Severity, WithNext};
use crate::runtime::Runtime;
use crate::workspace::Workspace;

/// The branch contains the trunk.
pub(super) fn merge_check(
    run: &mut Run,
    repo: &crate::git::Repo,
    journal: &Journaling,
) -> Result<(), Refused> {
    journal.phase("merge");
    let Subject {
        branch,
        trunk,
        behind,
        ..
    } = run.subject;
    let contained = repo.is_ancestor(run.subject.trunk_commit, run.subject.head);
    run.steps.push(Step::check(
        "merge",
        contained,
        if contained {
            format!("{branch} contains {trunk}")
        } else {
            format!("{branch} is {behind} commit(s) behind {trunk}")
        },
    ));
    if contained {
        return Ok(());
    }
    let message =
        format!("{branch} does not contain the latest {trunk} ({behind} commit(s) behind).");
    let mut envelope = std::mem::replace(
        run,
        Run {
            subject: run.subject,
            steps: Vec::new(),
            diagnostics: Vec::new(),
            approved_by: None,
        },
    )
    .fail(
        "merge",
        message,
        Found {
            behind: Some(*behind),
            ..Found::default()
        },
    );
    envelope.hints = vec![
        Hint::next_step(
            HintId::UpdateFromTrunk,
            "Merge the trunk, then run the gate again",
        )
        .with_action(Action::new("update")),
    ];
    Err(envelope)
}

/// Never-loosen: no limit is looser than the trunk's unless a live proposal explains it.
pub(super) fn limits_check(
    run: &mut Run,
    ws: &Workspace,
    journal: &Journaling,
) -> Result<(), Refused> {
    journal.phase("standards-limits");
    // No discern.toml at HEAD deletes every Standard the baseline had.
    let absent = crate::config::Config::absent();
    let config = run.subject.config.as_ref().unwrap_or(&absent);
    // The claims below read the proposal records: records that cannot be read are refused as
    // such, never taken for "no proposals".
    proposal_records(ws, &run.subject.trunk)?;
    clear_orphans(run, ws)?;
    let mut against = measure::limits::Against::new(ws, config, run.subject.head);
    against.trunk = run.subject.trunk.clone();
    let limits = measure::limits::check(&ws.repo, config, &against, &proposals::claims(ws, config));
    run.steps.push(Step::check(
        "standards-limits",
        !limits.blocking(),
        limits.summary.status.as_str().to_owned(),
    ));
    if !limits.blocking() {
        run.approved_by = limits.approved_by.clone();
        return Ok(());
    }
    let reason = limits.summary.reason.clone().unwrap_or_default();
    let mut failed = take(run);
    failed.diagnostics = limits.diagnostics.clone();
    Err(failed.fail(
        "standards_limits",
        format!("Limits changed versus {}: {reason}.", run.subject.trunk),
        Found {
            limits: Some(&limits.summary),
            ..Found::default()
        },
    ))
}

/// The run so far, moved out to build a failure.
fn take<'a>(run: &mut Run<'a>) -> Run<'a> {
    std::mem::replace(
        run,
        Run {
            subject: run.subject,
            steps: Vec::new(),
            diagnostics: Vec::new(),
            approved_by: None,
        },
    )
}

/// fix → build → check ∥ test; the fix stage must leave the committed tree as it is.
fn job_stages(
    run: &mut Run,
    repo: &crate::git::Repo,
    journal: &Journaling,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<(), Refused> {
    let config = run.subject.config.as_ref();
    ensure(run, repo, journal, progress)?;
    for (stage, name, parallel) in [
        (&[Stage::Fix][..], "fix", false),
        (&[Stage::Build][..], "build", false),
        (&[Stage::Check, Stage::Test][..], "check/test", true),
    ] {
        journal.phase(name);
        let (steps, failures) =
            steps::run(&steps::jobs_of(config, stage), repo, parallel, progress);
        let ok = steps::all_ok(&steps);
        run.steps.extend(steps);
        run.diagnostics.extend(failures);
        if !ok {
            let message = format!("The gate failed at the {name} stage.");
            return Err(take(run).fail(name, message, Found::default()));
        }
        if name == "fix" {
            fix_left_the_commit(run, repo)?;
        }
    }
    Ok(())
}

/// `[worktree].ensure`, run before the gate's jobs; a failing step fails the gate there.
fn ensure(
    run: &mut Run,
    repo: &crate::git::Repo,
    journal: &Journaling,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<(), Refused> {
    let Some(settings) = run.subject.config.as_ref().map(|c| &c.worktree) else {
        return Ok(());
    };
    if settings.ensure.is_empty() {
        return Ok(());
    }
    journal.phase("ensure");
    let ensured = crate::lifecycle::provision::ensure(repo, settings, progress);
    run.steps.extend(ensured.steps);
    let Some(failure) = ensured.failure else {
        return Ok(());
    };
    run.diagnostics.push(failure.diagnostic.clone());
    let message = format!(
        "The gate failed at the ensure stage: {}.",
        failure.sentence()
    );
    Err(take(run).fail("ensure", message, Found::default()))
}

/// The fix jobs changed nothing committed (fail closed: an unknown state is a change).
fn fix_left_the_commit(run: &mut Run, repo: &crate::git::Repo) -> Result<(), Refused> {
    let what = match preflight::dirty_paths(repo, run.subject.level) {
        Ok(dirty) if dirty.is_empty() => return Ok(()),
        Ok(_) => "The fix stage changed committed files".to_owned(),
        Err(e) => format!("Whether the fix stage changed committed files cannot be told ({e})"),
    };
    run.diagnostics.push(Diagnostic {
        tool: "gate".to_owned(),
        severity: Severity::Error,
        message: format!("{what}; the commit is not what the fix jobs produce."),
        reproduce_cmd: "discern prepare".to_owned(),
        file: None,
        line: None,
    });
    let mut envelope = take(run).fail("fix", format!("{what}."), Found::default());
    envelope.hints = vec![
        Hint::next_step(
            HintId::Prepare,
            "Run the fix jobs, commit what they change, then run the gate again",
        )
        .with_action(Action::new("prepare")),
    ];
    Err(envelope)
}

/// What the Standards and the jobs run with.
pub(super) struct Stages<'a> {
    pub ws: &'a Workspace,
    pub runtime: &'a Runtime,
    pub journal: &'a Journaling,
    pub progress: &'a (dyn Fn(&str) + Sync),
    /// `--all`: run the jobs even when a Standard measured before them fails.
    pub all: bool,
}

impl Stages<'_> {
    /// Every Standard that needs no job, measured before any job runs; then the jobs; then the
    /// Standards that need one. Every Standard passes, and a proposed one measures exactly its
    /// recorded value: the proven readings and the proposals awaiting the owner's approval.
    /// A Standard that fails before the jobs fails the gate there, no job run (unless `all`).
    pub(super) fn standards_and_jobs(
        &self,
        run: &mut Run,
    ) -> Result<(Vec<ProvenStandard>, Vec<ProvenProposal>), Refused> {
        let (ws, repo) = (self.ws, &self.ws.repo);
        self.journal.phase("standards");
        let subject = run.subject;
        let Some(config) = subject.config.as_ref().filter(|c| !c.standards.is_empty()) else {
            job_stages(run, repo, self.journal, self.progress)?;
            return Ok((Vec::new(), Vec::new()));
        };
        let records = proposal_records(ws, &run.subject.trunk)?;
        // Every Standard is measured fresh, trusting no evidence or compiled code an agent could
        // have written (a proposed one's value must equal its record exactly).
        let options = measure::Options {
            trunk: Some(run.subject.trunk.clone()),
            evidence: EvidenceUse::Proof,
            ..measure::Options::default()
        };
        let selected: Vec<_> = config.standards.iter().collect();
        let claims = proposals::claims(ws, config);
        let ctx = measure::Context {
            ws,
            runtime: self.runtime,
            config,
            selected: &selected,
            claims: &claims,
            progress: self.progress,
        };
        let begun = measure::begin(&ctx, &options).map_err(|e| e.refused_by(VERB))?;
        if !begun.passes() && !self.all {
            return standards_judged(run, &begun.stop(&not_after_failure()), &records);
        }
        job_stages(run, repo, self.journal, self.progress)?;
        self.journal.phase("standards");
        standards_judged(run, &begun.finish(), &records)
    }
}

/// Why a Standard that needs a job was not measured when the gate stopped before its jobs.
fn not_after_failure() -> String {
    let all = crate::result::spelled::spell(&crate::result::Action::new("done").flag("all"));
    format!(
        "not measured: a Standard measured before the jobs fails, so no job ran (`{all}` runs them for the full picture)"
    )
}

/// The steps of `measured`'s Standards, and the proven readings or the gate's failure.
fn standards_judged(
    run: &mut Run,
    measured: &measure::Measured,
    records: &[proposals::ProposalRecord],
) -> Result<(Vec<ProvenStandard>, Vec<ProvenProposal>), Refused> {
    let judged = judge_readings(&measured.standards, records);
    run.steps.extend(measured.standards.iter().map(|s| {
        Step::check(
            &format!("standard:{}", s.name),
            matches!(s.measurement, Measurement::Measured | Measurement::Reused)
                && s.verdict.is_none_or(Verdict::passes),
            s.note.clone().unwrap_or_default(),
        )
    }));
    run.diagnostics.extend(measured.diagnostics.iter().cloned());
    match judged {
        Ok(proven) => Ok(proven),
        Err(bad) => Err(take(run).fail(
            "standards",
            format!("Standards fail: {}.", bad.join("; ")),
            Found {
                standards: Some(&measured.standards),
                ..Found::default()
            },
        )),
    }
}

/// The proven readings and pending proposals, or what fails.
fn judge_readings(
    results: &[measure::StandardResult],
    records: &[proposals::ProposalRecord],
) -> Result<(Vec<ProvenStandard>, Vec<ProvenProposal>), Vec<String>> {
    let (mut proven, mut pending, mut bad) = (Vec::new(), Vec::new(), Vec::new());
    for result in results {
        let read = matches!(
            result.measurement,
            Measurement::Measured | Measurement::Reused
        );
        let failed = !read || result.verdict.is_some_and(|v| !v.passes());
        let record = records.iter().find(|r| r.standard == result.name);
        if let Some(record) = record
            && result.value != Some(record.measurement)
        {
            bad.push(format!(
                "{} measures {} but its proposal recorded {}",
                result.name,
                result.value.map_or("nothing".to_owned(), |v| v.to_string()),
                record.measurement
            ));
            continue;
        }
        if failed {
            bad.push(format!(
                "{} {}",
                result.name,
                result.note.as_deref().unwrap_or("failed")
            ));
            continue;
        }
        // A Proof names what was read: a passing reading without a value is not proven, never
        // recorded as 0.
        let Some(value) = result.value else {
            bad.push(format!("{} passed without a measured value", result.name));
            continue;
        };
        proven.push(ProvenStandard {
            name: result.name.clone(),
            value,
            limit: result.limit,
            verdict: result
                .verdict
                .map_or("held".to_owned(), |v| v.as_str().to_owned()),
        });
        if let Some(record) = record {
            pending.push(ProvenProposal {
                standard: record.standard.clone(),
                trunk_limit: record.trunk_limit,
                proposed_limit: record.proposed_limit,
                token: proposals::approval_token(
                    &record.standard,
                    record.proposed_limit,
                    &record.reason,
                ),
            });
        }
    }
    match bad.is_empty() {
        true => Ok((proven, pending)),
        false => Err(bad),
    }
}

/// Forget the proposals whose commit is no longer on this branch, and say so in the steps.
fn clear_orphans(run: &mut Run, ws: &Workspace) -> Result<(), Refused> {
    let cleared = proposals::live(&ws.repo, &run.subject.trunk)
        .map_err(|e| e.to_string())
        .and_then(|live| live.clear_orphans(&ws.repo).map_err(|e| e.to_string()));
    match cleared {
        Ok(None) => Ok(()),
        Ok(Some(message)) => {
            run.steps.push(Step::check("proposals", true, message));
            Ok(())
        }
        Err(e) => Err(refuse(
            ErrorSlug::PreconditionFailed,
            format!("The orphaned proposal records cannot be cleared: {e}."),
            HintId::StandardsPropose,
            "Fix what the message names, then run the gate again",
        )),
    }
}

/// This checkout's live proposals (what its commits propose, bound as its store remembers),
/// or the refusal that names what cannot be read.
fn proposal_records(
    ws: &Workspace,
    trunk: &str,
) -> Result<Vec<proposals::ProposalRecord>, Refused> {
    proposals::live(&ws.repo, trunk)
        .map(|live| live.records)
        .map_err(|e| {
            refuse(
                ErrorSlug::PreconditionFailed,
                format!("The proposal records cannot be read: {e}."),
                HintId::StandardsPropose,
                "Fix or remove the file named above, then run the gate again",
            )
            .with_next(Action::new("done"))
        })
}
