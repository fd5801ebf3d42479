//! The wasmtime engine every producer runs in, and the epoch ticker behind wall-clock deadlines.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use wasmtime::Engine;

use super::engine_config;

/// One epoch tick: the resolution of wall-clock deadlines.
pub(super) const TICK: Duration = Duration::from_millis(10);

/// The engine of this process: the shared configuration (`engine_config.rs`), compiling for
/// this host's CPU.
pub(super) fn new_engine() -> wasmtime::Result<Engine> {
    Engine::new(&engine_config::config(None)?)
}

/// Increments the engine's epoch every [`TICK`] until dropped.
pub(super) struct EpochTicker {
    stop: Arc<AtomicBool>,
}

impl EpochTicker {
    pub(super) fn start(engine: &Engine) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let engine = engine.clone();
        let stopped = Arc::clone(&stop);
        std::thread::Builder::new()
            .name("discern-epoch".into())
            .spawn(move || {
                while !stopped.load(Ordering::Relaxed) {
                    std::thread::sleep(TICK);
                    engine.increment_epoch();
                }
            })
            .ok();
        Self { stop }
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}
