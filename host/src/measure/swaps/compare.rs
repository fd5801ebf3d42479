//! One reading's findings compared with the baseline's: placed, paired, and judged for a swap.

use gix::ObjectId;

use super::*;

/// What every reading's comparison shares: the two snapshots and the renames between them.
pub(super) struct Comparing<'a> {
    pub(super) repo: &'a Repo,
    /// The snapshot measured.
    pub(super) head: &'a crate::snapshot::Snapshot,
    /// The baseline's snapshot; `None` on the first commit or when it cannot be read.
    pub(super) base: Option<&'a crate::snapshot::Snapshot>,
    pub(super) renames: Result<Renames, String>,
    /// The paths that differ between the two trees, sorted (`None`: not known).
    pub(super) changed: Option<&'a [String]>,
}

impl<'a> Comparing<'a> {
    /// What a reading's findings are compared with, under `renames`.
    pub(super) fn baseline(&self, renames: &'a Renames) -> findings::Baseline<'a> {
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
    pub(super) fn unread(&self, path: &str, blob: ObjectId) -> bool {
        match (self.base, &self.renames) {
            (Some(base), Ok(renames)) => {
                let old = renames.old_path(path).unwrap_or(path);
                base.entry(old).is_some_and(|e| e.id == blob)
            }
            _ => true,
        }
    }
}

/// A baseline reading whose findings are not decoded yet.
pub(super) enum Encoded<'a> {
    /// HEAD's own ([`BaseMetrics::Head`]).
    Head,
    /// Its own, with its findings still encoded ([`BaseMetrics::Encoded`]).
    Own(&'a ExecutionOutcome),
}

/// One reading's baseline as `attach` finds it: the commit, and its metrics (decoded, or not
/// yet, or why there are none).
pub(super) type ReadingBase<'a> = (
    Option<ObjectId>,
    Result<Result<&'a [Metric], String>, Encoded<'a>>,
);

/// `reading`'s baseline at `commit`, from the baseline's `outputs`.
pub(super) fn reading_base<'o>(
    batch: &Batch,
    reading: &Reading,
    commit: Option<ObjectId>,
    outputs: &'o BaseOutputs,
) -> ReadingBase<'o> {
    let metrics = match outputs.get(&reading.execution) {
        Some(Ok(BaseMetrics::Head)) => Err(Encoded::Head),
        Some(Ok(BaseMetrics::Own(metrics))) => Ok(Ok(metrics.as_ref())),
        Some(Ok(BaseMetrics::Encoded(outcome))) => Err(Encoded::Own(outcome)),
        Some(Err(why)) => Ok(Err(why.clone())),
        None => Ok(Err(no_baseline_reason(batch, reading))),
    };
    (commit, metrics)
}

/// The baseline's values (its findings may be left out): HEAD's (`outcome`'s) where the
/// reading is HEAD's own.
pub(super) fn base_values<'a>(outcome: &'a ExecutionOutcome, base: &ReadingBase<'a>) -> Base<'a> {
    let values_of = |outcome: &'a ExecutionOutcome| {
        outcome
            .result
            .as_ref()
            .map(|o| o.metrics.as_slice())
            .map_err(Clone::clone)
    };
    let values = match &base.1 {
        Err(Encoded::Head) => values_of(outcome),
        Err(Encoded::Own(own)) => values_of(own),
        Ok(metrics) => metrics.clone(),
    };
    (base.0, values)
}

/// One reading to compare with its baseline.
pub(super) struct Compare<'a> {
    pub(super) standard: &'a StandardDef,
    pub(super) reading: &'a Reading,
    /// HEAD's metric (a reused execution's findings are in `outcome`, still encoded).
    pub(super) metric: &'a Metric,
    pub(super) outcome: &'a ExecutionOutcome,
    /// `--explain` of this Standard: every finding goes into the result.
    pub(super) keep_all: bool,
}

/// One reading's comparison: from the findings shown alone where the baseline's reading is
/// HEAD's own and no finding is on a file the change touched ([`compare_unchanged`]), else
/// with every finding ([`compare_one`]).
pub(super) fn compare_reading(
    compare: &Compare,
    result: &mut StandardResult,
    base: Option<ReadingBase>,
    comparing: &Comparing,
) {
    let name = &compare.reading.metric;
    let head_of = compare.outcome.kept(name).filter(|_| !compare.keep_all);
    match (&base, head_of) {
        (Some((Some(commit), Err(Encoded::Head))), Some(of))
            if compare_unchanged(compare, result, (*commit, of), comparing) =>
        {
            return;
        }
        (Some((commit, Err(Encoded::Own(own)))), Some(of))
            if compare_sparse(compare, result, (*commit, own), of, comparing) =>
        {
            return;
        }
        _ => {}
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
    let base = base.map(|(commit, base)| {
        let decoded = match base {
            Ok(metrics) => metrics,
            Err(Encoded::Head) => Ok(metrics),
            Err(Encoded::Own(own)) => own
                .metrics()
                .map_err(|why| format!("the baseline's findings cannot be read: {why}")),
        };
        (commit, decoded)
    });
    let reading = (compare.reading, metric, compare.keep_all, 0);
    compare_one(compare.standard, result, reading, base, comparing);
}

/// The comparison of a reading whose findings (`of`) and baseline's (`own`'s, at `commit`) are
/// both still encoded, from the findings it reads alone ([`findings::sparse`]); `false` when
/// that cannot be told (the caller then decodes every finding).
pub(super) fn compare_sparse(
    compare: &Compare,
    result: &mut StandardResult,
    (commit, own): (Option<ObjectId>, &ExecutionOutcome),
    of: Of,
    comparing: &Comparing,
) -> bool {
    let name = &compare.reading.metric;
    let (Ok(renames), Some(base_of), Ok(base_output)) =
        (&comparing.renames, own.kept(name), &own.result)
    else {
        return false;
    };
    let Some(base_metric) = base_output.metrics.iter().find(|m| &m.name == name) else {
        return false;
    };
    let baseline = comparing.baseline(renames);
    let Some(sparse) = findings::sparse(&baseline, (of, base_of), WHY_SHOWN) else {
        return false;
    };
    let with = |metric: &Metric, findings: Vec<Finding>, dropped: usize| Metric {
        findings,
        findings_dropped: dropped,
        ..metric.clone()
    };
    let head = with(compare.metric, sparse.head, of.dropped());
    let base = [with(base_metric, sparse.base, base_of.dropped())];
    let reading = (compare.reading, &head, false, sparse.omitted);
    let base = (commit, Ok(&base[..]));
    compare_one(compare.standard, result, reading, Some(base), comparing);
    true
}

/// The comparison of a reading whose baseline (`commit`) reads HEAD's own reused reading,
/// when no finding (`of`, still encoded) is on a file the change touched: every finding pairs
/// with itself, nothing is new or fixed — what [`compare_one`] finds —, and only the findings
/// a result shows are decoded and placed. `false` when that cannot be told (the caller then
/// compares every finding).
pub(super) fn compare_unchanged(
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
pub(super) fn unreadable(compare: &Compare, result: &mut StandardResult, why: String) {
    // Still encoded, or decoded into the reading's metric: counted either way, never as none.
    let (total, dropped) = match compare.outcome.kept(&compare.metric.name) {
        Some(of) => (of.len(), of.dropped()),
        None => (
            compare.metric.findings.len(),
            compare.metric.findings_dropped,
        ),
    };
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
pub(super) fn compare_one(
    standard: &StandardDef,
    result: &mut StandardResult,
    (reading, metric, keep_all, omitted): (&Reading, &Metric, bool, usize),
    base: Option<Base>,
    comparing: &Comparing,
) {
    let kept = if keep_all { usize::MAX } else { WHY_SHOWN };
    // Each side's length, with the findings left out of both lists as their own twins.
    let total = metric.findings.len() + omitted;
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
        (base, touched.as_ref(), omitted),
        comparing,
    );
    let complete = base_complete
        && metric.counted
        && metric.findings_dropped == 0
        && total as f64 == metric.value;
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
        total,
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
pub(super) fn show_against(
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
pub(super) fn to_place(
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
pub(super) fn touched(
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
pub(super) struct Against<'m> {
    /// The baseline commit; `None` on the first commit.
    commit: Option<ObjectId>,
    compared: findings::Compared,
    /// The baseline's findings.
    base: &'m [Finding],
}

/// `head` compared with the baseline's findings of the same reading, or why it cannot be; and
/// whether the comparison may rule a swap out (`false` when the baseline's list was cut, or the
/// baseline or the renames could not be read).
pub(super) fn against_baseline<'m>(
    reading: &Reading,
    (head, read): (findings::Side, &mut findings::ReadLines),
    (base, touched, omitted): (Option<Base<'m>>, Option<&findings::Touched>, usize),
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
        m.findings_dropped > 0 || (m.counted && (m.findings.len() + omitted) as f64 != m.value)
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
pub(super) fn identified(finding: &Finding, id: String) -> Finding {
    Finding {
        fingerprint: id,
        ..finding.clone()
    }
}

/// Fill in the new and fixed findings of `diff`: counted, the first few listed, and the new
/// ones marked among those `explained` holds. `ids`: the fingerprints of `head`'s and `base`'s.
pub(super) fn show(
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
pub(super) fn swap_check(
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
