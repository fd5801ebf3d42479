//! `[jobs]`: known jobs as command strings, custom jobs as tables with a stage.

use toml_edit::{Item, TableLike};

use super::{JOB_KEYS, KNOWN_JOBS, Reader, kind, path_problem, span_of, valid_name};
use crate::config::jobs::{Job, Stage};

impl Reader<'_> {
    pub(super) fn jobs(&mut self, item: Option<&Item>) -> Vec<Job> {
        let Some(item) = item else {
            return Vec::new();
        };
        let Some(table) = item.as_table_like() else {
            self.issue_at(
                "jobs",
                None,
                item.span(),
                format!("must be a table, found {}", kind(item)),
            );
            return Vec::new();
        };
        let mut jobs = Vec::new();
        for (name, job) in table.iter() {
            if !valid_name(name) {
                self.issue_at(
                    "jobs",
                    Some(name),
                    job.span(),
                    "job names use only A-Z, a-z, 0-9, _ and -".into(),
                );
                continue;
            }
            if let Some(job) = self.job(name, job) {
                jobs.push(job);
            }
        }
        jobs
    }

    /// One `[jobs]` entry: a known job's command string, or a table.
    fn job(&mut self, name: &str, job: &Item) -> Option<Job> {
        let known = Stage::of_known(name);
        if let Some(run) = job.as_str() {
            return self.job_command(name, job, known, run);
        }
        if job.as_table_like().is_none() {
            self.issue_at(
                "jobs",
                Some(name),
                job.span(),
                format!("must be a command string or a table, found {}", kind(job)),
            );
            return None;
        }
        let table_name = format!("jobs.{name}");
        let spec = self.table(Some(job), &table_name, JOB_KEYS);
        let stage = self.stage(spec, &table_name, name, known, job);
        let run = self.string(spec, &table_name, "run");
        if run.is_none() && spec.and_then(|t| t.get("run")).is_none() {
            self.issue_at(
                &table_name,
                Some("run"),
                job.span(),
                "is required: the command to run".into(),
            );
        }
        let artifacts = self.artifacts(spec, &table_name);
        let inputs = self.string_list(spec, &table_name, "inputs", false);
        let timeout = self.timeout(spec, &table_name).unwrap_or(0.0);
        Some(Job {
            name: name.to_owned(),
            stage: stage?,
            run: run?,
            artifacts,
            inputs,
            timeout,
        })
    }

    /// `name = "command"`: only a known job, whose stage is its own, may be written so.
    fn job_command(
        &mut self,
        name: &str,
        job: &Item,
        known: Option<Stage>,
        run: &str,
    ) -> Option<Job> {
        let Some(stage) = known else {
            self.issue_at(
                "jobs",
                Some(name),
                job.span(),
                format!(
                    "a custom job is a table with `stage` and `run` (the known jobs written as a string are: {})",
                    KNOWN_JOBS.join(", ")
                ),
            );
            return None;
        };
        Some(Job {
            name: name.to_owned(),
            stage,
            run: run.to_owned(),
            artifacts: Vec::new(),
            inputs: None,
            timeout: 0.0,
        })
    }

    /// A table job's stage: a known job's own, which `stage` may only repeat.
    fn stage(
        &mut self,
        spec: Option<&dyn TableLike>,
        table_name: &str,
        name: &str,
        known: Option<Stage>,
        job: &Item,
    ) -> Option<Stage> {
        match (self.string(spec, table_name, "stage"), known) {
            (Some(s), known) => match Stage::parse(&s) {
                Some(stage) if known.is_none_or(|k| k == stage) => Some(stage),
                Some(_) => {
                    self.issue_at(
                        table_name,
                        Some("stage"),
                        span_of(spec, "stage"),
                        format!("the {name} job always runs in its own stage; remove `stage`"),
                    );
                    None
                }
                None => {
                    self.issue_at(
                        table_name,
                        Some("stage"),
                        span_of(spec, "stage"),
                        format!("unknown stage {s:?} (allowed: {})", Stage::NAMES),
                    );
                    None
                }
            },
            (None, Some(stage)) => Some(stage),
            (None, None) => {
                self.issue_at(
                    table_name,
                    Some("stage"),
                    job.span(),
                    format!("a custom job needs a `stage` (one of: {})", Stage::NAMES),
                );
                None
            }
        }
    }

    /// `artifacts`: plain repository-relative paths.
    fn artifacts(&mut self, spec: Option<&dyn TableLike>, table_name: &str) -> Vec<String> {
        let artifacts = self
            .string_list(spec, table_name, "artifacts", true)
            .unwrap_or_default();
        for artifact in &artifacts {
            if let Some(problem) = path_problem(artifact) {
                self.issue_at(
                    table_name,
                    Some("artifacts"),
                    span_of(spec, "artifacts"),
                    problem,
                );
            }
        }
        artifacts
    }
}
