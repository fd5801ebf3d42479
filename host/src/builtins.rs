//! The built-in producers, compiled to `wasm32-wasip2` by the build script and embedded.

use crate::runtime::ProducerComponent;

pub struct Builtin {
    pub name: &'static str,
    pub wasm: &'static [u8],
}

macro_rules! builtin {
    ($name:literal) => {
        Builtin {
            name: $name,
            wasm: include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".wasm")),
        }
    };
}

pub const BUILTINS: &[Builtin] = &[
    builtin!("extent"),
    builtin!("pattern"),
    builtin!("lcov"),
    builtin!("discern-metric"),
    builtin!("file-size"),
];

/// The prefix that names a built-in in `producer = "builtin:<name>"`.
pub const PREFIX: &str = "builtin:";

/// The component of `builtin:<name>`, if there is such a built-in.
pub fn component(name: &str) -> Option<ProducerComponent> {
    BUILTINS
        .iter()
        .find(|b| b.name == name)
        .map(|b| ProducerComponent::new(format!("{PREFIX}{}", b.name), b.wasm))
}

pub fn names() -> impl Iterator<Item = &'static str> {
    BUILTINS.iter().map(|b| b.name)
}
