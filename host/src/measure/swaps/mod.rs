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

mod baseline;
mod compare;
mod inherited;
mod landings;

use baseline::*;
use compare::*;
use inherited::{Inheritance, inherited, rebaseline_all};

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
    /// Its own, measured or reused with the findings still encoded: decoded only as far as
    /// the comparison reads them (`sparse.rs`).
    Encoded(Box<ExecutionOutcome>),
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
        match inherited(batch, standard, result, reading, values.as_ref()) {
            Some(Inheritance::Inherited(why, rebaseline)) => {
                advisories.push(why);
                rebaselines.push(rebaseline);
            }
            Some(Inheritance::HeldItsOwn(why)) => advisories.push(why),
            None => {}
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
            let before = result.verdict;
            compare_reading(&compare, result, base, &comparing);
            landings::judge_each(batch, standard, reading, before, result);
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

/// Whether `metric` of `outcome` has findings to compare (a counted one always does).
fn has_findings(outcome: &ExecutionOutcome, metric: &Metric) -> bool {
    let (kept, dropped) = match outcome.kept(&metric.name) {
        Some(of) => (of.len(), of.dropped()),
        None => (metric.findings.len(), metric.findings_dropped),
    };
    metric.counted || kept > 0 || dropped > 0
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
