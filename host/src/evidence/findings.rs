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
    /// The findings of `metrics`; `None` when no metric has any (nothing to keep).
    pub fn of(metrics: &[Metric]) -> Option<Self> {
        let file = Self(
            metrics
                .iter()
                .filter(|m| !m.findings.is_empty() || m.findings_dropped > 0)
                .map(|m| {
                    let findings = m
                        .findings
                        .iter()
                        .map(|f| {
                            Stored(
                                f.fingerprint.clone(),
                                f.path.clone(),
                                f.line,
                                f.column,
                                f.severity,
                                f.message.clone(),
                            )
                        })
                        .collect();
                    (
                        m.name.clone(),
                        MetricFindings {
                            dropped: m.findings_dropped,
                            findings,
                        },
                    )
                })
                .collect(),
        );
        (!file.0.is_empty()).then_some(file)
    }

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

pub fn write(entry: &Path, file: &File) -> std::io::Result<()> {
    let bytes = serde_json::to_vec(file).map_err(std::io::Error::other)?;
    crate::fsutil::write_atomic(&path_of(entry), &bytes)
}

/// The findings kept for the entry at `entry`, or `None` when they are gone or damaged.
pub fn read(entry: &Path) -> Option<File> {
    serde_json::from_slice(&std::fs::read(path_of(entry)).ok()?).ok()
}
