//! The wasmtime configuration every producer is compiled for: the one source of truth for the
//! runtime's engine (`engine.rs`) and for the build script, which precompiles the built-in
//! producers with it (`host/build.rs` includes this file through `#[path]`, so nothing here
//! may name the rest of the crate).
//!
//! The two differ only in the CPU they compile for. The runtime compiles for the host it runs
//! on (wasmtime probes its features); the build script compiles for the target triple's base
//! feature set, so that the code embedded in a binary built on one machine loads on another.
//! wasmtime refuses precompiled code whose settings (fuel, epochs, stack, wasm features)
//! differ from the loading engine's, or that needs a CPU feature the host lacks; the runtime
//! then compiles the embedded wasm instead.

use wasmtime::Config;

/// The wasm stack a producer may use.
pub(super) const MAX_WASM_STACK: usize = 1 << 20;

/// The engine configuration of every producer: the component model, fuel (the deterministic
/// CPU budget), epoch interruption (the wall-clock backstop) and a bounded wasm stack.
///
/// `target` is `None` for the runtime, which compiles for the machine it runs on (wasmtime
/// probes its CPU features), and the target triple for the build script
/// (`x86_64-unknown-linux-gnu`). An explicit triple turns off feature detection, so the code
/// uses only the architecture's base feature set (SSE2 on x86-64) and loads on every CPU of
/// that architecture; wasmtime lowers the rest without the optional instructions.
pub(super) fn config(target: Option<&str>) -> wasmtime::Result<Config> {
    let mut config = Config::new();
    config
        .wasm_component_model(true)
        .consume_fuel(true)
        .epoch_interruption(true)
        .max_wasm_stack(MAX_WASM_STACK)
        .parallel_compilation(true);
    if let Some(triple) = target {
        config.target(triple)?;
    }
    Ok(config)
}
