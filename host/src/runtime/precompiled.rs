//! A built-in's machine code, precompiled by the build script for this binary's engine
//! (`host/build/precompile.rs`), loaded without compiling; where it does not load on this host
//! (an engine setting or wasmtime version that differs), the embedded wasm
//! is compiled once instead, through the per-user compile cache, with a note saying why.

use wasmtime::Engine;
use wasmtime::component::Component;

use super::cache::{CompileCache, Origin, deserialize};
use super::component::ProducerComponent;

/// A loaded component, and why the precompiled code was not used where there was some.
pub(super) struct Compiled {
    pub component: Component,
    pub origin: Origin,
    pub note: Option<String>,
}

/// The precompiled code of `component` if it has some that loads, else the compile cache.
pub(super) fn load(
    engine: &Engine,
    cache: &CompileCache,
    component: &ProducerComponent,
) -> wasmtime::Result<Compiled> {
    let mut note = None;
    if let Some(code) = component.precompiled() {
        match deserialize(engine, faulted(code)) {
            Ok(compiled) => {
                return Ok(Compiled {
                    component: compiled,
                    origin: Origin::Precompiled,
                    note: None,
                });
            }
            Err(e) => {
                note = Some(format!(
                    "{}: the precompiled code does not load on this host ({e:#}); compiling the built-in instead",
                    component.label()
                ));
            }
        }
    }
    let (compiled, origin) = match component.requires_compiled_here() {
        true => cache.compile(engine, component.bytes(), component.digest())?,
        false => cache.load(engine, component.bytes(), component.digest())?,
    };
    Ok(Compiled {
        component: compiled,
        origin,
        note,
    })
}

/// Debug builds only: `DISCERN_FAULT_PRECOMPILED=1` hands wasmtime a truncated copy of the
/// code (which it refuses), so tests can exercise the fallback.
fn faulted(code: &[u8]) -> &[u8] {
    #[cfg(debug_assertions)]
    if std::env::var_os("DISCERN_FAULT_PRECOMPILED").is_some_and(|v| v == "1") {
        return &code[..code.len() / 2];
    }
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern() -> ProducerComponent {
        crate::builtins::component("pattern").expect("a built-in")
    }

    #[test]
    fn built_ins_load_their_precompiled_code() {
        let engine = super::super::engine::new_engine().expect("engine");
        let cache = CompileCache::new(None);
        let loaded = load(&engine, &cache, &pattern()).expect("loads");
        assert_eq!(loaded.origin, Origin::Precompiled);
        assert!(loaded.note.is_none());
    }

    #[test]
    fn a_mismatched_engine_compiles_the_wasm_once_with_a_note() {
        // An engine whose settings differ from the build's (no fuel): wasmtime refuses the
        // precompiled code, and the wasm is compiled, then found in the cache.
        let mut config = super::super::engine_config::config(None).expect("config");
        config.consume_fuel(false);
        let engine = Engine::new(&config).expect("engine");
        let dir = tempfile::tempdir().expect("temp dir");
        let cache = CompileCache::new(Some(dir.path().to_owned()));
        let first = load(&engine, &cache, &pattern()).expect("compiles");
        assert_eq!(first.origin, Origin::Compiled);
        let note = first.note.expect("a note");
        assert!(
            note.contains("builtin:pattern") && note.contains("fuel"),
            "{note}"
        );
        let second = load(&engine, &cache, &pattern()).expect("cached");
        assert_eq!(second.origin, Origin::Cache);
    }
}
