//! Runs producers: loads a component (a built-in's precompiled code, the per-user cache, or
//! compiled now), checks its contract version, and runs it sandboxed against a snapshot,
//! returning validated metrics and the run's read set, or a [`ProducerError`] that names the
//! producer and the limit it hit.

mod bindings;
mod cache;
mod component;
mod engine;
mod engine_config;
mod error;
mod finding;
mod output;
mod precompiled;
mod read_set;
mod sandbox;
mod trace;
mod version;

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use wasmtime::component::{HasSelf, Linker};
use wasmtime::{Engine, Store, Trap};

pub(crate) use cache::CompileCache;
pub use cache::Origin;
pub use component::ProducerComponent;
pub use error::{ProducerError, ProducerErrorKind};
pub(crate) use finding::Severity;
pub use finding::{Finding, MAX_FINDINGS};
pub use output::Metric;
pub(crate) use output::{Info, MAX_NAME_BYTES};
pub(crate) use read_set::ReadSet;
pub(crate) use trace::{Reuse, Trace};
pub(crate) use version::{
    SUPPORTED as SUPPORTED_WIT_VERSIONS, supported_list as supported_wit_versions,
};

use crate::digest::Digest;
use crate::snapshot::Snapshot;
use bindings::{v1, v2};
use sandbox::{BadPathspec, GuestSnapshot, Limiter, SleepAttempt, StoreState, Violation};

/// Fuel granted per second of a Standard's `timeout`: a deterministic CPU budget (roughly
/// one unit per wasm instruction), the same on every machine.
pub(crate) const FUEL_PER_SECOND: u64 = 1_000_000_000;

/// The budgets of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Sets the fuel budget; the wall-clock deadline is a backstop at twice this plus a second.
    pub timeout: Duration,
    pub memory_bytes: u64,
    pub stderr_bytes: usize,
}

impl Limits {
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
    pub const DEFAULT_MEMORY_BYTES: u64 = 512 << 20;
    pub const DEFAULT_STDERR_BYTES: usize = 64 << 10;

    pub fn with_timeout(timeout: Duration) -> Self {
        Self {
            timeout,
            ..Self::default()
        }
    }

    /// The fuel budget of one run.
    pub fn fuel(&self) -> u64 {
        // Saturating float-to-int conversion: a huge timeout is simply a huge budget.
        ((self.timeout.as_secs_f64() * FUEL_PER_SECOND as f64) as u64).max(1)
    }

    fn deadline(&self) -> Duration {
        self.timeout.saturating_mul(2) + Duration::from_secs(1)
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            timeout: Self::DEFAULT_TIMEOUT,
            memory_bytes: Self::DEFAULT_MEMORY_BYTES,
            stderr_bytes: Self::DEFAULT_STDERR_BYTES,
        }
    }
}

/// Files a job produced (by declared path, and the Standard's artifact also as `"artifact"`)
/// and the job's stdout (as `"stdout"`), handed to a producer read-only.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Artifacts(BTreeMap<String, Arc<[u8]>>);

impl Artifacts {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn insert(&mut self, name: impl Into<String>, bytes: impl Into<Arc<[u8]>>) {
        self.0.insert(name.into(), bytes.into());
    }

    pub fn get(&self, name: &str) -> Option<&[u8]> {
        self.0.get(name).map(|b| &b[..])
    }

    pub fn names(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }

    /// Name → sha256 of every artifact: part of a producer execution's identity.
    pub fn digests(&self) -> BTreeMap<String, String> {
        self.0
            .iter()
            .map(|(name, bytes)| (name.clone(), Digest::of(bytes).hex()))
            .collect()
    }
}

/// The result of one producer run.
#[derive(Debug, Clone)]
pub struct RunOutput {
    pub metrics: Vec<Metric>,
    pub read_set: ReadSet,
    /// What the producer wrote to stderr (at most the limit).
    pub stderr: String,
    /// Fuel the run consumed: a deterministic measure of its CPU work.
    pub fuel_consumed: u64,
}

/// A pre-linked producer of one of the contract versions this host runs.
#[derive(Clone)]
enum Pre {
    V1(v1::ProducerPre<StoreState>),
    V2(v2::ProducerPre<StoreState>),
}

/// An instantiated producer of one of the contract versions this host runs.
enum Instance {
    V1(v1::Producer),
    V2(v2::Producer),
}

impl Pre {
    fn new(
        wit_version: &str,
        instance_pre: wasmtime::component::InstancePre<StoreState>,
    ) -> wasmtime::Result<Self> {
        Ok(if wit_version.starts_with("0.1.") {
            Self::V1(v1::ProducerPre::new(instance_pre)?)
        } else {
            Self::V2(v2::ProducerPre::new(instance_pre)?)
        })
    }

    fn instantiate(&self, store: &mut Store<StoreState>) -> wasmtime::Result<Instance> {
        Ok(match self {
            Self::V1(pre) => Instance::V1(pre.instantiate(store)?),
            Self::V2(pre) => Instance::V2(pre.instantiate(store)?),
        })
    }
}

impl Instance {
    fn describe(
        &self,
        store: &mut Store<StoreState>,
    ) -> wasmtime::Result<bindings::wit_measure::Info> {
        Ok(match self {
            Self::V1(p) => {
                bindings::info_from_v1(p.discern_producer_measure().call_describe(store)?)
            }
            Self::V2(p) => p.discern_producer_measure().call_describe(store)?,
        })
    }

    fn run(
        &self,
        store: &mut Store<StoreState>,
        config_json: &str,
    ) -> wasmtime::Result<Result<Vec<bindings::wit_measure::Metric>, String>> {
        Ok(match self {
            Self::V1(p) => p
                .discern_producer_measure()
                .call_run(store, config_json)?
                .map(bindings::metrics_from_v1),
            Self::V2(p) => p.discern_producer_measure().call_run(store, config_json)?,
        })
    }
}

/// A compiled, version-checked, pre-linked producer.
pub struct Loaded {
    pre: Pre,
    pub wit_version: String,
    pub origin: Origin,
}

pub struct Runtime {
    engine: Engine,
    linker: Linker<StoreState>,
    cache: CompileCache,
    loaded: Mutex<HashMap<Digest, Arc<Loaded>>>,
    trace: Option<Arc<Trace>>,
    _ticker: engine::EpochTicker,
}

impl Runtime {
    /// A runtime with the per-user compile cache in its default place.
    pub fn new() -> Result<Self, ProducerError> {
        Self::with_cache_dir(CompileCache::default_dir())
    }

    pub fn with_cache_dir(cache_dir: Option<PathBuf>) -> Result<Self, ProducerError> {
        let internal = |e: wasmtime::Error| ProducerError {
            producer: "(runtime)".to_owned(),
            kind: ProducerErrorKind::Trap(format!("cannot set up the wasm engine: {e:#}")),
            stderr: None,
        };
        let engine = engine::new_engine().map_err(internal)?;
        let linker = linker(&engine).map_err(internal)?;
        Ok(Self {
            _ticker: engine::EpochTicker::start(&engine),
            engine,
            linker,
            cache: CompileCache::new(cache_dir),
            loaded: Mutex::default(),
            trace: None,
        })
    }

    /// Append every call producers make into the host to `trace` (one JSON line each).
    pub fn with_trace(mut self, trace: Option<Trace>) -> Self {
        self.trace = trace.map(Arc::new);
        self
    }

    /// The trace producer calls (and reused readings) go to, when there is one.
    pub fn trace(&self) -> Option<&Trace> {
        self.trace.as_deref()
    }

    pub fn cache(&self) -> &CompileCache {
        &self.cache
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Compile (or load from the cache), check the contract version, and pre-link `component`.
    pub fn load(&self, component: &ProducerComponent) -> Result<Arc<Loaded>, ProducerError> {
        let fail = |kind| ProducerError {
            producer: component.label().to_owned(),
            kind,
            stderr: None,
        };
        let digest = component.digest();
        if let Some(loaded) = self
            .lock_loaded()
            .get(&digest)
            .filter(|l| l.origin != Origin::Cache || !component.requires_compiled_here())
        {
            return Ok(Arc::new(Loaded {
                pre: loaded.pre.clone(),
                wit_version: loaded.wit_version.clone(),
                origin: Origin::Memory,
            }));
        }
        let precompiled::Compiled {
            component: compiled,
            origin,
            note,
        } = precompiled::load(&self.engine, &self.cache, component)
            .map_err(|e| fail(ProducerErrorKind::Malformed(format!("{e:#}"))))?;
        if let Some(note) = note {
            self.note(component.label(), &note);
        }
        let wit_version = version::check(&self.engine, &compiled).map_err(fail)?;
        let instance_pre = self
            .linker
            .instantiate_pre(&compiled)
            .map_err(|e| fail(link_error(&e)))?;
        let pre = Pre::new(&wit_version, instance_pre)
            .map_err(|e| fail(ProducerErrorKind::Trap(format!("{e:#}"))))?;
        let loaded = Arc::new(Loaded {
            pre,
            wit_version,
            origin,
        });
        self.lock_loaded().insert(digest, Arc::clone(&loaded));
        Ok(loaded)
    }

    /// Ask the producer what it is (`describe()`), in the same sandbox as a run.
    pub fn describe(&self, component: &ProducerComponent) -> Result<Info, ProducerError> {
        let limits = Limits::with_timeout(Duration::from_secs(10));
        let (result, _) = self.call(component, None, &limits, |producer, store| {
            producer.describe(store)
        })?;
        output::info(result).map_err(|kind| ProducerError {
            producer: component.label().to_owned(),
            kind,
            stderr: None,
        })
    }

    /// Run the producer against `snapshot` with the Standard's `config` (a JSON object).
    pub fn run(
        &self,
        component: &ProducerComponent,
        config_json: &str,
        snapshot: &Snapshot,
        artifacts: Arc<Artifacts>,
        limits: &Limits,
    ) -> Result<RunOutput, ProducerError> {
        let trace = self
            .trace
            .as_ref()
            .map(|t| (Arc::clone(t), component.label().to_owned()));
        let guest = GuestSnapshot::new(snapshot.reader(), artifacts, trace);
        let (result, mut finished) = self
            .call(component, Some(guest), limits, |producer, store| {
                producer.run(store, config_json)
            })
            .map_err(|e| e.with_config_key(config_json))?;
        let stderr = finished.stderr.clone();
        let fail = |kind| ProducerError {
            producer: component.label().to_owned(),
            kind,
            stderr: Some(stderr.clone()).filter(|s| !s.is_empty()),
        };
        let metrics = result
            .map_err(|message| fail(ProducerErrorKind::Reported(message)))
            .and_then(|raw| output::metrics(raw).map_err(fail))?;
        Ok(RunOutput {
            metrics,
            read_set: std::mem::take(&mut finished.read_set),
            stderr,
            fuel_consumed: finished.fuel_consumed,
        })
    }

    fn call<R>(
        &self,
        component: &ProducerComponent,
        guest: Option<GuestSnapshot>,
        limits: &Limits,
        f: impl FnOnce(&Instance, &mut Store<StoreState>) -> wasmtime::Result<R>,
    ) -> Result<(R, Finished), ProducerError> {
        let loaded = self.load(component)?;
        let state = StoreState::new(
            Limiter::new(limits.memory_bytes),
            limits.stderr_bytes,
            guest,
        );
        let mut store = Store::new(&self.engine, state);
        store.limiter(|state| &mut state.limiter);
        let fuel = limits.fuel();
        let setup = |e: wasmtime::Error| ProducerError {
            producer: component.label().to_owned(),
            kind: ProducerErrorKind::Trap(format!("{e:#}")),
            stderr: None,
        };
        store.set_fuel(fuel).map_err(setup)?;
        let ticks = limits.deadline().as_millis() / engine::TICK.as_millis();
        store.set_epoch_deadline(u64::try_from(ticks).unwrap_or(u64::MAX).max(1));
        store.epoch_deadline_trap();

        let result = loaded
            .pre
            .instantiate(&mut store)
            .and_then(|producer| f(&producer, &mut store));
        // Every store runs with fuel (engine.rs); were it off, the whole budget counts as used
        // (never none: a grouped run sums its parts' fuel against the budget).
        let fuel_consumed = match store.get_fuel() {
            Ok(left) => fuel.saturating_sub(left),
            Err(_) => fuel,
        };
        let stderr = store.data().stderr.contents();
        match result {
            Ok(value) => Ok((
                value,
                Finished {
                    read_set: store.data_mut().take_read_set(),
                    stderr,
                    fuel_consumed,
                },
            )),
            Err(error) => Err(ProducerError {
                producer: component.label().to_owned(),
                kind: classify(&error, store.data(), limits),
                stderr: Some(stderr).filter(|s| !s.is_empty()),
            }),
        }
    }

    /// The one thing the runtime says on stderr: a built-in's precompiled code did not load
    /// here, so it was compiled (slow work the user should know the reason for). Also traced.
    fn note(&self, producer: &str, note: &str) {
        eprintln!("discern: note: {note}");
        if let Some(trace) = &self.trace {
            trace.call(
                producer,
                "note",
                &serde_json::Value::String(note.to_owned()),
            );
        }
    }

    fn lock_loaded(&self) -> std::sync::MutexGuard<'_, HashMap<Digest, Arc<Loaded>>> {
        self.loaded.lock().unwrap_or_else(|e| e.into_inner())
    }
}

struct Finished {
    read_set: ReadSet,
    stderr: String,
    fuel_consumed: u64,
}

fn linker(engine: &Engine) -> wasmtime::Result<Linker<StoreState>> {
    let mut linker = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
    v1::Producer::add_to_linker::<_, HasSelf<_>>(&mut linker, |state| state)?;
    v2::Producer::add_to_linker::<_, HasSelf<_>>(&mut linker, |state| state)?;
    // The clock is fixed, so a sleep could never end: refuse it instead of blocking the host
    // thread where the epoch deadline cannot reach.
    linker.allow_shadowing(true);
    let mut clock = linker.instance("wasi:clocks/monotonic-clock@0.2.12")?;
    for name in ["subscribe-duration", "subscribe-instant"] {
        clock.func_new(name, |_, _, _, _| Err(wasmtime::Error::new(SleepAttempt)))?;
    }
    Ok(linker)
}

fn link_error(error: &wasmtime::Error) -> ProducerErrorKind {
    let message = format!("{error:#}");
    // wasmtime: "component imports instance `wasi:http/types@0.2.0`, but a matching
    // implementation was not found in the linker"
    match message
        .split('`')
        .nth(1)
        .filter(|_| message.contains("matching implementation was not found"))
    {
        Some(import) => ProducerErrorKind::UnsupportedImport {
            import: import.to_owned(),
        },
        None => ProducerErrorKind::Trap(format!("cannot link the component: {message}")),
    }
}

fn classify(error: &wasmtime::Error, state: &StoreState, limits: &Limits) -> ProducerErrorKind {
    if state.stderr.overflowed() {
        return ProducerErrorKind::StderrLimit {
            limit_bytes: state.stderr.limit() as u64,
        };
    }
    if state.limiter.memory_exceeded {
        return ProducerErrorKind::Memory {
            limit_bytes: limits.memory_bytes,
        };
    }
    if error.downcast_ref::<SleepAttempt>().is_some() {
        return ProducerErrorKind::Sleep;
    }
    if let Some(bad) = error.downcast_ref::<BadPathspec>() {
        return ProducerErrorKind::BadPathspec {
            glob: bad.glob.clone(),
            why: bad.why.clone(),
            key: None,
        };
    }
    if let Some(violation) = error.downcast_ref::<Violation>() {
        return ProducerErrorKind::Violation(violation.0.clone());
    }
    if let Some(exit) = error.downcast_ref::<wasmtime_wasi::I32Exit>() {
        return ProducerErrorKind::Exit(exit.0);
    }
    match error.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => ProducerErrorKind::Fuel {
            timeout: limits.timeout,
        },
        Some(Trap::Interrupt) => ProducerErrorKind::Deadline {
            timeout: limits.timeout,
            deadline: limits.deadline(),
        },
        Some(Trap::StackOverflow) => ProducerErrorKind::StackOverflow {
            limit_bytes: engine_config::MAX_WASM_STACK as u64,
        },
        Some(Trap::UnreachableCodeReached) => match panic_message(&state.stderr.contents()) {
            Some(message) => ProducerErrorKind::Panic(message),
            None => ProducerErrorKind::Trap(trap_text(Trap::UnreachableCodeReached)),
        },
        Some(Trap::MemoryOutOfBounds) => ProducerErrorKind::Trap(format!(
            "{} (a producer that overflows its stack in linear memory, as Rust and C producers \
             do with large locals, traps this way)",
            trap_text(Trap::MemoryOutOfBounds)
        )),
        Some(trap) => ProducerErrorKind::Trap(trap_text(*trap)),
        None => ProducerErrorKind::Trap(format!("{error:#}")),
    }
}

fn trap_text(trap: Trap) -> String {
    let text = trap.to_string();
    text.strip_prefix("wasm trap: ").unwrap_or(&text).to_owned()
}

/// Rust's panic hook writes `thread '…' panicked at file:line:col:\nmessage`.
fn panic_message(stderr: &str) -> Option<String> {
    let start = stderr.rfind("panicked at ")?;
    let mut lines = stderr[start..].lines();
    let location = lines
        .next()?
        .trim_start_matches("panicked at ")
        .trim_end_matches(':');
    let message = lines.next().unwrap_or("").trim();
    Some(format!("{message} (at {location})"))
}
