//! The proposal records of one worktree (`<git-dir>/discern/standard-limit-proposals.json`).

use serde::{Deserialize, Serialize};

use crate::config::Direction;
use crate::git::Repo;

pub(crate) const FILE: &str = "standard-limit-proposals.json";
pub(crate) const VERSION: u32 = 1;

/// One recorded loosening, bound to the config-only commit that made it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ProposalRecord {
    pub standard: String,
    /// The config-only commit that set the proposed limit.
    pub commit: String,
    /// The commit the proposal currently vouches for (moves on `rebound`).
    pub bound_commit: String,
    /// The commit that was measured: the proposal commit's parent.
    pub measured_commit: String,
    pub definition_fingerprint: String,
    pub trunk: String,
    pub trunk_commit: String,
    pub direction: Direction,
    pub trunk_limit: f64,
    pub proposed_limit: f64,
    pub measurement: f64,
    pub delta: f64,
    pub reason: String,
    /// Changed paths (trunk..HEAD) inside what the Standard's producer read.
    pub evidence_paths: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct StoreFile {
    version: u32,
    proposals: Vec<ProposalRecord>,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum StoreError {
    #[error("{path} was written by a newer discern (format version {version}); upgrade discern")]
    Newer { path: String, version: u64 },
    #[error(
        "{path} is unreadable ({message}); inspect it, or delete it to drop every proposal of this worktree"
    )]
    Corrupt { path: String, message: String },
    #[error("cannot write {path}: {message}")]
    Write { path: String, message: String },
}

pub(crate) fn load(repo: &Repo) -> Result<Vec<ProposalRecord>, StoreError> {
    let path = repo.admin_path(FILE);
    let Ok(bytes) = std::fs::read(&path) else {
        return Ok(Vec::new());
    };
    let shown = path.display().to_string();
    let value: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|e| StoreError::Corrupt {
            path: shown.clone(),
            message: e.to_string(),
        })?;
    let version = value
        .get("version")
        .and_then(serde_json::Value::as_u64)
        .ok_or_else(|| StoreError::Corrupt {
            path: shown.clone(),
            message: "it has no format version".to_owned(),
        })?;
    if version > u64::from(VERSION) {
        return Err(StoreError::Newer {
            path: shown,
            version,
        });
    }
    let file: StoreFile = serde_json::from_value(value).map_err(|e| StoreError::Corrupt {
        path: shown,
        message: e.to_string(),
    })?;
    Ok(file.proposals)
}

/// The store file holding exactly `proposals`, for a transaction to write once its commit
/// exists (no proposals: the file is removed).
/// The store's state file with `records` bound to `commit` (the proposal or renewal commit,
/// once it exists): what the transaction's journal carries.
pub(crate) fn bound_to(
    records: &[ProposalRecord],
    commit: gix::ObjectId,
) -> Result<Vec<crate::commit::StateFile>, String> {
    let mut records = records.to_vec();
    for record in &mut records {
        record.commit = commit.to_string();
        record.bound_commit = commit.to_string();
    }
    state_file(&records).map(|file| vec![file])
}

pub(crate) fn state_file(proposals: &[ProposalRecord]) -> Result<crate::commit::StateFile, String> {
    let content = match proposals.is_empty() {
        true => None,
        false => {
            let file = StoreFile {
                version: VERSION,
                proposals: proposals.to_vec(),
            };
            Some(serde_json::to_string_pretty(&file).map_err(|e| e.to_string())?)
        }
    };
    Ok(crate::commit::StateFile {
        name: FILE.to_owned(),
        content,
    })
}

pub(crate) fn save(repo: &Repo, proposals: &[ProposalRecord]) -> std::io::Result<()> {
    let path = repo.admin_path(FILE);
    if proposals.is_empty() {
        return match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        };
    }
    let file = StoreFile {
        version: VERSION,
        proposals: proposals.to_vec(),
    };
    let bytes = serde_json::to_vec_pretty(&file).map_err(std::io::Error::other)?;
    crate::fsutil::write_atomic(&path, &bytes)
}
