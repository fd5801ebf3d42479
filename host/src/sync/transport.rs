//! The wire: git's own `ls-remote`, `fetch` and `push` against the remote, so every protocol,
//! credential helper and URL rewrite git knows works here too.

use std::collections::BTreeMap;
use std::process::Output;

use gix::ObjectId;

use super::SyncError;
use crate::git::Repo;

/// Which of `names` the remote has, and at which commit.
pub(super) fn remote_refs(
    repo: &Repo,
    remote: &str,
    names: &[&str],
) -> Result<BTreeMap<String, ObjectId>, SyncError> {
    let mut args = vec!["ls-remote", "--refs", remote];
    args.extend(names);
    let output = run(repo, &args)?;
    if !output.status.success() {
        return Err(SyncError::Remote {
            remote: remote.to_owned(),
            action: "list the refs of",
            message: stderr(&output),
        });
    }
    let text = String::from_utf8_lossy(&output.stdout);
    Ok(text
        .lines()
        .filter_map(|line| {
            let (id, name) = line.split_once('\t')?;
            Some((name.to_owned(), id.parse().ok()?))
        })
        .filter(|(name, _)| names.contains(&name.as_str()))
        .collect())
}

/// Fetch each (remote ref, local tracking ref) pair, forcing the tracking refs (they mirror
/// the remote; nothing local is ever written over).
pub(super) fn fetch(
    repo: &Repo,
    remote: &str,
    pairs: &[(String, String)],
) -> Result<(), SyncError> {
    if pairs.is_empty() {
        return Ok(());
    }
    let refspecs: Vec<String> = pairs
        .iter()
        .map(|(from, to)| format!("+{from}:{to}"))
        .collect();
    let mut args = vec![
        "fetch",
        "--no-tags",
        "--no-write-fetch-head",
        "--quiet",
        remote,
    ];
    args.extend(refspecs.iter().map(String::as_str));
    let output = run(repo, &args)?;
    if output.status.success() {
        Ok(())
    } else {
        Err(SyncError::Remote {
            remote: remote.to_owned(),
            action: "fetch discern's refs from",
            message: stderr(&output),
        })
    }
}

/// One ref to push: the local commit, the remote ref, and what the remote must still hold
/// (`None`: the remote must not have it yet).
#[derive(Debug, Clone)]
pub(super) struct Update {
    pub local: ObjectId,
    pub remote_ref: String,
    pub expected: Option<ObjectId>,
}

/// How a push ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Pushed {
    Done,
    /// Another clone pushed first: fetch, merge and try again.
    Raced(String),
}

/// Push `updates` all at once (`--atomic`), each with its lease: either every ref moves or
/// none does.
pub(super) fn push(repo: &Repo, remote: &str, updates: &[Update]) -> Result<Pushed, SyncError> {
    if updates.is_empty() {
        return Ok(Pushed::Done);
    }
    let leases: Vec<String> = updates
        .iter()
        .map(|u| {
            let expected = u.expected.map(|e| e.to_string()).unwrap_or_default();
            format!("--force-with-lease={}:{expected}", u.remote_ref)
        })
        .collect();
    let specs: Vec<String> = updates
        .iter()
        .map(|u| format!("{}:{}", u.local, u.remote_ref))
        .collect();
    let mut args = vec!["push", "--atomic", "--porcelain", "--no-verify", remote];
    args.extend(leases.iter().map(String::as_str));
    args.extend(specs.iter().map(String::as_str));
    let output = run(repo, &args)?;
    if output.status.success() {
        return Ok(Pushed::Done);
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    // `--porcelain` marks each refused ref with `!`: its reason is what to report.
    let refused: Vec<&str> = stdout.lines().filter(|l| l.starts_with('!')).collect();
    let said = match refused.is_empty() {
        true => stderr(&output),
        false => refused.join("; ").replace('\t', " "),
    };
    let raced = RACES.iter().any(|sign| said.contains(sign));
    if raced {
        Ok(Pushed::Raced(said))
    } else {
        Err(SyncError::Remote {
            remote: remote.to_owned(),
            action: "push discern's refs to",
            message: said,
        })
    }
}

/// What git says when another push got there first: a lease or fast-forward refused, or the
/// remote's ref locked or moved under the push.
const RACES: [&str; 8] = [
    "stale info",
    "atomic transaction failed",
    "fetch first",
    "non-fast-forward",
    "atomic push failed",
    "cannot lock ref",
    "failed to update ref",
    "but expected",
];

/// Run git; while a lock file stands in its way (a git another sync started, still finishing
/// after that sync was killed), wait for it a little, then report it.
fn run(repo: &Repo, args: &[&str]) -> Result<Output, SyncError> {
    for _ in 0..LOCK_WAITS {
        let output = run_once(repo, args)?;
        if output.status.success() || locked(&output).is_none() {
            return Ok(output);
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let output = run_once(repo, args)?;
    if let Some(line) = locked(&output) {
        return Err(SyncError::Git(format!(
            "{line} (git was killed while it held this lock, or still runs; once no git process holds it — `fuser` or `lsof` on the file — delete it, then sync again)"
        )));
    }
    Ok(output)
}

/// How many times a run held up by a lock file is tried (100 ms apart).
const LOCK_WAITS: u32 = 30;

/// The line where git says a lock file exists.
fn locked(output: &Output) -> Option<String> {
    String::from_utf8_lossy(&output.stderr)
        .lines()
        .find(|l| l.contains(".lock': File exists") || l.contains(".lock': file exists"))
        .map(|l| l.trim().to_owned())
}

fn run_once(repo: &Repo, args: &[&str]) -> Result<Output, SyncError> {
    crate::git::command()
        .args(args)
        .current_dir(repo.root())
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .map_err(|e| SyncError::Git(format!("git cannot be run ({e})")))
}

fn stderr(output: &Output) -> String {
    last_line(&String::from_utf8_lossy(&output.stderr))
}

fn last_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty() && *l != "Done")
        .unwrap_or("git printed nothing")
        .to_owned()
}
