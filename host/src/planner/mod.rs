//! The planner: each producer identity runs once per batch.
//!
//! Input: the selected Standards. Output: one execution per producer identity = (component
//! digest, canonical config JSON, artifact, needs). Every `per` extent is an execution of
//! `builtin:extent` too, so an extent shared with a Standard (or with another extent) runs
//! once. Jobs named in `needs` run first, once each; their artifacts and stdout reach the
//! producer through `snapshot.artifact`. Independent executions run in parallel up to the
//! number of cores, and those that read the same files together, sharing each blob's read
//! (`shared.rs`). A failed execution fails every dependent; a missing metric fails only
//! the Standard that wanted it.

mod execute;
mod grouped;
mod lacking;
mod outcome;
mod shared;

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};

use crate::config::{Config, Job, Per, ProducerRef, Stage, StandardDef};
use crate::runtime::{Limits, ProducerComponent};

pub(crate) use execute::{Outcomes, Wave, after_jobs, before_jobs, execute, reuse, save_evidence};
pub(crate) use outcome::ExecutionOutcome;

/// One physical producer run.
#[derive(Debug, Clone)]
pub(crate) struct Execution {
    /// `<producer label>#<first 8 hex of the identity>`: stable across runs.
    pub label: String,
    /// The identity itself (canonical JSON): the evidence key.
    pub identity: String,
    pub producer: String,
    /// The component, or why it could not be loaded (fails every dependent).
    pub component: Result<ProducerComponent, String>,
    pub config: String,
    /// Jobs to run first (names in `[jobs]`, or `standards.<name>` for a `run` Standard).
    pub needs: Vec<String>,
    /// The declared artifact handed over (also under the alias `artifact`).
    pub artifact: Option<String>,
    pub limits: Limits,
    /// Standards (and `per:` extents) that read this execution.
    pub dependents: Vec<String>,
    /// Whether a dependent declares `inputs`, so a reused reading must bring back its read set
    /// for the boundary check (otherwise reuse skips rebuilding it).
    pub keep_read_set: bool,
}

/// How one Standard is read from the executions.
#[derive(Debug, Clone)]
pub(crate) struct Reading {
    pub standard: String,
    pub execution: usize,
    pub metric: String,
    /// The denominator: (execution, metric) for an extent; the metric of the same execution
    /// for `per = "<metric>"`.
    pub per: Option<(usize, String)>,
}

#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub executions: Vec<Execution>,
    pub readings: Vec<Reading>,
    /// Every job the executions need, in first-use order, deduplicated.
    pub jobs: Vec<Job>,
}

/// Where a configured producer's component comes from.
pub(crate) trait ComponentSource {
    /// The component for `producer` (a built-in, or a `.wasm` path in the repository).
    fn component(&self, producer: &ProducerRef) -> Result<ProducerComponent, String>;
}

impl Plan {
    /// Group `standards` (already selected and not blocked) by producer identity.
    pub(crate) fn build(
        config: &Config,
        standards: &[&StandardDef],
        components: &dyn ComponentSource,
    ) -> Self {
        let mut plan = Plan {
            executions: Vec::new(),
            readings: Vec::new(),
            jobs: Vec::new(),
        };
        let mut by_identity: BTreeMap<String, usize> = BTreeMap::new();
        for standard in standards {
            let (needs, artifact) = match &standard.run {
                Some(run) => {
                    let job = Job {
                        name: format!("standards.{}", standard.name),
                        stage: Stage::Test,
                        run: run.clone(),
                        artifacts: Vec::new(),
                        inputs: standard.inputs.clone(),
                        timeout: standard.timeout,
                    };
                    let name = job.name.clone();
                    plan.add_job(job);
                    (vec![name], None)
                }
                None => {
                    let mut needs = Vec::new();
                    for need in &standard.needs {
                        let name = need.trim_start_matches("jobs.");
                        if let Some(job) = config.job(name) {
                            plan.add_job(job.clone());
                            needs.push(name.to_owned());
                        }
                    }
                    (needs, standard.artifact.clone())
                }
            };
            let component = components.component(&standard.producer);
            let execution = plan.execution(
                &mut by_identity,
                standard.producer.label(),
                component,
                &standard.config,
                needs,
                artifact,
                timeout(standard.timeout),
                &standard.name,
            );
            plan.executions[execution].keep_read_set |= standard.inputs.is_some();
            let per = match &standard.per {
                None => None,
                Some(Per::Metric(metric)) => Some((execution, metric.clone())),
                Some(Per::Extent { kind, paths }) => {
                    let extent = plan.execution(
                        &mut by_identity,
                        "builtin:extent".to_owned(),
                        components.component(&ProducerRef::Builtin("extent".to_owned())),
                        &json!({ "paths": paths }),
                        Vec::new(),
                        None,
                        timeout(0.0),
                        &format!("{} (per {})", standard.name, kind.as_str()),
                    );
                    Some((extent, kind.as_str().to_owned()))
                }
            };
            plan.readings.push(Reading {
                standard: standard.name.clone(),
                execution,
                metric: standard.metric.clone(),
                per,
            });
        }
        plan
    }

    fn add_job(&mut self, job: Job) {
        if !self.jobs.iter().any(|j| j.name == job.name) {
            self.jobs.push(job);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn execution(
        &mut self,
        by_identity: &mut BTreeMap<String, usize>,
        producer: String,
        component: Result<ProducerComponent, String>,
        config: &Value,
        mut needs: Vec<String>,
        artifact: Option<String>,
        timeout: Duration,
        dependent: &str,
    ) -> usize {
        needs.sort();
        needs.dedup();
        let config = crate::config::canonical_json(config);
        let digest = match &component {
            Ok(c) => c.digest().hex(),
            Err(_) => format!("unavailable:{producer}"),
        };
        let identity = crate::config::canonical_json(&json!({
            "component": digest,
            "config": config,
            "artifact": artifact,
            "needs": needs,
        }));
        let index = match by_identity.get(&identity) {
            Some(&index) => index,
            None => {
                let short = &crate::digest::Digest::of(identity.as_bytes()).hex()[..8];
                self.executions.push(Execution {
                    label: format!("{producer}#{short}"),
                    identity: identity.clone(),
                    producer,
                    component,
                    config,
                    needs,
                    artifact,
                    limits: Limits::with_timeout(timeout),
                    dependents: Vec::new(),
                    keep_read_set: false,
                });
                by_identity.insert(identity, self.executions.len() - 1);
                self.executions.len() - 1
            }
        };
        let execution = &mut self.executions[index];
        // Equal identities with different budgets: the largest budget wins.
        execution.limits.timeout = execution.limits.timeout.max(timeout);
        execution.dependents.push(dependent.to_owned());
        index
    }

    /// Whether `standard`'s reading (or its `per` extent) needs a job: it is measured only after
    /// the jobs ran ([`after_jobs`]). `false` for a Standard not in the plan.
    pub(crate) fn waits_for_jobs(&self, standard: &str) -> bool {
        self.readings
            .iter()
            .filter(|r| r.standard == standard)
            .flat_map(|r| std::iter::once(r.execution).chain(r.per.as_ref().map(|p| p.0)))
            .any(|at| self.executions.get(at).is_some_and(|e| !e.needs.is_empty()))
    }

    /// The plan as data: what would run, for whom (`--dry-run` and `data.plan`).
    pub(crate) fn describe(&self) -> Value {
        json!({
            "jobs": self.jobs.iter().map(|j| json!({"name": j.name, "run": j.run})).collect::<Vec<_>>(),
            "executions": self.executions.iter().map(|e| json!({
                "label": e.label,
                "producer": e.producer,
                "config": serde_json::from_str::<Value>(&e.config).unwrap_or(Value::Null),
                "needs": e.needs,
                "artifact": e.artifact,
                "timeout_s": e.limits.timeout.as_secs_f64(),
                "standards": e.dependents,
                "measurement": "measure",
            })).collect::<Vec<_>>(),
        })
    }
}

fn timeout(seconds: f64) -> Duration {
    if seconds > 0.0 {
        let seconds = seconds.min(crate::config::MAX_TIMEOUT_S);
        Duration::try_from_secs_f64(seconds).unwrap_or(Limits::DEFAULT_TIMEOUT)
    } else {
        Limits::DEFAULT_TIMEOUT
    }
}

/// A producer identity's label → physical run count, for `data.producer_executions`.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub(crate) struct ExecutionCounts(pub BTreeMap<String, u32>);

#[cfg(test)]
mod tests {
    use super::*;

    struct Builtins;

    impl ComponentSource for Builtins {
        fn component(&self, producer: &ProducerRef) -> Result<ProducerComponent, String> {
            match producer {
                ProducerRef::Builtin(name) => {
                    crate::builtins::component(name).ok_or_else(|| name.clone())
                }
                other => Err(format!("{}: not found", other.label())),
            }
        }
    }

    #[test]
    fn equal_identities_share_one_execution_and_extents_are_shared() {
        let config = Config::parse(
            r#"
            [standards.todo]
            direction = "down"
            limit = 1
            producer = "builtin:pattern"
            config = { pattern = "TODO", paths = ["src/**"] }
            metric = "matches"
            per = { lines = ["src/**"] }
            scale = 1000
            [standards.todo_files]
            direction = "down"
            limit = 1
            producer = "builtin:pattern"
            config = { paths = ["src/**"], pattern = "TODO" }
            metric = "files"
            [standards.lines]
            direction = "down"
            limit = 1
            producer = "builtin:extent"
            config = { paths = ["src/**"] }
            [standards.missing]
            direction = "down"
            limit = 1
            producer = "tools/missing.wasm"
            "#,
        )
        .expect("test fixture");
        let selected: Vec<&StandardDef> = config.standards.iter().collect();
        let plan = Plan::build(&config, &selected, &Builtins);
        assert_eq!(plan.executions.len(), 3, "{:#?}", plan.describe());
        assert_eq!(plan.readings[0].execution, plan.readings[1].execution);
        // The `per` extent of `todo` is the same execution the `lines` Standard reads.
        assert_eq!(
            plan.readings[0].per.as_ref().expect("test fixture").0,
            plan.readings[2].execution
        );
        assert!(plan.executions[2].component.is_err());
        assert_eq!(plan.executions[1].dependents, ["todo (per lines)", "lines"]);
    }
}
