//! The group memo of one execution identity (`<identity>/groups.memo`): what each group of
//! files gave the last grouped run of a built-in whose reading is a sum over files
//! (`planner/grouped.rs`), keyed by the digest of the group's entries (paths, blob ids, modes).
//! A new run then runs the producer only over the groups that changed and adds the rest.
//!
//! It is a cache like every evidence file: written atomically (temp file + rename), bounded
//! (the groups of the last run only, with the findings that run kept, and never more than
//! [`MAX_BYTES`]), and a missing, unreadable, corrupt or other-version memo is empty: every
//! group runs again. It is read only by a store that reads evidence, so Proof never reads it.
//! On disk: [`MAGIC`], the JSON of the parts' counts (`u64` length first), then the parts'
//! findings in the binary form of a findings file (`findings.rs`), one block per part metric.

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::runtime::{Finding, Metric};

/// The memo's file name in the identity's folder (not `.json`: no evidence lookup reads it).
pub(crate) const FILE: &str = "groups.memo";
/// Version 1: parts keyed by group digest, their findings in binary blocks.
pub(crate) const VERSION: u32 = 1;
/// A memo larger than this is not written (the groups run again next time).
pub(crate) const MAX_BYTES: usize = 64 << 20;
/// The first bytes of a memo file.
const MAGIC: &[u8; 8] = b"dmemo\x00\x00\x01";

/// What one group of files gave a run: the exact output of the producer run over those files
/// alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Part {
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
pub(crate) struct PartMetric {
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
    #[serde(skip)]
    pub findings: Option<Vec<Finding>>,
    /// On disk: the block holding `findings`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    block: Option<usize>,
}

impl PartMetric {
    pub(crate) fn new(metric: Metric) -> Self {
        Self {
            name: metric.name,
            value: metric.value,
            counted: metric.counted,
            kept: metric.findings.len(),
            dropped: metric.findings_dropped,
            findings: Some(metric.findings),
            block: None,
        }
    }
}

/// Group digest (hex) → its part.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Memo {
    pub version: u32,
    pub identity: String,
    pub parts: HashMap<String, Part>,
}

/// The memo at `path` for `identity`, or `None` when it is missing, unreadable, corrupt, of
/// another version or of another identity.
pub(crate) fn read(path: &Path, identity: &str) -> Option<Memo> {
    let bytes = std::fs::read(path).ok()?;
    let rest = bytes.strip_prefix(MAGIC)?;
    let (len, rest) = rest.split_at_checked(8)?;
    let len = usize::try_from(u64::from_le_bytes(len.try_into().ok()?)).ok()?;
    let (json, blocks) = rest.split_at_checked(len)?;
    let mut memo: Memo = serde_json::from_slice(json).ok()?;
    if memo.version != VERSION || memo.identity != identity {
        return None;
    }
    let mut blocks = match blocks.is_empty() {
        true => super::findings::File::default(),
        false => super::findings::decode(blocks)?,
    };
    for metric in memo.parts.values_mut().flat_map(|p| &mut p.metrics) {
        if metric.kept == 0 {
            metric.findings = Some(Vec::new());
        }
        if let Some(block) = metric.block.take() {
            let findings = blocks.take(&block.to_string())?;
            if findings.len() != metric.kept {
                return None;
            }
            metric.findings = Some(findings);
        }
    }
    Some(memo)
}

/// Write `memo` at `path` atomically; a memo over [`MAX_BYTES`] is not written.
pub(crate) fn write(path: &Path, mut memo: Memo) -> std::io::Result<()> {
    let mut blocks = Vec::new();
    for metric in memo.parts.values_mut().flat_map(|p| &mut p.metrics) {
        metric.block = None;
        // A metric with no findings kept has no block: it reads back as an empty list.
        if let Some(findings) = metric.findings.take().filter(|f| !f.is_empty()) {
            metric.block = Some(blocks.len());
            blocks.push(Metric {
                name: blocks.len().to_string(),
                value: 0.0,
                findings,
                findings_dropped: 0,
                counted: false,
            });
        }
    }
    let json = serde_json::to_vec(&memo).map_err(std::io::Error::other)?;
    let encoded = super::findings::encode(&blocks)?.unwrap_or_default();
    let mut bytes = Vec::with_capacity(MAGIC.len() + 8 + json.len() + encoded.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&(json.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&json);
    bytes.extend_from_slice(&encoded);
    if bytes.len() > MAX_BYTES {
        return Ok(());
    }
    crate::fsutil::write_cache(path, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(i: u32) -> Finding {
        Finding {
            fingerprint: format!("f{i}"),
            path: Some("a.rs".into()),
            line: Some(i + 1),
            column: Some(1),
            severity: None,
            message: "TODO".into(),
        }
    }

    fn part(findings: Option<Vec<Finding>>, kept: usize) -> Part {
        let metric = |name: &str, findings, kept| PartMetric {
            findings,
            kept,
            ..PartMetric::new(Metric {
                name: name.into(),
                value: 2.0,
                findings: Vec::new(),
                findings_dropped: 0,
                counted: true,
            })
        };
        Part {
            metrics: vec![
                metric("matches", findings, kept),
                metric("files", Some(Vec::new()), 0),
            ],
            reads: vec!["a.rs".into()],
            listings: vec![vec!["**".into()]],
            fuel: 7,
            room: 100,
        }
    }

    fn memo() -> Memo {
        Memo {
            version: VERSION,
            identity: "id".into(),
            parts: HashMap::from([
                ("k".to_owned(), part(Some(vec![finding(1), finding(2)]), 2)),
                ("stripped".to_owned(), part(None, 2)),
                ("none".to_owned(), part(Some(Vec::new()), 0)),
            ]),
        }
    }

    #[test]
    fn a_memo_reads_back_as_written_and_anything_else_is_a_miss() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        assert_eq!(read(&path, "id"), None);
        write(&path, memo()).unwrap();
        assert_eq!(read(&path, "id"), Some(memo()));
        assert_eq!(read(&path, "other"), None);
        let bytes = std::fs::read(&path).unwrap();
        for cut in [0, 8, 20, bytes.len() - 1] {
            std::fs::write(&path, &bytes[..cut]).unwrap();
            assert_eq!(read(&path, "id"), None, "cut at {cut}");
        }
        let mut newer = memo();
        newer.version = VERSION + 1;
        write(&path, newer).unwrap();
        assert_eq!(read(&path, "id"), None);
    }
}
