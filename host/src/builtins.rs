//! The built-in producers, compiled to `wasm32-wasip2` by the build script and embedded, each
//! with the machine code the build script precompiled it to for this binary's engine
//! (`host/build/precompile.rs`): a built-in is never compiled at run time unless that code does
//! not load on this host.

use crate::runtime::ProducerComponent;

pub struct Builtin {
    pub name: &'static str,
    pub wasm: &'static [u8],
    /// `Engine::precompile_component` of `wasm`, for the target's base CPU features; empty where the build
    /// could not precompile it.
    pub precompiled: &'static [u8],
}

macro_rules! builtin {
    ($name:literal) => {
        Builtin {
            name: $name,
            wasm: include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".wasm")),
            precompiled: include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".cwasm")),
        }
    };
}

pub const BUILTINS: [Builtin; 6] = [
    builtin!("extent"),
    builtin!("pattern"),
    builtin!("lcov"),
    builtin!("discern-metric"),
    builtin!("file-size"),
    builtin!("sarif"),
];

/// The prefix that names a built-in in `producer = "builtin:<name>"`.
pub(crate) const PREFIX: &str = "builtin:";

/// The component of `builtin:<name>`, if there is such a built-in. Each is hashed once per
/// process (a plan asks for the same built-ins once per Standard).
pub fn component(name: &str) -> Option<ProducerComponent> {
    static COMPONENTS: [std::sync::OnceLock<ProducerComponent>; BUILTINS.len()] =
        [const { std::sync::OnceLock::new() }; BUILTINS.len()];
    let index = BUILTINS.iter().position(|b| b.name == name)?;
    let builtin = &BUILTINS[index];
    Some(
        COMPONENTS[index]
            .get_or_init(|| {
                ProducerComponent::new(format!("{PREFIX}{}", builtin.name), builtin.wasm)
                    .with_precompiled(builtin.precompiled)
            })
            .clone(),
    )
}

pub fn names() -> impl Iterator<Item = &'static str> {
    BUILTINS.iter().map(|b| b.name)
}

/// The built-ins' maxima whose one finding names the file that holds them (`producers/extent`,
/// `producers/file-size`): what such a reading is, is that file alone.
const MAXIMA_NAMING_THEIR_FILE: &[(&str, &str)] = &[
    ("builtin:extent", "max_lines"),
    ("builtin:file-size", "max_bytes"),
];

/// Whether `metric` of `producer` (its label) is a maximum whose finding names its file.
pub(crate) fn names_its_file(producer: &str, metric: &str) -> bool {
    MAXIMA_NAMING_THEIR_FILE.contains(&(producer, metric))
}

/// `builtin:pattern`'s default `max_findings` (the producer's own, `producers/pattern`).
const PATTERN_MAX_FINDINGS: usize = 100_000;

/// The most findings `builtin:pattern` lists with `config` (its execution's JSON): its
/// `max_findings`, or the default; `None` when the config cannot be read as one.
pub(crate) fn pattern_findings_cap(config: &str) -> Option<usize> {
    let config: serde_json::Value = serde_json::from_str(config).ok()?;
    match config.get("max_findings") {
        None => Some(PATTERN_MAX_FINDINGS),
        Some(value) => usize::try_from(value.as_u64()?).ok(),
    }
}
