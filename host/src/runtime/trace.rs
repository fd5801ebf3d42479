//! An optional trace of every call a producer makes into the host (`DISCERN_TRACE=<file>`):
//! one JSON line per call. For debugging producers, and for tests that count a guest's own
//! calls rather than trusting the plan. A reading reused from the evidence store makes no call,
//! so it is traced too (`"call": "reused"`), naming what it stands for and where it came from.

use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

/// What a reused reading stands for, as the trace names it.
#[derive(Debug, Clone, Copy)]
pub struct Reuse<'a> {
    /// The execution's label (`builtin:pattern#1a2b3c4d`).
    pub execution: &'a str,
    /// The Standards (and `per` extents) that read it.
    pub standards: &'a [String],
    pub evidence_key: &'a str,
    /// The commit the reading was measured on.
    pub reused_from: &'a str,
}

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
        self.write(&line);
    }

    /// A reading reused instead of running `producer`: for which Standards, under which
    /// evidence key (`<common-dir>/discern/evidence/<key>/`), measured on which commit.
    pub fn reused(&self, producer: &str, reuse: &Reuse) {
        let line = serde_json::json!({
            "producer": producer,
            "call": "reused",
            "argument": {
                "execution": reuse.execution,
                "standards": reuse.standards,
                "evidence_key": reuse.evidence_key,
                "reused_from": reuse.reused_from,
            },
        });
        self.write(&line);
    }

    fn write(&self, line: &serde_json::Value) {
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        let _ = writeln!(file, "{line}");
    }
}
