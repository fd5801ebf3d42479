//! Jobs as labelled steps: one stage at a time, or check ∥ test together.

use serde::Serialize;

use crate::config::{Config, Job, Stage};
use crate::git::Repo;
use crate::jobs::{self, JobRun};
use crate::result::{Diagnostic, Severity};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Outcome {
    Ok,
    Failed,
}

/// One labelled step of a verb (`steps[]` in the envelope).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Step {
    pub label: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stage: Option<Stage>,
    pub outcome: Outcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reproduce_cmd: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Step {
    pub(crate) fn check(label: &str, ok: bool, note: impl Into<String>) -> Self {
        Self {
            label: label.to_owned(),
            stage: None,
            outcome: if ok { Outcome::Ok } else { Outcome::Failed },
            duration_s: None,
            output_path: None,
            reproduce_cmd: None,
            note: Some(note.into()),
        }
    }

    fn of(job: &Job, run: &JobRun) -> Self {
        Self {
            label: format!("job:{}", job.name),
            stage: Some(job.stage),
            outcome: if run.ok { Outcome::Ok } else { Outcome::Failed },
            duration_s: Some((run.duration_s * 1000.0).round() / 1000.0),
            output_path: Some(run.output_path.display().to_string()),
            reproduce_cmd: Some(run.reproduce_cmd.clone()),
            note: Some(run.summary()),
        }
    }
}

/// The configured jobs of `stages`, skipping the knowably absent (empty command).
pub(crate) fn jobs_of<'c>(config: Option<&'c Config>, stages: &[Stage]) -> Vec<&'c Job> {
    config
        .map(|c| {
            c.jobs
                .iter()
                .filter(|j| stages.contains(&j.stage) && !j.run.trim().is_empty())
                .collect()
        })
        .unwrap_or_default()
}

/// Run `jobs` in `dir`, serially or all at once; the steps and a diagnostic per failure.
pub(crate) fn run(
    jobs: &[&Job],
    repo: &Repo,
    parallel: bool,
    progress: &(dyn Fn(&str) + Sync),
) -> (Vec<Step>, Vec<Diagnostic>) {
    let log_dir = repo.admin_path("jobs");
    let runs: Vec<JobRun> = if parallel && jobs.len() > 1 {
        std::thread::scope(|scope| {
            let handles: Vec<_> = jobs
                .iter()
                .map(|job| {
                    let log_dir = &log_dir;
                    scope.spawn(move || {
                        progress(&format!("job {}", job.name));
                        jobs::run(job, repo.root(), log_dir)
                    })
                })
                .collect();
            handles
                .into_iter()
                .zip(jobs)
                .map(|(h, job)| {
                    h.join()
                        .unwrap_or_else(|_| failed(job, "the job runner panicked"))
                })
                .collect()
        })
    } else {
        jobs.iter()
            .map(|job| {
                progress(&format!("job {}", job.name));
                jobs::run(job, repo.root(), &log_dir)
            })
            .collect()
    };
    let mut steps = Vec::new();
    let mut diagnostics = Vec::new();
    for (job, run) in jobs.iter().zip(&runs) {
        steps.push(Step::of(job, run));
        if !run.ok {
            diagnostics.push(Diagnostic {
                tool: format!("job:{}", job.name),
                severity: Severity::Error,
                message: format!(
                    "{} (full output: {}):\n{}",
                    run.summary(),
                    run.output_path.display(),
                    run.output_tail
                ),
                reproduce_cmd: run.reproduce_cmd.clone(),
                file: None,
                line: None,
            });
        }
    }
    (steps, diagnostics)
}

fn failed(job: &Job, why: &str) -> JobRun {
    JobRun {
        name: job.name.clone(),
        ok: false,
        exit_code: None,
        timed_out: false,
        duration_s: 0.0,
        output_tail: why.to_owned(),
        output_path: std::path::PathBuf::new(),
        reproduce_cmd: job.run.clone(),
        stdout: Vec::new(),
        stdout_truncated: false,
    }
}

pub(crate) fn all_ok(steps: &[Step]) -> bool {
    steps.iter().all(|s| s.outcome != Outcome::Failed)
}
