//! The envelopes of `discern standards`: what happened, in data, text and hints.

use super::rows::{row, status, why};
use crate::config::{Config, StandardDef};
use crate::git::short;
use crate::measure::limits::{LimitsCheck, LimitsStatus};
use crate::measure::{Measured, Measurement, StandardResult, Verdict, data, display};
use crate::planner::Plan;
use crate::result::{Action, ErrorSlug, Hint, HintId, Refused, Reply, Report, Section, Table};

/// `data` of a `standards --dry-run`: each selected Standard and whether the never-loosen
/// check blocks it.
#[derive(Debug, serde::Serialize)]
struct DryRunData<'a> {
    standards: Vec<Planned<'a>>,
    limits: &'a crate::measure::LimitsSummary,
    configured: usize,
}

#[derive(Debug, serde::Serialize)]
struct Planned<'a> {
    name: &'a str,
    direction: crate::config::Direction,
    limit: f64,
    producer: String,
    metric: &'a str,
    blocked: bool,
}

/// `data` of a measurement with nothing configured.
#[derive(Debug, serde::Serialize)]
struct NothingData {
    standards: [(); 0],
    producer_executions: std::collections::BTreeMap<String, u32>,
}

pub(super) fn none_configured() -> Reply {
    let nothing = NothingData {
        standards: [],
        producer_executions: std::collections::BTreeMap::new(),
    };
    Reply::new(nothing,
        Report {
            state: "No Standards are configured; nothing was measured.".to_owned(),
            sections: Vec::new(),
        },
    )
    .with_hint(Hint::next_step(
        HintId::StandardsNoneConfigured,
        "Write a discern.toml with the built-in Standards that fit this repository, or add a [standards.<name>] table by hand",
    ).with_action(Action::new("init")))
}

pub(super) fn dry_run(
    config: &Config,
    selected: &[&StandardDef],
    plan: &Plan,
    limits: &LimitsCheck,
) -> Reply {
    let mut lines = Vec::new();
    for execution in &plan.executions {
        lines.push(format!(
            "{}  config {}  → {}",
            execution.label,
            execution.config,
            execution.dependents.join(", ")
        ));
    }
    let mut sections = vec![Section {
        table: None,
        title: "Producer executions (each runs once)".to_owned(),
        lines,
    }];
    if !plan.jobs.is_empty() {
        sections.push(Section {
            table: None,
            title: "Jobs that run first".to_owned(),
            lines: plan
                .jobs
                .iter()
                .map(|j| format!("{}: {}", j.name, j.run))
                .collect(),
        });
    }
    let blocked: Vec<String> = selected
        .iter()
        .filter(|s| limits.blocked.contains_key(&s.name))
        .map(|s| {
            format!(
                "{} (blocked by the never-loosen check; not measured)",
                s.name
            )
        })
        .collect();
    if !blocked.is_empty() {
        sections.push(Section {
            table: None,
            title: "Blocked".to_owned(),
            lines: blocked,
        });
    }
    let mut envelope = Reply::new(
        DryRunData {
            standards: selected
                .iter()
                .map(|s| Planned {
                    name: &s.name,
                    direction: s.direction,
                    limit: s.limit,
                    producer: s.producer.label(),
                    metric: &s.metric,
                    blocked: limits.blocked.contains_key(&s.name),
                })
                .collect(),
            limits: &limits.summary,
            configured: config.standards.len(),
        },
        Report {
            state: format!(
                "Dry run: {} Standard(s) would be measured by {} producer execution(s); nothing was measured.",
                selected.len() - limits.blocked.len().min(selected.len()),
                plan.executions.len()
            ),
            sections,
        },
    );
    envelope.dry_run = Some(true);
    envelope.plan = Some(plan.describe());
    envelope.diagnostics = limits.diagnostics.clone();
    envelope.advisories = limits.advisories.clone();
    envelope.with_hint(
        Hint::next_step(HintId::StandardsMeasure, "Measure").with_action(Action::new("standards")),
    )
}

fn line(result: &StandardResult) -> String {
    let bound = match result.direction {
        crate::config::Direction::Up => "floor",
        crate::config::Direction::Down => "ceiling",
    };
    let status = status(result);
    let value = result.value.map_or("—".to_owned(), display);
    let mut text = format!(
        "{:<10} {:<28} {value:>12}  ({bound} {})",
        status, result.name, result.limit
    );
    if let Some(target) = result.pin_target {
        text.push_str(&format!("  pinnable to {target}"));
    }
    if result.measurement == Measurement::Reused
        && let Some(from) = &result.reused_from
    {
        text.push_str(&format!("  reused from {}", short(from)));
        if let Some(evidence) = &result.reused_evidence {
            text.push_str(&format!(" ({evidence})"));
        }
    }
    text
}

pub(super) fn measured(
    config: &Config,
    measured: &Measured,
    force: bool,
) -> Result<Reply, Refused> {
    let tally = Tally::of(measured);
    let state = state(measured, &tally);
    let sections = sections(measured);
    let mut hints = Vec::new();
    // A required check refused as unverified names its fix in the refusal's own next step.
    let refused_unverified = !tally.ok && unverified_blocks(measured, &tally);
    if measured.limits.summary.status == LimitsStatus::Unverified && !refused_unverified {
        hints.push(Hint::next_step(
            HintId::StandardsLimitsUnverified,
            format!(
                "Limits were not compared with the trunk {:?}; make it readable with the command the advisory names, so loosened limits are caught.",
                measured.limits.summary.trunk
            ),
        ));
    }
    if force {
        hints.push(Hint::new(
            HintId::StandardsForceNotRecorded,
            "--force measured the work tree as it is: these readings are not recorded and never feed a pin or a proposal.",
        ));
    }
    // A forced reading is never recorded, so it cannot feed a pin.
    if tally.ok
        && !force
        && let Some(hint) = pinnable_slack(measured)
    {
        hints.push(hint);
    }
    let _ = config;
    let diagnostics = measured.diagnostics.iter().cloned();
    let advisories = measured.advisories.iter().cloned();
    if !tally.ok {
        let mut refused = refusal(measured, &tally, state, sections);
        refused.diagnostics.extend(diagnostics);
        refused.advisories.extend(advisories);
        refused.hints.extend(hints);
        return Err(refused);
    }
    let mut envelope = Reply::new(data(measured), Report { state, sections });
    envelope.diagnostics.extend(diagnostics);
    envelope.advisories.extend(advisories);
    envelope.hints.extend(hints);
    Ok(envelope)
}

/// How the Standards of one measurement came out.
struct Tally {
    regressed: usize,
    failed: usize,
    skipped: usize,
    improved: usize,
    held: usize,
    /// Whether the never-loosen check blocks.
    blocking: bool,
    /// Proposals awaiting the owner's approval where the trunk is required (CI): nothing
    /// unapproved passes there.
    awaiting: bool,
    /// Whether everything passes.
    ok: bool,
}

impl Tally {
    fn of(measured: &Measured) -> Self {
        let count = |f: &dyn Fn(&StandardResult) -> bool| {
            measured.standards.iter().filter(|s| f(s)).count()
        };
        let regressed = count(&|s| s.verdict.is_some_and(|v| !v.passes()));
        let failed = count(&|s| s.measurement == Measurement::Failed);
        let skipped = count(&|s| s.measurement == Measurement::Skipped);
        let blocking = measured.limits.blocking();
        let awaiting =
            measured.limits.summary.status == LimitsStatus::Proposed && measured.limits.required;
        Tally {
            awaiting,
            regressed,
            failed,
            skipped,
            improved: count(&|s| s.verdict == Some(Verdict::Improved)),
            held: count(&|s| s.verdict == Some(Verdict::Held)),
            blocking,
            ok: regressed == 0 && failed == 0 && skipped == 0 && !blocking && !awaiting,
        }
    }
}

/// The one-line state: everything passes, or what fails.
fn state(measured: &Measured, tally: &Tally) -> String {
    let on = if measured.worktree {
        format!("the work tree on {}", short(&measured.commit))
    } else {
        format!(
            "{}{}",
            short(&measured.commit),
            measured
                .branch
                .as_ref()
                .map_or(String::new(), |b| format!(" ({b})"))
        )
    };
    if tally.ok {
        return format!(
            "All {} Standards pass on {on}: {} held, {} improved ({}).",
            measured.standards.len(),
            tally.held,
            tally.improved,
            runs(measured)
        );
    }
    let mut parts = Vec::new();
    if tally.regressed > 0 {
        parts.push(format!("{} regressed", tally.regressed));
    }
    if tally.failed > 0 {
        parts.push(format!("{} could not be measured", tally.failed));
    }
    if tally.awaiting {
        parts.push(format!(
            "limits proposed, awaiting the owner's approval ({})",
            measured
                .limits
                .summary
                .reason
                .as_deref()
                .unwrap_or("see the proposals")
        ));
    }
    let limits = |what: &str| {
        let summary = &measured.limits.summary;
        let reason = summary.reason.as_deref().unwrap_or("see diagnostics");
        format!("limits {what} versus {} ({reason})", summary.trunk)
    };
    if unverified_blocks(measured, tally) {
        parts.push(limits("unverified"));
    }
    let status = measured.limits.summary.status;
    if status == LimitsStatus::Unapproved && tally.blocking {
        // The changes themselves: no Standard is at fault, so nothing else would name them.
        parts.push(
            measured
                .limits
                .summary
                .reason
                .clone()
                .unwrap_or_else(|| "the gate changed without the owner's approval".to_owned()),
        );
    } else if tally.skipped > 0
        || !measured.limits.deleted.is_empty()
        || status == LimitsStatus::ParseFailed
        || (status == LimitsStatus::Loosened && tally.blocking)
    {
        parts.push(limits("blocked"));
    }
    format!("Standards fail on {on}: {}.", parts.join("; "))
}

/// How many producers ran, and how many readings came from evidence instead.
fn runs(measured: &Measured) -> String {
    let executions: u32 = measured.counts.values().sum();
    let reused = measured
        .standards
        .iter()
        .filter(|s| s.measurement == Measurement::Reused)
        .count();
    if reused > 0 {
        format!(
            "{executions} producer run{}, {reused} reading{} reused from evidence",
            if executions == 1 { "" } else { "s" },
            if reused == 1 { "" } else { "s" }
        )
    } else {
        format!(
            "{executions} producer run{}",
            if executions == 1 { "" } else { "s" }
        )
    }
}

fn sections(measured: &Measured) -> Vec<Section> {
    let mut evidence: Vec<String> = measured
        .counts
        .iter()
        .map(|(label, runs)| format!("{label}: {runs} run{}", if *runs == 1 { "" } else { "s" }))
        .collect();
    evidence.push(format!(
        "limits versus {}: {}",
        measured.limits.summary.trunk,
        serde_json::to_value(measured.limits.summary.status)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default()
    ));
    let mut lines = Vec::new();
    let mut notes = Vec::new();
    for result in &measured.standards {
        lines.push(line(result));
        for shown in why(result) {
            lines.push(format!("    {shown}"));
            notes.push(format!("{}: {shown}", result.name));
        }
    }
    vec![
        Section {
            table: Some(Table {
                header: ["Standard", "Verdict", "Value", "Limit", "Findings", "How"]
                    .map(str::to_owned)
                    .to_vec(),
                rows: measured.standards.iter().map(row).collect(),
                notes,
            }),
            title: "Standards".to_owned(),
            lines,
        },
        Section {
            table: None,
            title: "Producer executions".to_owned(),
            lines: evidence,
        },
    ]
}

/// Whether the limits are unverified and that alone blocks (a required check): nothing is
/// wrong with the limits themselves, so nothing is to be restored.
fn unverified_blocks(measured: &Measured, tally: &Tally) -> bool {
    let limits = &measured.limits;
    tally.blocking
        && limits.summary.status == LimitsStatus::Unverified
        && tally.skipped == 0
        && limits.deleted.is_empty()
}

/// The refusal of a failed measurement, its slug and next step by what failed first.
fn refusal(measured: &Measured, tally: &Tally, state: String, sections: Vec<Section>) -> Refused {
    let (slug, hint) = if unverified_blocks(measured, tally) {
        let fix = measured
            .limits
            .diagnostics
            .iter()
            .map(|d| d.reproduce_cmd.clone())
            .find(|cmd| !cmd.is_empty())
            .unwrap_or_else(|| "discern standards --baseline <before>".to_owned());
        (
            ErrorSlug::PreconditionFailed,
            Hint::next_step(
                HintId::StandardsLimitsUnverified,
                format!(
                    "Make the comparison with the trunk {} verifiable, as the error says (`{fix}`); the limits themselves are not at fault",
                    measured.limits.summary.trunk
                ),
            ),
        )
    } else if tally.blocking
        && let Some(first) = measured.limits.unapproved.first()
    {
        (ErrorSlug::PreconditionFailed, trunk_routes(first))
    } else if tally.blocking {
        (
            ErrorSlug::PreconditionFailed,
            Hint::next_step(
                HintId::StandardsRestoreDefinition,
                format!(
                    "Restore the trunk's limits and definitions in discern.toml (`git show {}:discern.toml`), then measure again",
                    measured.limits.summary.trunk
                ),
            ).with_action(Action::new("standards")),
        )
    } else if tally.awaiting && tally.regressed == 0 && tally.failed == 0 {
        (
            ErrorSlug::AwaitingStandardApproval,
            Hint::new(
                HintId::AskOwner,
                "The loosened limits are recorded proposals; they pass only once the owner approves them when the work lands.",
            ),
        )
    } else if tally.failed > 0 {
        (
            ErrorSlug::ProducerFailed,
            Hint::next_step(
                HintId::StandardsFixProducer,
                "Fix what the diagnostics name (the producer's config, its job, or its component), then measure again",
            ).with_action(Action::new("standards")),
        )
    } else {
        (
            ErrorSlug::StandardsFailed,
            Hint::next_step(
                HintId::StandardsMoveMetricBack,
                "Move the regressed metrics back within your task's scope, commit, and measure again",
            ).with_action(Action::new("standards")),
        )
    };
    let mut envelope = Refused::new(slug, state, hint).with_data(data(measured));
    envelope.sections = sections;
    if tally.regressed > 0 {
        envelope = envelope.with_hint(Hint::new(
            HintId::StandardsNeverMoveLimit,
            "Never move a limit to make a Standard pass; a loosening needs a proposal and the owner's exact approval.",
        ));
    }
    envelope
}

/// The ways past a change the trunk made to its own gate without the owner's approval: undo
/// it (a revert is judged as no change), make it through an effort the owner approves, or —
/// the owner, having made it on purpose — judge the trunk from that commit on.
fn trunk_routes(first: &crate::measure::UnapprovedChange) -> Hint {
    let commit = short(&first.commit);
    Hint::next_step(
        HintId::StandardsGateChangedOnTrunk,
        format!(
            "The trunk changed its own gate in {commit} without the owner's approval. Undo it (`git revert {commit}`: restoring what was there is no change) and make the change in an effort instead (`discern start`, commit it there, `discern done`, `discern accept`, where the owner approves it); or, as the owner who made it here on purpose, judge the trunk from that commit on (`discern standards --baseline {commit}`): CI's check of the push that brought it still fails it"
        ),
    )
    .with_action(Action::new("standards").arg("baseline", commit))
}

/// The next step when some limits could be pinned tighter.
fn pinnable_slack(measured: &Measured) -> Option<Hint> {
    let pinnable: Vec<String> = measured
        .standards
        .iter()
        .filter_map(|s| s.pin_target.map(|t| format!("{} → {t}", s.name)))
        .collect();
    if pinnable.is_empty() {
        return None;
    }
    Some(
        Hint::next_step(
            HintId::StandardsPinnableSlack,
            format!(
                "Pinnable slack: {}; a pin tightens {} in one config-only commit{}",
                pinnable.join(", "),
                if pinnable.len() == 1 { "it" } else { "them" },
                if measured.recorded {
                    ", reusing these readings"
                } else {
                    ""
                }
            ),
        )
        .with_action(Action::new("standards").flag("pin")),
    )
}
