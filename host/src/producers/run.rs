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
    Action, Diagnostic, Envelope, ErrorSlug, Hint, HintId, Report, Section, Severity,
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
pub fn run(ws: &Workspace, runtime: &Runtime, dir: &Path, request: &RunRequest) -> Envelope {
    match prepare(ws, runtime, dir, request) {
        Ok(ready) => execute(runtime, &ready),
        Err(refusal) => *refusal,
    }
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
) -> Result<Ready, Box<Envelope>> {
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

fn execute(runtime: &Runtime, ready: &Ready) -> Envelope {
    let output = runtime.run(
        &ready.component,
        &ready.config,
        &ready.snapshot,
        Arc::new(Artifacts::new()),
        &Limits::default(),
    );
    match output {
        Ok(output) => measured(ready, &output),
        Err(e) => {
            let mut refusal = Envelope::refusal(
                RUN_VERB,
                ErrorSlug::ProducerFailed,
                format!("The {e}"),
                Hint::next_step(
                    HintId::StandardsFixProducer,
                    "Fix the producer (its stderr is above) or its --config, rebuild it, and run it again.",
                ),
            );
            refusal.data = Some(serde_json::json!({ "stderr": e.stderr }));
            refusal
        }
    }
}

fn measured(ready: &Ready, output: &RunOutput) -> Envelope {
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
        listed: output
            .read_set
            .listings
            .iter()
            .map(|l| l.matched.len())
            .sum(),
        read: output.read_set.reads.len(),
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
    Envelope::ok(
        RUN_VERB,
        serde_json::to_value(data).unwrap_or(Value::Null),
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
fn config_object(text: &str) -> Result<Map<String, Value>, Box<Envelope>> {
    let refuse = |why: String| {
        Box::new(Envelope::refusal(
            RUN_VERB,
            ErrorSlug::InvalidArguments,
            format!(
                "--config must be a JSON object, as a Standard's `config` table reaches a producer: {why}."
            ),
            Hint::next_step(
                HintId::SeeHelp,
                "Pass the config as one JSON object, quoted for the shell: --config '{\"paths\": [\"src/**\"]}'",
            ),
        ))
    };
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
) -> Result<(), Box<Envelope>> {
    let Some(text) = &info.config_schema else {
        return Ok(());
    };
    let schema = ConfigSchema::parse(component.label(), text)
        .map_err(|e| not_runnable(&format!("producer {} {e}", component.label())))?;
    let problems = schema.problems(config);
    if problems.is_empty() {
        return Ok(());
    }
    let mut refusal = Envelope::refusal(
        RUN_VERB,
        ErrorSlug::InvalidConfig,
        format!(
            "--config does not fit the config schema {} publishes; nothing ran. Its keys: {}.",
            component.label(),
            schema.keys().join(", ")
        ),
        Hint::next_step(
            HintId::FixConfig,
            "Fix --config as the diagnostics say (`discern producers PATH.wasm` shows the schema), then run it again.",
        ),
    );
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
    Err(Box::new(refusal))
}

/// The commit (`--rev`, default HEAD) or the work tree (`--force`) to measure.
fn snapshot(ws: &Workspace, request: &RunRequest) -> Result<Snapshot, Box<Envelope>> {
    let repo = &ws.repo;
    let rev = request.rev.as_deref().unwrap_or("HEAD");
    let commit = repo.rev_parse(rev).map_err(|e| {
        Box::new(Envelope::refusal(
            RUN_VERB,
            ErrorSlug::NotFound,
            format!("Cannot measure {rev:?}: {e}."),
            Hint::next_step(
                HintId::CommitFirst,
                "Name a commit `git log --oneline` lists (or commit first), or measure the work tree with --force",
            )
            .with_action(Action::new(RUN_VERB).arg("path", request.path.clone()).flag("force")),
        ))
    })?;
    let internal = |e: String| {
        Box::new(Envelope::refusal(
            RUN_VERB,
            ErrorSlug::Internal,
            format!(
                "Cannot read the snapshot of {}: {e}",
                short(&commit.to_string())
            ),
            Hint::next_step(
                HintId::ReportBug,
                "This is a bug in discern or a damaged repository; report it with the message.",
            ),
        ))
    };
    match request.force {
        true => repo
            .worktree_snapshot(commit)
            .map_err(|e| internal(e.to_string())),
        false => repo.snapshot(commit).map_err(|e| internal(e.to_string())),
    }
}

fn missing(path: &str, e: &std::io::Error) -> Box<Envelope> {
    Box::new(Envelope::refusal(
        RUN_VERB,
        ErrorSlug::NotFound,
        format!("Cannot read the component {path}: {e}."),
        Hint::next_step(
            HintId::BuildCustomProducer,
            "Build it first (a Rust producer: `cargo build --target wasm32-wasip2 --release`, then target/wasm32-wasip2/release/<name>.wasm), or pass the path of an existing .wasm",
        ),
    ))
}

fn not_runnable(why: &str) -> Box<Envelope> {
    Box::new(Envelope::refusal(
        RUN_VERB,
        ErrorSlug::ProducerFailed,
        format!("The {why}. Nothing ran."),
        Hint::next_step(
            HintId::BuildCustomProducer,
            "Build a component for the discern:producer world (`discern producers new NAME --lang rust` scaffolds one), then run it again.",
        ),
    ))
}
