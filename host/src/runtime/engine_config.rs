//! The wasmtime configuration every producer is compiled for: the one source of truth for the
//! runtime's engine (`engine.rs`) and for the build script, which precompiles the built-in
//! producers with it (`host/build.rs` includes this file through `#[path]`, so nothing here
//! may name the rest of the crate).
//!
//! The two differ only in the CPU they compile for. The runtime compiles for the host it runs
//! on (wasmtime probes its features); the build script compiles for [`Cpu::Baseline`], an
//! explicit, widely available feature set, so that the code embedded in a binary built on one
//! machine loads on another. wasmtime refuses precompiled code whose settings (fuel, epochs,
//! stack, wasm features) differ from the loading engine's, or that needs a CPU feature the
//! host lacks; the runtime then compiles the embedded wasm instead.

use wasmtime::Config;

/// The wasm stack a producer may use.
pub const MAX_WASM_STACK: usize = 1 << 20;

/// The CPU compiled code is meant for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cpu<'a> {
    /// The machine this process runs on, as wasmtime detects it.
    Host,
    /// The baseline of a target triple (`x86_64-unknown-linux-gnu`): x86-64-v2 on x86-64
    /// (SSE3 to SSE4.2, POPCNT, CMPXCHG16B: every x86-64 CPU since about 2009), the
    /// architecture's base feature set elsewhere. Only the build script compiles for it.
    #[allow(dead_code)]
    Baseline(&'a str),
}

/// The engine configuration of every producer: the component model, fuel (the deterministic
/// CPU budget), epoch interruption (the wall-clock backstop) and a bounded wasm stack.
pub fn config(cpu: Cpu<'_>) -> wasmtime::Result<Config> {
    let mut config = Config::new();
    config
        .wasm_component_model(true)
        .consume_fuel(true)
        .epoch_interruption(true)
        .max_wasm_stack(MAX_WASM_STACK)
        .parallel_compilation(true);
    if let Cpu::Baseline(triple) = cpu {
        // An explicit target turns off the host's feature detection; only the flags below
        // are enabled.
        config.target(triple)?;
        if triple.starts_with("x86_64") {
            for flag in X86_64_V2 {
                // SAFETY: these flags only change the code generated for the target. The
                // engine that loads the code checks each enabled flag against the host's CPU
                // (wasmtime's `check_compatible_with_isa_flag`) and refuses it when missing.
                #[allow(unsafe_code)]
                unsafe {
                    config.cranelift_flag_enable(flag);
                }
            }
        }
    }
    Ok(config)
}

/// Cranelift's names for the x86-64-v2 features.
const X86_64_V2: [&str; 6] = [
    "has_sse3",
    "has_ssse3",
    "has_sse41",
    "has_sse42",
    "has_popcnt",
    "has_cmpxchg16b",
];
