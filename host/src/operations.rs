//! The operation journal: long verbs (`done`, `test`, `standards`, `accept`, `await`) record
//! their phase and final result under a handle in the git common dir; `progress` reads it back.

use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::git::Repo;
use crate::result::{
    Action, Envelope, ErrorSlug, Hint, HintId, Refusal, Refused, Reply, Report, Section,
};
use crate::workspace::Workspace;

pub(crate) const PROGRESS_VERB: &str = "progress";

/// `discern progress [HANDLE]`.
#[derive(Debug, Clone, Default, clap::Args, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProgressRequest {
    /// An operation handle (default: this checkout's latest operation).
    pub handle: Option<String>,
}

const DIR: &str = "operations";
const KEEP: usize = 256;
pub(crate) const VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Operation {
    pub version: u32,
    pub handle: String,
    pub verb: String,
    pub path: String,
    pub branch: Option<String>,
    pub pid: u32,
    pub started_at: f64,
    pub finished_at: Option<f64>,
    pub phase: String,
    pub result: Option<Value>,
}

/// A running operation; finish it with the verb's envelope.
/// Whether a journal writes its operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Recording {
    On,
    Off,
}

pub(crate) struct Journal {
    /// Where the operation is recorded; `None` for a dry run, which records nothing.
    path: Option<PathBuf>,
    operation: Operation,
}

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

fn dir(repo: &Repo) -> PathBuf {
    repo.shared_path(DIR)
}

impl Journal {
    /// Start journalling `verb` for this checkout.
    pub(crate) fn begin(repo: &Repo, verb: &str) -> Self {
        Self::start(Recording::On, repo, verb)
    }

    /// The journal of a dry run: it records nothing (a dry run writes nothing anywhere).
    pub(crate) fn dry_run(repo: &Repo, verb: &str) -> Self {
        Self::start(Recording::Off, repo, verb)
    }

    fn start(recording: Recording, repo: &Repo, verb: &str) -> Self {
        let dry_run = recording == Recording::Off;
        let started_at = now();
        let seed = format!(
            "{}:{}:{started_at}:{verb}",
            std::process::id(),
            repo.root().display()
        );
        let hex = crate::digest::Digest::of(seed.as_bytes()).hex();
        let handle = format!("R1-{}-{}-{}", &hex[..4], &hex[4..8], &hex[8..10]).to_uppercase();
        let operation = Operation {
            version: VERSION,
            handle: handle.clone(),
            verb: verb.to_owned(),
            path: repo.root().display().to_string(),
            branch: repo.branch().ok().flatten(),
            pid: std::process::id(),
            started_at,
            finished_at: None,
            phase: "started".to_owned(),
            result: None,
        };
        let journal = Self {
            path: (!dry_run).then(|| dir(repo).join(format!("{handle}.json"))),
            operation,
        };
        if !dry_run {
            journal.write();
            prune(repo);
        }
        journal
    }

    pub(crate) fn phase(&mut self, phase: &str) {
        self.operation.phase = phase.to_owned();
        self.write();
    }

    /// Record the verb's final result (and return it, with the handle in `data.operation`).
    pub(crate) fn finish(mut self, mut envelope: Envelope) -> Envelope {
        if self.path.is_some()
            && let Some(Value::Object(data)) = envelope.data.as_mut()
        {
            data.insert("operation".to_owned(), json!(self.operation.handle));
        }
        self.operation.phase = "finished".to_owned();
        self.operation.finished_at = Some(now());
        self.operation.result = serde_json::to_value(&envelope).ok();
        self.write();
        envelope
    }

    /// Written as a cache is, without waiting for the disk: a kill leaves the previous write
    /// whole (the rename is atomic), and the torn file a power loss may leave does not parse,
    /// so every reader ([`load`]) skips it as if the operation had not been recorded.
    fn write(&self) {
        if let Some(path) = &self.path
            && let Ok(bytes) = serde_json::to_vec_pretty(&self.operation)
        {
            let _ = crate::fsutil::write_cache(path, &bytes);
        }
    }
}

/// Keep the newest [`KEEP`] records.
fn prune(repo: &Repo) {
    let Ok(entries) = std::fs::read_dir(dir(repo)) else {
        return;
    };
    let mut files: Vec<(SystemTime, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    if files.len() <= KEEP {
        return;
    }
    files.sort();
    for (_, path) in &files[..files.len() - KEEP] {
        let _ = std::fs::remove_file(path);
    }
}

/// The journalled operations of this repository still running: not finished, their process
/// alive. Every checkout's, for `status` to say what each effort is doing now.
pub(crate) fn running(repo: &Repo) -> Vec<Operation> {
    std::fs::read_dir(dir(repo))
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|e| load(&e.path()))
        .filter(|op| op.finished_at.is_none() && alive(op.pid))
        .collect()
}

/// Whether process `pid` still runs (Linux's `/proc`; elsewhere an unfinished record counts).
fn alive(pid: u32) -> bool {
    match cfg!(target_os = "linux") {
        true => PathBuf::from(format!("/proc/{pid}")).exists(),
        false => true,
    }
}

/// The operation recorded at `path`; a missing, torn or foreign file is none.
fn load(path: &std::path::Path) -> Option<Operation> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// `discern progress [HANDLE]`: read an operation back (the latest of this checkout by default).
pub(crate) fn progress(ws: &Workspace, handle: Option<&str>) -> Result<Reply, Refused> {
    let root = ws.root().display().to_string();
    let found = match handle {
        Some(handle) => by_handle(ws, &root, handle),
        None => latest(ws, &root),
    };
    let operation = found?;
    let executor = if operation.finished_at.is_some() {
        Executor::Finished
    } else if PathBuf::from(format!("/proc/{}", operation.pid)).exists() {
        Executor::Running
    } else {
        Executor::Gone
    };
    // The recorded result is the envelope the verb returned; its outcome is read off it.
    let outcome = operation.result.as_ref().map(|r| Outcome {
        ok: &r["ok"],
        error: r.get("error"),
        message: r.get("message"),
    });
    let state = state(&operation, executor, outcome.as_ref());
    let mut lines = vec![
        format!("verb: {}", operation.verb),
        format!("phase: {}", operation.phase),
    ];
    if let Some(message) = outcome.as_ref().and_then(|o| o.message?.as_str()) {
        lines.push(format!("message: {message}"));
    }
    let data = ProgressData {
        handle: &operation.handle,
        operation: OperationFacts {
            verb: &operation.verb,
            path: &operation.path,
            branch: operation.branch.as_deref(),
            started_at: operation.started_at,
            finished_at: operation.finished_at,
        },
        executor,
        phase: &operation.phase,
        outcome: outcome.as_ref(),
        result: operation.result.as_ref(),
    };
    Ok(Reply::new(
        &data,
        Report {
            state,
            sections: vec![Section {
                table: None,
                title: "Operation".to_owned(),
                lines,
            }],
        },
    ))
}

/// The operation `handle`, if this checkout (`root`) recorded it.
fn by_handle(ws: &Workspace, root: &str, handle: &str) -> Result<Operation, Refused> {
    let valid = handle.len() <= 32
        && handle
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-');
    let found = valid
        .then(|| load(&dir(&ws.repo).join(format!("{}.json", handle.to_uppercase()))))
        .flatten();
    match found {
        Some(op) if op.path == root => Ok(op),
        Some(op) => Err(NoProgress::OtherCheckout {
            handle: handle.to_owned(),
            path: op.path,
        }
        .into()),
        None => Err(NoProgress::UnknownHandle {
            handle: handle.to_owned(),
        }
        .into()),
    }
}

/// The latest operation this checkout (`root`) started.
fn latest(ws: &Workspace, root: &str) -> Result<Operation, Refused> {
    std::fs::read_dir(dir(&ws.repo))
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|e| load(&e.path()))
        .filter(|op| op.path == root)
        .max_by(|a, b| a.started_at.total_cmp(&b.started_at))
        .ok_or_else(|| NoProgress::NoneYet.into())
}

/// Why `progress` has nothing to read back, by cause.
#[derive(Debug, thiserror::Error)]
enum NoProgress {
    #[error("Operation {handle} belongs to another checkout ({path}); read it from there.")]
    OtherCheckout { handle: String, path: String },
    #[error("No operation {handle} is recorded in this repository.")]
    UnknownHandle { handle: String },
    #[error("This checkout has no recorded operation yet.")]
    NoneYet,
}

impl Refusal for NoProgress {
    fn slug(&self) -> ErrorSlug {
        match self {
            Self::OtherCheckout { .. } => ErrorSlug::WrongCheckout,
            Self::UnknownHandle { .. } | Self::NoneYet => ErrorSlug::NotFound,
        }
    }

    fn hint(&self) -> Hint {
        match self {
            Self::OtherCheckout { .. } => Hint::next_step(
                HintId::ProgressHandle,
                "Pass `path` (or run from) the checkout that started it.",
            ),
            Self::UnknownHandle { .. } => Hint::next_step(
                HintId::ProgressHandle,
                "Read this checkout's latest operation (no handle)",
            )
            .with_action(Action::new("progress")),
            Self::NoneYet => Hint::next_step(
                HintId::ProgressHandle,
                "Long verbs (done, test, standards, accept, await) record their progress; run one first.",
            ),
        }
    }
}

/// Whether the process that journalled an operation finished it, is still at it, or is gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Executor {
    Finished,
    Running,
    Gone,
}

/// `data` of `progress`.
#[derive(Debug, Serialize)]
struct ProgressData<'a> {
    handle: &'a str,
    operation: OperationFacts<'a>,
    executor: Executor,
    phase: &'a str,
    outcome: Option<&'a Outcome<'a>>,
    result: Option<&'a Value>,
}

#[derive(Debug, Serialize)]
struct OperationFacts<'a> {
    verb: &'a str,
    path: &'a str,
    branch: Option<&'a str>,
    started_at: f64,
    finished_at: Option<f64>,
}

/// The recorded result's outcome.
#[derive(Debug, Serialize)]
struct Outcome<'a> {
    ok: &'a Value,
    error: Option<&'a Value>,
    message: Option<&'a Value>,
}

fn state(operation: &Operation, executor: Executor, outcome: Option<&Outcome>) -> String {
    match (executor, outcome) {
        (Executor::Finished, Some(o)) if *o.ok == true => format!(
            "Operation {} ({}) finished ok.",
            operation.handle, operation.verb
        ),
        (Executor::Finished, _) => format!(
            "Operation {} ({}) finished and failed.",
            operation.handle, operation.verb
        ),
        (Executor::Running, _) => format!(
            "Operation {} ({}) is running: {}.",
            operation.handle, operation.verb, operation.phase
        ),
        _ => format!(
            "Operation {} ({}) stopped without finishing (its process is gone) during {}.",
            operation.handle, operation.verb, operation.phase
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A journal written without fsync may be torn by a power loss: cut short, or its blocks
    /// never written (zeros). Every such file reads as no operation, never as another one.
    #[test]
    fn a_torn_operation_record_reads_as_none() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("R1-ABCD-EF01-23.json");
        let operation = Operation {
            version: VERSION,
            handle: "R1-ABCD-EF01-23".to_owned(),
            verb: "standards".to_owned(),
            path: "/repo".to_owned(),
            branch: Some("main".to_owned()),
            pid: 1,
            started_at: 1.0,
            finished_at: Some(2.0),
            phase: "finished".to_owned(),
            result: Some(json!({ "ok": true, "data": { "standards": [] } })),
        };
        let bytes = serde_json::to_vec_pretty(&operation).expect("json");
        crate::fsutil::write_cache(&path, &bytes).expect("write");
        assert_eq!(load(&path), Some(operation));
        for len in 0..bytes.len() {
            std::fs::write(&path, &bytes[..len]).expect("write");
            assert_eq!(load(&path), None, "cut at {len} of {}", bytes.len());
        }
        std::fs::write(&path, vec![0; bytes.len()]).expect("write");
        assert_eq!(load(&path), None);
    }
}
