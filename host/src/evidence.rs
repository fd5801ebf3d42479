//! Evidence: a recorded producer execution that may be reused while its inputs are unchanged.
//!
//! A producer can only read through the `snapshot` interface, so the host knows exactly what it
//! read: the globs it listed with the entries they matched, and every path it read, with blob
//! ids. That read set is a complete input closure: when every recorded entry has the same blob
//! id in a new snapshot (and every listed glob matches the same set), the reading is valid for
//! that commit without running anything. A job-backed execution (artifacts, stdout) is valid
//! only for the exact commit it was measured on.
//!
//! The store lives in the git common dir (`discern/evidence/<identity>/<entry>.json`): one
//! content-addressed file per entry, written atomically, so concurrent writers never lose each
//! other's entries; bounded in size (oldest evicted). It is a cache: a missing or corrupt entry
//! is a miss, never an error.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::runtime::{Metric, ReadSet};
use crate::snapshot::{Pathspec, Snapshot};

pub const VERSION: u32 = 1;
/// The store's size bound; the oldest entries are evicted beyond it.
pub const MAX_BYTES: u64 = 256 << 20;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricValue {
    pub name: String,
    pub value: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub version: u32,
    /// The execution identity (component digest, canonical config, artifact, needs).
    pub identity: String,
    /// The commit it was measured on.
    pub commit: String,
    /// Valid only on `commit` (a job-backed execution).
    pub exact_commit: bool,
    pub metrics: Vec<MetricValue>,
    pub read_set: ReadSet,
    /// The artifacts it was handed: name → sha256.
    pub artifacts: BTreeMap<String, String>,
}

#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
}

impl Store {
    pub fn new(dir: PathBuf) -> Self {
        Self { dir }
    }

    fn identity_dir(&self, identity: &str) -> PathBuf {
        self.dir
            .join(crate::digest::Digest::of(identity.as_bytes()).hex())
    }

    /// The newest entry for `identity` that is valid on `snapshot`.
    pub fn lookup(&self, identity: &str, snapshot: &Snapshot) -> Option<Entry> {
        let dir = self.identity_dir(identity);
        let mut candidates: Vec<(SystemTime, PathBuf)> = std::fs::read_dir(&dir)
            .ok()?
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
            .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
            .collect();
        candidates.sort_by_key(|c| std::cmp::Reverse(c.0));
        candidates.into_iter().find_map(|(_, path)| {
            let entry: Entry = serde_json::from_slice(&std::fs::read(&path).ok()?).ok()?;
            (entry.version == VERSION && entry.identity == identity && valid_on(&entry, snapshot))
                .then(|| {
                    // Touch it: eviction is least-recently-used.
                    let _ = std::fs::File::options()
                        .append(true)
                        .open(&path)
                        .and_then(|f| f.set_modified(SystemTime::now()));
                    entry
                })
        })
    }

    /// Record an execution. Errors only cost reuse later, so they are ignored by callers.
    pub fn save(
        &self,
        identity: &str,
        commit: &str,
        metrics: &[Metric],
        read_set: &ReadSet,
    ) -> std::io::Result<()> {
        let entry = Entry {
            version: VERSION,
            identity: identity.to_owned(),
            commit: commit.to_owned(),
            exact_commit: !read_set.artifacts.is_empty(),
            metrics: metrics
                .iter()
                .map(|m| MetricValue {
                    name: m.name.clone(),
                    value: m.value,
                })
                .collect(),
            read_set: read_set.clone(),
            artifacts: read_set
                .artifacts
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), v.clone()?)))
                .collect(),
        };
        let bytes = serde_json::to_vec(&entry).map_err(std::io::Error::other)?;
        let name = format!("{}.json", crate::digest::Digest::of(&bytes).hex());
        crate::fsutil::write_atomic(&self.identity_dir(identity).join(name), &bytes)?;
        self.evict(MAX_BYTES);
        Ok(())
    }

    /// Remove the least recently used entries until the store fits in `max_bytes`.
    pub fn evict(&self, max_bytes: u64) {
        let mut files: Vec<(SystemTime, u64, PathBuf)> = Vec::new();
        for dir in std::fs::read_dir(&self.dir)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
        {
            for file in std::fs::read_dir(dir.path())
                .into_iter()
                .flatten()
                .filter_map(Result::ok)
            {
                if let Ok(meta) = file.metadata() {
                    files.push((
                        meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
                        meta.len(),
                        file.path(),
                    ));
                }
            }
        }
        let mut total: u64 = files.iter().map(|f| f.1).sum();
        if total <= max_bytes {
            return;
        }
        files.sort();
        for (_, size, path) in files {
            if total <= max_bytes {
                break;
            }
            if std::fs::remove_file(&path).is_ok() {
                total = total.saturating_sub(size);
            }
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// Whether everything `entry` read is unchanged in `snapshot`.
pub fn valid_on(entry: &Entry, snapshot: &Snapshot) -> bool {
    if entry.exact_commit {
        return entry.commit.parse().ok() == Some(snapshot.commit()) && !snapshot.is_worktree();
    }
    let same = |path: &str, id: &Option<String>| match (snapshot.entry(path), id) {
        (Some(e), Some(id)) => id.parse().ok() == Some(e.id),
        (None, None) => true,
        _ => false,
    };
    if !entry.read_set.reads.iter().all(|(path, id)| same(path, id)) {
        return false;
    }
    entry.read_set.listings.iter().all(|listing| {
        let spec = Pathspec::new(&listing.globs);
        let now: BTreeMap<&str, String> = snapshot
            .matching(&spec)
            .map(|e| (e.path.as_str(), e.id.to_string()))
            .collect();
        now.len() == listing.matched.len()
            && listing
                .matched
                .iter()
                .all(|(path, id)| now.get(path.as_str()) == Some(id))
    })
}

/// Paths `read_set` touched outside `inputs` (read, or matched by a listing).
pub fn outside(read_set: &ReadSet, inputs: &[String]) -> Vec<String> {
    let spec = Pathspec::new(inputs);
    let mut outside: Vec<String> = read_set
        .paths()
        .filter(|p| !spec.matches(p))
        .map(str::to_owned)
        .collect();
    outside.sort();
    outside.dedup();
    outside
}
