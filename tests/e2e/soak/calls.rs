//! How an act becomes a discern call on each surface (the CLI's arguments, an MCP tool and its
//! arguments), a CLI call run and perhaps killed, and what a call came to: its outcome, whether
//! a refusal names the step past it, and the step it suggests.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::REASON;
use super::ledger::Shared;
use super::mix::Act;
use crate::support::cache_dir;

/// A call that runs longer than this is recorded as hung and killed.
pub(super) const HUNG: Duration = Duration::from_secs(180);

/// What one call came to.
pub(super) enum Outcome {
    Ok(Value),
    Refused(Value),
    Killed,
    /// The checkout it was to run in is gone.
    Vanished,
    /// No envelope, an internal error, a protocol error or a hang: always a failure.
    Broken(String),
}

/// The CLI arguments of `act` (`name`: the agent's effort, if any; `owner_route`: an accept
/// that goes on from the main checkout names it), without `--json`.
pub(super) fn cli_args(act: &Act, name: Option<String>, owner_route: bool) -> Vec<String> {
    match act {
        Act::Start(name) => vec!["start", "--name", name, "--title", "Soak"]
            .into_iter()
            .map(str::to_owned)
            .collect(),
        Act::Done => vec!["done".into()],
        Act::Update => vec!["update".into()],
        Act::Accept if owner_route => vec![
            "accept".into(),
            "--confirmed".into(),
            "--effort".into(),
            name.unwrap_or_default(),
        ],
        Act::Accept => vec!["accept".into(), "--confirmed".into()],
        Act::Pin => vec!["standards".into(), "--pin".into()],
        Act::Propose => ["standards", "propose", "todo", "--reason", REASON]
            .into_iter()
            .map(str::to_owned)
            .collect(),
        Act::Withdraw => vec!["standards".into(), "withdraw".into()],
        Act::Status => vec!["status".into()],
        Act::Measure => vec!["standards".into()],
        Act::AwaitGreen => vec![
            "await".into(),
            "--green".into(),
            name.unwrap_or_default(),
            "--timeout".into(),
            "0".into(),
        ],
        Act::AwaitLanded(other) => vec![
            "await".into(),
            "--landed".into(),
            other.clone(),
            "--timeout".into(),
            "0".into(),
        ],
        Act::AwaitTrunk => vec![
            "await".into(),
            "--trunk-moved".into(),
            "--timeout".into(),
            "1".into(),
        ],
        Act::SyncPush => vec!["sync".into(), "--push".into()],
        Act::Abandon => vec![
            "abandon".into(),
            "--effort".into(),
            name.unwrap_or_default(),
            "--force".into(),
        ],
        Act::Commit | Act::Approve => unreachable!("not a discern call"),
    }
}

/// The MCP tool and arguments of `act` in the checkout at `path` (`name`: the agent's effort).
pub(super) fn tool_call(act: &Act, path: &str, name: Option<String>) -> (&'static str, Value) {
    match act {
        Act::Start(name) => (
            "discern_start",
            json!({ "name": name, "title": "Soak", "path": path }),
        ),
        Act::Done => ("discern_done", json!({ "path": path })),
        Act::Update => ("discern_update", json!({ "path": path })),
        Act::Accept => ("discern_accept", json!({ "confirmed": true, "path": path })),
        Act::Pin => (
            "discern_standards",
            json!({ "action": "measure", "pin": true, "path": path }),
        ),
        Act::Propose => (
            "discern_standards",
            json!({ "action": "propose", "proposals": [{ "name": "todo", "reason": REASON }], "path": path }),
        ),
        Act::Withdraw => (
            "discern_standards",
            json!({ "action": "withdraw", "path": path }),
        ),
        Act::Status => ("discern_status", json!({ "path": path })),
        Act::Measure => (
            "discern_standards",
            json!({ "action": "measure", "path": path }),
        ),
        Act::AwaitGreen => (
            "discern_await",
            json!({ "green": name, "timeout": 0, "path": path }),
        ),
        Act::AwaitLanded(other) => (
            "discern_await",
            json!({ "landed": other, "timeout": 0, "path": path }),
        ),
        Act::AwaitTrunk => (
            "discern_await",
            json!({ "trunk_moved": true, "timeout": 1, "path": path }),
        ),
        Act::Commit | Act::Approve | Act::SyncPush | Act::Abandon => {
            unreachable!("not an MCP call")
        }
    }
}

/// Run `discern args` in `dir` in its own process group; with `kill_at`, SIGKILL the group
/// then (unless it finished first).
pub(super) fn run_killable(
    sh: &Shared<'_>,
    agent: usize,
    dir: &Path,
    args: &[String],
    kill_at: Option<Duration>,
) -> Outcome {
    if !dir.exists() {
        return Outcome::Vanished;
    }
    let out_path = sh.scratch.join(format!("agent{agent}.out"));
    let err_path = sh.scratch.join(format!("agent{agent}.err"));
    let (Ok(out), Ok(err)) = (
        std::fs::File::create(&out_path),
        std::fs::File::create(&err_path),
    ) else {
        return Outcome::Broken("cannot create the output files".into());
    };
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_discern"));
    cmd.args(args).current_dir(dir).process_group(0);
    discern_tests::hermetic(&mut cmd, sh.fixture.repo.home());
    cmd.env("DISCERN_CACHE_DIR", cache_dir())
        .stdin(std::process::Stdio::null())
        .stdout(out)
        .stderr(err);
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(_) if !dir.exists() => return Outcome::Vanished,
        Err(e) => return Outcome::Broken(format!("{args:?}: cannot spawn: {e}")),
    };
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {}
            Err(e) => return Outcome::Broken(format!("{args:?}: wait: {e}")),
        }
        let elapsed = started.elapsed();
        let kill = kill_at.is_some_and(|at| elapsed >= at);
        if kill || elapsed >= HUNG {
            // The group, through the kernel; the child is not reaped yet, so its id is still
            // this group's.
            let group = i32::try_from(child.id())
                .ok()
                .and_then(rustix::process::Pid::from_raw)
                .expect("a child pid");
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
            let _ = child.wait();
            if kill {
                return Outcome::Killed;
            }
            return Outcome::Broken(format!(
                "{args:?} in {} hung for {} s",
                dir.display(),
                HUNG.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    let context = || {
        format!(
            "{args:?} in {}: exit {:?}\n  stdout: {stdout}\n  stderr: {stderr}",
            dir.display(),
            status.code()
        )
    };
    if status.code() == Some(70) {
        return Outcome::Broken(format!("internal error: {}", context()));
    }
    match serde_json::from_str::<Value>(&stdout) {
        Ok(envelope) if envelope["ok"] == true => Outcome::Ok(envelope),
        Ok(envelope) if envelope["ok"] == false => Outcome::Refused(envelope),
        _ if !dir.exists() => Outcome::Vanished,
        _ => Outcome::Broken(format!("no envelope: {}", context())),
    }
}

/// Whether a refusal names the step past it: a hint carrying an action, or a command in its
/// message or hints (`discern …`, `git …`, `fuser …`).
pub(super) fn names_the_way(envelope: &Value) -> bool {
    let hints = envelope["hints"].as_array().cloned().unwrap_or_default();
    if hints.iter().any(|h| h["action"]["verb"].is_string()) {
        return true;
    }
    let mut texts: Vec<&str> = hints.iter().filter_map(|h| h["text"].as_str()).collect();
    texts.extend(envelope["message"].as_str());
    texts.iter().any(|t| {
        ["`discern ", "`git ", "`fuser "]
            .iter()
            .any(|c| t.contains(c))
    })
}

/// The step the envelope's first next-step hint names, as an act of this agent.
pub(super) fn suggestion(envelope: &Value) -> Option<Act> {
    let action = envelope["hints"]
        .as_array()?
        .iter()
        .find_map(|h| h.get("action"))?;
    let arguments = &action["arguments"];
    Some(match action["verb"].as_str()? {
        "done" => Act::Done,
        "update" => Act::Update,
        "accept" => Act::Accept,
        "standards withdraw" => Act::Withdraw,
        "standards propose" => Act::Propose,
        "standards" if arguments["pin"] == true => Act::Pin,
        "standards" => Act::Measure,
        "status" => Act::Status,
        _ => return None,
    })
}
