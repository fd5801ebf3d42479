// Precompiles the built-in producers for the engine the binary runs them in, so that no
// built-in is compiled at run time. The configuration is the runtime's own
// (`src/runtime/engine_config.rs`, included by `host/build.rs`), for the base feature set of
// the target triple (no optional CPU features), so the code loads on any machine of that
// architecture.
// Where it cannot be precompiled (a cross-compile to an architecture this wasmtime cannot
// generate code for), the file is left empty and the runtime compiles the wasm once instead.

use std::path::Path;

use crate::engine_config;

/// Write `OUT_DIR/<name>.cwasm` next to each `OUT_DIR/<name>.wasm`.
pub fn precompile(out_dir: &Path, names: &[&str]) {
    let target = std::env::var("TARGET").expect("cargo sets TARGET");
    let engine =
        engine_config::config(Some(&target)).and_then(|config| wasmtime::Engine::new(&config));
    for name in names {
        let wasm = out_dir.join(format!("{name}.wasm"));
        let cwasm = out_dir.join(format!("{name}.cwasm"));
        let bytes = std::fs::read(&wasm)
            .unwrap_or_else(|e| panic!("read the built component {}: {e}", wasm.display()));
        let compiled = engine
            .as_ref()
            .map_err(|e| format!("{e:#}"))
            .and_then(|engine| {
                engine
                    .precompile_component(&bytes)
                    .map_err(|e| format!("{e:#}"))
            });
        let compiled = compiled.unwrap_or_else(|e| {
            println!(
                "cargo:warning=builtin:{name} is not precompiled for {target} ({e}); it compiles at run time"
            );
            Vec::new()
        });
        std::fs::write(&cwasm, compiled)
            .unwrap_or_else(|e| panic!("write {}: {e}", cwasm.display()));
    }
}
