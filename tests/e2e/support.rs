//! Shared pieces of the end-to-end tests.

use std::path::PathBuf;
use std::sync::{Arc, LazyLock};

use discern::runtime::{Artifacts, Limits, ProducerComponent, ProducerError, RunOutput, Runtime};
use discern::snapshot::Snapshot;

/// The compile cache every test shares (the cache tests use their own).
pub fn cache_dir() -> PathBuf {
    discern_tests::shared_dir(env!("CARGO_TARGET_TMPDIR"), "discern-compile-cache")
}

/// One runtime for the whole test binary, as one `discern` process would have.
pub static RUNTIME: LazyLock<Runtime> =
    LazyLock::new(|| Runtime::with_cache_dir(Some(cache_dir())).expect("runtime starts"));

pub fn builtin(name: &str) -> ProducerComponent {
    discern::builtins::component(name).expect("a built-in")
}

pub fn hostile() -> ProducerComponent {
    ProducerComponent::new("tests/hostile.wasm", discern_tests::HOSTILE_WASM)
}

pub fn run(
    component: &ProducerComponent,
    config: serde_json::Value,
    snapshot: &Snapshot,
    limits: &Limits,
) -> Result<RunOutput, ProducerError> {
    RUNTIME.run(
        component,
        &config.to_string(),
        snapshot,
        Arc::new(Artifacts::new()),
        limits,
    )
}

pub fn value(output: &RunOutput, metric: &str) -> f64 {
    output
        .metrics
        .iter()
        .find(|m| m.name == metric)
        .unwrap_or_else(|| panic!("no metric {metric} in {:?}", output.metrics))
        .value
}
