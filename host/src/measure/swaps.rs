//! Each reading's findings compared with the baseline's — the merge base with the trunk on a
//! branch, the first parent on the trunk, `--baseline REV` when given — and the swap check: a
//! `down` Standard without `per`, whose value counts its findings, fails as `swapped` when new
//! findings would breach its limit but fixed ones held the count.
//!
//! The baseline is measured by the same executions (same identities) against its snapshot,
//! through the evidence store, so it costs nothing once recorded. A reading that needs a job
//! has no baseline (the job ran on HEAD only); neither has one in a clone that lacks the
//! baseline commit. Then `baseline` is null and the note says why: never a guess.

use std::borrow::Cow;
use std::collections::BTreeMap;

use gix::ObjectId;

use super::WHY_SHOWN;
use super::limits::BaselineKind;
use super::{LimitsCheck, Measurement, StandardResult, Verdict};
use crate::config::{Direction, FindingsMode, StandardDef};
use crate::evidence::Store;
use crate::evidence::findings::Of;
use crate::findings::{self, Explained, FindingsSummary, Renames, SHOWN, SwapCheck};
use crate::git::{Repo, short};
use crate::planner::{ExecutionOutcome, Outcomes, Plan, Reading, Wave};
use crate::runtime::{Finding, Metric, Runtime};

/// What the comparison needs from the measurement.
pub(super) struct Batch<'a> {
    pub repo: &'a Repo,
    pub runtime: &'a Runtime,
    pub plan: &'a Plan,
    pub outcomes: &'a Outcomes,
    /// What HEAD's executions read (a baseline may be derived from it, `derived.rs`).
    pub snapshot: &'a crate::snapshot::Snapshot,
    pub limits: &'a LimitsCheck,
    /// HEAD, or `None` for a work-tree measurement.
    pub head: Option<ObjectId>,
    pub head_commit: ObjectId,
    pub evidence: Option<Store>,
    /// `--explain NAME`: the Standard that keeps every finding in its result.
    pub explain: Option<&'a str>,
    pub progress: &'a (dyn Fn(&str) + Sync),
}

/// The baseline's metrics per execution index, or why an execution has none.
type BaseOutputs<'a> = BTreeMap<usize, Result<BaseMetrics<'a>, String>>;

/// One execution's metrics on the baseline.
enum BaseMetrics<'a> {
    /// HEAD's own reading: the evidence it was reused from is valid on the baseline too.
    Head,
    /// Its own.
    Own(Cow<'a, [Metric]>),
}

/// The baseline the findings are compared with: its commit (`None`: HEAD is the first
/// commit), its snapshot when it can be read, and the readings measured there.
type Compared<'a> = (
    Option<ObjectId>,
    Option<crate::snapshot::Snapshot>,
    BaseOutputs<'a>,
);

/// The baseline commit (`None`: HEAD is the first commit) and one reading's metrics there.
type Base<'a> = (Option<ObjectId>, Result<&'a [Metric], String>);

/// Give every reading with findings its comparison; a swap becomes the verdict `swapped`.
/// Returns the batch's advisories (no baseline, renames unreadable).
pub(super) fn attach(
    batch: &Batch,
    selected: &[&StandardDef],
    standards: &mut [StandardResult],
) -> Vec<String> {
    // Readings with findings, and regressed ones without `per`: a breach the baseline has
    // too, under the same producer, is not this branch's (see `inherited`).
    let regressed = |reading: &Reading| {
        standards
            .iter()
            .any(|s| s.name == reading.standard && s.verdict == Some(Verdict::Regressed))
            && selected
                .iter()
                .any(|d| d.name == reading.standard && d.per.is_none())
    };
    // Only the readings of `selected`: the plan may hold others (measured apart, e.g. after
    // the jobs, `engine.rs`).
    let with_findings: Vec<(&Reading, &Metric)> = batch
        .plan
        .readings
        .iter()
        .filter(|reading| selected.iter().any(|s| s.name == reading.standard))
        .filter_map(|reading| Some((reading, head_metric(batch, reading)?)))
        .filter(|(r, m)| has_findings(&batch.outcomes.executions[r.execution], m) || regressed(r))
        .collect();
    if with_findings.is_empty() {
        return Vec::new();
    }
    let mut advisories = Vec::new();
    let compared = compared_with(batch, &with_findings, &mut advisories);
    // The paths that differ between the baseline's tree and the one measured, read once: the
    // renames and every reading's comparison start from them.
    let changed = match &compared {
        Some((Some(base), Some(_), _)) => batch.snapshot.changed_since(&base.to_string()),
        _ => None,
    };
    let renames = renames_of(
        batch,
        compared.as_ref(),
        changed.as_deref(),
        &mut advisories,
    );
    let comparing = Comparing {
        repo: batch.repo,
        head: batch.snapshot,
        base: compared
            .as_ref()
            .and_then(|(_, snapshot, _)| snapshot.as_ref()),
        renames,
        changed: changed.as_deref(),
    };
    let mut rebaselines = Vec::new();
    for (reading, metric) in with_findings {
        let Some(result) = standards.iter_mut().find(|s| s.name == reading.standard) else {
            continue;
        };
        let Some(standard) = selected.iter().find(|s| s.name == reading.standard) else {
            continue;
        };
        let outcome = &batch.outcomes.executions[reading.execution];
        let base = compared
            .as_ref()
            .map(|(base, _, outputs)| reading_base(batch, reading, *base, outputs));
        let values = base.as_ref().map(|base| base_values(outcome, base));
        if let Some((why, rebaseline)) =
            inherited(batch, standard, result, reading, values.as_ref())
        {
            advisories.push(why);
            rebaselines.push(rebaseline);
        }
        if has_findings(outcome, metric) {
            let keep_all = batch.explain == Some(standard.name.as_str());
            let compare = Compare {
                standard,
                reading,
                metric,
                outcome,
                keep_all,
            };
            compare_reading(&compare, result, base, &comparing);
        }
    }
    advisories.extend(rebaseline_all(&rebaselines));
    advisories
}

/// The baseline the findings are compared with (its commit, its snapshot when readable, and
/// its readings), `None` (with the advisory why) when it cannot be told.
fn compared_with<'a>(
    batch: &Batch<'a>,
    with_findings: &[(&Reading, &Metric)],
    advisories: &mut Vec<String>,
) -> Option<Compared<'a>> {
    match baseline_commit(batch) {
        Ok(Some(base)) => {
            let snapshot = batch.snapshot.nearby(base).map_err(|e| {
                format!(
                    "the baseline {} cannot be read: {e}",
                    short(&base.to_string())
                )
            });
            let outputs = measure_baseline(batch, base, &snapshot, with_findings);
            Some((Some(base), snapshot.ok(), outputs))
        }
        // The first commit: nothing came before it, so every finding is new.
        Ok(None) => Some((None, None, root_outputs(with_findings))),
        Err(why) => {
            advisories.push(format!(
                "Findings were not compared with a baseline: {why}."
            ));
            None
        }
    }
}

/// The renames since the baseline, or why they cannot be read (also an advisory: findings in
/// renamed files are then not compared).
fn renames_of(
    batch: &Batch,
    compared: Option<&Compared<'_>>,
    changed: Option<&[String]>,
    advisories: &mut Vec<String>,
) -> Result<Renames, String> {
    let Some((Some(base), snapshot, _)) = compared else {
        return Ok(Renames::default());
    };
    renames_since(batch, *base, snapshot.as_ref().zip(changed)).inspect_err(|why| {
        advisories.push(format!("Renames since the baseline cannot be read ({why}); findings in renamed files are not compared."));
    })
}

/// One command that re-baselines every inherited breach in one config-only commit, when there
/// are several: the proposal batch (ADR 0405) on standard input.
fn rebaseline_all(rebaselines: &[serde_json::Value]) -> Option<String> {
    if rebaselines.len() < 2 {
        return None;
    }
    let batch = serde_json::Value::Array(rebaselines.to_vec()).to_string();
    Some(format!(
        "{} Standards inherit their breach; the owner re-baselines them all in one config-only commit from an effort: `echo '{}' | discern standards propose --batch -`, then `discern approve` and `discern accept`.",
        rebaselines.len(),
        batch.replace('\'', r"'\''"),
    ))
}

/// Whether `metric` of `outcome` has findings to compare (a counted one always does).
fn has_findings(outcome: &ExecutionOutcome, metric: &Metric) -> bool {
    let (kept, dropped) = match outcome.kept(&metric.name) {
        Some(of) => (of.len(), of.dropped()),
        None => (metric.findings.len(), metric.findings_dropped),
    };
    metric.counted || kept > 0 || dropped > 0
}

/// A breach the baseline has too, measured by the same producer, and no worse here: not this
/// branch's doing (a producer whose reading moved in a new version, or a trunk that already
/// breached). The verdict becomes `inherited` (not failing), and the advisory names the
/// producer and the owner's way to re-baseline the limit; with it, that limit's entry of a
/// proposal batch (`{"name", "reason"}`).
fn inherited(
    batch: &Batch,
    standard: &StandardDef,
    result: &mut StandardResult,
    reading: &Reading,
    base: Option<&Base>,
) -> Option<(String, serde_json::Value)> {
    // Only a branch inherits: the trunk holds its own limits, so a merge base that breaches
    // under this producer means the producer's reading moved (or the trunk broke). On the trunk
    // a breach is always a regression, or one commit after it would pass.
    let on_branch = batch.limits.summary.baseline_kind == Some(BaselineKind::MergeBase);
    if result.verdict != Some(Verdict::Regressed) || standard.per.is_some() || !on_branch {
        return None;
    }
    let (base, Ok(metrics)) = base? else {
        return None;
    };
    let base_value = metrics.iter().find(|m| m.name == reading.metric)?.value;
    let value = result.value?;
    let (direction, limit) = (standard.direction, standard.limit);
    if Verdict::judge(direction, limit, base_value) != Verdict::Regressed
        || Verdict::judge(direction, base_value, value) == Verdict::Regressed
    {
        return None;
    }
    let producer = producer_version(batch, reading);
    let base = base.map_or("(none: the first commit)".to_owned(), |b| {
        short(&b.to_string())
    });
    result.verdict = Some(Verdict::Inherited);
    result.note = Some(format!(
        "{value} {} breaches the {} {limit}, as the baseline {base} does ({base_value}) under the same producer {producer}: not this branch's doing",
        standard.metric,
        direction.bound(),
    ));
    let reason = format!("{producer} reads {base_value} at {base}");
    let advisory = format!(
        "Standard {}: the baseline {base} breaches its {} {limit} too ({base_value} under {producer}), so the breach is inherited: the producer's reading moved (see the release notes) or the trunk already breached. The owner re-baselines it in one config-only commit from an effort: `discern standards propose {} --reason \"{reason}\"`, then `discern approve` and `discern accept`.",
        standard.name,
        direction.bound(),
        standard.name,
    );
    let entry = serde_json::json!({ "name": standard.name, "reason": reason });
    Some((advisory, entry))
}

/// `builtin:pattern 0.2.0`: the producer and the version its `describe()` declares.
fn producer_version(batch: &Batch, reading: &Reading) -> String {
    let execution = &batch.plan.executions[reading.execution];
    let version = execution
        .component
        .as_ref()
        .ok()
        .and_then(|c| batch.runtime.describe(c).ok())
        .map(|info| info.version);
    match version {
        Some(version) => format!("{} {version}", execution.producer),
        None => execution.producer.clone(),
    }
}

/// The metric a reading reads, from HEAD's execution, if it ran. A reused execution's findings
/// are not in it ([`ExecutionOutcome::metrics`] has them).
fn head_metric<'a>(batch: &'a Batch, reading: &Reading) -> Option<&'a Metric> {
    let output = batch.outcomes.executions[reading.execution]
        .result
        .as_ref()
        .ok()?;
    output.metrics.iter().find(|m| m.name == reading.metric)
}

fn no_baseline_reason(batch: &Batch, reading: &Reading) -> String {
    let execution = &batch.plan.executions[reading.execution];
    match execution.needs.as_slice() {
        [] => "the baseline was not measured".to_owned(),
        needs => format!(
            "this reading needs job {}, which ran on this commit only",
            needs.join(", ")
        ),
    }
}

/// What the first commit is compared with: nothing, for every execution.
fn root_outputs<'a>(readings: &[(&Reading, &Metric)]) -> BaseOutputs<'a> {
    readings
        .iter()
        .map(|(r, _)| (r.execution, Ok(BaseMetrics::Own(Cow::Borrowed(&[][..])))))
        .collect()
}

/// The commit findings are compared with (`None`: HEAD is the first commit, there is nothing
/// before it), or why there is none.
fn baseline_commit(batch: &Batch) -> Result<Option<ObjectId>, String> {
    let summary = &batch.limits.summary;
    let Some(trunk) = &summary.trunk_commit else {
        return Err(summary
            .reason
            .clone()
            .unwrap_or_else(|| "the trunk cannot be read".to_owned()));
    };
    let on_trunk = batch.head == Some(batch.head_commit) && trunk == &batch.head_commit.to_string();
    let given = summary.baseline_kind == Some(BaselineKind::Given);
    // A required trunk check without --baseline fails as unverified and names the one fix;
    // the findings wait for the same baseline instead of asking for history of their own.
    if on_trunk && !given && summary.status == super::LimitsStatus::Unverified {
        return Err("they wait for the baseline the limits check asks for".to_owned());
    }
    if on_trunk && !given {
        return first_parent(batch.repo, batch.head_commit);
    }
    match (&summary.baseline, summary.baseline_kind) {
        (Some(base), Some(BaselineKind::MergeBase | BaselineKind::Given)) => base
            .parse()
            .map(Some)
            .map_err(|_| format!("the baseline {base} is not a commit id")),
        _ => Err(summary
            .reason
            .clone()
            .unwrap_or_else(|| "there is no merge base with the trunk in this clone".to_owned())),
    }
}

fn first_parent(repo: &Repo, head: ObjectId) -> Result<Option<ObjectId>, String> {
    match repo.first_parent(head) {
        Ok(Some(parent)) => Ok(Some(parent)),
        Ok(None) if repo.parent_missing(head) => Err(
            "this shallow clone lacks HEAD's parent (fetch more history: `git fetch --deepen=1`)"
                .to_owned(),
        ),
        Ok(None) => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

/// The renames from `base` to the snapshot measured (HEAD's tree, or the work tree's). A
/// rename is a path the baseline has and the snapshot lacks paired with one the snapshot adds:
/// where the trees' diff (`changed`, with the baseline's snapshot) has no such pair, there is
/// none, and git is not asked.
fn renames_since(
    batch: &Batch,
    base: ObjectId,
    changed: Option<(&crate::snapshot::Snapshot, &[String])>,
) -> Result<Renames, String> {
    if let Some((old, changed)) = changed {
        let added = changed.iter().any(|path| old.entry(path).is_none());
        let deleted = changed
            .iter()
            .any(|path| batch.snapshot.entry(path).is_none());
        if !(added && deleted) {
            return Ok(Renames::default());
        }
    }
    findings::renames(batch.repo, base, batch.snapshot.tree()).map_err(|e| e.to_string())
}

/// Measure the executions behind `readings` that need no job on `base`'s snapshot.
fn measure_baseline<'a>(
    batch: &Batch<'a>,
    base: ObjectId,
    snapshot: &Result<crate::snapshot::Snapshot, String>,
    readings: &[(&Reading, &Metric)],
) -> BaseOutputs<'a> {
    let mut indices: Vec<usize> = readings
        .iter()
        .map(|(r, _)| r.execution)
        .filter(|&i| batch.plan.executions[i].needs.is_empty())
        .collect();
    indices.sort_unstable();
    indices.dedup();
    if indices.is_empty() {
        return BaseOutputs::new();
    }
    let snapshot = match snapshot {
        Ok(snapshot) => snapshot,
        Err(why) => return indices.into_iter().map(|i| (i, Err(why.clone()))).collect(),
    };
    // HEAD's own reading where the evidence it was reused from is valid on the baseline too
    // (nothing it read changed: the same reading, read back for nothing), then a reading
    // derived from HEAD's (it reads only the files that differ), then recorded evidence (which
    // reads the whole reading back), then a whole run (which looks the evidence up itself: a
    // producer that cannot be derived goes there first).
    let evidence = batch.evidence.as_ref();
    let mut outputs = BaseOutputs::new();
    let mut whole = Vec::new();
    for i in indices {
        if shared_with_head(batch, i, snapshot) {
            outputs.insert(i, Ok(BaseMetrics::Head));
            continue;
        }
        let execution = &batch.plan.executions[i];
        if !super::derived::applies(execution) {
            whole.push(i);
            continue;
        }
        let derived = batch.outcomes.executions[i]
            .metrics()
            .ok()
            .and_then(|head| {
                super::derived::derive(batch.runtime, execution, batch.snapshot, head, snapshot)
            });
        let recorded = || {
            let outcome = crate::planner::reuse(execution, batch.runtime, snapshot, evidence)?;
            outcome.into_metrics().ok()
        };
        match derived.or_else(recorded) {
            Some(metrics) => {
                outputs.insert(i, Ok(BaseMetrics::Own(Cow::Owned(metrics))));
            }
            None => whole.push(i),
        }
    }
    if !whole.is_empty() {
        outputs.extend(measure_whole(batch, base, snapshot, whole));
    }
    outputs
}

/// Whether HEAD's execution `i` was reused from evidence that the baseline store would serve
/// on the baseline's `snapshot` as well: then the baseline's reading is HEAD's.
fn shared_with_head(batch: &Batch, i: usize, snapshot: &crate::snapshot::Snapshot) -> bool {
    let outcome = &batch.outcomes.executions[i];
    let (Some(entry), Some(store)) = (&outcome.evidence, &batch.evidence) else {
        return false;
    };
    outcome.result.is_ok() && store.serves(entry, snapshot)
}

/// Measure the executions `indices` on the baseline's `snapshot`, recording their evidence.
fn measure_whole<'a>(
    batch: &Batch,
    base: ObjectId,
    snapshot: &crate::snapshot::Snapshot,
    indices: Vec<usize>,
) -> BaseOutputs<'a> {
    let sub = Plan {
        executions: indices
            .iter()
            .map(|&i| batch.plan.executions[i].clone())
            .collect(),
        readings: Vec::new(),
        jobs: Vec::new(),
    };
    let progress =
        |step: &str| (batch.progress)(&format!("baseline {}: {step}", short(&base.to_string())));
    let outcomes = crate::planner::execute(
        &sub,
        batch.runtime,
        snapshot,
        batch.repo.root(),
        None,
        batch.evidence.as_ref(),
        &progress,
    );
    if let Some(store) = &batch.evidence {
        crate::planner::save_evidence(&sub, &outcomes, store, snapshot, Wave::BeforeJobs);
    }
    indices
        .into_iter()
        .zip(outcomes.executions)
        .map(|(i, outcome)| {
            let metrics = outcome
                .into_metrics()
                .map(|metrics| BaseMetrics::Own(Cow::Owned(metrics)))
                .map_err(|e| format!("the baseline measurement failed: {e}"));
            (i, metrics)
        })
        .collect()
}

/// What every reading's comparison shares: the two snapshots and the renames between them.
struct Comparing<'a> {
    repo: &'a Repo,
    /// The snapshot measured.
    head: &'a crate::snapshot::Snapshot,
    /// The baseline's snapshot; `None` on the first commit or when it cannot be read.
    base: Option<&'a crate::snapshot::Snapshot>,
    renames: Result<Renames, String>,
    /// The paths that differ between the two trees, sorted (`None`: not known).
    changed: Option<&'a [String]>,
}

impl<'a> Comparing<'a> {
    /// What a reading's findings are compared with, under `renames`.
    fn baseline(&self, renames: &'a Renames) -> findings::Baseline<'a> {
        findings::Baseline {
            repo: self.repo,
            head: self.head,
            snapshot: self.base,
            renames,
            changed: self.changed,
        }
    }

    /// Whether this commit's file `path` (blob `blob`) need not be read to be compared: it is
    /// unchanged since the baseline (paired by line alone), or there is nothing to compare with.
    fn unread(&self, path: &str, blob: ObjectId) -> bool {
        match (self.base, &self.renames) {
            (Some(base), Ok(renames)) => {
                let old = renames.old_path(path).unwrap_or(path);
                base.entry(old).is_some_and(|e| e.id == blob)
            }
            _ => true,
        }
    }
}

/// The baseline's reading is HEAD's own ([`BaseMetrics::Head`]).
struct Shared;

/// One reading's baseline as `attach` finds it: the commit, and its metrics (HEAD's own, or
/// its own, or why there are none).
type ReadingBase<'a> = (
    Option<ObjectId>,
    Result<Result<&'a [Metric], String>, Shared>,
);

/// `reading`'s baseline at `commit`, from the baseline's `outputs`.
fn reading_base<'o>(
    batch: &Batch,
    reading: &Reading,
    commit: Option<ObjectId>,
    outputs: &'o BaseOutputs,
) -> ReadingBase<'o> {
    let metrics = match outputs.get(&reading.execution) {
        Some(Ok(BaseMetrics::Head)) => Err(Shared),
        Some(Ok(BaseMetrics::Own(metrics))) => Ok(Ok(metrics.as_ref())),
        Some(Err(why)) => Ok(Err(why.clone())),
        None => Ok(Err(no_baseline_reason(batch, reading))),
    };
    (commit, metrics)
}

/// The baseline's values (its findings may be left out): HEAD's (`outcome`'s) where the
/// reading is HEAD's own.
fn base_values<'a>(outcome: &'a ExecutionOutcome, base: &ReadingBase<'a>) -> Base<'a> {
    let values = match &base.1 {
        Err(Shared) => outcome
            .result
            .as_ref()
            .map(|o| o.metrics.as_slice())
            .map_err(Clone::clone),
        Ok(metrics) => metrics.clone(),
    };
    (base.0, values)
}

/// One reading to compare with its baseline.
struct Compare<'a> {
    standard: &'a StandardDef,
    reading: &'a Reading,
    /// HEAD's metric (a reused execution's findings are in `outcome`, still encoded).
    metric: &'a Metric,
    outcome: &'a ExecutionOutcome,
    /// `--explain` of this Standard: every finding goes into the result.
    keep_all: bool,
}

/// One reading's comparison: from the findings shown alone where the baseline's reading is
/// HEAD's own and no finding is on a file the change touched ([`compare_unchanged`]), else
/// with every finding ([`compare_one`]).
fn compare_reading(
    compare: &Compare,
    result: &mut StandardResult,
    base: Option<ReadingBase>,
    comparing: &Comparing,
) {
    let name = &compare.reading.metric;
    if let (Some((Some(commit), Err(Shared))), Some(of), false) =
        (&base, compare.outcome.kept(name), compare.keep_all)
        && compare_unchanged(compare, result, (*commit, of), comparing)
    {
        return;
    }
    let metrics = match compare.outcome.metrics() {
        Ok(metrics) => metrics,
        Err(why) => return unreadable(compare, result, why),
    };
    let Some(metric) = metrics.iter().find(|m| &m.name == name) else {
        return unreadable(
            compare,
            result,
            format!("no metric {name} among the findings"),
        );
    };
    let base = base.map(|(commit, base)| (commit, base.unwrap_or(Ok(metrics))));
    let reading = (compare.reading, metric, compare.keep_all);
    compare_one(compare.standard, result, reading, base, comparing);
}

/// The comparison of a reading whose baseline (`commit`) reads HEAD's own reused reading,
/// when no finding (`of`, still encoded) is on a file the change touched: every finding pairs
/// with itself, nothing is new or fixed — what [`compare_one`] finds —, and only the findings
/// a result shows are decoded and placed. `false` when that cannot be told (the caller then
/// compares every finding).
fn compare_unchanged(
    compare: &Compare,
    result: &mut StandardResult,
    (commit, of): (ObjectId, Of),
    comparing: &Comparing,
) -> bool {
    let Ok(renames) = &comparing.renames else {
        return false;
    };
    let baseline = comparing.baseline(renames);
    let Some(mut same) = findings::same_files(&baseline) else {
        return false;
    };
    if !of.every_path(|path| path.is_none_or(&mut same)) {
        return false;
    }
    let Some(shown) = of.first(WHY_SHOWN) else {
        return false;
    };
    let mut read = findings::ReadLines::default();
    let unread = |path: &str, blob| comparing.unread(path, blob);
    let mut places = findings::places(comparing.head, &shown, &mut read, &unread);
    let all: Vec<usize> = (0..shown.len()).collect();
    findings::complete(comparing.head, (&shown, &mut places[..]), &all, &mut read);
    let ids = findings::Fingerprints::new(&shown, &places);
    let explained = (0..shown.len())
        .map(|i| Explained {
            finding: identified(&shown[i], ids.get(i)),
            new: Some(false),
        })
        .collect();
    let metric = compare.metric;
    let mut summary = FindingsSummary {
        total: of.len(),
        dropped: of.dropped(),
        new_total: Some(0),
        fixed_total: Some(0),
        new: Vec::new(),
        fixed: Vec::new(),
        baseline: Some(commit.to_string()),
        swap_check: None,
        note: None,
    };
    // The baseline's list is this one: complete exactly when this one is.
    let complete = of.dropped() == 0 && of.len() as f64 == metric.value;
    if metric.counted {
        swap_check(compare.standard, result, &mut summary, complete);
    }
    result.findings = Some(summary);
    result.explained = explained;
    true
}

/// A reading whose findings cannot be read back: counted, never compared, no swap ruled out.
fn unreadable(compare: &Compare, result: &mut StandardResult, why: String) {
    let (total, dropped) = compare
        .outcome
        .kept(&compare.metric.name)
        .map_or((0, 0), |of| (of.len(), of.dropped()));
    let mut summary = FindingsSummary {
        total,
        dropped,
        new_total: None,
        fixed_total: None,
        new: Vec::new(),
        fixed: Vec::new(),
        baseline: None,
        swap_check: None,
        note: Some(why),
    };
    if compare.metric.counted {
        swap_check(compare.standard, result, &mut summary, false);
    }
    result.findings = Some(summary);
    result.explained = Vec::new();
}

/// One reading's comparison, and its swap check where it applies.
/// `keep_all`: every finding goes into the result's `explained` (for `--explain`), else the
/// first few a failing row shows. Every finding shown carries the host's fingerprint
/// (`findings/identity.rs`).
fn compare_one(
    standard: &StandardDef,
    result: &mut StandardResult,
    (reading, metric, keep_all): (&Reading, &Metric, bool),
    base: Option<Base>,
    comparing: &Comparing,
) {
    let kept = if keep_all { usize::MAX } else { WHY_SHOWN };
    let shown_first = 0..metric.findings.len().min(kept);
    // Findings the baseline shares on files the change left alone pair with themselves: only
    // those shown and those on the files it touched need a place (the others' are never read).
    let touched = touched(reading, metric, base.as_ref(), comparing);
    let placed = to_place(metric.findings.len(), shown_first.clone(), touched.as_ref());
    let mut read = findings::ReadLines::default();
    let mut head_places = findings::places_at(
        comparing.head,
        (&metric.findings, &placed),
        &mut read,
        &|path, blob| comparing.unread(path, blob),
    );
    let head = findings::Side {
        findings: &metric.findings,
        places: &head_places,
    };
    let (compared, base_complete) = against_baseline(
        reading,
        (head, &mut read),
        (base, touched.as_ref()),
        comparing,
    );
    let complete = base_complete
        && metric.counted
        && metric.findings_dropped == 0
        && metric.findings.len() as f64 == metric.value;
    // Only the findings shown are fingerprinted: their lines are read now if they were not.
    let new = compared
        .as_ref()
        .map_or(&[][..], |a| &a.compared.diff.new[..]);
    let shown: Vec<usize> = shown_first
        .clone()
        .chain(new.iter().copied().take(SHOWN))
        .collect();
    let sides = (&metric.findings[..], &mut head_places[..]);
    findings::complete(comparing.head, sides, &shown, &mut read);
    let head_ids = findings::Fingerprints::new(&metric.findings, &head_places);
    let mut explained: Vec<Explained> = shown_first
        .map(|i| Explained {
            finding: identified(&metric.findings[i], head_ids.get(i)),
            new: None,
        })
        .collect();
    let mut summary = FindingsSummary {
        total: metric.findings.len(),
        dropped: metric.findings_dropped,
        new_total: None,
        fixed_total: None,
        new: Vec::new(),
        fixed: Vec::new(),
        baseline: None,
        swap_check: None,
        note: None,
    };
    match compared {
        Ok(against) => {
            let shown = (&mut summary, &mut explained);
            show_against(shown, against, (metric, &head_ids), comparing, &mut read);
        }
        Err(why) => summary.note = Some(why),
    }
    if metric.counted {
        swap_check(standard, result, &mut summary, complete);
    }
    result.findings = Some(summary);
    result.explained = explained;
}

/// The comparison `against` the baseline in `summary` and `explained`: the new and fixed
/// findings shown, each fingerprinted (the fixed ones' lines read now if they were not).
fn show_against(
    (summary, explained): (&mut FindingsSummary, &mut Vec<Explained>),
    mut against: Against,
    (metric, head_ids): (&Metric, &findings::Fingerprints),
    comparing: &Comparing,
    read: &mut findings::ReadLines,
) {
    if let Some(snapshot) = comparing.base {
        let fixed: Vec<usize> = against
            .compared
            .diff
            .fixed
            .iter()
            .copied()
            .take(SHOWN)
            .collect();
        let sides = (against.base, &mut against.compared.base_places[..]);
        findings::complete(snapshot, sides, &fixed, read);
    }
    let base_ids = findings::Fingerprints::new(against.base, &against.compared.base_places);
    show(
        summary,
        explained,
        &against.compared.diff,
        (metric, against.base),
        (head_ids, &base_ids),
    );
    summary.baseline = against.commit.map(|b| b.to_string());
    if against.commit.is_none() {
        summary.note = Some("the first commit: nothing came before it".to_owned());
    }
}

/// The indices of this commit's findings (`len` of them) that need a place: those shown and
/// those the change may have touched, or all when that is not known.
fn to_place(
    len: usize,
    shown: std::ops::Range<usize>,
    touched: Option<&findings::Touched>,
) -> Vec<usize> {
    let Some(touched) = touched else {
        return (0..len).collect();
    };
    let mut placed: Vec<usize> = shown.chain(touched.head.iter().copied()).collect();
    placed.sort_unstable();
    placed.dedup();
    placed
}

/// The findings of `metric` and of the baseline's (`base`) that the change may have touched
/// (`findings::touched`): the others pair with themselves. `None`: every finding takes part.
fn touched(
    reading: &Reading,
    metric: &Metric,
    base: Option<&Base>,
    comparing: &Comparing,
) -> Option<findings::Touched> {
    let (Some((_, Ok(metrics))), Ok(renames)) = (base, &comparing.renames) else {
        return None;
    };
    let base_findings = metrics
        .iter()
        .find(|m| m.name == reading.metric)
        .map_or(&[][..], |m| m.findings.as_slice());
    let baseline = comparing.baseline(renames);
    // The same list, and every file it names unchanged (HEAD's own reading shared with the
    // baseline is the common case): nothing takes part, and nothing is split.
    if findings::untouched(&baseline, &metric.findings, base_findings) {
        return Some(findings::Touched {
            head: Vec::new(),
            base: Vec::new(),
        });
    }
    findings::touched(&baseline, &metric.findings, base_findings)
}

/// One reading's findings compared with the baseline's.
struct Against<'m> {
    /// The baseline commit; `None` on the first commit.
    commit: Option<ObjectId>,
    compared: findings::Compared,
    /// The baseline's findings.
    base: &'m [Finding],
}

/// `head` compared with the baseline's findings of the same reading, or why it cannot be; and
/// whether the comparison may rule a swap out (`false` when the baseline's list was cut, or the
/// baseline or the renames could not be read).
fn against_baseline<'m>(
    reading: &Reading,
    (head, read): (findings::Side, &mut findings::ReadLines),
    (base, touched): (Option<Base<'m>>, Option<&findings::Touched>),
    comparing: &Comparing,
) -> (Result<Against<'m>, String>, bool) {
    let (commit, base_metrics, renames) = match (base, &comparing.renames) {
        (None, _) => return (Err("no baseline to compare with".to_owned()), true),
        (Some((_, Err(why))), _) => return (Err(why), false),
        (Some(_), Err(why)) => return (Err(why.clone()), false),
        (Some((commit, Ok(metrics))), Ok(renames)) => (commit, metrics, renames),
    };
    let base_metric = base_metrics.iter().find(|m| m.name == reading.metric);
    let base_findings = base_metric.map_or(&[][..], |m| m.findings.as_slice());
    let complete = !base_metric.is_some_and(|m| {
        m.findings_dropped > 0 || (m.counted && m.findings.len() as f64 != m.value)
    });
    let baseline = comparing.baseline(renames);
    let compared = match touched {
        Some(touched) => findings::compare_touched(&baseline, head, base_findings, touched, read),
        None => findings::compare(&baseline, head, base_findings, read),
    };
    match compared {
        Ok(compared) => (
            Ok(Against {
                commit,
                compared,
                base: base_findings,
            }),
            complete,
        ),
        Err(e) => (Err(e.to_string()), false),
    }
}

/// `finding` as a result shows it: with the host's fingerprint `id`.
fn identified(finding: &Finding, id: String) -> Finding {
    Finding {
        fingerprint: id,
        ..finding.clone()
    }
}

/// Fill in the new and fixed findings of `diff`: counted, the first few listed, and the new
/// ones marked among those `explained` holds. `ids`: the fingerprints of `head`'s and `base`'s.
fn show(
    summary: &mut FindingsSummary,
    explained: &mut [Explained],
    diff: &findings::Diff,
    (head, base): (&Metric, &[Finding]),
    (head_ids, base_ids): (&findings::Fingerprints, &findings::Fingerprints),
) {
    // `diff.new` is in order: the first ones are those `explained` holds.
    let held = explained.len();
    for &i in diff.new.iter().take_while(|&&i| i < held) {
        explained[i].new = Some(true);
    }
    for e in explained.iter_mut().filter(|e| e.new.is_none()) {
        e.new = Some(false);
    }
    summary.new_total = Some(diff.new.len());
    summary.fixed_total = Some(diff.fixed.len());
    summary.new = diff
        .new
        .iter()
        .take(SHOWN)
        .map(|&i| identified(&head.findings[i], head_ids.get(i)))
        .collect();
    summary.fixed = diff
        .fixed
        .iter()
        .take(SHOWN)
        .map(|&i| identified(&base[i], base_ids.get(i)))
        .collect();
}

/// The swap check of a `down` Standard without `per` whose value counts its findings (the
/// caller checks `counted`: findings that only illustrate a value, like the largest file, are
/// reported, never swap-checked).
fn swap_check(
    standard: &StandardDef,
    result: &mut StandardResult,
    summary: &mut FindingsSummary,
    complete: bool,
) {
    let applies = standard.direction == Direction::Down && standard.per.is_none();
    let measured = matches!(
        result.measurement,
        Measurement::Measured | Measurement::Reused
    );
    let (Some(value), Some(verdict)) = (result.value, result.verdict) else {
        return;
    };
    if !applies || !measured || !verdict.passes() {
        return;
    }
    if standard.findings == FindingsMode::Count {
        summary.swap_check = Some(SwapCheck::Off);
        return;
    }
    let (Some(new), Some(fixed)) = (summary.new_total, summary.fixed_total) else {
        summary.swap_check = Some(SwapCheck::Unverified);
        return;
    };
    if !complete {
        summary.swap_check = Some(SwapCheck::Unverified);
        summary.note.get_or_insert_with(|| format!(
            "the findings ({} kept of {value}) do not list everything the count counts, so a swap cannot be ruled out",
            summary.total
        ));
        return;
    }
    let hidden = value + fixed as f64;
    if new > 0 && Verdict::judge(standard.direction, standard.limit, hidden) == Verdict::Regressed {
        summary.swap_check = Some(SwapCheck::Swapped);
        result.verdict = Some(Verdict::Swapped);
        result.pin_eligible = Some(false);
        result.pin_target = None;
        result.note = Some(format!(
            "{value} {} held the ceiling {}, but {new} new finding(s) would breach it ({value} + {fixed} fixed = {hidden}): the fixes hid them",
            standard.metric, standard.limit
        ));
    } else {
        summary.swap_check = Some(SwapCheck::Passed);
    }
}
