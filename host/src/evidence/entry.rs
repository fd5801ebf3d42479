//! One recorded execution as the store keeps it (and a published bundle carries it): the
//! identity, the commit it was measured on, its metrics and what it read.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{VERSION, findings, shared};
use crate::runtime::{Metric, ReadSet};
use crate::snapshot::{Pathspec, Snapshot};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricValue {
    pub name: String,
    pub value: f64,
    /// Whether the value counts the metric's findings (WIT `counted`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub counted: bool,
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
    /// Every glob list the producer listed.
    pub listings: Vec<Vec<String>>,
    /// Every path it read (present or not) that none of its listings matched, sorted,
    /// separated by NUL: one string loads in one pass however many paths it holds.
    pub reads: String,
    /// The artifacts it was handed: name → sha256.
    pub artifacts: BTreeMap<String, String>,
    /// Whether its findings are kept beside it (`<entry>.findings`).
    #[serde(default)]
    pub has_findings: bool,
    /// Those findings, once loaded by [`Store::lookup`] (checked, decoded only when asked for).
    #[serde(skip)]
    pub findings: Option<findings::Kept>,
    /// Who published it, for an entry another clone measured and signed (`None` for one
    /// measured here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<shared::Source>,
}

impl Entry {
    /// Where a reused reading came from, when another clone published it: "evidence signed by
    /// ci@acme via refs/discern/evidence, 1 listing and 2 paths read outside it".
    pub fn provenance(&self) -> Option<String> {
        let source = self.source.as_ref()?;
        let (listings, reads) = (self.listings.len(), self.read_paths().len());
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        Some(format!(
            "evidence signed by {} via {}, {listings} listing{} and {reads} path{} read outside {}",
            source.signer,
            source.via,
            plural(listings),
            plural(reads),
            if listings == 1 { "it" } else { "them" }
        ))
    }

    /// The read paths no listing matched (see [`unlisted_reads`]), sorted.
    pub fn read_paths(&self) -> Vec<&str> {
        self.reads.split('\0').filter(|p| !p.is_empty()).collect()
    }

    /// Whether `path` is one of the read paths: one of the NUL-separated names, found without
    /// splitting them all (a change is a few paths, a read set thousands).
    pub fn has_read(&self, path: &str) -> bool {
        if path.is_empty() || path.contains('\0') {
            return false;
        }
        let reads = self.reads.as_bytes();
        self.reads.match_indices(path).any(|(at, _)| {
            let end = at + path.len();
            (at == 0 || reads[at - 1] == 0) && (end == reads.len() || reads[end] == 0)
        })
    }

    /// The read set this entry stands for on `snapshot` (where it is valid): the recorded reads
    /// and listings, over the snapshot's entries (whose blob ids are the recorded ones).
    pub fn read_set(&self, snapshot: &Snapshot) -> ReadSet {
        let mut read_set = ReadSet::over(snapshot.shared_entries());
        for path in self.read_paths() {
            read_set.record_read(path);
        }
        for globs in &self.listings {
            let spec = Pathspec::new(globs);
            read_set.record_listing(globs, snapshot.matching_indices(&spec));
        }
        read_set.artifacts = self
            .artifacts
            .iter()
            .map(|(name, digest)| (name.clone(), Some(digest.clone())))
            .collect();
        read_set.sealed()
    }
}

/// Whether the entry whose JSON is `bytes` read one of `changed`, told from the bytes without
/// decoding them (its read set holds thousands of paths, a change a few): each path as JSON
/// writes it, between the quotes or NUL separators (`\u0000`) of a string. A match outside
/// the read set only makes the entry a miss (measured again), never a reuse; past
/// [`FEW_CHANGED`] paths the entry is decoded instead.
pub(super) fn names_a_read(bytes: &[u8], changed: &[String]) -> bool {
    const NUL: &[u8] = b"\\u0000";
    if changed.len() > FEW_CHANGED {
        return false;
    }
    changed.iter().filter(|path| !path.is_empty()).any(|path| {
        let Ok(quoted) = serde_json::to_string(path) else {
            return false;
        };
        let written = quoted.as_bytes();
        let written = &written[1..written.len() - 1];
        memchr::memmem::find_iter(bytes, written).any(|at| {
            let (before, after) = (&bytes[..at], &bytes[at + written.len()..]);
            // A quote after a backslash is one inside the string: not this one's start.
            let opens = before.ends_with(b"\"") && !before.ends_with(b"\\\"");
            (opens || before.ends_with(NUL)) && (after.starts_with(b"\"") || after.starts_with(NUL))
        })
    })
}

/// The most changed paths [`names_a_read`] looks for in an entry's bytes.
const FEW_CHANGED: usize = 64;

/// The paths of `read_set` an entry names as read: those none of its listings matched. A
/// listed path that changes is told by its listing already ([`Store::valid_on`] matches every
/// changed path against each listing's globs, read again), so naming it too only made the entry
/// larger: a pattern over `**` at 200,000 files wrote, and read back, a 5 MB string on every
/// commit. A listing whose globs no longer parse covers nothing (`valid_on` then refuses the
/// entry anyway).
///
/// [`Store::valid_on`]: super::Store::valid_on
fn unlisted_reads(read_set: &ReadSet) -> Vec<&str> {
    read_set.read_paths_outside(|listing| Pathspec::parse(&listing.globs, None).is_ok())
}

/// What decides most lookups: an entry's fields before its read set, borrowed where their JSON
/// has no escapes (every other field is skipped, not decoded).
#[derive(Deserialize)]
pub(super) struct Header<'a> {
    pub(super) version: u32,
    #[serde(borrow)]
    pub(super) identity: Cow<'a, str>,
    #[serde(borrow)]
    pub(super) commit: Cow<'a, str>,
    pub(super) exact_commit: bool,
}

impl Entry {
    /// The entry of an execution of `identity` measured on `commit`: its metrics (findings
    /// aside) and what it read. `has_findings` says whether its findings are kept beside it.
    pub(crate) fn measured(
        identity: &str,
        commit: &str,
        metrics: &[Metric],
        read_set: &ReadSet,
        has_findings: bool,
    ) -> Self {
        Entry {
            version: VERSION,
            identity: identity.to_owned(),
            commit: commit.to_owned(),
            exact_commit: !read_set.artifacts.is_empty(),
            metrics: metrics
                .iter()
                .map(|m| MetricValue {
                    name: m.name.clone(),
                    value: m.value,
                    counted: m.counted,
                })
                .collect(),
            listings: read_set
                .listings
                .iter()
                .map(|listing| listing.globs.clone())
                .collect(),
            // A path with NUL cannot exist in a git tree, so its read stays absent on every
            // commit; dropping it keeps the separator unambiguous and the list sorted.
            reads: unlisted_reads(read_set)
                .into_iter()
                .filter(|path| !path.contains('\0'))
                .collect::<Vec<_>>()
                .join("\0"),
            artifacts: read_set
                .artifacts
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), v.clone()?)))
                .collect(),
            has_findings,
            findings: None,
            source: None,
        }
    }

    /// Whether this entry records no input at all: no path read, no listing, no artifact.
    /// Nothing it read can tell another commit's snapshot from its own, so it stands for its
    /// own commit only (a measurement that read nothing is no evidence about any other).
    pub fn reads_nothing(&self) -> bool {
        // Told from the first path, not by splitting every one (a read set holds thousands).
        self.reads.split('\0').all(str::is_empty)
            && self.listings.is_empty()
            && self.artifacts.is_empty()
    }
}
