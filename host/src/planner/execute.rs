//! Running a plan: jobs first (once each), then every execution, in parallel up to the core count.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::outcome::ExecutionOutcome;
use super::{Execution, ExecutionCounts, Plan};
use crate::evidence::Store;
use crate::jobs::{self, JobRun};
use crate::runtime::{Artifacts, Metric, RunOutput, Runtime};
use crate::snapshot::Snapshot;

#[derive(Debug, Clone)]
pub(crate) struct Outcomes {
    pub executions: Vec<ExecutionOutcome>,
    pub jobs: Vec<JobRun>,
    pub counts: ExecutionCounts,
    /// Per execution: whether it waits for its jobs ([`after_jobs`] runs it).
    waiting: Vec<bool>,
    /// Per execution: whether it ran after the jobs.
    after: Vec<bool>,
    /// How many producers started so far (the progress count goes on from there).
    started: usize,
}

/// Run `plan`: [`before_jobs`], then [`after_jobs`]. What ran is recorded by the caller, with
/// [`save_evidence`] (`standards` does that while it compares findings: writing a large
/// reading's findings takes a while).
pub(crate) fn execute(
    plan: &Plan,
    runtime: &Runtime,
    snapshot: &Snapshot,
    root: &Path,
    log_dir: Option<&Path>,
    evidence: Option<&Store>,
    progress: &(dyn Fn(&str) + Sync),
) -> Outcomes {
    let mut outcomes = before_jobs(plan, runtime, snapshot, (root, evidence), progress);
    after_jobs(
        plan,
        runtime,
        snapshot,
        (root, log_dir),
        &mut outcomes,
        progress,
    );
    outcomes
}

/// Reuse valid evidence, then run every execution that needs no job against `snapshot`:
/// nothing of the repository has run yet, so what these read is what the commit holds. The
/// executions that need a job wait in the outcomes for [`after_jobs`]. `root` is the
/// checkout a declared artifact is read from; `evidence` is `None` when nothing may be reused
/// (a work-tree snapshot, a fresh measurement). `progress` hears about each step as it starts.
pub(crate) fn before_jobs(
    plan: &Plan,
    runtime: &Runtime,
    snapshot: &Snapshot,
    (root, evidence): (&Path, Option<&Store>),
    progress: &(dyn Fn(&str) + Sync),
) -> Outcomes {
    let mut reused = reuse_all(plan, runtime, snapshot, evidence);
    fetch_missing(snapshot, &mut reused, progress);
    let waiting: Vec<bool> = plan
        .executions
        .iter()
        .zip(&reused)
        .map(|(e, r)| r.is_none() && !e.needs.is_empty())
        .collect();
    let to_run = reused.iter().filter(|r| r.is_none()).count();
    let pending = Pending {
        plan,
        runtime,
        snapshot,
        progress,
        prepared: plan
            .executions
            .iter()
            .map(|execution| prepare(execution, &BTreeMap::new(), root, None))
            .collect(),
        to_run,
        memo: evidence,
        started: AtomicUsize::new(0),
        cancel: crate::cancel::current(),
    };
    let slots = reused
        .into_iter()
        .zip(&waiting)
        .map(|(slot, &waits)| match waits {
            true => Some(ExecutionOutcome::ran(Err(WAITING.to_owned()), 0)),
            false => slot,
        })
        .collect();
    let executions = pending.run_all(slots);
    Outcomes {
        counts: counts(plan, &executions),
        executions,
        jobs: Vec::new(),
        after: vec![false; waiting.len()],
        waiting,
        started: pending.started.into_inner(),
    }
}

/// The blobs a partial clone lacks fetched before any producer runs (`lacking.rs`; nothing when
/// all was reused); when they cannot be had, every execution that would run fails with why.
fn fetch_missing(
    snapshot: &Snapshot,
    reused: &mut [Option<ExecutionOutcome>],
    progress: &(dyn Fn(&str) + Sync),
) {
    if reused.iter().any(Option::is_none)
        && let Err(e) = super::lacking::fetch_lacking(snapshot, progress)
    {
        for slot in reused.iter_mut().filter(|r| r.is_none()) {
            *slot = Some(ExecutionOutcome::ran(Err(e.to_string()), 0));
        }
    }
}

/// What an execution that needs a job holds until [`after_jobs`] runs it.
const WAITING: &str = "this reading waits for its jobs, which have not run";

/// Run the jobs the waiting executions need in `root` (the checkout of the snapshot's commit;
/// none in a dry run, `log_dir` `None`), then those executions. The jobs are the repository's
/// own code and may rewrite its object store: from here on every object is re-hashed as it is
/// read (a mismatch fails the reading, never gives one), and nothing is taken from the
/// evidence store.
pub(crate) fn after_jobs(
    plan: &Plan,
    runtime: &Runtime,
    snapshot: &Snapshot,
    (root, log_dir): (&Path, Option<&Path>),
    outcomes: &mut Outcomes,
    progress: &(dyn Fn(&str) + Sync),
) {
    if !outcomes.waiting.iter().any(|&w| w) {
        return;
    }
    preload(plan, runtime, &outcomes.waiting);
    let mut job_runs = run_jobs(plan, &outcomes.waiting, root, log_dir, progress);
    let verified = snapshot.verifying();
    let pending = Pending {
        plan,
        runtime,
        snapshot: &verified,
        progress,
        prepared: plan
            .executions
            .iter()
            .map(|execution| prepare(execution, &job_runs, root, log_dir))
            .collect(),
        to_run: outcomes.waiting.iter().filter(|&&w| w).count() + outcomes.started,
        memo: None,
        started: AtomicUsize::new(outcomes.started),
        cancel: crate::cancel::current(),
    };
    let slots = std::mem::take(&mut outcomes.executions)
        .into_iter()
        .zip(&outcomes.waiting)
        .map(|(outcome, &waits)| (!waits).then_some(outcome))
        .collect();
    outcomes.executions = pending.run_all(slots);
    outcomes.counts = counts(plan, &outcomes.executions);
    outcomes.jobs = plan
        .jobs
        .iter()
        .filter_map(|j| job_runs.remove(j.name.as_str()))
        .collect();
    outcomes.after = std::mem::replace(&mut outcomes.waiting, vec![false; plan.executions.len()]);
}

/// Load every component the waiting executions run — compiled, or read from the compile cache
/// — before the first job starts: a job may write the cache (it runs as this user), and what
/// it wrote must never become the machine code of a reading. A component that does not load
/// is left to fail its execution with that error.
fn preload(plan: &Plan, runtime: &Runtime, waiting: &[bool]) {
    for (execution, _) in plan.executions.iter().zip(waiting).filter(|(_, w)| **w) {
        if let Ok(component) = &execution.component {
            let _ = runtime.load(component);
        }
    }
}

/// Which executions of a batch: those that run before any job, or those that wait for one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wave {
    BeforeJobs,
    AfterJobs,
}

/// How many times each execution's producer ran.
fn counts(plan: &Plan, executions: &[ExecutionOutcome]) -> ExecutionCounts {
    ExecutionCounts(
        plan.executions
            .iter()
            .zip(executions)
            .map(|(e, o)| (e.label.clone(), o.runs))
            .collect(),
    )
}

/// Record the evidence of every execution of `plan` in `wave` that ran on `snapshot` (not
/// reused, not failed) in `store`. A failed write is a cache entry missing, never an error.
pub(crate) fn save_evidence(
    plan: &Plan,
    outcomes: &Outcomes,
    store: &Store,
    snapshot: &Snapshot,
    wave: Wave,
) {
    let commit = snapshot.commit().to_string();
    let executions = plan.executions.iter().zip(&outcomes.executions);
    for ((execution, outcome), &after) in executions.zip(&outcomes.after) {
        if after != (wave == Wave::AfterJobs) {
            continue;
        }
        if let (1, Ok(output)) = (outcome.runs, &outcome.result) {
            let _ = store.save(
                &execution.identity,
                &commit,
                (&output.metrics, outcome.encoded()),
                &output.read_set,
            );
        }
    }
}

/// The recorded outcome of each execution of `plan` that `evidence` holds a valid one for,
/// looked up in parallel (reading an entry's findings back takes a while when it has many). A
/// lookup that panicked is a miss.
fn reuse_all(
    plan: &Plan,
    runtime: &Runtime,
    snapshot: &Snapshot,
    evidence: Option<&Store>,
) -> Vec<Option<ExecutionOutcome>> {
    if evidence.is_none() {
        return vec![None; plan.executions.len()];
    }
    let cores = crate::cores::cores();
    let next = AtomicUsize::new(0);
    let mut reused = vec![None; plan.executions.len()];
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..cores.min(plan.executions.len()))
            .map(|_| {
                scope.spawn(|| {
                    let mut found = Vec::new();
                    loop {
                        let at = next.fetch_add(1, Ordering::Relaxed);
                        let Some(execution) = plan.executions.get(at) else {
                            return found;
                        };
                        found.push((at, reuse(execution, runtime, snapshot, evidence)));
                    }
                })
            })
            .collect();
        for found in workers.into_iter().filter_map(|w| w.join().ok()) {
            for (at, outcome) in found {
                reused[at] = outcome;
            }
        }
    });
    reused
}

/// The outcome recorded for `execution` on `snapshot`, if `evidence` holds a valid one.
pub(crate) fn reuse(
    execution: &Execution,
    runtime: &Runtime,
    snapshot: &Snapshot,
    evidence: Option<&Store>,
) -> Option<ExecutionOutcome> {
    let store = evidence?;
    execution.component.as_ref().ok()?;
    let entry = store.lookup(&execution.identity, snapshot)?;
    if let Some(trace) = runtime.trace() {
        let reuse = crate::runtime::Reuse {
            execution: &execution.label,
            standards: &execution.dependents,
            evidence_key: &Store::key(&execution.identity),
            reused_from: &entry.commit,
        };
        trace.reused(&execution.producer, &reuse);
    }
    // The findings stay in the entry, encoded, until asked for (`ExecutionOutcome::metrics`).
    let metrics: Vec<Metric> = entry
        .metrics
        .iter()
        .map(|m| Metric {
            name: m.name.clone(),
            value: m.value,
            findings: Vec::new(),
            findings_dropped: 0,
            counted: m.counted,
        })
        .collect();
    Some(ExecutionOutcome {
        result: Ok(RunOutput {
            metrics,
            read_set: if execution.keep_read_set {
                entry.read_set(snapshot)
            } else {
                crate::runtime::ReadSet::default()
            },
            stderr: String::new(),
            fuel_consumed: 0,
        }),
        runs: 0,
        encoded: None,
        provenance: entry.provenance(),
        reused_from: Some(entry.commit.clone()),
        evidence: Some(Arc::new(entry)),
        decoded: OnceLock::new(),
    })
}

/// Run each job that a waiting execution needs, once; none in a dry run (no `log_dir`).
fn run_jobs<'p>(
    plan: &'p Plan,
    waiting: &[bool],
    root: &Path,
    log_dir: Option<&Path>,
    progress: &(dyn Fn(&str) + Sync),
) -> BTreeMap<&'p str, JobRun> {
    let mut job_runs = BTreeMap::new();
    for job in &plan.jobs {
        let needed = plan
            .executions
            .iter()
            .zip(waiting)
            .any(|(e, &waits)| waits && e.needs.contains(&job.name));
        if needed && let Some(log_dir) = log_dir {
            progress(&format!("job {}", job.name));
            job_runs.insert(job.name.as_str(), jobs::run(job, root, log_dir));
        }
    }
    job_runs
}

/// What `execution` reads through `snapshot.artifact`: its jobs' stdout and its declared
/// artifact, or why it cannot run.
fn prepare(
    execution: &Execution,
    job_runs: &BTreeMap<&str, JobRun>,
    root: &Path,
    log_dir: Option<&Path>,
) -> Result<Arc<Artifacts>, String> {
    let mut artifacts = Artifacts::new();
    for need in &execution.needs {
        let Some(run) = job_runs.get(need.as_str()) else {
            return Err(match log_dir {
                Some(_) => format!("job {need} did not run"),
                None => format!("a dry run runs no job, and this reading needs job {need}"),
            });
        };
        if !run.ok {
            return Err(format!(
                "{}; the producer {} did not run (full output: {})",
                run.summary(),
                execution.producer,
                run.output_path.display()
            ));
        }
        artifacts.insert("stdout", run.stdout.clone());
    }
    if let Some(path) = &execution.artifact {
        let bytes = read_confined(root, path).map_err(|e| {
            format!(
                "the artifact {path} cannot be read inside the checkout after {} ran: {e}",
                execution.needs.join(", ")
            )
        })?;
        let bytes: Arc<[u8]> = bytes.into();
        artifacts.insert(path.clone(), Arc::clone(&bytes));
        artifacts.insert("artifact", bytes);
    }
    Ok(Arc::new(artifacts))
}

/// Read `path` inside `root` only: a path with `..`, an absolute path or a symlink that
/// leaves the checkout is refused, never followed (a job's output is untrusted).
fn read_confined(root: &Path, path: &str) -> std::io::Result<Vec<u8>> {
    let dir = cap_std::fs::Dir::open_ambient_dir(root, cap_std::ambient_authority())?;
    dir.read(path)
}

/// What the workers share: the plan, where each execution runs, and the progress count.
struct Pending<'a> {
    plan: &'a Plan,
    runtime: &'a Runtime,
    snapshot: &'a Snapshot,
    progress: &'a (dyn Fn(&str) + Sync),
    /// Per execution: its artifacts, or why it cannot run.
    prepared: Vec<Result<Arc<Artifacts>, String>>,
    to_run: usize,
    started: AtomicUsize,
    /// The call's cancellation, checked before each producer starts.
    cancel: Option<crate::cancel::Cancel>,
    /// Where built-ins that run by groups remember their groups' parts (`grouped.rs`).
    memo: Option<&'a Store>,
}

impl Pending<'_> {
    /// Run every execution that was not reused, in parallel up to the core count, those that
    /// share their reads (`shared.rs`) first.
    fn run_all(&self, reused: Vec<Option<ExecutionOutcome>>) -> Vec<ExecutionOutcome> {
        let run: Vec<bool> = reused.iter().map(Option::is_none).collect();
        let threads = crate::cores::cores().min(self.plan.executions.len()).max(1);
        let batch = super::shared::Batch::new(self.plan, self.snapshot, &run, threads);
        let order = batch.order();
        let slots: Vec<Mutex<Option<ExecutionOutcome>>> =
            reused.into_iter().map(Mutex::new).collect();
        let next = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(|| {
                    while let Some(&index) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                        let Some(execution) = self.plan.executions.get(index) else {
                            break;
                        };
                        if slots[index].lock().map(|s| s.is_some()).unwrap_or(true) {
                            continue;
                        }
                        let member = batch.join(index);
                        let shared = member.as_ref().map(|m| self.snapshot.read_by(m));
                        let snapshot = shared.as_ref().unwrap_or(self.snapshot);
                        let outcome = self.run(execution, &self.prepared[index], snapshot);
                        if let Ok(mut slot) = slots[index].lock() {
                            *slot = Some(outcome);
                        }
                    }
                });
            }
        });
        slots
            .into_iter()
            .map(|slot| {
                slot.into_inner().ok().flatten().unwrap_or_else(|| {
                    ExecutionOutcome::ran(Err("the execution did not finish".to_owned()), 0)
                })
            })
            .collect()
    }

    /// Run one execution on `snapshot`; a component or job failure runs nothing.
    fn run(
        &self,
        execution: &Execution,
        prepared: &Result<Arc<Artifacts>, String>,
        snapshot: &Snapshot,
    ) -> ExecutionOutcome {
        match (&execution.component, prepared) {
            (Err(e), _) | (_, Err(e)) => ExecutionOutcome::ran(Err(e.clone()), 0),
            _ if self.cancel.as_ref().is_some_and(|c| c.is_cancelled()) => {
                ExecutionOutcome::ran(Err(crate::cancel::CANCELLED.to_owned()), 0)
            }
            (Ok(component), Ok(artifacts)) => {
                let n = self.started.fetch_add(1, Ordering::Relaxed) + 1;
                (self.progress)(&format!(
                    "[{n}/{}] producer {}",
                    self.to_run, execution.label
                ));
                let grouped = super::grouped::Grouped {
                    runtime: self.runtime,
                    execution,
                    component,
                    snapshot,
                };
                if let Some(output) = self.memo.and_then(|store| grouped.run(store)) {
                    return ExecutionOutcome::grouped(output);
                }
                let result = self
                    .runtime
                    .run(
                        component,
                        &execution.config,
                        snapshot,
                        Arc::clone(artifacts),
                        &execution.limits,
                    )
                    .map_err(|e| e.to_string());
                ExecutionOutcome::ran(result, 1)
            }
        }
    }
}
