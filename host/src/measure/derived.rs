//! A baseline reading derived from HEAD's rather than measured whole, for the built-ins whose
//! every metric is a sum over the files they read and whose findings in a file depend on that
//! file alone (`builtin:pattern`). Only the files that differ between the two snapshots are
//! read again, on both sides: the baseline's value is HEAD's minus what HEAD's changed files
//! read plus what the baseline's read, and its findings are HEAD's outside the changed files
//! plus the baseline's in them. On a fresh CI runner, where the baseline has no evidence, this
//! is what keeps findings from doubling the cost of a run; where it has, this is still tried
//! first, since reading a long findings list back costs more than two runs over a few files.
//!
//! It is exact or it is not used: HEAD's findings must be complete (a counted metric holds
//! every finding, none dropped), HEAD's changed files must read alone exactly the findings they
//! gave within the whole run (checked on every derivation), the derived findings must stay
//! below every cap a whole run would meet, and at most a quarter of the files may differ.
//! Otherwise its evidence is used, else it is measured whole. A derived reading is never
//! recorded as evidence.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use crate::evidence::findings::{Kept, Of, Records};
use crate::findings::once_per_run;
use crate::planner::{Execution, ExecutionOutcome};
use crate::runtime::{Artifacts, Finding, MAX_FINDINGS, Metric, RunOutput, Runtime};
use crate::snapshot::{Snapshot, changed_paths};

/// Producers whose readings are sums over files, with findings local to their file.
const FILE_LOCAL: &[&str] = &["builtin:pattern"];

/// Whether a baseline of `execution` may be derived at all (else it is measured whole).
pub(super) fn applies(execution: &Execution) -> bool {
    FILE_LOCAL.contains(&execution.producer.as_str()) && execution.needs.is_empty()
}

/// A baseline reading derived from HEAD's.
pub(super) enum Derived {
    /// Its metrics with their findings (HEAD's carried theirs).
    Metrics(Vec<Metric>),
    /// An outcome whose findings stay encoded, as HEAD's were (a reused or grouped reading's):
    /// neither side's whole list is decoded (`findings/sparse.rs` compares them).
    Encoded(Box<ExecutionOutcome>),
}

/// The baseline's reading of `execution`, derived from HEAD's `outcome` over `head`, or `None`
/// when that cannot be exact (then the baseline is measured whole).
pub(super) fn derive_from(
    runtime: &Runtime,
    execution: &Execution,
    head: &Snapshot,
    outcome: &ExecutionOutcome,
    base: &Snapshot,
) -> Option<Derived> {
    let wholes = &outcome.result.as_ref().ok()?.metrics;
    let encoded: Option<Vec<Of>> = wholes.iter().map(|m| outcome.kept(&m.name)).collect();
    match encoded {
        Some(ofs) => derive_encoded(runtime, execution, (head, base), (wholes, &ofs))
            .map(|outcome| Derived::Encoded(Box::new(outcome))),
        None => derive(runtime, execution, head, wholes, base).map(Derived::Metrics),
    }
}

/// The baseline's metrics for `execution`, derived from HEAD's `head_metrics` over `head`, or
/// `None` when that cannot be exact (then the baseline is measured whole).
pub(super) fn derive(
    runtime: &Runtime,
    execution: &Execution,
    head: &Snapshot,
    head_metrics: &[Metric],
    base: &Snapshot,
) -> Option<Vec<Metric>> {
    if !applies(execution) || !head_metrics.iter().all(complete) {
        return None;
    }
    let parts = parts(runtime, execution, (head, base))?;
    let changed = parts.changed();
    let order = positions(base);
    head_metrics
        .iter()
        .map(|whole| {
            let (head_part, base_part) = parts.named(&whole.name)?;
            combine(whole, head_part, base_part, &changed, &order, parts.cap)
        })
        .collect()
}

/// [`derive`] of HEAD's metrics `wholes` whose findings `ofs` are still encoded: the derived
/// findings are HEAD's records outside the changed files, copied, and the baseline's in them.
fn derive_encoded(
    runtime: &Runtime,
    execution: &Execution,
    (head, base): (&Snapshot, &Snapshot),
    (wholes, ofs): (&[Metric], &[Of]),
) -> Option<ExecutionOutcome> {
    let complete_encoded =
        |(m, of): (&Metric, &Of)| of.dropped() == 0 && (!m.counted || of.len() as f64 == m.value);
    if !applies(execution) || !wholes.iter().zip(ofs).all(complete_encoded) {
        return None;
    }
    let parts = parts(runtime, execution, (head, base))?;
    let changed = parts.changed();
    let mut metrics = Vec::new();
    let mut kept = Vec::new();
    for (whole, of) in wholes.iter().zip(ofs) {
        let (head_part, base_part) = parts.named(&whole.name)?;
        let sides = (*of, head_part, base_part);
        let (metric, records) = combine_encoded(whole, sides, (&changed, base), parts.cap)?;
        metrics.push(metric);
        kept.push(records);
    }
    let kept: Vec<[&Records; 1]> = kept.iter().map(|records| [records]).collect();
    let columns: Vec<(&str, usize, &[&Records])> = metrics
        .iter()
        .zip(&kept)
        .map(|(m, records)| (m.name.as_str(), 0, &records[..]))
        .collect();
    let findings = Kept::of_records(&columns).ok()?;
    let output = RunOutput {
        metrics,
        read_set: crate::runtime::ReadSet::default(),
        stderr: String::new(),
        fuel_consumed: 0,
    };
    Some(ExecutionOutcome::derived(output, findings))
}

/// The producer's runs over the files that differ, on both sides.
struct Parts {
    head: RunOutput,
    base: RunOutput,
    changed: Vec<String>,
    cap: usize,
}

impl Parts {
    fn changed(&self) -> BTreeSet<&str> {
        self.changed.iter().map(String::as_str).collect()
    }

    fn named(&self, name: &str) -> Option<(&Metric, &Metric)> {
        Some((named(&self.head, name)?, named(&self.base, name)?))
    }
}

/// Run `execution` over the files that differ between `head` and `base`, on each; `None` when
/// more than a quarter of the files differ or a run fails.
fn parts(
    runtime: &Runtime,
    execution: &Execution,
    (head, base): (&Snapshot, &Snapshot),
) -> Option<Parts> {
    let component = execution.component.as_ref().ok()?;
    let changed = changed_paths(Some(base), head);
    if changed.len() * 4 > base.entries().len().max(head.entries().len()) {
        return None;
    }
    let paths: BTreeSet<&str> = changed.iter().map(String::as_str).collect();
    let run = |snapshot: &Snapshot| {
        runtime
            .run(
                component,
                &execution.config,
                &snapshot.restricted(&paths),
                Arc::new(Artifacts::new()),
                &execution.limits,
            )
            .ok()
    };
    let (head, base) = (run(head)?, run(base)?);
    let cap = findings_cap(&execution.config)?;
    Some(Parts {
        head,
        base,
        changed,
        cap,
    })
}

/// Every finding of a counted metric is kept (a metric that counts none has nothing to lose).
fn complete(metric: &Metric) -> bool {
    metric.findings_dropped == 0
        && (!metric.counted || metric.findings.len() as f64 == metric.value)
}

/// The most findings a whole run keeps: the producer's `max_findings`, the host's cap.
fn findings_cap(config: &str) -> Option<usize> {
    Some(crate::builtins::pattern_findings_cap(config)?.min(MAX_FINDINGS))
}

fn named<'a>(output: &'a RunOutput, name: &str) -> Option<&'a Metric> {
    output.metrics.iter().find(|m| m.name == name)
}

/// Each path's place in the baseline's listing, the order a whole run reports findings in.
fn positions(base: &Snapshot) -> HashMap<&str, usize> {
    base.entries()
        .iter()
        .enumerate()
        .map(|(i, e)| (e.path(), i))
        .collect()
}

/// The baseline's reading of one metric: HEAD's whole run, less HEAD's changed files, plus
/// the baseline's changed files; `None` where that would not be what a whole run reads.
fn combine(
    whole: &Metric,
    head_part: &Metric,
    base_part: &Metric,
    changed: &BTreeSet<&str>,
    order: &HashMap<&str, usize>,
    cap: usize,
) -> Option<Metric> {
    if !complete(head_part) || !complete(base_part) || whole.counted != base_part.counted {
        return None;
    }
    let in_changed = |f: &&Finding| f.path.as_deref().is_some_and(|p| changed.contains(p));
    let head_changed: Vec<&Finding> = whole.findings.iter().filter(in_changed).collect();
    if !same_multiset(&head_changed, &head_part.findings) {
        return None;
    }
    let mut findings: Vec<Finding> = whole
        .findings
        .iter()
        .filter(|f| !in_changed(f))
        .chain(&base_part.findings)
        .cloned()
        .collect();
    if findings.len() >= cap {
        return None;
    }
    // A stable sort keeps each file's findings in the order the producer gave them.
    let place = |f: &Finding| f.path.as_deref().and_then(|p| order.get(p)).copied();
    if findings.iter().any(|f| place(f).is_none()) {
        return None;
    }
    // Each place looked up once (not once per comparison): the list is long.
    findings.sort_by_cached_key(|f| place(f));
    let value = whole.value - head_part.value + base_part.value;
    if whole.counted && findings.len() as f64 != value {
        return None;
    }
    Some(Metric {
        name: whole.name.clone(),
        value,
        findings,
        findings_dropped: 0,
        counted: whole.counted,
    })
}

/// [`combine`] of HEAD's findings `of`, still encoded: the metric (its findings left out) and
/// the derived findings, encoded in the order [`combine`] gives them.
fn combine_encoded(
    whole: &Metric,
    (of, head_part, base_part): (Of, &Metric, &Metric),
    (changed, base): (&BTreeSet<&str>, &Snapshot),
    cap: usize,
) -> Option<(Metric, Records)> {
    if !complete(head_part) || !complete(base_part) || whole.counted != base_part.counted {
        return None;
    }
    let records = of.records()?;
    let mut in_changed =
        once_per_run(|path: Option<&str>| path.is_some_and(|p| changed.contains(p)));
    let changed_at: Vec<bool> = records.iter().map(|r| in_changed(r.path)).collect();
    let head_changed: Vec<Finding> = records
        .iter()
        .zip(&changed_at)
        .filter(|&(_, &changed)| changed)
        .map(|(r, _)| r.decode())
        .collect::<Option<_>>()?;
    if !same_multiset(
        &head_changed.iter().collect::<Vec<_>>(),
        &head_part.findings,
    ) {
        return None;
    }
    let base_records = Records::encode(&base_part.findings).ok()?;
    let base_records = base_records.records()?;
    // HEAD's kept records, then the baseline's: a stable sort by each one's place in the
    // baseline's listing gives the order a whole run reports them in.
    let near = std::cell::Cell::new(0);
    let mut position = once_per_run(|path: Option<&str>| Some(base.entry_from(path?, &near)?.0));
    let mut order: Vec<(usize, _)> = records
        .iter()
        .zip(&changed_at)
        .filter(|&(_, &changed)| !changed)
        .map(|(r, _)| r)
        .chain(&base_records)
        .map(|r| Some((position(r.path)?, r)))
        .collect::<Option<_>>()?;
    if order.len() >= cap {
        return None;
    }
    order.sort_by_key(|(at, _)| *at);
    let mut derived = Records::default();
    for (_, record) in &order {
        derived.push(record);
    }
    let value = whole.value - head_part.value + base_part.value;
    if whole.counted && derived.len() as f64 != value {
        return None;
    }
    let metric = Metric {
        name: whole.name.clone(),
        value,
        findings: Vec::new(),
        findings_dropped: 0,
        counted: whole.counted,
    };
    Some((metric, derived))
}

/// Finding by finding, in any order (duplicates count).
fn same_multiset(a: &[&Finding], b: &[Finding]) -> bool {
    let mut a: Vec<Key> = a.iter().map(|f| key(f)).collect();
    let mut b: Vec<Key> = b.iter().map(key).collect();
    a.sort_unstable();
    b.sort_unstable();
    a == b
}

/// Everything a finding says, comparable.
type Key<'f> = (
    &'f str,
    Option<&'f str>,
    Option<u32>,
    Option<u32>,
    &'f str,
    String,
);

fn key(f: &Finding) -> Key<'_> {
    let severity = format!("{:?}", f.severity);
    (
        &f.fingerprint,
        f.path.as_deref(),
        f.line,
        f.column,
        &f.message,
        severity,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::Limits;
    use discern_tests::TestRepo;

    fn execution(producer: &str, config: &str) -> Execution {
        let name = producer.trim_start_matches("builtin:");
        Execution {
            label: format!("{producer}#test"),
            identity: String::new(),
            producer: producer.to_owned(),
            component: crate::builtins::component(name)
                .ok_or_else(|| "no such built-in".to_owned()),
            config: config.to_owned(),
            needs: Vec::new(),
            artifact: None,
            limits: Limits::default(),
            dependents: Vec::new(),
            keep_read_set: false,
        }
    }

    /// A baseline of `files` files, and HEAD with `edits` of them changed.
    fn history(files: usize, edits: &[(&str, Option<&str>)]) -> (TestRepo, Snapshot, Snapshot) {
        let repo = TestRepo::new();
        for i in 0..files {
            let todo = if i % 3 == 0 {
                "// MARK: a\n// MARK: a\n"
            } else {
                ""
            };
            repo.write(
                &format!("src/d{}/f{i:02}.rs", i % 4),
                format!("fn f{i}() {{}}\n{todo}"),
            );
        }
        repo.write("src/a.b", "// MARK: dotted\n")
            .write("src/a/b.rs", "// MARK: nested\n");
        repo.commit("base");
        let base = Snapshot::open(repo.path(), "HEAD").unwrap();
        for (path, content) in edits {
            match content {
                Some(text) => {
                    repo.write(path, *text);
                }
                None => {
                    repo.git(&["rm", "-q", path]);
                }
            }
        }
        repo.commit("head");
        let head = Snapshot::open(repo.path(), "HEAD").unwrap();
        (repo, base, head)
    }

    fn run(runtime: &Runtime, execution: &Execution, snapshot: &Snapshot) -> RunOutput {
        let component = execution.component.as_ref().unwrap();
        runtime
            .run(
                component,
                &execution.config,
                snapshot,
                Arc::new(Artifacts::new()),
                &execution.limits,
            )
            .unwrap()
    }

    #[test]
    fn a_derived_baseline_is_what_a_whole_run_reads() {
        let runtime = Runtime::with_cache_dir(None).unwrap();
        let pattern = execution(
            "builtin:pattern",
            r#"{"pattern": "MARK: \\w+", "paths": ["src/**"]}"#,
        );
        let (_repo, base, head) = history(
            40,
            &[
                // Fixed, added, duplicated, deleted, a new file, and a dotted name beside a
                // folder of the same stem.
                ("src/d0/f00.rs", Some("fn f0() {}\n")),
                (
                    "src/d1/f01.rs",
                    Some("// MARK: b\nfn f1() {}\n// MARK: b\n"),
                ),
                (
                    "src/d3/f03.rs",
                    Some("// MARK: a\n// MARK: a\n// MARK: a\n"),
                ),
                ("src/d2/f06.rs", None),
                ("src/new.rs", Some("// MARK: new\n")),
                ("src/a.b", Some("// MARK: dotted twice\n")),
            ],
        );
        let head_output = run(&runtime, &pattern, &head);
        let whole = run(&runtime, &pattern, &base);
        let derived =
            derive(&runtime, &pattern, &head, &head_output.metrics, &base).expect("derivable");
        assert_eq!(derived, whole.metrics);
        assert!(derived.iter().any(|m| m.counted && !m.findings.is_empty()));

        // HEAD's findings kept encoded (a reused or grouped reading's): derived still encoded,
        // the same reading once decoded.
        let encoded = crate::evidence::findings::encode(&head_output.metrics).unwrap();
        let kept = Kept::parse(encoded.unwrap()).unwrap();
        let mut values = head_output.clone();
        values.metrics.iter_mut().for_each(|m| m.findings.clear());
        let head_outcome = ExecutionOutcome::derived(values, Some(kept));
        let Some(Derived::Encoded(derived)) =
            derive_from(&runtime, &pattern, &head, &head_outcome, &base)
        else {
            panic!("derivable, encoded");
        };
        assert_eq!(derived.into_metrics().unwrap(), whole.metrics);
    }

    #[test]
    fn a_baseline_is_measured_whole_where_deriving_could_differ() {
        let runtime = Runtime::with_cache_dir(None).unwrap();
        let edit = [("src/d1/f01.rs", Some("// MARK: b\n"))];
        let (_repo, base, head) = history(40, &edit);
        // HEAD's findings cut by the producer's own cap: incomplete.
        let capped = execution(
            "builtin:pattern",
            r#"{"pattern": "MARK", "paths": ["src/**"], "max_findings": 3}"#,
        );
        let output = run(&runtime, &capped, &head);
        assert_eq!(
            derive(&runtime, &capped, &head, &output.metrics, &base),
            None
        );
        // Not a file-local producer.
        let extent = execution("builtin:extent", r#"{"paths": ["src/**"]}"#);
        let output = run(&runtime, &extent, &head);
        assert_eq!(
            derive(&runtime, &extent, &head, &output.metrics, &base),
            None
        );
        // More than a quarter of the files changed: a whole run is as cheap.
        let many: Vec<(String, Option<&str>)> = (0..12)
            .map(|i| (format!("src/d{}/f{i:02}.rs", i % 4), Some("// MARK: c\n")))
            .collect();
        let many: Vec<(&str, Option<&str>)> = many.iter().map(|(p, c)| (p.as_str(), *c)).collect();
        let (_repo, base, head) = history(40, &many);
        let pattern = execution(
            "builtin:pattern",
            r#"{"pattern": "MARK", "paths": ["src/**"]}"#,
        );
        let output = run(&runtime, &pattern, &head);
        assert_eq!(
            derive(&runtime, &pattern, &head, &output.metrics, &base),
            None
        );
    }
}
