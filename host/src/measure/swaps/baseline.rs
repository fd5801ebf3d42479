//! The baseline a batch's findings are compared with: its commit, and its readings — HEAD's
//! own where that is exact, recorded evidence, or a measurement of the baseline's snapshot.

use std::borrow::Cow;

use gix::ObjectId;

use super::*;
use crate::measure::derived::{Derived, derive_from};

/// What the first commit is compared with: nothing, for every execution.
pub(super) fn root_outputs<'a>(readings: &[(&Reading, &Metric)]) -> BaseOutputs<'a> {
    readings
        .iter()
        .map(|(r, _)| (r.execution, Ok(BaseMetrics::Own(Cow::Borrowed(&[][..])))))
        .collect()
}

/// The commit findings are compared with (`None`: HEAD is the first commit, there is nothing
/// before it), or why there is none.
pub(super) fn baseline_commit(batch: &Batch) -> Result<Option<ObjectId>, String> {
    let summary = &batch.limits.summary;
    let Some(trunk) = &summary.trunk_commit else {
        return Err(summary
            .reason
            .clone()
            .unwrap_or_else(|| "the trunk cannot be read".to_owned()));
    };
    let at_trunk_tip = trunk == &batch.head_commit.to_string();
    let on_trunk = batch.head == Some(batch.head_commit) && at_trunk_tip;
    let given = summary.baseline_kind == Some(BaselineKind::Given);
    // The work tree on the trunk's tip (`--force` there): what it changes is compared with the
    // commit it sits on; the trunk needs no merge base with itself.
    if batch.head.is_none() && at_trunk_tip && !given {
        return Ok(Some(batch.head_commit));
    }
    // A required trunk check without --baseline fails as unverified and names the one fix;
    // the findings wait for the same baseline instead of asking for history of their own.
    if on_trunk && !given && summary.status == crate::measure::LimitsStatus::Unverified {
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

pub(super) fn first_parent(repo: &Repo, head: ObjectId) -> Result<Option<ObjectId>, String> {
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
pub(super) fn renames_since(
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
pub(super) fn measure_baseline<'a>(
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
        if !crate::measure::derived::applies(execution) {
            whole.push(i);
            continue;
        }
        let head = &batch.outcomes.executions[i];
        let derived = derive_from(batch.runtime, execution, batch.snapshot, head, snapshot);
        let derived = derived.map(|derived| match derived {
            Derived::Metrics(metrics) => BaseMetrics::Own(Cow::Owned(metrics)),
            Derived::Encoded(outcome) => BaseMetrics::Encoded(outcome),
        });
        let recorded = || {
            let outcome = crate::planner::reuse(execution, batch.runtime, snapshot, evidence)?;
            outcome
                .result
                .is_ok()
                .then(|| BaseMetrics::Encoded(Box::new(outcome)))
        };
        match derived.or_else(recorded) {
            Some(metrics) => {
                outputs.insert(i, Ok(metrics));
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
pub(super) fn shared_with_head(
    batch: &Batch,
    i: usize,
    snapshot: &crate::snapshot::Snapshot,
) -> bool {
    let outcome = &batch.outcomes.executions[i];
    let (Some(entry), Some(store)) = (&outcome.evidence, &batch.evidence) else {
        return false;
    };
    outcome.result.is_ok() && store.serves(entry, snapshot)
}

/// Measure the executions `indices` on the baseline's `snapshot`, recording their evidence.
pub(super) fn measure_whole<'a>(
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
            let metrics = match &outcome.result {
                Ok(_) => Ok(BaseMetrics::Encoded(Box::new(outcome))),
                Err(e) => Err(format!("the baseline measurement failed: {e}")),
            };
            (i, metrics)
        })
        .collect()
}
