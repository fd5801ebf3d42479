//! The store state of one producer run and the sandbox around it: deterministic WASI basics,
//! a bounded stderr, resource limits, and the host side of the `snapshot` interface.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamError};
use wasmtime_wasi::{HostMonotonicClock, HostWallClock, WasiCtx, WasiCtxView, WasiView};

use super::Artifacts;
use super::bindings::{entry_to_v1, v1, wit_snapshot};
use super::read_set::ReadSet;
use super::trace::Trace;
use crate::digest::Digest;
use crate::snapshot::{ReadError, Reader};

/// The fixed wall-clock time every producer sees: 2000-01-01T00:00:00Z.
const FIXED_WALL_CLOCK_SECS: u64 = 946_684_800;
const RANDOM_SEED: &[u8] = b"discern producer sandbox: deterministic randomness";
const MAX_GLOBS: usize = 1024;
const MAX_GLOB_BYTES: usize = 4096;

/// A trap raised by the host when the guest breaks the contract (e.g. absurd arguments).
#[derive(Debug)]
pub(super) struct Violation(pub String);

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Violation {}

/// A trap raised when the guest lists a pathspec that cannot be parsed: most often a glob of
/// the Standard's own config, which the message names, never the sandbox contract.
#[derive(Debug)]
pub(super) struct BadPathspec {
    pub glob: String,
    pub why: String,
}

impl std::fmt::Display for BadPathspec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.why)
    }
}

impl std::error::Error for BadPathspec {}

/// A trap raised when the guest tries to sleep or wait on a clock.
#[derive(Debug)]
pub(super) struct SleepAttempt;

impl std::fmt::Display for SleepAttempt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("producers cannot sleep: the sandbox clock is fixed")
    }
}

impl std::error::Error for SleepAttempt {}

pub(super) struct StoreState {
    wasi: WasiCtx,
    table: ResourceTable,
    pub limiter: Limiter,
    pub stderr: BoundedLog,
    snapshot: Option<GuestSnapshot>,
}

impl StoreState {
    pub(super) fn new(
        limiter: Limiter,
        stderr_limit: usize,
        snapshot: Option<GuestSnapshot>,
    ) -> Self {
        let stderr = BoundedLog::new(stderr_limit);
        let mut builder = WasiCtx::builder();
        builder
            .stderr(stderr.clone())
            .wall_clock(FixedWallClock)
            .monotonic_clock(FixedMonotonicClock)
            .secure_random(wasmtime_wasi::Deterministic::new(RANDOM_SEED.to_vec()))
            .insecure_random(wasmtime_wasi::Deterministic::new(RANDOM_SEED.to_vec()))
            .insecure_random_seed(0x5eed)
            .max_random_size(1 << 20)
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false);
        Self {
            wasi: builder.build(),
            table: ResourceTable::new(),
            limiter,
            stderr,
            snapshot,
        }
    }

    pub(super) fn take_read_set(&mut self) -> ReadSet {
        match self.snapshot.as_mut() {
            Some(snapshot) => std::mem::take(&mut snapshot.read_set).sealed(),
            // No snapshot was offered (a `describe` call): every read was refused as a
            // violation, so there is nothing it could have read.
            None => ReadSet::default(),
        }
    }

    fn snapshot(&mut self) -> wasmtime::Result<&mut GuestSnapshot> {
        self.snapshot.as_mut().ok_or_else(|| {
            wasmtime::Error::new(Violation(
                "describe() must not read the snapshot".to_owned(),
            ))
        })
    }
}

impl WasiView for StoreState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// The host side of the `snapshot` interface for one run, recording everything it serves.
pub(super) struct GuestSnapshot {
    reader: Reader,
    artifacts: Arc<Artifacts>,
    read_set: ReadSet,
    trace: Option<(Arc<Trace>, String)>,
}

impl GuestSnapshot {
    /// `trace` = the trace file and the producer's label, when tracing.
    pub(super) fn new(
        reader: Reader,
        artifacts: Arc<Artifacts>,
        trace: Option<(Arc<Trace>, String)>,
    ) -> Self {
        Self {
            read_set: ReadSet::over(reader.shared_entries()),
            reader,
            artifacts,
            trace,
        }
    }

    fn trace(&self, call: &str, argument: serde_json::Value) {
        if let Some((trace, producer)) = &self.trace {
            trace.call(producer, call, &argument);
        }
    }

    fn check_path(path: &str) -> wasmtime::Result<()> {
        if path.len() > MAX_GLOB_BYTES {
            return Err(wasmtime::Error::new(Violation(format!(
                "asked for a path of {} bytes (limit: {MAX_GLOB_BYTES})",
                path.len()
            ))));
        }
        Ok(())
    }

    fn read(&mut self, path: &str) -> wasmtime::Result<Result<Arc<Vec<u8>>, String>> {
        self.read_with(path, Reader::read)
    }

    /// `read`, recording the read (or the failed one) in the read set.
    fn read_with<T>(
        &mut self,
        path: &str,
        read: impl FnOnce(&mut Reader, &str) -> Result<(gix::ObjectId, T), ReadError>,
    ) -> wasmtime::Result<Result<T, String>> {
        Self::check_path(path)?;
        self.trace("read", serde_json::json!(path));
        match read(&mut self.reader, path) {
            Ok((_, bytes)) => {
                self.read_set.record_read(path);
                Ok(Ok(bytes))
            }
            // Not the producer's to handle: a rewritten object fails the reading whatever the
            // producer would do with a read error (skip the file, count nothing).
            Err(e @ ReadError::Tampered { .. }) => Err(wasmtime::Error::msg(e.to_string())),
            Err(e) => {
                self.read_set.record_read(path);
                Ok(Err(e.to_string()))
            }
        }
    }
}

impl wit_snapshot::Host for StoreState {
    fn files(&mut self, globs: Vec<String>) -> wasmtime::Result<Vec<wit_snapshot::Entry>> {
        if globs.len() > MAX_GLOBS || globs.iter().any(|g| g.len() > MAX_GLOB_BYTES) {
            return Err(wasmtime::Error::new(Violation(format!(
                "listed {} globs (limit: {MAX_GLOBS} globs of at most {MAX_GLOB_BYTES} bytes)",
                globs.len()
            ))));
        }
        let snapshot = self.snapshot()?;
        snapshot.trace("files", serde_json::json!(globs));
        let pathspec = snapshot.reader.pathspec(&globs).map_err(|e| {
            // The glob that fails, checked alone (the error names it too).
            let glob = globs
                .iter()
                .find(|g| discern_pathspec::Pathspec::check(g).is_err())
                .cloned()
                .unwrap_or_default();
            let why = e.to_string();
            wasmtime::Error::new(BadPathspec { glob, why })
        })?;
        let mut entries = Vec::new();
        let mut indices = Vec::new();
        let listed = snapshot.reader.shared_entries();
        for (index, entry) in listed
            .iter()
            .enumerate()
            .filter(|(_, e)| pathspec.matches(e.path()))
        {
            let id = entry.id.to_string();
            // An object the snapshot lists but cannot read is the repository's fault, not the
            // producer's: say so (a partial clone, a damaged object database).
            let size = snapshot.reader.size(index).map_err(|e| {
                wasmtime::Error::msg(format!(
                    "the repository cannot be read (a damaged or partial object database): {e}"
                ))
            })?;
            indices.push(index);
            entries.push(wit_snapshot::Entry {
                path: entry.path().to_string(),
                size,
                id,
                executable: entry.executable,
            });
        }
        snapshot
            .read_set
            .record_listing(&globs, indices.iter().copied());
        snapshot.reader.plan(&indices);
        Ok(entries)
    }

    fn read(&mut self, path: String) -> wasmtime::Result<Result<Vec<u8>, String>> {
        self.snapshot()?.read_with(&path, Reader::read_owned)
    }

    fn read_range(
        &mut self,
        path: String,
        offset: u64,
        len: u64,
    ) -> wasmtime::Result<Result<Vec<u8>, String>> {
        Ok(self.snapshot()?.read(&path)?.map(|bytes| {
            let start = usize::try_from(offset)
                .unwrap_or(usize::MAX)
                .min(bytes.len());
            let len = usize::try_from(len).unwrap_or(usize::MAX);
            let end = start.saturating_add(len).min(bytes.len());
            bytes[start..end].to_vec()
        }))
    }

    fn artifact(&mut self, name: String) -> wasmtime::Result<Result<Vec<u8>, String>> {
        GuestSnapshot::check_path(&name)?;
        let snapshot = self.snapshot()?;
        snapshot.trace("artifact", serde_json::json!(name));
        let found = snapshot.artifacts.get(&name);
        snapshot
            .read_set
            .artifacts
            .insert(name.clone(), found.map(|bytes| Digest::of(bytes).hex()));
        Ok(match found {
            Some(bytes) => Ok(bytes.to_vec()),
            None => Err(match snapshot.artifacts.names() {
                names if names.is_empty() => format!(
                    "no artifact named {name:?}: this Standard declares no artifacts (see `needs` and `artifact`)"
                ),
                names => format!(
                    "no artifact named {name:?} (available: {})",
                    names.join(", ")
                ),
            }),
        })
    }
}

/// The 0.1 snapshot interface is 0.2's, unchanged: the same calls, the same read set.
impl v1::discern::producer::snapshot::Host for StoreState {
    fn files(
        &mut self,
        globs: Vec<String>,
    ) -> wasmtime::Result<Vec<v1::discern::producer::snapshot::Entry>> {
        let entries = wit_snapshot::Host::files(self, globs)?;
        Ok(entries.into_iter().map(entry_to_v1).collect())
    }

    fn read(&mut self, path: String) -> wasmtime::Result<Result<Vec<u8>, String>> {
        wit_snapshot::Host::read(self, path)
    }

    fn read_range(
        &mut self,
        path: String,
        offset: u64,
        len: u64,
    ) -> wasmtime::Result<Result<Vec<u8>, String>> {
        wit_snapshot::Host::read_range(self, path, offset, len)
    }

    fn artifact(&mut self, name: String) -> wasmtime::Result<Result<Vec<u8>, String>> {
        wit_snapshot::Host::artifact(self, name)
    }
}

/// Memory, table and instance caps; remembers whether the memory cap was hit so that the
/// resulting trap is reported as the memory limit, not as a generic failure.
pub(super) struct Limiter {
    memory_bytes: usize,
    pub memory_exceeded: bool,
}

impl Limiter {
    pub(super) const MAX_TABLE_ELEMENTS: usize = 1 << 20;
    pub(super) const MAX_INSTANCES: usize = 64;
    pub(super) const MAX_TABLES: usize = 64;
    pub(super) const MAX_MEMORIES: usize = 16;

    pub(super) fn new(memory_bytes: u64) -> Self {
        Self {
            memory_bytes: usize::try_from(memory_bytes).unwrap_or(usize::MAX),
            memory_exceeded: false,
        }
    }
}

impl wasmtime::ResourceLimiter for Limiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.memory_bytes {
            self.memory_exceeded = true;
            return Err(wasmtime::format_err!(
                "memory limit of {} bytes exceeded (asked for {desired})",
                self.memory_bytes
            ));
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > Self::MAX_TABLE_ELEMENTS {
            return Err(wasmtime::Error::new(Violation(format!(
                "grew a table to {desired} elements (limit: {})",
                Self::MAX_TABLE_ELEMENTS
            ))));
        }
        Ok(true)
    }

    fn instances(&self) -> usize {
        Self::MAX_INSTANCES
    }

    fn tables(&self) -> usize {
        Self::MAX_TABLES
    }

    fn memories(&self) -> usize {
        Self::MAX_MEMORIES
    }
}

/// The producer's stderr: kept up to a limit; writing past it stops the producer with a clear
/// error instead of letting it burn host memory or time.
#[derive(Clone)]
pub(super) struct BoundedLog {
    limit: usize,
    buffer: Arc<Mutex<Vec<u8>>>,
    overflowed: Arc<AtomicBool>,
}

impl BoundedLog {
    fn new(limit: usize) -> Self {
        Self {
            limit,
            buffer: Arc::default(),
            overflowed: Arc::default(),
        }
    }

    pub(super) fn overflowed(&self) -> bool {
        self.overflowed.load(Ordering::Relaxed)
    }

    pub(super) fn limit(&self) -> usize {
        self.limit
    }

    pub(super) fn contents(&self) -> String {
        let buffer = self.buffer.lock().unwrap_or_else(|e| e.into_inner());
        String::from_utf8_lossy(&buffer).into_owned()
    }
}

impl OutputStream for BoundedLog {
    fn write(&mut self, bytes: Bytes) -> Result<(), StreamError> {
        let mut buffer = self.buffer.lock().unwrap_or_else(|e| e.into_inner());
        let room = self.limit.saturating_sub(buffer.len());
        buffer.extend_from_slice(&bytes[..bytes.len().min(room)]);
        if bytes.len() > room {
            self.overflowed.store(true, Ordering::Relaxed);
            return Err(StreamError::Trap(wasmtime::format_err!(
                "stderr limit of {} bytes exceeded",
                self.limit
            )));
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), StreamError> {
        Ok(())
    }

    fn check_write(&mut self) -> Result<usize, StreamError> {
        // Always accept a write: the overflow is detected (and reported) in `write`.
        Ok(64 * 1024)
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for BoundedLog {
    async fn ready(&mut self) {}
}

impl IsTerminal for BoundedLog {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for BoundedLog {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        // Only WASI preview 2 is linked; preview 3 streams never reach this log.
        Box::new(tokio::io::sink())
    }
}

struct FixedWallClock;

impl HostWallClock for FixedWallClock {
    fn resolution(&self) -> Duration {
        Duration::from_secs(1)
    }

    fn now(&self) -> Duration {
        Duration::from_secs(FIXED_WALL_CLOCK_SECS)
    }
}

struct FixedMonotonicClock;

impl HostMonotonicClock for FixedMonotonicClock {
    fn resolution(&self) -> u64 {
        1_000_000_000
    }

    fn now(&self) -> u64 {
        0
    }
}
