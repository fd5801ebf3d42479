//! An execution's findings, kept beside its evidence entry (`<entry>.findings`), so that a
//! reused reading explains itself as a fresh one does. Compact: one JSON array per finding,
//! `[fingerprint, path, line, column, severity, message]`. Loaded only with the entry it
//! belongs to; an entry whose findings file is gone is a miss (measure again), never a reading
//! without its findings.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::runtime::{Finding, Metric, Severity};

/// One finding, as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Stored(
    String,
    Option<String>,
    Option<u32>,
    Option<u32>,
    Option<Severity>,
    String,
);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct MetricFindings {
    #[serde(default, skip_serializing_if = "is_zero")]
    dropped: usize,
    findings: Vec<Stored>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Metric name → its findings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct File(BTreeMap<String, MetricFindings>);

impl File {
    /// Give each of `metrics` its stored findings.
    pub fn fill(self, metrics: &mut [Metric]) {
        let mut by_name = self.0;
        for metric in metrics {
            if let Some(stored) = by_name.remove(&metric.name) {
                metric.findings_dropped = stored.dropped;
                metric.findings = stored
                    .findings
                    .into_iter()
                    .map(
                        |Stored(fingerprint, path, line, column, severity, message)| Finding {
                            fingerprint,
                            path,
                            line,
                            column,
                            severity,
                            message,
                        },
                    )
                    .collect();
            }
        }
    }
}

/// Where the findings of the entry at `entry` are kept.
pub fn path_of(entry: &Path) -> PathBuf {
    entry.with_extension("findings")
}

/// The findings of `metrics` as a findings file holds them (`File`'s format), written from the
/// metrics themselves: no copy of a finding is made; `None` when no metric has any.
pub fn encode(metrics: &[Metric]) -> std::io::Result<Option<Vec<u8>>> {
    let kept: BTreeMap<&str, MetricFindingsRef> = metrics
        .iter()
        .filter(|m| !m.findings.is_empty() || m.findings_dropped > 0)
        .map(|m| {
            let findings = m.findings.iter().map(|f| {
                StoredRef(
                    &f.fingerprint,
                    f.path.as_deref(),
                    f.line,
                    f.column,
                    f.severity,
                    &f.message,
                )
            });
            let findings = findings.collect();
            (
                m.name.as_str(),
                MetricFindingsRef {
                    dropped: m.findings_dropped,
                    findings,
                },
            )
        })
        .collect();
    if kept.is_empty() {
        return Ok(None);
    }
    serde_json::to_vec(&kept)
        .map(Some)
        .map_err(std::io::Error::other)
}

/// `Stored`, borrowed: serialized the same.
#[derive(Serialize)]
struct StoredRef<'a>(
    &'a str,
    Option<&'a str>,
    Option<u32>,
    Option<u32>,
    Option<Severity>,
    &'a str,
);

/// `MetricFindings`, borrowed: serialized the same.
#[derive(Serialize)]
struct MetricFindingsRef<'a> {
    #[serde(skip_serializing_if = "is_zero")]
    dropped: usize,
    findings: Vec<StoredRef<'a>>,
}

/// Write the encoded findings (`encode`) of the entry at `entry`.
pub fn write(entry: &Path, bytes: &[u8]) -> std::io::Result<()> {
    crate::fsutil::write_cache(&path_of(entry), bytes)
}

/// The findings kept for the entry at `entry`, or `None` when they are gone or damaged.
pub fn read(entry: &Path) -> Option<File> {
    serde_json::from_slice(&std::fs::read(path_of(entry)).ok()?).ok()
}
