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
use crate::planner::{Plan, Wave};
use crate::preflight::CleanError;
use crate::result::{Diagnostic, Severity};
use crate::snapshot::Snapshot;

/// Measure the batch on the clean HEAD (or the work tree): never-loosen check, plan, execute,
/// judge, record, as `options` say.
pub(super) fn measure(ctx: &Context, options: &Options) -> Result<Measured, MeasureError> {
    Ok(begin(ctx, options)?.finish())
}

/// A measurement with every Standard that needs no job judged — read, compared with its
/// baseline, final — before any job of the repository has run. The Standards that need a job
/// wait for [`BeforeJobs::finish`].
pub(crate) struct BeforeJobs<'a> {
    ctx: Context<'a>,
    options: &'a Options,
    head: gix::ObjectId,
    snapshot: Snapshot,
    limits: LimitsCheck,
    plan: Plan,
    outcomes: crate::planner::Outcomes,
    evidence: Option<crate::evidence::Store>,
    /// Per selected Standard: its result, or `None` while it waits for its jobs.
    standards: Vec<Option<StandardResult>>,
    diagnostics: Vec<Diagnostic>,
    advisories: Vec<String>,
}

/// Pin HEAD, check the limits, plan the batch, and measure and judge every Standard that needs
/// no job; nothing of the repository runs.
pub(crate) fn begin<'a>(
    ctx: &Context<'a>,
    options: &'a Options,
) -> Result<BeforeJobs<'a>, MeasureError> {
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
        settings: &ws.settings,
        origin: origin(options),
    };
    let plan = Plan::build(config, &measurable, &components);
    component_configs(config, &plan, runtime).map_err(MeasureError::ComponentConfig)?;
    let trunk = limits
        .summary
        .trunk_commit
        .as_deref()
        .and_then(|t| t.parse().ok());
    let baseline = limits
        .summary
        .baseline
        .as_deref()
        .and_then(|b| b.parse().ok());
    let evidence = evidence_store(repo, options)
        .map(|store| shared_evidence(store, repo, options, head, [trunk, baseline]));
    let outcomes = crate::planner::before_jobs(
        &plan,
        runtime,
        &snapshot,
        (repo.root(), evidence.as_ref()),
        progress,
    );
    let mut advisories = limits.advisories.clone();
    advisories.extend(not_measured);
    let mut begun = BeforeJobs {
        ctx: *ctx,
        options,
        head,
        snapshot,
        limits,
        plan,
        outcomes,
        evidence,
        standards: vec![None; selected.len()],
        diagnostics: Vec::new(),
        advisories,
    };
    begun.judge(Wave::BeforeJobs);
    Ok(begun)
}

impl<'a> BeforeJobs<'a> {
    /// Whether every Standard judged so far passes (measured, and not regressed or swapped).
    pub(crate) fn passes(&self) -> bool {
        self.standards
            .iter()
            .flatten()
            .all(|s| s.measurement != Measurement::Failed && s.verdict.is_none_or(Verdict::passes))
    }

    /// Whether a selected Standard still waits for a job.
    pub(crate) fn waits_for_jobs(&self) -> bool {
        self.standards.iter().any(Option::is_none)
    }

    /// Run the jobs the waiting Standards need, measure those Standards from objects verified
    /// as they are read, judge them, and record the readings.
    pub(crate) fn finish(mut self) -> Measured {
        if self.waits_for_jobs() {
            let ws = self.ctx.ws;
            let log_dir = (!self.options.dry_run).then(|| ws.repo.admin_path("jobs"));
            crate::planner::after_jobs(
                &self.plan,
                self.ctx.runtime,
                &self.snapshot,
                (ws.repo.root(), log_dir.as_deref()),
                &mut self.outcomes,
                self.ctx.progress,
            );
            self.judge(Wave::AfterJobs);
        }
        self.measured(true)
    }

    /// The batch as judged so far, the Standards that wait for a job skipped for `why` (the
    /// gate stopped before its jobs); nothing is recorded.
    pub(crate) fn stop(mut self, why: &str) -> Measured {
        for (slot, standard) in self.standards.iter_mut().zip(self.ctx.selected) {
            if slot.is_none() {
                *slot = Some(skipped(standard, why));
            }
        }
        self.measured(false)
    }

    /// Judge the Standards of `wave` and compare their findings with the baseline's (after the
    /// jobs, none: a reading that needs a job has no baseline, and the evidence store is not
    /// read once the repository's code ran).
    fn judge(&mut self, wave: Wave) {
        let selected: Vec<&StandardDef> = self
            .ctx
            .selected
            .iter()
            .copied()
            .filter(|s| self.plan.waits_for_jobs(&s.name) == (wave == Wave::AfterJobs))
            .collect();
        if selected.is_empty() {
            return;
        }
        let (mut standards, diagnostics) = judge_all(
            &selected,
            &self.plan,
            &self.outcomes,
            &self.limits,
            self.options,
        );
        let verified;
        let snapshot = match wave {
            Wave::BeforeJobs => &self.snapshot,
            Wave::AfterJobs => {
                verified = self.snapshot.verifying();
                &verified
            }
        };
        let repo = &self.ctx.ws.repo;
        let batch = super::swaps::Batch {
            repo,
            runtime: self.ctx.runtime,
            plan: &self.plan,
            outcomes: &self.outcomes,
            snapshot,
            limits: &self.limits,
            head: (!self.options.worktree).then_some(self.head),
            head_commit: self.head,
            evidence: match wave {
                Wave::BeforeJobs => baseline_store(repo, self.options),
                Wave::AfterJobs => None,
            },
            explain: self.options.explain.as_deref(),
            progress: self.ctx.progress,
        };
        // The evidence is written while the findings are compared: both take a while when a
        // reading has many findings, and they share nothing.
        let (plan, outcomes, evidence) = (&self.plan, &self.outcomes, &self.evidence);
        let advisories = std::thread::scope(|scope| {
            if let Some(store) = evidence {
                scope
                    .spawn(|| crate::planner::save_evidence(plan, outcomes, store, snapshot, wave));
            }
            super::swaps::attach(&batch, &selected, &mut standards)
        });
        self.diagnostics.extend(diagnostics);
        self.advisories.extend(advisories);
        for result in standards {
            if let Some(at) = self.ctx.selected.iter().position(|s| s.name == result.name) {
                self.standards[at] = Some(result);
            }
        }
    }

    /// What was measured; the readings recorded for HEAD when `record` says so.
    fn measured(self, record: bool) -> Measured {
        let Context {
            ws,
            config,
            selected,
            ..
        } = self.ctx;
        let repo = &ws.repo;
        let standards: Vec<StandardResult> = self.standards.into_iter().flatten().collect();
        let mut diagnostics = self.limits.diagnostics.clone();
        diagnostics.extend(self.diagnostics);
        diagnostics.extend(late_diagnostics(selected, &standards, &self.outcomes));
        let mut advisories = self.advisories;
        advisories.extend(super::unmatched::advisories(selected, &self.snapshot));
        let baseline = self.limits.summary.baseline.as_deref();
        advisories.extend(super::hidden::advisories(
            selected,
            &self.snapshot,
            baseline,
        ));
        if let Some(store) = &self.evidence {
            advisories.extend(shared_problems(store));
        }
        let recorded = record
            && record_readings(
                repo,
                config,
                self.head,
                &standards,
                self.options,
                &mut advisories,
            );
        Measured {
            commit: self.head.to_string(),
            branch: repo.branch().ok().flatten(),
            standards,
            limits: self.limits,
            counts: self.outcomes.counts.0.clone(),
            diagnostics,
            advisories,
            recorded,
            worktree: self.options.worktree,
            read_sets: read_sets(&self.plan, self.outcomes),
        }
    }
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
    let snapshot = snapshot.map_err(unreadable)?;
    // Offline, blobs a partial clone lacks are named, never fetched.
    let snapshot = match options.no_remote {
        true => snapshot.offline(),
        false => snapshot,
    };
    Ok((head, snapshot, dirty))
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
    let mut diagnostics = Vec::new();
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
    [trunk, baseline]: [Option<gix::ObjectId>; 2],
) -> crate::evidence::Store {
    if options.no_remote {
        return store.local_only();
    }
    let shared = crate::evidence::shared::Shared::open(repo, head, trunk, baseline);
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
