//! `discern producers run PATH.wasm --config JSON [--rev REV | --force]`: one component run
//! against one commit (or the work tree) in the same sandbox a Standard uses, its config
//! checked against the schema it publishes; metrics, findings and stderr printed, nothing
//! written (no `discern.toml` edit, no evidence, no recorded reading).

use std::path::Path;
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Map, Value};

use super::{RUN_VERB, RunRequest};
use crate::config::ConfigSchema;
use crate::git::short;
use crate::result::{
    Action, Diagnostic, ErrorSlug, Hint, HintId, Refusal, Refused, Reply, Report, Section, Severity,
};
use crate::runtime::{Artifacts, Info, Limits, Metric, ProducerComponent, RunOutput, Runtime};
use crate::snapshot::Snapshot;
use crate::workspace::Workspace;

/// How many findings the text report shows (`--json` has them all).
const SHOWN_FINDINGS: usize = 50;

/// `data` of `producers run`.
#[derive(Debug, Serialize)]
struct RunData<'a> {
    component: &'a str,
    sha256: String,
    name: &'a str,
    version: &'a str,
    wit_version: &'a str,
    /// The commit measured (with `worktree`, the commit the work tree sits on).
    commit: String,
    worktree: bool,
    metrics: &'a [Metric],
    stderr: &'a str,
    fuel_consumed: u64,
    /// How many files it listed and read through the snapshot.
    listed: usize,
    read: usize,
}

/// Run the component at `request.path` (relative to `dir`) against the commit or work tree.
pub(super) fn run(
    ws: &Workspace,
    runtime: &Runtime,
    dir: &Path,
    request: &RunRequest,
) -> Result<Reply, Refused> {
    execute(runtime, &prepare(ws, runtime, dir, request)?)
}

/// Everything checked before the component runs.
struct Ready {
    component: ProducerComponent,
    wit_version: String,
    info: Info,
    config: String,
    snapshot: Snapshot,
}

fn prepare(
    ws: &Workspace,
    runtime: &Runtime,
    dir: &Path,
    request: &RunRequest,
) -> Result<Ready, Refused> {
    let component = ProducerComponent::from_file(request.path.as_str(), &dir.join(&request.path))
        .map_err(|e| missing(&request.path, &e))?;
    let config = config_object(&request.config)?;
    let snapshot = snapshot(ws, request)?;
    let loaded = runtime
        .load(&component)
        .map_err(|e| not_runnable(&e.to_string()))?;
    let info = runtime
        .describe(&component)
        .map_err(|e| not_runnable(&e.to_string()))?;
    check_config(&component, &info, &config)?;
    Ok(Ready {
        component,
        wit_version: loaded.wit_version.clone(),
        info,
        config: crate::config::canonical_json(&Value::Object(config)),
        snapshot,
    })
}

fn execute(runtime: &Runtime, ready: &Ready) -> Result<Reply, Refused> {
    let output = runtime.run(
        &ready.component,
        &ready.config,
        &ready.snapshot,
        Arc::new(Artifacts::new()),
        &Limits::default(),
    );
    match output {
        Ok(output) => Ok(measured(ready, &output)),
        Err(e) => {
            Err(Refused::from(NotRun::Failed(e.to_string()))
                .with_data(RunFailed { stderr: e.stderr }))
        }
    }
}

/// `data` of a producer run that failed: what it wrote to stderr.
#[derive(serde::Serialize)]
struct RunFailed {
    stderr: Option<String>,
}

fn measured(ready: &Ready, output: &RunOutput) -> Reply {
    let commit = ready.snapshot.commit().to_string();
    let worktree = ready.snapshot.is_worktree();
    let data = RunData {
        component: ready.component.label(),
        sha256: ready.component.digest().hex(),
        name: &ready.info.name,
        version: &ready.info.version,
        wit_version: &ready.wit_version,
        commit: commit.clone(),
        worktree,
        metrics: &output.metrics,
        stderr: &output.stderr,
        fuel_consumed: output.fuel_consumed,
        listed: output.read_set.listed_count(),
        read: output.read_set.read_count(),
    };
    let state = format!(
        "{} v{} ({}) measured {}{}: {} metric(s); nothing was recorded.",
        ready.info.name,
        ready.info.version,
        ready.component.label(),
        short(&commit),
        if worktree {
            " with the work tree's changes"
        } else {
            ""
        },
        output.metrics.len(),
    );
    Reply::new(
        data,
        Report {
            state,
            sections: sections(output),
        },
    )
}

fn sections(output: &RunOutput) -> Vec<Section> {
    let metrics = output
        .metrics
        .iter()
        .map(|m| match m.findings.len() {
            0 => format!("{} = {}", m.name, m.value),
            n => format!(
                "{} = {} ({n} finding{})",
                m.name,
                m.value,
                if n == 1 { "" } else { "s" }
            ),
        })
        .collect();
    let mut sections = vec![Section {
        table: None,
        title: "Metrics".to_owned(),
        lines: metrics,
    }];
    let findings: Vec<String> = output
        .metrics
        .iter()
        .flat_map(|m| {
            m.findings
                .iter()
                .map(move |f| format!("{}: {}", m.name, f.message))
        })
        .collect();
    if !findings.is_empty() {
        let more = findings.len().saturating_sub(SHOWN_FINDINGS);
        let mut lines: Vec<String> = findings.into_iter().take(SHOWN_FINDINGS).collect();
        if more > 0 {
            lines.push(format!("… and {more} more (--json lists every finding)"));
        }
        sections.push(Section {
            table: None,
            title: "Findings".to_owned(),
            lines,
        });
    }
    if !output.stderr.trim().is_empty() {
        sections.push(Section {
            table: None,
            title: "stderr".to_owned(),
            lines: output.stderr.lines().map(str::to_owned).collect(),
        });
    }
    sections
}

/// `--config`: a JSON object, as a Standard's `config` table reaches a producer.
fn config_object(text: &str) -> Result<Map<String, Value>, Refused> {
    let refuse = |why: String| Refused::from(NotRun::ConfigNotObject { why });
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(refuse(format!("found {other}"))),
        Err(e) => Err(refuse(format!("it is not JSON ({e})"))),
    }
}

/// The config against the schema the component publishes, refused as a Standard's would be.
fn check_config(
    component: &ProducerComponent,
    info: &Info,
    config: &Map<String, Value>,
) -> Result<(), Refused> {
    let Some(text) = &info.config_schema else {
        return Ok(());
    };
    let schema = ConfigSchema::parse(component.label(), text)
        .map_err(|e| not_runnable(&format!("producer {} {e}", component.label())))?;
    let problems = schema.problems(config);
    if problems.is_empty() {
        return Ok(());
    }
    let mut refusal = NotRun::ConfigMisfit {
        component: component.label().to_owned(),
        keys: schema.keys().join(", "),
    }
    .refused();
    for problem in problems {
        let key = problem
            .key
            .map_or("config".to_owned(), |k| format!("config.{k}"));
        refusal = refusal.with_diagnostic(Diagnostic {
            tool: "config".to_owned(),
            severity: Severity::Error,
            message: format!("{key}: {}", problem.message),
            reproduce_cmd: format!("discern producers {}", component.label()),
            file: None,
            line: None,
        });
    }
    Err(refusal)
}

/// The commit (`--rev`, default HEAD) or the work tree (`--force`) to measure.
fn snapshot(ws: &Workspace, request: &RunRequest) -> Result<Snapshot, Refused> {
    let repo = &ws.repo;
    let rev = request.rev.as_deref().unwrap_or("HEAD");
    let commit = repo.rev_parse(rev).map_err(|e| NotRun::UnknownRevision {
        rev: rev.to_owned(),
        why: e.to_string(),
        path: request.path.clone(),
    })?;
    let internal = |why: String| {
        Refused::from(NotRun::SnapshotUnreadable {
            commit: short(&commit.to_string()),
            why,
        })
    };
    match request.force {
        true => repo
            .worktree_snapshot(commit)
            .map_err(|e| internal(e.to_string())),
        false => repo.snapshot(commit).map_err(|e| internal(e.to_string())),
    }
}

fn missing(path: &str, e: &std::io::Error) -> Refused {
    NotRun::ComponentMissing {
        path: path.to_owned(),
        why: e.to_string(),
    }
    .into()
}

fn not_runnable(why: &str) -> Refused {
    NotRun::NotRunnable {
        why: why.to_owned(),
    }
    .into()
}

/// Why `producers run` ran nothing, or what failed when it ran.
#[derive(Debug, thiserror::Error)]
enum NotRun {
    #[error("Cannot read the component {path}: {why}.")]
    ComponentMissing { path: String, why: String },
    #[error(
        "--config must be a JSON object, as a Standard's `config` table reaches a producer: {why}."
    )]
    ConfigNotObject { why: String },
    #[error("Cannot measure {rev:?}: {why}.")]
    UnknownRevision {
        rev: String,
        why: String,
        /// The component, for the step past it (the same run on the work tree).
        path: String,
    },
    #[error("Cannot read the snapshot of {commit}: {why}")]
    SnapshotUnreadable { commit: String, why: String },
    #[error("The {why}. Nothing ran.")]
    NotRunnable { why: String },
    #[error(
        "--config does not fit the config schema {component} publishes; nothing ran. Its keys: {keys}."
    )]
    ConfigMisfit { component: String, keys: String },
    /// The run itself failed: its message names the producer and the limit it hit.
    #[error("The {0}")]
    Failed(String),
}

impl Refusal for NotRun {
    fn slug(&self) -> ErrorSlug {
        match self {
            Self::ComponentMissing { .. } | Self::UnknownRevision { .. } => ErrorSlug::NotFound,
            Self::ConfigNotObject { .. } => ErrorSlug::InvalidArguments,
            Self::ConfigMisfit { .. } => ErrorSlug::InvalidConfig,
            Self::SnapshotUnreadable { .. } => ErrorSlug::Internal,
            Self::NotRunnable { .. } | Self::Failed(_) => ErrorSlug::ProducerFailed,
        }
    }

    fn hint(&self) -> Hint {
        match self {
            Self::ComponentMissing { .. } => Hint::next_step(
                HintId::BuildCustomProducer,
                "Build it first (a Rust producer: `cargo build --target wasm32-wasip2 --release`, then target/wasm32-wasip2/release/<name>.wasm), or pass the path of an existing .wasm",
            ),
            Self::ConfigNotObject { .. } => Hint::next_step(
                HintId::SeeHelp,
                "Pass the config as one JSON object, quoted for the shell: --config '{\"paths\": [\"src/**\"]}'",
            ),
            Self::UnknownRevision { path, .. } => Hint::next_step(
                HintId::CommitFirst,
                "Name a commit `git log --oneline` lists (or commit first), or measure the work tree with --force",
            )
            .with_action(Action::new(RUN_VERB).arg("path", path.clone()).flag("force")),
            Self::SnapshotUnreadable { .. } => Hint::next_step(
                HintId::ReportBug,
                "This is a bug in discern or a damaged repository; report it with the message.",
            ),
            Self::NotRunnable { .. } => Hint::next_step(
                HintId::BuildCustomProducer,
                "Build a component for the discern:producer world (`discern producers new NAME --lang rust` scaffolds one), then run it again.",
            ),
            Self::ConfigMisfit { .. } => Hint::next_step(
                HintId::FixConfig,
                "Fix --config as the diagnostics say (`discern producers PATH.wasm` shows the schema), then run it again.",
            ),
            Self::Failed(_) => Hint::next_step(
                HintId::StandardsFixProducer,
                "Fix the producer (its stderr is above) or its --config, rebuild it, and run it again.",
            ),
        }
    }
}
