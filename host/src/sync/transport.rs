//! The wire: git's own `ls-remote`, `fetch` and `push` against the remote, so every protocol
//! git knows works here too — each run under the [`Seal`], which keeps the evidence key and the
//! clone's program-running config away from it.

use std::collections::BTreeMap;
use std::process::Output;

use gix::ObjectId;

use super::SyncError;
use super::seal::Seal;
use crate::git::Repo;

/// Which of `names` the remote has, and at which commit.
pub(super) fn remote_refs(
    (repo, seal): (&Repo, &Seal),
    remote: &str,
    names: &[&str],
) -> Result<BTreeMap<String, ObjectId>, SyncError> {
    let mut args = vec![
        "ls-remote",
        Seal::program_option("ls-remote"),
        "--refs",
        remote,
    ];
    args.extend(names);
    let output = run((repo, seal), &args)?;
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

/// The remote's default branch (what its `HEAD` names) and its tip; `None` when the remote's
/// `HEAD` names no branch it has.
pub(super) fn default_branch(
    (repo, seal): (&Repo, &Seal),
    remote: &str,
) -> Result<Option<(String, ObjectId)>, SyncError> {
    let args = [
        "ls-remote",
        Seal::program_option("ls-remote"),
        "--symref",
        remote,
        "HEAD",
    ];
    let output = run((repo, seal), &args)?;
    if !output.status.success() {
        return Err(SyncError::Remote {
            remote: remote.to_owned(),
            action: "list the default branch of",
            message: stderr(&output),
        });
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let mut branch = None;
    let mut tip = None;
    for line in text.lines() {
        if let Some((target, "HEAD")) = line.split_once('\t') {
            match target.strip_prefix("ref: ") {
                Some(name) => branch = name.strip_prefix("refs/heads/").map(str::to_owned),
                None => tip = target.parse().ok(),
            }
        }
    }
    Ok(branch.zip(tip))
}

/// Fetch each (remote ref, local tracking ref) pair, forcing the tracking refs (they mirror
/// the remote; nothing local is ever written over).
pub(super) fn fetch(
    (repo, seal): (&Repo, &Seal),
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
        Seal::program_option("fetch"),
        "--no-tags",
        "--no-write-fetch-head",
        "--quiet",
        remote,
    ];
    args.extend(refspecs.iter().map(String::as_str));
    let output = run((repo, seal), &args)?;
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
pub(super) fn push(
    (repo, seal): (&Repo, &Seal),
    remote: &str,
    updates: &[Update],
) -> Result<Pushed, SyncError> {
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
    let mut args = vec![
        "push",
        Seal::program_option("push"),
        "--atomic",
        "--porcelain",
        "--no-verify",
        "--no-signed",
        remote,
    ];
    args.extend(leases.iter().map(String::as_str));
    args.extend(specs.iter().map(String::as_str));
    let output = run((repo, seal), &args)?;
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
fn run((repo, seal): (&Repo, &Seal), args: &[&str]) -> Result<Output, SyncError> {
    for _ in 0..LOCK_WAITS {
        let output = run_once((repo, seal), args)?;
        if output.status.success() || locked(&output).is_none() {
            return Ok(output);
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let mut output = run_once((repo, seal), args)?;
    if locked(&output).is_some_and(|line| cleared_stale(repo, &line)) {
        output = run_once((repo, seal), args)?;
    }
    if let Some(line) = locked(&output) {
        return Err(SyncError::Git(format!(
            "{line} (git was killed while it held this lock, or still runs; once no git process holds it — `fuser` or `lsof` on the file — delete it, then sync again)"
        )));
    }
    Ok(output)
}

/// Remove the lock file git names in `line` when it is stale and on one of discern's own
/// tracking refs (`refs/notes/remotes/…`, `refs/discern/remotes/…`), which only a sync
/// writes: git holds a ref's lock for the moment of its update, so one untouched for
/// [`STALE_LOCK`] was left by a writer that was killed (a sync killed while it moved a
/// tracking ref). Any other lock stays, and is reported.
fn cleared_stale(repo: &Repo, line: &str) -> bool {
    let Some(path) = line
        .split_once("Unable to create '")
        .and_then(|(_, rest)| rest.split_once("': "))
        .map(|(path, _)| std::path::PathBuf::from(path))
    else {
        return false;
    };
    let (Ok(refs), Some(Ok(folder))) = (
        repo.common_dir().join("refs").canonicalize(),
        path.parent().map(std::path::Path::canonicalize),
    ) else {
        return false;
    };
    let ours = [
        refs.join("notes").join("remotes"),
        refs.join("discern").join("remotes"),
    ];
    let owned = ours.iter().any(|dir| folder.starts_with(dir))
        && path.extension().is_some_and(|e| e == "lock");
    let stale = std::fs::symlink_metadata(&path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|at| at.elapsed().ok())
        .is_some_and(|age| age >= STALE_LOCK);
    owned && stale && std::fs::remove_file(&path).is_ok()
}

/// How long a lock on a tracking ref must stand untouched to be a killed writer's.
const STALE_LOCK: std::time::Duration = std::time::Duration::from_secs(2);

/// How many times a run held up by a lock file is tried (100 ms apart).
const LOCK_WAITS: u32 = 30;

/// The line where git says a lock file exists.
fn locked(output: &Output) -> Option<String> {
    String::from_utf8_lossy(&output.stderr)
        .lines()
        .find(|l| l.contains(".lock': File exists") || l.contains(".lock': file exists"))
        .map(|l| l.trim().to_owned())
}

/// One run of git, its output written to unnamed temporary files rather than pipes: a git that
/// outlives a killed sync finishes its ref update and drops its lock, where a closed pipe
/// would kill it on its next write (SIGPIPE) with the lock still held.
fn run_once((repo, seal): (&Repo, &Seal), args: &[&str]) -> Result<Output, SyncError> {
    let cannot = |e: std::io::Error| SyncError::Git(format!("git cannot be run ({e})"));
    let mut out = tempfile::tempfile().map_err(cannot)?;
    let mut err = tempfile::tempfile().map_err(cannot)?;
    let status = seal
        .git(repo)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(out.try_clone().map_err(cannot)?)
        .stderr(err.try_clone().map_err(cannot)?)
        .status()
        .map_err(cannot)?;
    Ok(Output {
        status,
        stdout: read_back(&mut out).map_err(cannot)?,
        stderr: read_back(&mut err).map_err(cannot)?,
    })
}

/// What a child wrote to `file`, from its start.
fn read_back(file: &mut std::fs::File) -> std::io::Result<Vec<u8>> {
    use std::io::{Read, Seek};
    file.rewind()?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
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

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::cleared_stale;
    use crate::git::Repo;

    fn lock(path: &std::path::Path, age: Duration) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let file = std::fs::File::create(path).unwrap();
        file.set_modified(SystemTime::now() - age).unwrap();
    }

    fn said(path: &std::path::Path) -> String {
        format!(
            "error: cannot lock ref 'x': Unable to create '{}': File exists.",
            path.display()
        )
    }

    #[test]
    fn only_a_stale_lock_on_a_tracking_ref_is_cleared() {
        let dir = tempfile::tempdir().unwrap();
        let status = std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(dir.path())
            .status()
            .unwrap();
        assert!(status.success());
        let repo = Repo::discover(dir.path()).unwrap();
        let refs = dir.path().join(".git/refs");
        let tracking = refs.join("notes/remotes/origin/discern.lock");
        let evidence = refs.join("discern/remotes/origin/evidence.lock");
        let branch = refs.join("heads/main.lock");
        let old = Duration::from_secs(10);
        for path in [&tracking, &evidence, &branch] {
            lock(path, old);
        }
        assert!(cleared_stale(&repo, &said(&tracking)));
        assert!(cleared_stale(&repo, &said(&evidence)));
        assert!(!tracking.exists() && !evidence.exists());
        // Someone else's ref, and a lock a live writer may hold, stay.
        assert!(!cleared_stale(&repo, &said(&branch)));
        lock(&tracking, Duration::ZERO);
        assert!(!cleared_stale(&repo, &said(&tracking)));
        assert!(branch.exists() && tracking.exists());
        // A path outside the refs that only looks like one.
        let outside = dir.path().join("notes/remotes/x.lock");
        lock(&outside, old);
        assert!(!cleared_stale(&repo, &said(&outside)));
    }
}
