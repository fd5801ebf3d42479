//! An optional trace of every call a producer makes into the host (`DISCERN_TRACE=<file>`):
//! one JSON line per call. For debugging producers, and for tests that count a guest's own
//! calls rather than trusting the plan.

use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

pub struct Trace {
    file: Mutex<std::fs::File>,
}

impl Trace {
    pub fn open(path: &Path) -> std::io::Result<Self> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(Self {
            file: Mutex::new(file),
        })
    }

    pub fn call(&self, producer: &str, call: &str, argument: &serde_json::Value) {
        let line = serde_json::json!({ "producer": producer, "call": call, "argument": argument });
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        let _ = writeln!(file, "{line}");
    }
}
