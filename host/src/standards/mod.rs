//! `discern standards`: measure every selected Standard through the sandboxed producers, each
//! producer identity once, judge each reading against its limit, and refuse any limit that
//! was loosened, redefined or deleted versus the trunk.

pub mod at;
mod conflicts;
mod derived;
mod explain;
pub mod gains;
pub mod init;
mod judge;
pub mod limits;
mod measure;
pub mod pin;
pub mod reading;
pub mod record;
mod report;
mod rows;
mod swaps;
mod unmatched;

use std::collections::BTreeMap;

use serde::Serialize;

use crate::config::{Config, Direction, ProducerRef, StandardDef};
use crate::git::{Repo, short};
use crate::planner::{ComponentSource, Plan};
use crate::preflight::load_config;
use crate::preflight::{self, Cleanliness};
use crate::result::{Action, Diagnostic, Envelope, ErrorSlug, Hint, HintId};
use crate::runtime::{ProducerComponent, Runtime};
use crate::workspace::Workspace;

pub use judge::{assess, skipped};
pub use limits::{LimitsCheck, LimitsStatus, LimitsSummary, ProposalClaim};
pub use measure::measure_with;
pub use reading::{EPSILON, Verdict, pin_eligible, pin_target};

/// Where a verb finds the active proposal claims of a checkout (the caller supplies it, so that
/// measuring never calls up into `proposals`).
pub type ClaimsOf<'a> = &'a dyn Fn(&Workspace, &Config) -> Vec<ProposalClaim>;

pub const VERB: &str = "standards";
/// Readings describe a commit, and a pin commits limits: a clean tree (`--force` excepted,
/// which measures the work tree and is never recorded).
pub const CLEANLINESS: Cleanliness = Cleanliness::Full;

/// `discern standards [NAMES] [--pin] [--force] [--dry-run]` (MCP `discern_standards` with
/// `action: "measure"`).
#[derive(Debug, Clone, Default, clap::Args, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MeasureRequest {
    /// The Standards to measure (default: all).
    #[serde(default)]
    pub names: Vec<String>,
    /// Tighten the selected limits to their measured gains (value ∓ margin) in one
    /// config-only commit.
    #[arg(long)]
    #[serde(default)]
    pub pin: bool,
    /// Measure the work tree as it is, uncommitted changes included (for authoring a
    /// Standard); never recorded, never pinned.
    #[arg(long)]
    #[serde(default)]
    pub force: bool,
    /// Measure the committed HEAD afresh: no reading is reused from the evidence store, and
    /// the new readings replace what it held.
    #[arg(long)]
    #[serde(default)]
    pub fresh: bool,
    /// Preview only, writing nothing: the producers that would run for which Standards, or
    /// with pin, the limits that would be pinned.
    #[arg(long)]
    #[serde(default)]
    pub dry_run: bool,
    /// Judge every commit since REV (on the trunk: a CI push job's `before`) instead of the
    /// last landing; every limit loosened since then needs a recorded approval.
    #[arg(long, value_name = "REV")]
    #[serde(default)]
    pub baseline: Option<String>,
    /// Fail when the trunk or the history to compare with cannot be read (the default when
    /// `CI=true`).
    #[arg(long)]
    #[serde(default)]
    pub require_trunk: bool,
    /// List every finding of one Standard, grouped by file, the new ones (versus the merge
    /// base on a branch, the first parent on the trunk) marked.
    #[arg(long, value_name = "STANDARD", conflicts_with_all = ["names", "pin"])]
    #[serde(default)]
    pub explain: Option<String>,
    /// Reuse only evidence this clone measured: none another clone published (fetched by
    /// `discern sync`) or a remote cache holds.
    #[arg(long)]
    #[serde(default)]
    pub no_remote: bool,
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
    /// Who published the reused evidence, when another clone measured it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reused_evidence: Option<String>,
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
    /// The findings behind the reading, compared with the baseline's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub findings: Option<crate::findings::FindingsSummary>,
    /// Every finding, marked new or not (`--explain`); not part of the envelope.
    #[serde(skip)]
    pub explained: Vec<crate::findings::Explained>,
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

/// Resolves producers: built-ins from the binary, paths from the measured snapshot (the work
/// tree only where `origin` allows it: `--force`, listings, dry runs).
pub struct Components<'a> {
    pub repo: &'a Repo,
    pub snapshot: Option<&'a crate::snapshot::Snapshot>,
    /// Where a component may come from besides the snapshot, and how it is compiled.
    pub origin: ComponentOrigin,
}

/// Where a repository component is read from, and whether a compile-cache entry may stand for
/// it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ComponentOrigin {
    /// The measured commit's tree only (what a reading describes), compile cache allowed.
    Commit,
    /// The commit's tree only, compiled in this process (Proof, landings, proposals).
    CommitCompiledHere,
    /// The snapshot, else the work tree (`--force` while authoring, listings, dry runs).
    WorkTree,
}

impl ComponentSource for Components<'_> {
    fn component(&self, producer: &ProducerRef) -> Result<ProducerComponent, String> {
        match producer {
            ProducerRef::Builtin(name) => crate::builtins::component(name)
                .ok_or_else(|| format!("there is no built-in producer builtin:{name}")),
            ProducerRef::Path(path) => {
                let component = self.repository_component(path)?;
                Ok(match self.origin {
                    ComponentOrigin::CommitCompiledHere => component.compiled_here(),
                    _ => component,
                })
            }
        }
    }
}

impl Components<'_> {
    /// A component at `path`: from the snapshot, or (authoring only) the work tree.
    fn repository_component(&self, path: &str) -> Result<ProducerComponent, String> {
        if let Some(snapshot) = self.snapshot
            && snapshot.entry(path).is_some()
        {
            let (_, bytes) = snapshot
                .reader()
                .read(path)
                .map_err(|e| format!("cannot read the producer {path}: {e}"))?;
            return Ok(ProducerComponent::new(path.to_owned(), bytes.to_vec()));
        }
        if self.origin != ComponentOrigin::WorkTree {
            return Err(format!(
                "the producer component {path} is not in the measured commit (a component is loaded only from the commit's tree, never from the work tree); commit it, or measure the work tree with --force while you author it"
            ));
        }
        ProducerComponent::from_file(path.to_owned(), &self.repo.root().join(path)).map_err(|e| {
            format!(
                "cannot read the producer component {path}: {e}; build it, or fix `producer` (a path relative to the repository root)"
            )
        })
    }
}

/// `discern standards`: measure, or with `pin` tighten limits; flag combinations that make no
/// sense are refused before anything runs.
///
/// `claims` finds the active proposals that explain a loosened limit; it is asked after any
/// interrupted transaction is recovered and the config is read, so it sees what recovery wrote.
pub fn standards(
    ws: &Workspace,
    runtime: &Runtime,
    request: &MeasureRequest,
    claims: ClaimsOf,
    progress: &(dyn Fn(&str) + Sync),
) -> Envelope {
    if let Some(refusal) = conflicts::refusal(request) {
        return refusal;
    }
    if request.pin {
        return pin::pin(
            ws,
            runtime,
            &request.names,
            request.dry_run,
            claims,
            progress,
        );
    }
    measure(ws, runtime, request, claims, progress)
}

/// `discern standards [NAMES] [--force] [--dry-run]`, journalled for `progress`.
pub fn measure(
    ws: &Workspace,
    runtime: &Runtime,
    request: &MeasureRequest,
    claims: ClaimsOf,
    progress: &(dyn Fn(&str) + Sync),
) -> Envelope {
    if request.dry_run {
        return measure_now(ws, runtime, request, claims, progress);
    }
    let journal = crate::operations::Journal::begin(&ws.repo, VERB);
    journal.finish(measure_now(ws, runtime, request, claims, progress))
}

fn measure_now(
    ws: &Workspace,
    runtime: &Runtime,
    request: &MeasureRequest,
    claims: ClaimsOf,
    progress: &(dyn Fn(&str) + Sync),
) -> Envelope {
    // A limit transaction a crash interrupted is finished (or unwound) before anything else.
    if !request.dry_run
        && let Err(refusal) = preflight::recover(VERB, &ws.repo)
    {
        return *refusal;
    }
    // HEAD is measured whatever the work tree holds, so its committed config is the one read;
    // `--force` measures the work tree, config included.
    let loaded = match request.force {
        true => load_config(ws, VERB),
        false => preflight::load_committed_config(ws, VERB),
    };
    let config = match loaded {
        Ok(config) => config.unwrap_or_else(Config::absent),
        Err(refusal) => return *refusal,
    };
    let names = match &request.explain {
        Some(name) => std::slice::from_ref(name),
        None => request.names.as_slice(),
    };
    let selected = match select(&config, names) {
        Ok(selected) => selected,
        Err(refusal) => return *refusal,
    };
    let options = MeasureOptions {
        worktree: request.force,
        tolerate_dirty: true,
        baseline: request.baseline.clone(),
        require_trunk: request.require_trunk,
        evidence: match request.fresh {
            true => EvidenceUse::Refresh,
            false => EvidenceUse::ReuseAndRecord,
        },
        explain: request.explain.clone(),
        no_remote: request.no_remote,
        ..MeasureOptions::default()
    };
    let Ok(Some(head)) = ws.repo.head() else {
        return report::none_configured();
    };
    if request.dry_run {
        return dry_run(
            ws,
            runtime,
            &config,
            &selected,
            &options.against(ws, &config, head),
            claims,
        );
    }
    let claims = claims(ws, &config);
    match measure_with(ws, runtime, &config, &selected, &options, &claims, progress) {
        // No Standard left where the baseline had some is deletion, never "nothing to do".
        Ok(measured)
            if config.standards.is_empty()
                && !measured.limits.blocking()
                && measured.limits.protected.is_empty() =>
        {
            let mut envelope = report::none_configured();
            envelope.advisories.extend(measured.advisories);
            envelope
        }
        Ok(measured) => match &request.explain {
            Some(name) => explain::explain(&measured, name),
            None => report::measured(&config, &measured, request.force),
        },
        Err(refusal) => *refusal,
    }
}

/// What a measurement would run, and the limits check it would start with; nothing runs.
fn dry_run(
    ws: &Workspace,
    runtime: &Runtime,
    config: &Config,
    selected: &[&StandardDef],
    against: &limits::Against,
    claims: ClaimsOf,
) -> Envelope {
    let limits = limits::check(&ws.repo, config, against, &claims(ws, config));
    let measurable: Vec<&StandardDef> = selected
        .iter()
        .copied()
        .filter(|s| !limits.blocked.contains_key(&s.name))
        .collect();
    let plan = Plan::build(
        config,
        &measurable,
        &Components {
            repo: &ws.repo,
            snapshot: None,
            origin: ComponentOrigin::WorkTree,
        },
    );
    if let Err(refusal) = measure::component_configs(config, &plan, runtime) {
        return *refusal;
    }
    let mut envelope = report::dry_run(config, selected, &plan, &limits);
    envelope
        .advisories
        .extend(preflight::pending_transaction(&ws.repo));
    envelope
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
            ErrorSlug::UnknownStandard,
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
                "Name configured Standards, or measure them all",
            )
            .with_action(Action::new("standards")),
        )));
    }
    Ok(config
        .standards
        .iter()
        .filter(|s| names.is_empty() || names.contains(&s.name))
        .collect())
}

/// How a batch is measured: the choices that change behaviour (gitoxide's `Options`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MeasureOptions {
    /// The trunk to judge against instead of the effective one (the gate passes its own, so
    /// `DISCERN_TRUNK` never changes what Proof trusts).
    pub trunk: Option<String>,
    /// `--baseline REV`: judge the limits of every commit since `REV`.
    pub baseline: Option<String>,
    /// `--require-trunk`: a trunk or history that cannot be read fails the run.
    pub require_trunk: bool,
    /// Measure the work tree as it is (`--force`): never recorded, never reused.
    pub worktree: bool,
    /// Measure the committed HEAD even when the work tree has uncommitted changes (they are
    /// named in an advisory); Proof, pins and proposals need a clean tree and leave it false.
    pub tolerate_dirty: bool,
    /// Measure Standards the never-loosen check blocks too (a stale proposal's renewal must
    /// see the value its loosened limit was set to).
    pub measure_blocked: bool,
    /// What evidence may do: be reused and recorded, only be reused, or neither (a proposal
    /// measures fresh).
    pub evidence: EvidenceUse,
    /// Whether this is a dry run: no job runs, no evidence or reading is recorded, nothing is
    /// written anywhere.
    pub dry_run: bool,
    /// `--explain NAME`: the one Standard whose every finding is kept in its result (the others
    /// keep the first few a failing row shows).
    pub explain: Option<String>,
    /// `--no-remote`: reuse only evidence this clone measured, none another clone published.
    pub no_remote: bool,
}

impl MeasureOptions {
    /// What HEAD's limits are compared with, as these options and the settings say.
    pub fn against(&self, ws: &Workspace, config: &Config, head: gix::ObjectId) -> limits::Against {
        let mut against = limits::Against::new(ws, config, head);
        if let Some(trunk) = &self.trunk {
            against.trunk = trunk.clone();
        }
        against.baseline = self.baseline.clone();
        against.require_trunk |= self.require_trunk;
        against
    }
}

/// What a measurement may do with the evidence store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvidenceUse {
    ReuseAndRecord,
    ReuseOnly,
    /// Measure afresh and record nothing (a proposal).
    Fresh,
    /// Measure afresh and record the new readings (`standards --fresh`).
    Refresh,
    /// The gate's Proof and a landing: trust nothing an agent with a shell can write — no
    /// evidence read (for HEAD or the baseline), user components compiled in this process (no
    /// compile-cache entry loaded) — and record the new readings for later runs.
    Proof,
}

impl EvidenceUse {
    /// Whether a user component may be loaded from the per-user compile cache.
    pub fn trusts_compile_cache(self) -> bool {
        !matches!(self, EvidenceUse::Proof | EvidenceUse::Fresh)
    }
}

impl Default for MeasureOptions {
    fn default() -> Self {
        Self {
            trunk: None,
            baseline: None,
            require_trunk: false,
            worktree: false,
            tolerate_dirty: false,
            measure_blocked: false,
            evidence: EvidenceUse::ReuseAndRecord,
            dry_run: false,
            explain: None,
            no_remote: false,
        }
    }
}

/// `data` of a measured batch, shared by every verb that measures.
#[derive(Debug, Serialize)]
pub struct MeasuredData<'a> {
    pub commit: &'a str,
    pub branch: &'a Option<String>,
    pub worktree: bool,
    pub recorded: bool,
    pub standards: &'a [StandardResult],
    pub producer_executions: &'a BTreeMap<String, u32>,
    pub limits: &'a LimitsSummary,
}

impl<'a> MeasuredData<'a> {
    pub fn of(measured: &'a Measured) -> Self {
        Self {
            commit: &measured.commit,
            branch: &measured.branch,
            worktree: measured.worktree,
            recorded: measured.recorded,
            standards: &measured.standards,
            producer_executions: &measured.counts,
            limits: &measured.limits.summary,
        }
    }
}

/// `data` of a measured batch as JSON.
pub fn data(measured: &Measured) -> serde_json::Value {
    serde_json::to_value(MeasuredData::of(measured)).unwrap_or(serde_json::Value::Null)
}
