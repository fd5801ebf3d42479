//! Task metadata of an effort (`<git-dir>/discern/task-metadata.json`): title, brief, origin.

use serde::{Deserialize, Serialize};

use crate::git::Repo;

pub(crate) const FILE: &str = "task-metadata.json";
pub(crate) const VERSION: u32 = 1;
pub(crate) const MAX_TITLE: usize = 120;
pub(crate) const MAX_BRIEF: usize = 500;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CreatedFrom {
    #[serde(rename = "ref")]
    pub reference: String,
    pub commit: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskMetadata {
    pub version: u32,
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub brief: Option<String>,
    pub created_from: CreatedFrom,
    /// The port `[worktree].ports` gave the effort at `start` (stable for its life).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
}

/// Why `text` cannot be a title/brief of at most `max` characters, if it cannot.
pub(crate) fn problem(what: &str, text: &str, max: usize) -> Option<String> {
    let chars = text.chars().count();
    if text.trim().is_empty() {
        Some(format!("the {what} is blank"))
    } else if chars > max {
        Some(format!("the {what} is {chars} characters (at most {max})"))
    } else if text.chars().any(|c| c.is_control()) {
        Some(format!(
            "the {what} must be one line without control characters"
        ))
    } else {
        None
    }
}

pub(crate) fn load(repo: &Repo) -> Option<TaskMetadata> {
    load_from(repo.git_dir())
}

/// The metadata of the worktree whose git dir is `git_dir`, if it has any.
pub(crate) fn load_from(git_dir: &std::path::Path) -> Option<TaskMetadata> {
    serde_json::from_slice(&std::fs::read(git_dir.join("discern").join(FILE)).ok()?).ok()
}

/// The metadata of the worktree whose git dir is `git_dir`: `Ok(None)` when it has none, an
/// error when it has one that cannot be read (what it holds cannot be told).
pub(crate) fn read_from(git_dir: &std::path::Path) -> Result<Option<TaskMetadata>, String> {
    let path = git_dir.join("discern").join(FILE);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| format!("{} is unreadable: {e}", path.display()))
}

/// Write the metadata of the worktree whose git dir is `git_dir`.
pub(crate) fn save(git_dir: &std::path::Path, task: &TaskMetadata) -> std::io::Result<()> {
    let bytes = serde_json::to_vec_pretty(task).map_err(std::io::Error::other)?;
    crate::fsutil::write_atomic(&git_dir.join("discern").join(FILE), &bytes)
}
