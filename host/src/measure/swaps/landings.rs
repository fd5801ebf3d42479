//! A push of several landings judged landing by landing: a swap the whole range seems to show
//! (the new findings of one landing, the fixes of another) is judged again on each landing's
//! stretch of the first-parent chain against its own predecessor, under the limit that landing
//! wrote. Only when every stretch passes does the swap go: a stretch that swaps, breaches its
//! own limit, or cannot be compared keeps it (never guessed away).

use std::borrow::Cow;

use gix::ObjectId;

use super::compare::{Comparing, compare_one};
use super::{BaseMetrics, BaselineKind, Batch, Measurement, Reading, StandardResult, Verdict};
use crate::config::{Config, StandardDef};
use crate::findings::SwapCheck;
use crate::git::short;
use crate::runtime::Metric;
use crate::snapshot::Snapshot;

/// Judge a reading the whole range found swapped landing by landing; the verdict it had
/// before the swap check (`before`) comes back when no landing swapped.
pub(super) fn judge_each(
    batch: &Batch,
    standard: &StandardDef,
    reading: &Reading,
    before: Option<Verdict>,
    result: &mut StandardResult,
) {
    if result.verdict != Some(Verdict::Swapped) {
        return;
    }
    let Some(ends) = landings(batch) else {
        return;
    };
    let template = result.clone();
    let passed = ends
        .windows(2)
        .all(|pair| stretch_passes(batch, (standard, reading, &template), (pair[0], pair[1])));
    if !passed {
        return;
    }
    result.verdict = before;
    if let Some(findings) = result.findings.as_mut() {
        findings.swap_check = Some(SwapCheck::Passed);
    }
    result.note = Some(format!(
        "{} held; the range's new and fixed findings came in {} landings since {}, each judged against its own predecessor under its own limit: none swapped",
        result
            .value
            .map_or_else(String::new, |v| format!("{v} {}", standard.metric)),
        ends.len() - 1,
        short(&ends[0].to_string()),
    ));
}

/// The baseline and the end of each landing after it, in order, when a `--baseline` range on
/// the first-parent chain holds more than one: the commits with a Proof note, or, in a clone
/// with none in the range, every commit of the chain (each a merge button's landing).
fn landings(batch: &Batch) -> Option<Vec<ObjectId>> {
    let summary = &batch.limits.summary;
    if summary.baseline_kind != Some(BaselineKind::Given) || batch.head != Some(batch.head_commit) {
        return None;
    }
    let base: ObjectId = summary.baseline.as_deref()?.parse().ok()?;
    let chain = batch
        .repo
        .first_parent_chain(base, batch.head_commit)
        .ok()??;
    let noted =
        |c: &&ObjectId| matches!(batch.repo.note(crate::commit::NOTES_REF, **c), Ok(Some(_)));
    let mut ends: Vec<ObjectId> = chain[1..].iter().filter(noted).copied().collect();
    if ends.is_empty() {
        ends = chain[1..].to_vec();
    }
    if ends.last() != Some(&batch.head_commit) {
        ends.push(batch.head_commit);
    }
    (ends.len() >= 2).then(|| std::iter::once(base).chain(ends).collect())
}

/// Whether the stretch `from..to` passes its swap check under the limit `to` wrote.
fn stretch_passes(
    batch: &Batch,
    (standard, reading, template): (&StandardDef, &Reading, &StandardResult),
    (from, to): (ObjectId, ObjectId),
) -> bool {
    let Some(own) = own_definition(batch, standard, to) else {
        return false;
    };
    let snapshot = |at: ObjectId| batch.snapshot.nearby(at).map_err(|e| e.to_string());
    let (old, new) = (snapshot(from), snapshot(to));
    let (Some(old_metrics), Some(new_metrics)) = (
        metrics_at(batch, reading, from, &old),
        metrics_at(batch, reading, to, &new),
    ) else {
        return false;
    };
    let (Ok(old), Ok(new)) = (old, new) else {
        return false;
    };
    let Some(metric) = new_metrics.iter().find(|m| m.name == reading.metric) else {
        return false;
    };
    let verdict = Verdict::judge(own.direction, own.limit, metric.value);
    if !verdict.passes() {
        return false;
    }
    let mut scratch = StandardResult {
        limit: own.limit,
        value: Some(metric.value),
        verdict: Some(verdict),
        measurement: Measurement::Measured,
        findings: None,
        ..template.clone()
    };
    let changed = new.changed_since(&from.to_string());
    let comparing = Comparing {
        repo: batch.repo,
        head: &new,
        base: Some(&old),
        renames: crate::findings::renames(batch.repo, from, new.tree()).map_err(|e| e.to_string()),
        changed: changed.as_deref(),
    };
    let base = (Some(from), Ok(&old_metrics[..]));
    compare_one(
        &own,
        &mut scratch,
        (reading, metric, false, 0),
        Some(base),
        &comparing,
    );
    scratch.findings.and_then(|f| f.swap_check) == Some(SwapCheck::Passed)
}

/// `standard` as the commit `at` defines it (its limit there): `None` when `at` has no such
/// Standard or its config cannot be read.
fn own_definition(batch: &Batch, standard: &StandardDef, at: ObjectId) -> Option<StandardDef> {
    let config = Config::at(batch.repo, at).ok()??;
    config
        .standards
        .into_iter()
        .find(|s| s.name == standard.name && s.direction == standard.direction)
}

/// The metrics of `reading`'s execution at `commit` (whose snapshot is `snapshot`): HEAD's own,
/// recorded evidence, or a measurement.
fn metrics_at(
    batch: &Batch,
    reading: &Reading,
    commit: ObjectId,
    snapshot: &Result<Snapshot, String>,
) -> Option<Vec<Metric>> {
    let head = batch.outcomes.executions[reading.execution]
        .metrics()
        .ok()?;
    if commit == batch.head_commit {
        return Some(head.to_vec());
    }
    let any = head.iter().find(|m| m.name == reading.metric)?;
    let mut outputs = super::measure_baseline(batch, commit, snapshot, &[(reading, any)]);
    match outputs.remove(&reading.execution)? {
        Ok(BaseMetrics::Head) => Some(head.to_vec()),
        Ok(BaseMetrics::Own(metrics)) => Some(Cow::into_owned(metrics)),
        Ok(BaseMetrics::Encoded(outcome)) => outcome.into_metrics().ok(),
        Err(_) => None,
    }
}
