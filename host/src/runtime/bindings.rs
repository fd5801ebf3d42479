//! Host-side bindings of `wit/v0.1` (package `discern:producer@0.1.0`).

wasmtime::component::bindgen!({
    path: "../wit/v0.1",
    world: "producer",
    imports: { default: trappable },
});

pub use self::discern::producer::snapshot as wit_snapshot;
pub use self::exports::discern::producer::measure as wit_measure;
