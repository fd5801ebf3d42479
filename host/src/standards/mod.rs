//! `discern standards`: measure every selected Standard through the sandboxed producers, each
//! producer identity once, judge each reading against its limit, and refuse any limit that
//! was loosened, redefined or deleted versus the trunk.

pub mod init;
mod judge;
pub mod limits;
pub mod pin;
pub mod reading;
pub mod record;
mod report;

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::json;

use crate::config::{Config, ConfigError, Direction, ProducerRef, StandardDef};
use crate::planner::{ComponentSource, Plan};
use crate::result::{Diagnostic, Envelope, ErrorSlug, Hint, HintId, Severity};
use crate::runtime::{ProducerComponent, Runtime};
use crate::snapshot::Repo;
use crate::workspace::Workspace;

pub use judge::{assess, skipped};
pub use limits::{LimitsCheck, LimitsStatus, LimitsSummary, ProposalClaim};
pub use reading::{EPSILON, Verdict, pin_eligible, pin_target};

pub const VERB: &str = "standards";

#[derive(Debug, Clone, Default)]
pub struct MeasureRequest {
    /// Standards to measure; empty = all.
    pub names: Vec<String>,
    /// Measure the work tree as it is (authoring a Standard): never recorded, never pinned.
    pub force: bool,
    /// Show the plan; measure nothing.
    pub dry_run: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Measurement {
    Measured,
    Reused,
    /// Not measured: blocked by the never-loosen check.
    Skipped,
    Failed,
}

/// One Standard's line in `data.standards[]`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StandardResult {
    pub name: String,
    pub direction: Direction,
    pub limit: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub margin: Option<f64>,
    pub measurement: Measurement,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reused_from: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pin_eligible: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pin_target: Option<f64>,
    pub producer: String,
    /// The producer execution this reading came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub execution: Option<String>,
    /// How the value was computed (`12 matches per 10000 lines ×1000`), or why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The outcome of measuring, for verbs built on it (`standards`, `--pin`, `done`).
#[derive(Debug, Clone)]
pub struct Measured {
    pub commit: String,
    pub branch: Option<String>,
    pub standards: Vec<StandardResult>,
    pub limits: LimitsCheck,
    pub counts: BTreeMap<String, u32>,
    pub diagnostics: Vec<Diagnostic>,
    pub advisories: Vec<String>,
    /// Whether the readings were recorded for this clean HEAD.
    pub recorded: bool,
    pub worktree: bool,
    /// What each Standard's producer execution read (with its `per` extent's reads).
    pub read_sets: ReadSets,
}

/// What each execution read, and which executions each Standard's reading used. A Standard's
/// read set is merged only when asked for (proposals need it; a plain measurement does not,
/// and merging listings of tens of thousands of paths per Standard is not free). An execution
/// reused from evidence carries its read set only when a dependent declares `inputs`, so a
/// caller that needs read sets must measure without reuse (as proposals do).
#[derive(Debug, Clone, Default)]
pub struct ReadSets {
    executions: Vec<Option<crate::runtime::ReadSet>>,
    by_standard: BTreeMap<String, Vec<usize>>,
}

impl ReadSets {
    /// What `standard`'s producer execution read, with its `per` extent's reads.
    pub fn of(&self, standard: &str) -> crate::runtime::ReadSet {
        let mut read_set = crate::runtime::ReadSet::default();
        for index in self.by_standard.get(standard).into_iter().flatten() {
            if let Some(Some(executed)) = self.executions.get(*index) {
                read_set.merge(executed);
            }
        }
        read_set
    }
}

/// Resolves producers: built-ins from the binary, paths from the measured snapshot (or, for a
/// file the snapshot does not track, from the work tree).
pub struct Components<'a> {
    pub repo: &'a Repo,
    pub snapshot: Option<&'a crate::snapshot::Snapshot>,
}

impl ComponentSource for Components<'_> {
    fn component(&self, producer: &ProducerRef) -> Result<ProducerComponent, String> {
        match producer {
            ProducerRef::Builtin(name) => crate::builtins::component(name)
                .ok_or_else(|| format!("there is no built-in producer builtin:{name}")),
            ProducerRef::Path(path) => {
                if let Some(snapshot) = self.snapshot
                    && snapshot.entry(path).is_some()
                {
                    let (_, bytes) = snapshot
                        .reader()
                        .read(path)
                        .map_err(|e| format!("cannot read the producer {path}: {e}"))?;
                    return Ok(ProducerComponent::new(path.clone(), bytes.to_vec()));
                }
                ProducerComponent::from_file(path.clone(), &self.repo.root().join(path)).map_err(|e| {
                    format!(
                        "cannot read the producer component {path}: {e}; build it, or fix `producer` (a path relative to the repository root)"
                    )
                })
            }
        }
    }
}

/// Load the work tree's config, or the refusal that explains why it cannot be used.
pub fn load_config(ws: &Workspace, verb: &str) -> Result<Option<Config>, Box<Envelope>> {
    Config::load(ws.root()).map_err(|e| Box::new(config_refusal(verb, &e)))
}

pub fn config_refusal(verb: &str, error: &ConfigError) -> Envelope {
    let count = error.issues.len();
    let mut envelope = Envelope::refusal(
        verb,
        ErrorSlug::InvalidConfig,
        format!(
            "discern.toml has {count} problem{}; nothing was measured. Fix {} and run the command again.",
            if count == 1 { "" } else { "s" },
            if count == 1 { "it" } else { "them" }
        ),
        Hint::next_step(
            HintId::FixConfig,
            "Fix discern.toml as the diagnostics say, then run the command again.",
        ),
    );
    for issue in &error.issues {
        envelope = envelope.with_diagnostic(Diagnostic {
            tool: "config".to_owned(),
            severity: Severity::Error,
            message: issue.to_string(),
            reproduce_cmd: format!("discern {verb} --dry-run"),
            file: Some(crate::config::FILE.to_owned()),
            line: issue.line.map(|l| l as u64),
        });
    }
    envelope
}

/// `discern standards [NAMES] [--force] [--dry-run]`, journalled for `progress`.
pub fn measure(
    ws: &Workspace,
    runtime: &Runtime,
    request: &MeasureRequest,
    progress: &(dyn Fn(&str) + Sync),
) -> Envelope {
    if request.dry_run {
        return measure_now(ws, runtime, request, progress);
    }
    let journal = crate::lifecycle::operations::Journal::begin(&ws.repo, VERB);
    journal.finish(measure_now(ws, runtime, request, progress))
}

fn measure_now(
    ws: &Workspace,
    runtime: &Runtime,
    request: &MeasureRequest,
    progress: &(dyn Fn(&str) + Sync),
) -> Envelope {
    // A limit transaction a crash interrupted is finished (or unwound) before anything else.
    if !request.dry_run
        && let Err(e) = crate::proposals::recover(&ws.repo)
    {
        return crate::proposals::recovery_refusal(VERB, &e);
    }
    let config = match load_config(ws, VERB) {
        Ok(Some(config)) if !config.standards.is_empty() => config,
        Ok(_) => return report::none_configured(),
        Err(refusal) => return *refusal,
    };
    let selected = match select(&config, &request.names) {
        Ok(selected) => selected,
        Err(refusal) => return *refusal,
    };
    let trunk = config
        .trunk(ws.settings.trunk_override.as_deref())
        .to_owned();
    if request.dry_run {
        let limits = limits::check(&ws.repo, &config, &trunk, &proposal_claims(ws, &config));
        let measurable: Vec<&StandardDef> = selected
            .iter()
            .copied()
            .filter(|s| !limits.blocked.contains_key(&s.name))
            .collect();
        let plan = Plan::build(
            &config,
            &measurable,
            &Components {
                repo: &ws.repo,
                snapshot: None,
            },
        );
        return report::dry_run(&config, &selected, &plan, &limits);
    }
    match measure_selected(ws, runtime, &config, &selected, request.force, progress) {
        Ok(measured) => report::measured(&config, &measured, request.force),
        Err(refusal) => *refusal,
    }
}

/// The configured Standards named in `names` (all when empty), in declaration order.
pub fn select<'c>(
    config: &'c Config,
    names: &[String],
) -> Result<Vec<&'c StandardDef>, Box<Envelope>> {
    let unknown: Vec<&String> = names
        .iter()
        .filter(|n| config.standard(n).is_none())
        .collect();
    if !unknown.is_empty() {
        let configured: Vec<&str> = config.standards.iter().map(|s| s.name.as_str()).collect();
        return Err(Box::new(Envelope::refusal(
            VERB,
            ErrorSlug::InvalidValue,
            format!(
                "No Standard named {}; the configured Standards are: {}.",
                unknown
                    .iter()
                    .map(|n| format!("{n:?}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                configured.join(", ")
            ),
            Hint::next_step(
                HintId::ListStandards,
                "Name configured Standards, or run `discern standards` to measure them all.",
            ),
        )));
    }
    Ok(config
        .standards
        .iter()
        .filter(|s| names.is_empty() || names.contains(&s.name))
        .collect())
}

/// Active proposals that may explain a loosened limit (the proposal store, when present).
pub fn proposal_claims(ws: &Workspace, config: &Config) -> Vec<ProposalClaim> {
    crate::proposals::claims(ws, config)
}

/// Measure `selected` on the clean HEAD (or the work tree with `force`): never-loosen check,
/// plan, execute, judge, record.
pub fn measure_selected(
    ws: &Workspace,
    runtime: &Runtime,
    config: &Config,
    selected: &[&StandardDef],
    force: bool,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Measured, Box<Envelope>> {
    measure_with(ws, runtime, config, selected, force, false, true, progress)
}

/// [`measure_selected`], optionally measuring Standards the never-loosen check blocks too (a
/// stale proposal's renewal must see the value its loosened limit was set to), and optionally
/// without evidence reuse (a proposal measures fresh).
#[allow(clippy::too_many_arguments)]
pub fn measure_with(
    ws: &Workspace,
    runtime: &Runtime,
    config: &Config,
    selected: &[&StandardDef],
    force: bool,
    measure_blocked: bool,
    reuse: bool,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Measured, Box<Envelope>> {
    let repo = &ws.repo;
    let internal = |what: String| {
        Box::new(Envelope::refusal(
            VERB,
            ErrorSlug::Internal,
            what,
            Hint::next_step(
                HintId::ReportBug,
                "This is a bug in discern or a damaged repository; report it with the message.",
            ),
        ))
    };
    let head = match repo.head() {
        Ok(Some(head)) => head,
        Ok(None) => {
            return Err(Box::new(Envelope::refusal(
                VERB,
                ErrorSlug::PreconditionFailed,
                "This repository has no commit yet; Standards measure a commit.",
                Hint::next_step(
                    HintId::CommitFirst,
                    "Commit your work (`git commit`), then run `discern standards`.",
                ),
            )));
        }
        Err(e) => return Err(internal(e.to_string())),
    };
    let branch = repo.branch().ok().flatten();
    let snapshot = if force {
        repo.worktree_snapshot(head).map_err(|e| e.to_string())
    } else {
        repo.snapshot(head).map_err(|e| e.to_string())
    };
    // The clean check uses HEAD's entries; a tree that cannot be read is still refused as
    // dirty first when it is, since that is what the user can act on.
    if !force {
        let dirty = match &snapshot {
            Ok(snapshot) => repo.dirty_against(snapshot),
            Err(_) => repo.dirty_paths(),
        }
        .map_err(|e| internal(e.to_string()))?;
        if !dirty.is_empty() {
            return Err(Box::new(dirty_refusal(VERB, &dirty)));
        }
    }
    let snapshot = snapshot.map_err(internal)?;
    let trunk = config
        .trunk(ws.settings.trunk_override.as_deref())
        .to_owned();
    let limits = limits::check(repo, config, &trunk, &proposal_claims(ws, config));
    let measurable: Vec<&StandardDef> = selected
        .iter()
        .copied()
        .filter(|s| measure_blocked || !limits.blocked.contains_key(&s.name))
        .collect();
    let components = Components {
        repo,
        snapshot: Some(&snapshot),
    };
    let plan = Plan::build(config, &measurable, &components);
    let outcomes = crate::planner::execute(
        &plan,
        runtime,
        &snapshot,
        repo.root(),
        &repo.admin_path("jobs"),
        (reuse && !force)
            .then(|| crate::evidence::Store::new(repo.shared_path("evidence")))
            .as_ref(),
        progress,
    );

    let mut standards = Vec::new();
    let mut diagnostics = limits.diagnostics.clone();
    let mut advisories = limits.advisories.clone();
    for standard in selected {
        let reading = plan.readings.iter().find(|r| r.standard == standard.name);
        let result = match (limits.blocked.get(&standard.name), reading) {
            (Some(why), _) if !measure_blocked => skipped(standard, why),
            (_, Some(reading)) => judge::judge(standard, reading, &plan, &outcomes),
            (_, None) => skipped(standard, "not planned"),
        };
        if result.measurement == Measurement::Failed || result.verdict == Some(Verdict::Regressed) {
            diagnostics.push(report::standard_diagnostic(standard, &result));
        }
        standards.push(result);
    }
    for job in &outcomes.jobs {
        if !job.ok {
            diagnostics.push(Diagnostic {
                tool: format!("job:{}", job.name),
                severity: Severity::Error,
                message: format!("{}:\n{}", job.summary(), job.output_tail),
                reproduce_cmd: job.reproduce_cmd.clone(),
                file: None,
                line: None,
            });
        }
    }

    // HEAD was pinned before measuring; if it moved, the readings describe a commit that is no
    // longer checked out, so nothing is recorded.
    let head_after = repo.head().ok().flatten();
    let mut recorded = false;
    if head_after != Some(head) {
        advisories.push(format!(
            "HEAD moved during measurement (from {} to {}); these readings describe {} and nothing was recorded.",
            short(&head.to_string()),
            head_after.map_or("nothing".to_owned(), |h| short(&h.to_string())),
            short(&head.to_string()),
        ));
    } else if !force {
        // The readings describe the pinned commit's snapshot, so an edit to the work tree
        // during measurement cannot change them: HEAD alone decides.
        let record = record::Record {
            version: record::VERSION,
            head: head.to_string(),
            values: standards
                .iter()
                .filter_map(|s| {
                    let def = config.standard(&s.name)?;
                    Some((
                        s.name.clone(),
                        record::RecordedValue {
                            value: s.value.filter(|_| {
                                matches!(s.measurement, Measurement::Measured | Measurement::Reused)
                            })?,
                            definition: def.definition_fingerprint(),
                        },
                    ))
                })
                .collect(),
            failed: standards
                .iter()
                .filter(|s| s.measurement == Measurement::Failed)
                .map(|s| s.name.clone())
                .collect(),
        };
        recorded = record::save(repo, &record).is_ok();
    }

    let read_sets = ReadSets {
        by_standard: plan
            .readings
            .iter()
            .map(|reading| {
                let executions = std::iter::once(reading.execution)
                    .chain(reading.per.as_ref().map(|p| p.0))
                    .collect();
                (reading.standard.clone(), executions)
            })
            .collect(),
        executions: outcomes
            .executions
            .into_iter()
            .map(|outcome| outcome.result.ok().map(|output| output.read_set))
            .collect(),
    };
    Ok(Measured {
        commit: head.to_string(),
        branch,
        standards,
        limits,
        counts: outcomes.counts.0,
        diagnostics,
        advisories,
        recorded,
        worktree: force,
        read_sets,
    })
}

pub fn dirty_refusal(verb: &str, dirty: &[String]) -> Envelope {
    let shown: Vec<&str> = dirty.iter().take(20).map(String::as_str).collect();
    let more = dirty.len().saturating_sub(shown.len());
    Envelope::refusal(
        verb,
        ErrorSlug::DirtyWorktree,
        format!(
            "The work tree has uncommitted changes ({}{}); measurements describe a commit, so they need a clean tree.",
            shown.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        ),
        Hint::next_step(
            HintId::CommitOrStash,
            "Commit (or stash) your changes, then run the command again; `--force` measures the work tree while authoring a Standard, but is never recorded.",
        ),
    )
}

pub fn short(id: &str) -> String {
    id.chars().take(12).collect()
}

/// The JSON of a measured batch, shared by every verb that measures.
pub fn data(measured: &Measured) -> serde_json::Value {
    json!({
        "commit": measured.commit,
        "branch": measured.branch,
        "worktree": measured.worktree,
        "recorded": measured.recorded,
        "standards": measured.standards,
        "producer_executions": measured.counts,
        "limits": measured.limits.summary,
    })
}
