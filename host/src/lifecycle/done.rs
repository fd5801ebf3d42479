//! `discern done`: the gate. On the exact clean commit of an effort branch ahead of the trunk:
//! merge check, never-loosen, fix → build → check ∥ test, every Standard; on success a Proof
//! marker for that commit and the Proof line.

use serde_json::{Value, json};

use super::steps::{self, Step};
use crate::config::{Config, Stage};
use crate::operations::Journal;
use crate::preflight::{self, Cleanliness};
use crate::proof::{self, Proof, ProofState, ProvenProposal, ProvenStandard};
use crate::proposals;
use crate::result::{Diagnostic, Envelope, ErrorSlug, Hint, HintId, Report, Section, Severity};
use crate::runtime::Runtime;
use crate::snapshot::short;
use crate::standards::{self, EvidenceUse, MeasureOptions, Measurement, Verdict};
use crate::workspace::Workspace;

pub const VERB: &str = "done";

#[derive(Debug, Clone, Copy, Default, clap::Args, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DoneRequest {
    /// Run the gate even when Proof for this exact commit is current.
    #[arg(long)]
    #[serde(default)]
    pub rerun: bool,
    /// Preview only: the stages and Standards the gate would run; nothing runs or is written.
    #[arg(long)]
    #[serde(default)]
    pub dry_run: bool,
}

fn refuse(slug: ErrorSlug, message: impl Into<String>, id: HintId, hint: &str) -> Envelope {
    Envelope::refusal(VERB, slug, message, Hint::next_step(id, hint))
}

pub fn done(
    ws: &Workspace,
    runtime: &Runtime,
    request: &DoneRequest,
    progress: &(dyn Fn(&str) + Sync),
) -> Envelope {
    // A dry run writes nothing, not even the operation journal.
    let mut journal = Journal::begin_unless(request.dry_run, &ws.repo, VERB);
    let envelope = gate(ws, runtime, request, &mut journal, progress);
    journal.finish(envelope)
}

fn gate(
    ws: &Workspace,
    runtime: &Runtime,
    request: &DoneRequest,
    journal: &mut Journal,
    progress: &(dyn Fn(&str) + Sync),
) -> Envelope {
    let repo = &ws.repo;
    if let Err(refusal) = preflight::recover(VERB, repo) {
        return *refusal;
    }
    let config = match Config::load(repo.root()) {
        Ok(config) => config,
        Err(e) => return crate::preflight::config_refusal(VERB, &e),
    };
    let trunk = ws.trunk(config.as_ref());
    let Some(branch) = repo.branch().ok().flatten() else {
        return refuse(
            ErrorSlug::PreconditionFailed,
            "HEAD is detached; the gate proves a commit on an effort branch.",
            HintId::WorkInEffort,
            "Check out your effort branch, then run `discern done`.",
        );
    };
    if branch == trunk {
        return refuse(
            ErrorSlug::PreconditionFailed,
            format!(
                "{branch} is the trunk; the gate proves work on an effort branch before it lands."
            ),
            HintId::WorkInEffort,
            "Start an effort (`discern start`) and run `discern done` there.",
        );
    }
    if let Err(refusal) = preflight::require_clean(VERB, repo, Cleanliness::Full) {
        return *refusal;
    }
    let Some(head) = repo.head().ok().flatten() else {
        return refuse(
            ErrorSlug::PreconditionFailed,
            "This branch has no commit yet.",
            HintId::CommitFirst,
            "Commit your work, then run `discern done`.",
        );
    };
    let Some(trunk_commit) = repo.branch_commit(&trunk).ok().flatten() else {
        return refuse(
            ErrorSlug::PreconditionFailed,
            format!(
                "The trunk {trunk} cannot be read, so the gate cannot check that this work contains it."
            ),
            HintId::UpdateFromTrunk,
            "Fetch the trunk or set DISCERN_TRUNK, then run `discern done` again.",
        );
    };
    let (ahead, behind) = match repo.ahead_behind(trunk_commit, head) {
        Ok(counts) => counts,
        Err(e) => {
            return refuse(
                ErrorSlug::PreconditionFailed,
                format!("How far {branch} is ahead of {trunk} cannot be told: {e}."),
                HintId::CheckRepository,
                &format!(
                    "Run `git rev-list --left-right --count {trunk}...HEAD` and fix what it reports, then run `discern done` again."
                ),
            );
        }
    };
    if ahead == 0 {
        return refuse(
            ErrorSlug::PreconditionFailed,
            format!("{branch} has no commit ahead of {trunk}: there is nothing to prove."),
            HintId::CommitFirst,
            "Commit your work, then run `discern done`.",
        );
    }
    if !request.rerun
        && let (ProofState::Honored, Some(proof)) = proof::state(repo)
    {
        let mut envelope = Envelope::ok(
            VERB,
            json!({ "gate_ran": false, "proof": proof, "proof_line": proof.line }),
            Report {
                state: format!(
                    "Proof is current for {} (the gate did not run again). {}",
                    short(&proof.commit),
                    proof.line
                ),
                sections: Vec::new(),
            },
        );
        envelope.hints.push(Hint::next_step(HintId::Accept, "Report the Proof line to the owner; with their consent, `discern accept --confirmed` lands it (`--rerun` runs the gate again)."));
        return envelope;
    }
    let stage_jobs = |stages: &[Stage]| steps::jobs_of(config.as_ref(), stages);
    if request.dry_run {
        let plan: Vec<String> = [Stage::Fix, Stage::Build, Stage::Check, Stage::Test]
            .iter()
            .flat_map(|s| {
                stage_jobs(&[*s])
                    .into_iter()
                    .map(|j| format!("job:{} ({})", j.name, j.stage.as_str()))
            })
            .chain(
                config
                    .iter()
                    .flat_map(|c| c.standards.iter().map(|s| format!("standard:{}", s.name))),
            )
            .collect();
        let mut envelope = Envelope::ok(
            VERB,
            json!({ "gate_ran": false }),
            Report {
                state: format!(
                    "Dry run: the gate would run {} step(s) on {}.",
                    plan.len() + 2,
                    short(&head.to_string())
                ),
                sections: vec![Section {
                    title: "Plan".to_owned(),
                    lines: plan.clone(),
                }],
            },
        );
        envelope.dry_run = Some(true);
        let all: Vec<String> = ["merge", "standards-limits"]
            .into_iter()
            .map(String::from)
            .chain(plan)
            .collect();
        envelope.plan = Some(json!({ "steps": all }));
        return envelope;
    }

    let mut all_steps: Vec<Step> = Vec::new();
    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    let fail = |stage: &str,
                message: String,
                steps: Vec<Step>,
                diagnostics: Vec<Diagnostic>,
                extra: Value| {
        let mut envelope = Envelope::refusal(
            VERB,
            ErrorSlug::GateFailed,
            message,
            Hint::next_step(
                HintId::FixGate,
                format!(
                    "Fix what the {stage} stage reports, commit, and run `discern done` again."
                ),
            ),
        );
        let mut data = json!({ "gate_ran": true, "failed_stage": stage, "commit": head.to_string(), "branch": branch });
        if let (Some(d), Value::Object(e)) = (data.as_object_mut(), extra) {
            d.extend(e);
        }
        envelope.data = Some(data);
        envelope.steps = serde_json::to_value(&steps).ok();
        envelope.diagnostics = diagnostics;
        envelope
    };

    // Merge check: the branch contains the trunk.
    journal.phase("merge");
    let contained = repo.is_ancestor(trunk_commit, head);
    all_steps.push(Step::check(
        "merge",
        contained,
        if contained {
            format!("{branch} contains {trunk}")
        } else {
            format!("{branch} is {behind} commit(s) behind {trunk}")
        },
    ));
    if !contained {
        let mut envelope = fail(
            "merge",
            format!("{branch} does not contain the latest {trunk} ({behind} commit(s) behind)."),
            all_steps,
            diagnostics,
            json!({ "behind": behind }),
        );
        envelope.hints = vec![Hint::next_step(
            HintId::UpdateFromTrunk,
            "Run `discern update` to merge the trunk, then `discern done` again.",
        )];
        return envelope;
    }

    // Never-loosen.
    journal.phase("standards-limits");
    let limits = config.as_ref().map(|config| {
        standards::limits::check(repo, config, &trunk, &proposals::claims(ws, config))
    });
    if let Some(limits) = &limits {
        all_steps.push(Step::check(
            "standards-limits",
            !limits.blocking(),
            limits.summary.status.as_str().to_owned(),
        ));
        if limits.blocking() {
            let reason = limits.summary.reason.clone().unwrap_or_default();
            return fail(
                "standards_limits",
                format!("Limits changed versus {trunk}: {reason}."),
                all_steps,
                limits.diagnostics.clone(),
                json!({ "limits": limits.summary }),
            );
        }
    }

    // fix → build → check ∥ test.
    for (stage, name, parallel) in [
        (&[Stage::Fix][..], "fix", false),
        (&[Stage::Build][..], "build", false),
        (&[Stage::Check, Stage::Test][..], "check/test", true),
    ] {
        journal.phase(name);
        let (steps, failures) = steps::run(&stage_jobs(stage), repo, parallel, progress);
        let ok = steps::all_ok(&steps);
        all_steps.extend(steps);
        diagnostics.extend(failures);
        if !ok {
            return fail(
                name,
                format!("The gate failed at the {name} stage."),
                all_steps,
                diagnostics,
                json!({}),
            );
        }
        let fix_changed = match preflight::dirty_paths(repo, Cleanliness::Full) {
            _ if name != "fix" => None,
            Ok(dirty) if dirty.is_empty() => None,
            Ok(_) => Some("The fix stage changed committed files".to_owned()),
            // Fail closed: an unknown state after the fix jobs is not "unchanged".
            Err(e) => Some(format!(
                "Whether the fix stage changed committed files cannot be told ({e})"
            )),
        };
        if let Some(what) = fix_changed {
            diagnostics.push(Diagnostic {
                tool: "gate".to_owned(),
                severity: Severity::Error,
                message: format!("{what}; the commit is not what the fix jobs produce."),
                reproduce_cmd: "discern prepare".to_owned(),
                file: None,
                line: None,
            });
            let mut envelope = fail("fix", format!("{what}."), all_steps, diagnostics, json!({}));
            envelope.hints = vec![Hint::next_step(
                HintId::Prepare,
                "Run `discern prepare`, commit what it changes, then `discern done` again.",
            )];
            return envelope;
        }
    }

    // Every Standard; proposed ones must equal their record.
    journal.phase("standards");
    let mut proven = Vec::new();
    let mut pending = Vec::new();
    if let Some(config) = config.as_ref().filter(|c| !c.standards.is_empty()) {
        let selected: Vec<_> = config.standards.iter().collect();
        let records = proposals::store::load(repo).unwrap_or_default();
        // Proposed Standards are measured fresh: their value must equal the record exactly.
        let options = MeasureOptions {
            evidence: match records.is_empty() {
                true => EvidenceUse::ReuseAndRecord,
                false => EvidenceUse::Fresh,
            },
            ..MeasureOptions::default()
        };
        let measured = match standards::measure_with(
            ws,
            runtime,
            config,
            &selected,
            &options,
            &proposals::claims(ws, config),
            progress,
        ) {
            Ok(measured) => measured,
            Err(refusal) => return *refusal,
        };
        let mut bad = Vec::new();
        for result in &measured.standards {
            let read = matches!(
                result.measurement,
                Measurement::Measured | Measurement::Reused
            );
            let failed = !read || result.verdict == Some(Verdict::Regressed);
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
            proven.push(ProvenStandard {
                name: result.name.clone(),
                value: result.value.unwrap_or_default(),
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
        all_steps.extend(measured.standards.iter().map(|s| {
            Step::check(
                &format!("standard:{}", s.name),
                matches!(s.measurement, Measurement::Measured | Measurement::Reused)
                    && s.verdict != Some(Verdict::Regressed),
                s.note.clone().unwrap_or_default(),
            )
        }));
        diagnostics.extend(measured.diagnostics.iter().cloned());
        if !bad.is_empty() {
            return fail(
                "standards",
                format!("Standards fail: {}.", bad.join("; ")),
                all_steps,
                diagnostics,
                json!({ "standards": measured.standards }),
            );
        }
    }

    // Proof only for the same clean commit.
    let still_clean =
        preflight::dirty_paths(repo, Cleanliness::Full).is_ok_and(|dirty| dirty.is_empty());
    if repo.head().ok().flatten() != Some(head) || !still_clean {
        return fail(
            "proof",
            "HEAD or the tree changed while the gate ran; no Proof was recorded.".to_owned(),
            all_steps,
            diagnostics,
            json!({}),
        );
    }
    let base = repo.merge_base(trunk_commit, head).unwrap_or(trunk_commit);
    let diffstat = proof::diffstat(repo, &base.to_string(), &head.to_string());
    let line = proof::line(
        &branch,
        &head.to_string(),
        &trunk,
        &diffstat,
        &proven,
        &pending,
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
        line: line.clone(),
    };
    if let Err(e) = proof::save(repo, &record) {
        return refuse(
            ErrorSlug::Internal,
            format!("The gate passed but the Proof could not be written: {e}"),
            HintId::ReportBug,
            "Check the git admin directory's permissions.",
        );
    }
    let mut envelope = Envelope::ok(
        VERB,
        json!({ "gate_ran": true, "proof": record, "proof_line": line }),
        Report {
            state: line.clone(),
            sections: vec![Section {
                title: "Steps".to_owned(),
                lines: all_steps
                    .iter()
                    .map(|s| {
                        format!(
                            "{} {}{}",
                            if s.outcome == steps::Outcome::Failed {
                                "FAILED"
                            } else {
                                "ok"
                            },
                            s.label,
                            s.note
                                .as_ref()
                                .map(|n| format!(": {n}"))
                                .unwrap_or_default()
                        )
                    })
                    .collect(),
            }],
        },
    );
    envelope.steps = serde_json::to_value(&all_steps).ok();
    envelope.hints.push(Hint::next_step(HintId::Accept, "Report the Proof line to the owner; with their consent, `discern accept --confirmed` lands it."));
    envelope
}
