//! The group memo of one execution identity (`<identity>/groups.memo`): what each group of
//! files gave the last grouped run of a built-in whose reading is a sum over files
//! (`planner/grouped.rs`), keyed by the digest of the group's entries (paths, blob ids, modes).
//! A new run then runs the producer only over the groups that changed and adds the rest.
//!
//! It is a cache like every evidence file: written atomically (temp file + rename), bounded
//! (the groups of the last run only, with the findings that run kept, and never more than
//! [`MAX_BYTES`]), and a missing, unreadable, corrupt or other-version memo is empty: every
//! group runs again. It is read only by a store that reads evidence, so Proof never reads it.

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::runtime::{Finding, Severity};

/// The memo's file name in the identity's folder (not `.json`: no evidence lookup reads it).
pub const FILE: &str = "groups.memo";
/// Version 1: parts keyed by group digest, findings as compact tuples.
pub const VERSION: u32 = 1;
/// A memo larger than this is not written (the groups run again next time).
pub const MAX_BYTES: usize = 64 << 20;

/// What one group of files gave a run: the exact output of the producer run over those files
/// alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Part {
    pub metrics: Vec<PartMetric>,
    /// The paths the run read (each one of the group's entries).
    pub reads: Vec<String>,
    /// The glob lists it listed, in order.
    pub listings: Vec<Vec<String>>,
    /// The fuel the run consumed.
    pub fuel: u64,
    /// The most findings the run was asked to list (what the whole run still kept there).
    pub room: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartMetric {
    pub name: String,
    pub value: f64,
    #[serde(default)]
    pub counted: bool,
    /// How many findings the run kept, and how many more it counted past the host's cap.
    pub kept: usize,
    #[serde(default)]
    pub dropped: usize,
    /// The findings kept, when stored: a part whose findings the combined reading did not keep
    /// stores none (`None`), and runs again if a later reading needs them.
    #[serde(default, with = "compact")]
    pub findings: Option<Vec<Finding>>,
}

/// Group digest (hex) → its part.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Memo {
    pub version: u32,
    pub identity: String,
    pub parts: HashMap<String, Part>,
}

/// The memo at `path` for `identity`, or `None` when it is missing, unreadable, corrupt, of
/// another version or of another identity.
pub fn read(path: &Path, identity: &str) -> Option<Memo> {
    let memo: Memo = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
    (memo.version == VERSION && memo.identity == identity).then_some(memo)
}

/// Write `memo` at `path` atomically; a memo over [`MAX_BYTES`] is not written.
pub fn write(path: &Path, memo: &Memo) -> std::io::Result<()> {
    let bytes = serde_json::to_vec(memo).map_err(std::io::Error::other)?;
    if bytes.len() > MAX_BYTES {
        return Ok(());
    }
    crate::fsutil::write_cache(path, &bytes)
}

/// Findings as `[fingerprint, path, line, column, severity, message]` tuples, as the findings
/// file beside an entry holds them.
mod compact {
    use super::{Deserialize, Finding, Serialize, Severity};

    type Tuple = (
        String,
        Option<String>,
        Option<u32>,
        Option<u32>,
        Option<Severity>,
        String,
    );
    type TupleRef<'a> = (
        &'a str,
        Option<&'a str>,
        Option<u32>,
        Option<u32>,
        Option<Severity>,
        &'a str,
    );

    pub fn serialize<S: serde::Serializer>(
        findings: &Option<Vec<Finding>>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let tuples: Option<Vec<TupleRef>> = findings.as_ref().map(|list| {
            list.iter()
                .map(|f| {
                    (
                        f.fingerprint.as_str(),
                        f.path.as_deref(),
                        f.line,
                        f.column,
                        f.severity,
                        f.message.as_str(),
                    )
                })
                .collect()
        });
        tuples.serialize(serializer)
    }

    pub fn deserialize<'de, D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Vec<Finding>>, D::Error> {
        let tuples: Option<Vec<Tuple>> = Option::deserialize(deserializer)?;
        Ok(tuples.map(|list| {
            list.into_iter()
                .map(
                    |(fingerprint, path, line, column, severity, message)| Finding {
                        fingerprint,
                        path,
                        line,
                        column,
                        severity,
                        message,
                    },
                )
                .collect()
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memo() -> Memo {
        let finding = Finding {
            fingerprint: "f".into(),
            path: Some("a.rs".into()),
            line: Some(3),
            column: Some(1),
            severity: None,
            message: "TODO".into(),
        };
        let part = Part {
            metrics: vec![PartMetric {
                name: "matches".into(),
                value: 1.0,
                counted: true,
                kept: 1,
                dropped: 0,
                findings: Some(vec![finding]),
            }],
            reads: vec!["a.rs".into()],
            listings: vec![vec!["**".into()]],
            fuel: 7,
            room: 100,
        };
        Memo {
            version: VERSION,
            identity: "id".into(),
            parts: HashMap::from([("k".to_owned(), part)]),
        }
    }

    #[test]
    fn a_memo_reads_back_as_written_and_anything_else_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        assert_eq!(read(&path, "id"), None);
        write(&path, &memo()).unwrap();
        assert_eq!(read(&path, "id"), Some(memo()));
        assert_eq!(read(&path, "other"), None);
        std::fs::write(
            &path,
            b"{\"version\": 1, \"identity\": \"id\", \"parts\": {",
        )
        .unwrap();
        assert_eq!(read(&path, "id"), None);
        let mut newer = memo();
        newer.version = VERSION + 1;
        write(&path, &newer).unwrap();
        assert_eq!(read(&path, "id"), None);
    }
}
