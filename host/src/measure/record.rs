//! The measurement record of this worktree: the readings of the last clean-HEAD run, so that
//! a following `--pin` on the same commit does not measure again.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::git::Repo;

pub(crate) const FILE: &str = "standard-measurements.json";
pub(crate) const VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Record {
    pub version: u32,
    /// The clean commit the readings describe.
    pub head: String,
    /// Standard → reading and the definition fingerprint it was measured under.
    pub values: BTreeMap<String, RecordedValue>,
    /// Standards whose measurement failed on this commit.
    pub failed: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct RecordedValue {
    pub value: f64,
    pub definition: String,
}

/// Read the record; `Err` only names a record a newer discern wrote (a miss otherwise).
pub(crate) fn load(repo: &Repo) -> Result<Option<Record>, String> {
    let Ok(bytes) = std::fs::read(repo.admin_path(FILE)) else {
        return Ok(None);
    };
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        return Ok(None);
    };
    let version = value.get("version").and_then(serde_json::Value::as_u64);
    if version.is_some_and(|v| v > u64::from(VERSION)) {
        return Err(format!(
            "{} was written by a newer discern (format version {}); upgrade discern or delete the file",
            repo.admin_path(FILE).display(),
            version.unwrap_or_default()
        ));
    }
    Ok(serde_json::from_value(value).ok())
}

pub(crate) fn save(repo: &Repo, record: &Record) -> std::io::Result<()> {
    let bytes = serde_json::to_vec_pretty(record).map_err(std::io::Error::other)?;
    crate::fsutil::write_atomic(&repo.admin_path(FILE), &bytes)
}
