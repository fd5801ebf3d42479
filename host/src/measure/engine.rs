//! Measuring a batch: HEAD pinned and proven clean (or the work tree), the never-loosen
//! check, the plan executed once per producer identity, every Standard judged, and the
//! readings recorded when they describe the commit.

use std::sync::{Mutex, OnceLock};

use super::components::{ComponentOrigin, Components, component_configs};
use super::limits::{self, LimitsCheck};
use super::options::{EvidenceUse, Options};
use super::result::{Measured, Measurement, ReadSets, StandardResult};
use super::{Context, MeasureError, Verdict, diagnostic, judge, record, skipped};
use crate::config::{Config, StandardDef};
use crate::git::{Repo, short};
use crate::planner::Plan;
use crate::preflight::CleanError;
use crate::result::{Diagnostic, Severity};

/// Measure the batch on the clean HEAD (or the work tree): never-loosen check, plan, execute,
/// judge, record, as `options` say.
pub(super) fn measure(ctx: &Context, options: &Options) -> Result<Measured, MeasureError> {
    let Context {
        ws,
        runtime,
        config,
        selected,
        claims,
        progress,
    } = *ctx;
    let repo = &ws.repo;
    let (head, snapshot, dirty) = pinned_snapshot(repo, options)?;
    let not_measured = uncommitted(selected, &dirty)?;
    let limits = limits::check(repo, config, &options.against(ws, config, head), claims);
    let measurable: Vec<&StandardDef> = selected
        .iter()
        .copied()
        .filter(|s| options.measure_blocked || !limits.blocked.contains_key(&s.name))
        .collect();
    let components = Components {
        repo,
        snapshot: Some(&snapshot),
        origin: origin(options),
    };
    let plan = Plan::build(config, &measurable, &components);
    component_configs(config, &plan, runtime).map_err(MeasureError::ComponentConfig)?;
    let trunk = limits
        .summary
        .trunk_commit
        .as_deref()
        .and_then(|t| t.parse().ok());
    let evidence = evidence_store(repo, options)
        .map(|store| shared_evidence(store, repo, options, head, trunk));
    let outcomes = crate::planner::execute(
        &plan,
        runtime,
        &snapshot,
        repo.root(),
        (!options.dry_run)
            .then(|| repo.admin_path("jobs"))
            .as_deref(),
        evidence.as_ref(),
        progress,
    );
    let (mut standards, mut diagnostics) = judge_all(selected, &plan, &outcomes, &limits, options);
    let batch = super::swaps::Batch {
        repo,
        runtime,
        plan: &plan,
        outcomes: &outcomes,
        snapshot: &snapshot,
        limits: &limits,
        head: (!options.worktree).then_some(head),
        head_commit: head,
        evidence: baseline_store(repo, options),
        explain: options.explain.as_deref(),
        progress,
    };
    // The evidence is written while the findings are compared: both take a while when a
    // reading has many findings, and they share nothing.
    let findings_advisories = std::thread::scope(|scope| {
        if let Some(store) = &evidence {
            scope.spawn(|| crate::planner::save_evidence(&plan, &outcomes, store, &snapshot));
        }
        super::swaps::attach(&batch, selected, &mut standards)
    });
    diagnostics.extend(late_diagnostics(selected, &standards, &outcomes));
    let mut advisories = limits.advisories.clone();
    advisories.extend(not_measured);
    advisories.extend(super::unmatched::advisories(selected, &snapshot));
    let baseline = limits.summary.baseline.as_deref();
    advisories.extend(super::hidden::advisories(selected, &snapshot, baseline));
    advisories.extend(findings_advisories);
    advisories.extend(evidence.iter().flat_map(shared_problems));
    let recorded = record_readings(repo, config, head, &standards, options, &mut advisories);
    Ok(Measured {
        commit: head.to_string(),
        branch: repo.branch().ok().flatten(),
        standards,
        limits,
        counts: outcomes.counts.0.clone(),
        diagnostics,
        advisories,
        recorded,
        worktree: options.worktree,
        read_sets: read_sets(&plan, outcomes),
    })
}

/// Where the batch's repository components come from, and whether a compiled one may be
/// loaded from the cache.
fn origin(options: &Options) -> ComponentOrigin {
    match (options.worktree, options.evidence.trusts_compile_cache()) {
        (true, _) => ComponentOrigin::WorkTree,
        (false, true) => ComponentOrigin::Commit,
        (false, false) => ComponentOrigin::CommitCompiledHere,
    }
}

/// The diagnostics known once findings are compared: every swapped Standard's, and every failed
/// job's.
fn late_diagnostics(
    selected: &[&StandardDef],
    standards: &[StandardResult],
    outcomes: &crate::planner::Outcomes,
) -> Vec<Diagnostic> {
    let swapped = selected
        .iter()
        .zip(standards)
        .filter(|(_, result)| result.verdict == Some(Verdict::Swapped))
        .map(|(standard, result)| diagnostic::standard_diagnostic(standard, result));
    let jobs = outcomes
        .jobs
        .iter()
        .filter(|job| !job.ok)
        .map(|job| Diagnostic {
            tool: format!("job:{}", job.name),
            severity: Severity::Error,
            message: format!("{}:\n{}", job.summary(), job.output_tail),
            reproduce_cmd: job.reproduce_cmd.clone(),
            file: None,
            line: None,
        });
    swapped.chain(jobs).collect()
}

/// What shared evidence could not be read (the batch measured what it would have given).
fn shared_problems(store: &crate::evidence::Store) -> Vec<String> {
    store
        .shared_problems()
        .into_iter()
        .map(|problem| {
            format!(
                "Shared evidence was not read, and what it would have given was measured: {problem}"
            )
        })
        .collect()
}

/// HEAD, pinned before measuring, and the snapshot to measure: HEAD's tree, which must be
/// what the work tree holds (or with `worktree`, the work tree as it is).
fn pinned_snapshot(
    repo: &Repo,
    options: &Options,
) -> Result<(gix::ObjectId, crate::snapshot::Snapshot, Vec<String>), MeasureError> {
    let unreadable = MeasureError::Unreadable;
    let head = match repo.head() {
        Ok(Some(head)) => head,
        Ok(None) => return Err(MeasureError::NoCommit),
        Err(e) => return Err(unreadable(e.to_string())),
    };
    if options.worktree {
        let snapshot = repo.worktree_snapshot(head).map_err(|e| e.to_string());
        return Ok((head, snapshot.map_err(unreadable)?, Vec::new()));
    }
    let (snapshot, dirty) = committed(repo, head);
    // The clean check uses HEAD's entries; a tree that cannot be read is still refused as
    // dirty first when it is, since that is what the user can act on.
    let dirty = dirty.map_err(|e| MeasureError::cannot_tell(repo.root(), e))?;
    if !dirty.is_empty() && !options.tolerate_dirty {
        return Err(MeasureError::unclean(repo.root(), CleanError::Dirty(dirty)));
    }
    Ok((head, snapshot.map_err(unreadable)?, dirty))
}

/// HEAD's snapshot, and the paths where the index or work tree differ from it. The snapshot is
/// read while the work tree is walked: the walk needs it only where the index's cache-tree
/// cannot vouch for HEAD's tree, and then waits for it.
fn committed(
    repo: &Repo,
    head: gix::ObjectId,
) -> (
    Result<crate::snapshot::Snapshot, String>,
    Result<Vec<String>, crate::git::RepoError>,
) {
    std::thread::scope(|scope| {
        let reading = Mutex::new(Some(scope.spawn(|| repo.snapshot(head))));
        let read: OnceLock<Result<crate::snapshot::Snapshot, String>> = OnceLock::new();
        let snapshot = || {
            read.get_or_init(|| {
                let handle = reading.lock().ok().and_then(|mut h| h.take());
                match handle.map(|h| h.join()) {
                    Some(Ok(snapshot)) => snapshot.map_err(|e| e.to_string()),
                    _ => Err("reading HEAD's tree failed".to_owned()),
                }
            })
        };
        let clean = repo.proves_clean_at(head, &|| snapshot().as_ref().ok().cloned());
        let snapshot = snapshot().clone();
        let dirty = match (clean, &snapshot) {
            (true, _) => Ok(Vec::new()),
            (false, Ok(_)) => repo.dirty_by_git(),
            (false, Err(_)) => repo.dirty_paths(),
        };
        (snapshot, dirty)
    })
}

/// What a measurement of the committed HEAD says about uncommitted changes: an advisory
/// naming them, or, when a selected Standard runs a job (jobs run in the work tree, so their
/// output would not describe HEAD), the dirty-tree refusal.
fn uncommitted(selected: &[&StandardDef], dirty: &[String]) -> Result<Vec<String>, MeasureError> {
    if dirty.is_empty() {
        return Ok(Vec::new());
    }
    let jobs: Vec<String> = selected
        .iter()
        .filter(|s| !s.needs.is_empty())
        .map(|s| s.name.clone())
        .collect();
    if !jobs.is_empty() {
        return Err(MeasureError::JobsInDirtyTree {
            dirty: dirty.to_vec(),
            jobs,
        });
    }
    let shown: Vec<&str> = dirty.iter().take(20).map(String::as_str).collect();
    let more = dirty.len().saturating_sub(shown.len());
    Ok(vec![format!(
        "Not measured: uncommitted changes ({}{}); the committed HEAD was measured. Commit them to measure them, or measure the work tree with --force.",
        shown.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    )])
}

/// Every selected Standard's result (blocked ones skipped unless `measure_blocked`), and the
/// diagnostics of the limits check and of every failed or regressed Standard.
fn judge_all(
    selected: &[&StandardDef],
    plan: &Plan,
    outcomes: &crate::planner::Outcomes,
    limits: &LimitsCheck,
    options: &Options,
) -> (Vec<StandardResult>, Vec<Diagnostic>) {
    let mut standards = Vec::new();
    let mut diagnostics = limits.diagnostics.clone();
    for standard in selected {
        let reading = plan.readings.iter().find(|r| r.standard == standard.name);
        let result = match (limits.blocked.get(&standard.name), reading) {
            (Some(why), _) if !options.measure_blocked => skipped(standard, why),
            (_, Some(reading)) => judge::judge(standard, reading, plan, outcomes),
            (_, None) => skipped(standard, "not planned"),
        };
        if result.measurement == Measurement::Failed || result.verdict == Some(Verdict::Regressed) {
            diagnostics.push(diagnostic::standard_diagnostic(standard, &result));
        }
        standards.push(result);
    }
    (standards, diagnostics)
}

/// Record the readings for `head` when they describe it: HEAD did not move meanwhile, and this
/// is neither a work-tree measurement nor a dry run. Whether they were recorded.
fn record_readings(
    repo: &Repo,
    config: &Config,
    head: gix::ObjectId,
    standards: &[StandardResult],
    options: &Options,
    advisories: &mut Vec<String>,
) -> bool {
    // HEAD was pinned before measuring; if it moved, the readings describe a commit that is no
    // longer checked out, so nothing is recorded.
    let head_after = repo.head().ok().flatten();
    if head_after != Some(head) {
        advisories.push(format!(
            "HEAD moved during measurement (from {} to {}); these readings describe {} and nothing was recorded.",
            short(&head.to_string()),
            head_after.map_or("nothing".to_owned(), |h| short(&h.to_string())),
            short(&head.to_string()),
        ));
        return false;
    }
    if options.worktree || options.dry_run {
        return false;
    }
    // The readings describe the pinned commit's snapshot, so an edit to the work tree during
    // measurement cannot change them: HEAD alone decides.
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
    record::save(repo, &record).is_ok()
}

/// What each Standard's reading read, from the executions that ran.
fn read_sets(plan: &Plan, outcomes: crate::planner::Outcomes) -> ReadSets {
    ReadSets {
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
    }
}

/// The evidence store the baseline's measurement uses: a committed snapshot, so recorded even
/// when HEAD is measured fresh or as the work tree; only read in a dry run.
fn baseline_store(repo: &Repo, options: &Options) -> Option<crate::evidence::Store> {
    let dir = repo.shared_path("evidence");
    Some(match (options.dry_run, options.evidence) {
        // Proof reads no evidence an agent could have written, the baseline's included.
        (_, EvidenceUse::Proof) if options.dry_run => return None,
        (_, EvidenceUse::Proof) => crate::evidence::Store::write_only(dir),
        (true, _) => crate::evidence::Store::read_only(dir),
        (false, _) => crate::evidence::Store::new(dir),
    })
}

/// `store`, consulting what other clones published unless `--no-remote` says to reuse only
/// what this clone measured.
fn shared_evidence(
    store: crate::evidence::Store,
    repo: &Repo,
    options: &Options,
    head: gix::ObjectId,
    trunk: Option<gix::ObjectId>,
) -> crate::evidence::Store {
    if options.no_remote {
        return store.local_only();
    }
    let shared = crate::evidence::shared::Shared::open(repo, head, trunk);
    if !shared.consults_anything() {
        return store;
    }
    store.with_shared(std::sync::Arc::new(shared))
}

/// The evidence store a measurement with `options` may use.
fn evidence_store(repo: &Repo, options: &Options) -> Option<crate::evidence::Store> {
    let dir = repo.shared_path("evidence");
    match (options.worktree, options.evidence, options.dry_run) {
        (true, _, _) | (_, EvidenceUse::Fresh, _) => None,
        (_, EvidenceUse::Refresh | EvidenceUse::Proof, true) => None,
        (_, EvidenceUse::Refresh | EvidenceUse::Proof, false) => {
            Some(crate::evidence::Store::write_only(dir))
        }
        (_, EvidenceUse::ReuseOnly, _) | (_, _, true) => {
            Some(crate::evidence::Store::read_only(dir))
        }
        (_, EvidenceUse::ReuseAndRecord, false) => Some(crate::evidence::Store::new(dir)),
    }
}
