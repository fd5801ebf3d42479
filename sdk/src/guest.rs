//! The glue between the WIT bindings and [`Producer`](crate::Producer) (wasm32 only).

use crate::bindings::discern::producer::snapshot as wit;
use crate::bindings::exports::discern::producer::measure as out;
use crate::{Config, Entry, Producer, Snapshot};

/// The snapshot the host hands in, reached through the `snapshot` import.
struct HostSnapshot;

impl Snapshot for HostSnapshot {
    fn files(&self, globs: &[String]) -> Vec<Entry> {
        wit::files(globs)
            .into_iter()
            .map(|e| Entry {
                path: e.path,
                size: e.size,
                id: e.id,
                executable: e.executable,
            })
            .collect()
    }

    fn read(&self, path: &str) -> Result<Vec<u8>, String> {
        wit::read(path)
    }

    fn read_range(&self, path: &str, offset: u64, len: u64) -> Result<Vec<u8>, String> {
        wit::read_range(path, offset, len)
    }

    fn artifact(&self, name: &str) -> Result<Vec<u8>, String> {
        wit::artifact(name)
    }
}

pub fn describe<P: Producer>() -> out::Info {
    let info = P::describe();
    out::Info {
        name: info.name,
        version: info.version,
        metrics: info.metrics,
        config_schema: info.config_schema,
    }
}

pub fn run<P: Producer>(config: String) -> Result<Vec<out::Metric>, String> {
    let config = Config::parse(&config).map_err(|e| e.to_string())?;
    let metrics = P::run(&HostSnapshot, &config).map_err(|e| e.to_string())?;
    Ok(metrics
        .into_iter()
        .map(|m| out::Metric {
            name: m.name,
            value: m.value,
            counted: m.counted,
            findings: m
                .findings
                .into_iter()
                .map(|f| out::Finding {
                    fingerprint: f.fingerprint,
                    path: f.path,
                    line: f.line,
                    column: f.column,
                    severity: f.severity.map(|s| match s {
                        crate::Severity::Error => out::Severity::Error,
                        crate::Severity::Warning => out::Severity::Warning,
                        crate::Severity::Note => out::Severity::Note,
                    }),
                    message: f.message,
                })
                .collect(),
        })
        .collect())
}
