//! The setup record of an effort (`<worktree git dir>/discern/setup.json`) and the lock its
//! running setup holds (`setup.lock` beside it).
//!
//! `start` takes the lock and writes `running` inside its fork (under the writer lock, before
//! the fork journal is removed), so from the moment the effort exists its setup is either
//! running, failed, interrupted or done. The kernel releases the lock when the process dies:
//! a `running` record whose lock is free is a setup a kill interrupted, and the next writing
//! verb of the repository finishes it — the effort is kept (its branch, worktree and metadata
//! were complete) and the record says `interrupted` with the step it stopped at, for `discern
//! setup` to run again. It is never unwound: the effort's worktree may already hold work.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub(crate) const FILE: &str = "setup.json";
const LOCK: &str = "setup.lock";
pub(crate) const VERSION: u32 = 1;
/// The fault point a test kills `start` at: the effort exists, its setup not yet begun.
pub const SETUP_BEGUN: &str = "start-setup-begun";
/// The verb that runs a failed or interrupted setup again, in the effort's worktree.
pub(crate) const VERB: &str = "setup";
/// That verb on the command line.
pub(crate) const RETRY: &str = "discern setup";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum SetupState {
    Running,
    Failed,
    Interrupted,
    Done,
}

impl SetupState {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            SetupState::Running => "running",
            SetupState::Failed => "failed",
            SetupState::Interrupted => "interrupted",
            SetupState::Done => "done",
        }
    }
}

/// Where a setup stopped: the step (1-based), its command, and how it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct StoppedAt {
    pub index: usize,
    pub command: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(default)]
    pub timed_out: bool,
    /// The last lines of its output.
    #[serde(default)]
    pub output_tail: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_path: Option<PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SetupRecord {
    pub version: u32,
    pub state: SetupState,
    /// How many setup steps there are.
    pub steps: usize,
    /// The step running (1-based; 0 before the first), or the one that failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<StoppedAt>,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum MarkerError {
    #[error("cannot write the setup record {path}: {source}", path = .0.display(), source = .1)]
    Write(PathBuf, std::io::Error),
    #[error("cannot open the setup lock {path}: {source}", path = .0.display(), source = .1)]
    Lock(PathBuf, std::io::Error),
    #[error("a setup of this effort is running (it holds {path}); let it finish", path = .0.display())]
    Busy(PathBuf),
}

/// The lock of a running setup, held until dropped.
#[derive(Debug)]
pub(crate) struct SetupLock {
    _file: File,
}

/// Take the setup lock of the worktree whose git dir is `git_dir`, without waiting.
pub(crate) fn lock(git_dir: &Path) -> Result<SetupLock, MarkerError> {
    let path = git_dir.join("discern").join(LOCK);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| MarkerError::Lock(path.clone(), e))?;
    }
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| MarkerError::Lock(path.clone(), e))?;
    match file.try_lock() {
        Ok(()) => Ok(SetupLock { _file: file }),
        Err(TryLockError::WouldBlock) => Err(MarkerError::Busy(path)),
        Err(TryLockError::Error(e)) => Err(MarkerError::Lock(path, e)),
    }
}

/// Write the setup record of the worktree whose git dir is `git_dir` (atomically).
pub(crate) fn save(git_dir: &Path, record: &SetupRecord) -> Result<(), MarkerError> {
    let path = git_dir.join("discern").join(FILE);
    let bytes = serde_json::to_vec_pretty(record)
        .map_err(|e| MarkerError::Write(path.clone(), std::io::Error::other(e)))?;
    crate::fsutil::write_atomic(&path, &bytes).map_err(|e| MarkerError::Write(path, e))
}

/// The setup record of the worktree whose git dir is `git_dir`; `None` when it has none (no
/// setup configured when it started). A record that cannot be read or is newer than this
/// binary is `Err`, never read as "no setup".
pub(crate) fn load(git_dir: &Path) -> Result<Option<SetupRecord>, String> {
    let path = git_dir.join("discern").join(FILE);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let record: SetupRecord = serde_json::from_slice(&bytes)
        .map_err(|e| format!("{} is not a setup record: {e}", path.display()))?;
    if record.version > VERSION {
        return Err(format!(
            "{} has version {}, newer than this discern reads ({VERSION}); upgrade discern",
            path.display(),
            record.version
        ));
    }
    Ok(Some(record))
}

/// What a worktree's setup needs from its user, if anything: failed, interrupted (a `running`
/// record nobody holds), or unreadable. `None`: done, running, or never configured.
pub(crate) fn attention(git_dir: &Path) -> Option<String> {
    let record = match load(git_dir) {
        Ok(Some(record)) => record,
        Ok(None) => return None,
        Err(e) => return Some(format!("its setup record is unreadable ({e})")),
    };
    let state = match record.state {
        SetupState::Done => return None,
        SetupState::Running if lock(git_dir).is_err() => return None,
        SetupState::Running | SetupState::Interrupted => SetupState::Interrupted,
        SetupState::Failed => SetupState::Failed,
    };
    Some(describe(state, record.at.as_ref()))
}

/// `setup failed at step 2 (`bun install`, exit code 1)`.
pub(crate) fn describe(state: SetupState, at: Option<&StoppedAt>) -> String {
    let Some(at) = at.filter(|a| a.index > 0) else {
        return format!("setup {} before its first step", state.as_str());
    };
    let how = match (at.timed_out, at.exit_code) {
        (true, _) => ", timed out".to_owned(),
        (false, Some(code)) => format!(", exit code {code}"),
        (false, None) => String::new(),
    };
    format!(
        "setup {} at step {} (`{}`{how})",
        state.as_str(),
        at.index,
        at.command
    )
}

/// Finish every setup a kill interrupted, in any worktree of the repository: a `running`
/// record whose lock is free becomes `interrupted`; what was done, one line each.
pub(crate) fn recover(common_dir: &Path) -> Vec<String> {
    let Ok(admins) = std::fs::read_dir(common_dir.join("worktrees")) else {
        return Vec::new();
    };
    let mut done = Vec::new();
    for git_dir in admins.flatten().map(|e| e.path()) {
        let Ok(Some(mut record)) = load(&git_dir) else {
            continue;
        };
        if record.state != SetupState::Running {
            continue;
        }
        // Held: a live setup. Taken: nobody runs it any more.
        let Ok(_held) = lock(&git_dir) else {
            continue;
        };
        record.state = SetupState::Interrupted;
        if save(&git_dir, &record).is_ok() {
            let name = git_dir
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            done.push(format!(
                "An interrupted start of {name} was finished: the effort is kept, its {}; run `{RETRY}` in its worktree to run it again.",
                describe(SetupState::Interrupted, record.at.as_ref())
            ));
        }
    }
    done
}
