//! The group memo of one execution identity (`<identity>/groups/<group digest>.part`): what
//! each group of files gave the last grouped run of a built-in whose reading is a sum over
//! files (`planner/grouped.rs`), keyed by the digest of the group's entries (paths, blob ids,
//! modes). A new run then runs the producer only over the groups that changed and adds the
//! rest.
//!
//! It is a cache like every evidence file: each part written atomically (temp file + rename),
//! bounded (the groups of the last run only, with the findings that run kept, and no part over
//! [`MAX_BYTES`]), and a missing, unreadable, corrupt or other-version part is missing: its
//! group runs again. It is read only by a store that reads evidence, so Proof never reads it.
//! One file a part, so that a run that changed one group writes that group's part alone, not
//! every group's findings again.
//!
//! On disk, a part: [`MAGIC`], the JSON of its header (`u64` length first: the identity and the
//! part's counts), then its findings, each metric's a block of encoded findings (`findings.rs`,
//! [`Records`]) that the JSON gives the place of. They are read back checked and still encoded:
//! a run joins the parts' blocks into its findings file.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::findings::Records;
use crate::runtime::Metric;

/// The parts' folder in the identity's folder (no evidence lookup reads it).
pub(crate) const DIR: &str = "groups";
/// What a memo was before it was a file a part: removed where found.
pub(crate) const OLD_FILE: &str = "groups.memo";
/// Version 4: a part's reads are places in its group. Version 3: one file a part, each metric's
/// findings a block of records.
pub(crate) const VERSION: u32 = 4;
/// A part larger than this is not written (its group runs again next time).
pub(crate) const MAX_BYTES: usize = 64 << 20;
/// The first bytes of a part file.
const MAGIC: &[u8; 8] = b"dpart\x00\x00\x04";
/// A part file's extension.
const EXTENSION: &str = "part";

/// What one group of files gave a run: the exact output of the producer run over those files
/// alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Part {
    pub metrics: Vec<PartMetric>,
    /// The entries the run read, by their place in the group (whose entries the part's key
    /// digests): a few bytes a file, where paths would be tens.
    pub reads: Vec<u32>,
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
    /// The findings kept, encoded, when stored: a part whose findings the combined reading did
    /// not keep stores none (`None`), and runs again if a later reading needs them.
    #[serde(skip)]
    pub records: Option<Records>,
    /// On disk: where `records` are after the header (offset, length in bytes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    block: Option<(usize, usize)>,
}

impl PartMetric {
    /// `metric` as a part keeps it; `None` when its findings cannot be encoded.
    pub(crate) fn new(metric: Metric) -> Option<Self> {
        Some(Self {
            records: Some(Records::encode(&metric.findings).ok()?),
            name: metric.name,
            value: metric.value,
            counted: metric.counted,
            kept: metric.findings.len(),
            dropped: metric.findings_dropped,
            block: None,
        })
    }
}

/// The parts of one identity: group digest (hex) → its part.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Memo {
    pub identity: String,
    pub parts: HashMap<String, Part>,
}

/// A part file's header.
#[derive(Serialize, Deserialize)]
struct Header {
    version: u32,
    identity: String,
    part: Part,
}

/// The memo of `identity` in `dir` (its parts' folder): every part that reads back whole, of
/// this version and identity.
pub(crate) fn read(dir: &Path, identity: &str) -> Memo {
    let mut memo = Memo {
        identity: identity.to_owned(),
        parts: HashMap::new(),
    };
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        let Some(key) = key_of(&path) else {
            continue;
        };
        if let Some(part) = read_part(&path, identity) {
            memo.parts.insert(key.to_owned(), part);
        }
    }
    memo
}

/// The group digest a part file at `path` is named by; `None` for any other file.
fn key_of(path: &Path) -> Option<&str> {
    let name = path.file_name()?.to_str()?;
    let key = name.strip_suffix(EXTENSION)?.strip_suffix('.')?;
    (!key.is_empty() && key.bytes().all(|b| b.is_ascii_hexdigit())).then_some(key)
}

/// The part at `path`, or `None` when it is unreadable, damaged, of another version or of
/// another identity.
fn read_part(path: &Path, identity: &str) -> Option<Part> {
    let bytes = std::fs::read(path).ok()?;
    let rest = bytes.strip_prefix(MAGIC)?;
    let (len, rest) = rest.split_at_checked(8)?;
    let len = usize::try_from(u64::from_le_bytes(len.try_into().ok()?)).ok()?;
    let (json, blocks) = rest.split_at_checked(len)?;
    let header: Header = serde_json::from_slice(json).ok()?;
    if header.version != VERSION || header.identity != identity {
        return None;
    }
    let mut part = header.part;
    for metric in &mut part.metrics {
        if metric.kept == 0 {
            metric.records = Some(Records::default());
        }
        if let Some((start, len)) = metric.block.take() {
            let bytes = blocks.get(start..start.checked_add(len)?)?;
            metric.records = Some(Records::checked(bytes.to_vec(), metric.kept)?);
        }
    }
    Some(part)
}

/// Keep `memo` in `dir`: the parts of `written` (those this run made) are written, each
/// atomically; a part file of any other group is removed. The others are on disk already.
pub(crate) fn write(dir: &Path, memo: Memo, written: &HashSet<String>) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for entry in std::fs::read_dir(dir)?.flatten() {
        let path = entry.path();
        if key_of(&path).is_some_and(|key| !memo.parts.contains_key(key)) {
            let _ = std::fs::remove_file(&path);
        }
    }
    for (key, part) in memo.parts {
        if written.contains(&key) {
            let path = dir.join(format!("{key}.{EXTENSION}"));
            write_part(&path, &memo.identity, part)?;
        }
    }
    Ok(())
}

fn write_part(path: &Path, identity: &str, mut part: Part) -> std::io::Result<()> {
    let mut blocks = Vec::new();
    for metric in &mut part.metrics {
        metric.block = None;
        // A metric with no findings kept has no block: it reads back as an empty list.
        if let Some(records) = metric.records.take().filter(|r| r.len() > 0) {
            metric.block = Some((blocks.len(), records.bytes().len()));
            blocks.extend_from_slice(records.bytes());
        }
    }
    let header = Header {
        version: VERSION,
        identity: identity.to_owned(),
        part,
    };
    let json = serde_json::to_vec(&header).map_err(std::io::Error::other)?;
    let mut bytes = Vec::with_capacity(MAGIC.len() + 8 + json.len() + blocks.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&(json.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&json);
    bytes.extend_from_slice(&blocks);
    if bytes.len() > MAX_BYTES {
        return Ok(());
    }
    crate::fsutil::write_cache(path, &bytes)
}

#[cfg(test)]
mod tests;
