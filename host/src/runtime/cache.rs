//! The per-user compiled-component cache.
//!
//! Compiling a component is the slowest step of a run, so the compiled artifact is kept in
//! `$XDG_CACHE_HOME/discern/components/`, keyed by the component's sha256 and the engine's
//! compatibility hash. Deserializing compiled code is trusted input in wasmtime, so this
//! cache never lives in a repository and is never fed from one; each entry also carries the
//! sha256 of its payload, so a truncated or corrupted file is recompiled, never loaded.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use wasmtime::Engine;
use wasmtime::component::Component;

use crate::digest::Digest;

const MAGIC: &[u8; 8] = b"DSCNCW01";
const HEADER: usize = MAGIC.len() + 32;

/// Where a loaded component came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// The machine code built into this binary (a built-in; see `precompiled.rs`).
    Precompiled,
    /// Compiled now (and written to the cache if there is one).
    Compiled,
    /// Deserialized from the per-user cache.
    Cache,
    /// Already loaded in this process.
    Memory,
}

#[derive(Debug, Clone)]
pub struct CompileCache {
    dir: Option<PathBuf>,
}

impl CompileCache {
    pub fn new(dir: Option<PathBuf>) -> Self {
        Self { dir }
    }

    /// `DISCERN_CACHE_DIR`, else `$XDG_CACHE_HOME/discern`, else `$HOME/.cache/discern`.
    pub fn default_dir() -> Option<PathBuf> {
        let var = |name| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        var("DISCERN_CACHE_DIR")
            .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("discern")))
            .or_else(|| var("HOME").map(|d| d.join(".cache").join("discern")))
    }

    pub fn entry_path(&self, engine: &Engine, digest: Digest) -> Option<PathBuf> {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        let key = format!("{}-{:016x}.cwasm", digest.hex(), hasher.finish());
        self.dir.as_ref().map(|d| d.join("components").join(key))
    }

    /// Load the compiled component for `wasm`, compiling (and caching) it on a miss.
    pub fn load(
        &self,
        engine: &Engine,
        wasm: &[u8],
        digest: Digest,
    ) -> wasmtime::Result<(Component, Origin)> {
        let path = self.entry_path(engine, digest);
        if let Some(path) = &path
            && let Some(component) = read_entry(engine, path)
        {
            return Ok((component, Origin::Cache));
        }
        self.compile(engine, wasm, digest)
    }

    /// Compile `wasm` in this process, never reading the cache (the entry is written for later
    /// runs that may trust it).
    pub fn compile(
        &self,
        engine: &Engine,
        wasm: &[u8],
        digest: Digest,
    ) -> wasmtime::Result<(Component, Origin)> {
        let path = self.entry_path(engine, digest);
        let component = Component::new(engine, wasm)?;
        if let Some(path) = &path {
            // A cache that cannot be written only costs speed.
            let _ = component
                .serialize()
                .map_err(std::io::Error::other)
                .and_then(|bytes| write_entry(path, &bytes));
        }
        Ok((component, Origin::Compiled))
    }
}

fn read_entry(engine: &Engine, path: &Path) -> Option<Component> {
    let bytes = std::fs::read(path).ok()?;
    if bytes.len() < HEADER || &bytes[..MAGIC.len()] != MAGIC {
        return None;
    }
    let (header, payload) = bytes.split_at(HEADER);
    if Digest::of(payload).as_bytes()[..] != header[MAGIC.len()..] {
        return None;
    }
    deserialize(engine, payload).ok()
}

/// Load machine code that wasmtime compiled, from one of exactly two sources: this binary's
/// own bytes (a built-in's precompiled code, `precompiled.rs`) or a compile-cache entry whose
/// sha256 matched the one written with it (`read_entry`). Nothing else may call it.
#[allow(unsafe_code)]
pub(super) fn deserialize(engine: &Engine, code: &[u8]) -> wasmtime::Result<Component> {
    // SAFETY: both sources hold exactly bytes that wasmtime's own `serialize` or
    // `precompile_component` wrote: the embedded code is `include_bytes!` of the build
    // script's output (only built-ins carry it; `ProducerComponent::with_precompiled` is
    // crate-private), and a cache entry lives in the per-user cache, never a repository, and
    // is checked against its digest first. wasmtime checks its version, the engine's settings
    // and the CPU's features, and refuses a mismatch.
    unsafe { Component::deserialize(engine, code) }
}

fn write_entry(path: &Path, payload: &[u8]) -> std::io::Result<()> {
    let mut bytes = Vec::with_capacity(HEADER + payload.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(Digest::of(payload).as_bytes());
    bytes.extend_from_slice(payload);
    crate::fsutil::write_atomic(path, &bytes)
}
