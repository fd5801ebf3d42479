//! Host-side bindings of every contract version this host runs: `wit/v0.2` (package
//! `discern:producer@0.2.0`), the current one, and `wit/v0.1`, kept through an adapter that
//! lifts its output into 0.2's types (a 0.1 finding has no line, column or severity).

/// `discern:producer@0.1.0`.
pub(super) mod v1 {
    wasmtime::component::bindgen!({
        path: "../wit/v0.1",
        world: "producer",
        imports: { default: trappable },
    });
}

/// `discern:producer@0.2.0`.
pub(super) mod v2 {
    wasmtime::component::bindgen!({
        path: "../wit/v0.2",
        world: "producer",
        imports: { default: trappable },
    });
}

pub(super) use v2::discern::producer::snapshot as wit_snapshot;
pub(super) use v2::exports::discern::producer::measure as wit_measure;

use v1::exports::discern::producer::measure as v1_measure;

/// A 0.1 description, as 0.2 says it (the record is unchanged).
pub(super) fn info_from_v1(info: v1_measure::Info) -> wit_measure::Info {
    wit_measure::Info {
        name: info.name,
        version: info.version,
        metrics: info.metrics,
        config_schema: info.config_schema,
    }
}

/// 0.1 metrics, as 0.2 says them: findings without a line, column or severity, and a value
/// that counts its findings when it equals their number (0.1 could not say).
pub(super) fn metrics_from_v1(metrics: Vec<v1_measure::Metric>) -> Vec<wit_measure::Metric> {
    metrics
        .into_iter()
        .map(|m| wit_measure::Metric {
            name: m.name,
            value: m.value,
            counted: !m.findings.is_empty() && m.findings.len() as f64 == m.value,
            findings: m
                .findings
                .into_iter()
                .map(|f| wit_measure::Finding {
                    fingerprint: f.fingerprint,
                    path: f.path,
                    line: None,
                    column: None,
                    severity: None,
                    message: f.message,
                })
                .collect(),
        })
        .collect()
}

/// A 0.2 snapshot entry, as 0.1 says it (the record is unchanged).
pub(super) fn entry_to_v1(entry: wit_snapshot::Entry) -> v1::discern::producer::snapshot::Entry {
    v1::discern::producer::snapshot::Entry {
        path: entry.path,
        size: entry.size,
        id: entry.id,
        executable: entry.executable,
    }
}
