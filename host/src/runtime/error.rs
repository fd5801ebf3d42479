//! Why a producer run failed, in terms a user can act on: which producer, which limit.

use std::time::Duration;

/// A failed producer run. The host survives every kind; the other producers of a batch still run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("producer {producer} {kind}{}", log_suffix(.stderr))]
pub struct ProducerError {
    /// The producer's label: `builtin:<name>` or the configured component path.
    pub producer: String,
    pub kind: ProducerErrorKind,
    /// What the producer wrote to stderr (bounded), shown as its log.
    pub stderr: Option<String>,
}

fn log_suffix(stderr: &Option<String>) -> String {
    match stderr.as_deref().map(str::trim_end) {
        Some(log) if !log.is_empty() => {
            let tail: Vec<&str> = log.lines().rev().take(20).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            format!("\nproducer log (stderr, last lines):\n{}", tail.join("\n"))
        }
        _ => String::new(),
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProducerErrorKind {
    #[error("is not a valid WebAssembly component: {0}")]
    Malformed(String),
    #[error(
        "is not a discern producer: it exports no `discern:producer/measure` interface (exports: {exports}); build it against wit/v0.2"
    )]
    NotAProducer { exports: String },
    #[error(
        "was built against discern:producer@{found}, newer than this discern supports ({supported}): upgrade discern, or rebuild the producer against wit/v0.2"
    )]
    VersionTooNew { found: String, supported: String },
    #[error(
        "was built against discern:producer@{found}, which this discern no longer supports ({supported}): rebuild the producer against wit/v0.2"
    )]
    VersionTooOld { found: String, supported: String },
    #[error(
        "imports {import}, which the producer sandbox does not provide (producers get the snapshot interface and deterministic WASI basics only)"
    )]
    UnsupportedImport { import: String },
    #[error("exhausted its CPU budget (fuel for a {} timeout); raise the Standard's `timeout` if the work is legitimate", secs(.timeout))]
    Fuel { timeout: Duration },
    #[error("ran past its wall-clock deadline of {} (the backstop for a {} timeout)", secs(.deadline), secs(.timeout))]
    Deadline {
        timeout: Duration,
        deadline: Duration,
    },
    #[error("tried to use more than its memory limit of {} MiB", .limit_bytes >> 20)]
    Memory { limit_bytes: u64 },
    #[error("overflowed its call stack (limit: {} KiB of wasm stack)", .limit_bytes >> 10)]
    StackOverflow { limit_bytes: u64 },
    #[error("wrote more than its stderr limit of {} KiB", .limit_bytes >> 10)]
    StderrLimit { limit_bytes: u64 },
    #[error(
        "tried to sleep or wait on a clock, which the sandbox does not allow (producers see a fixed clock)"
    )]
    Sleep,
    #[error("panicked: {0}")]
    Panic(String),
    #[error("exited with status {0} instead of returning its metrics")]
    Exit(i32),
    #[error("trapped: {0}")]
    Trap(String),
    #[error("broke the sandbox contract: {0}")]
    Violation(String),
    #[error("cannot list files: {}", bad_pathspec(.glob, .key.as_deref(), .why))]
    BadPathspec {
        glob: String,
        why: String,
        /// Where the glob is in the Standard's `config` (`config.paths[1]`), when it is there.
        key: Option<String>,
    },
    #[error("reported an error: {0}")]
    Reported(String),
    #[error("returned invalid output: {0}")]
    InvalidOutput(String),
}

fn bad_pathspec(glob: &str, key: Option<&str>, why: &str) -> String {
    match key {
        Some(key) => format!(
            "the glob {glob:?} at `{key}` in the Standard's config is no pathspec: {why}; fix `{key}`"
        ),
        None => format!(
            "it asked for a glob that is no pathspec ({why}); the Standard's config does not hold it, so the producer made it: fix the producer, or the config value it builds the glob from"
        ),
    }
}

impl ProducerError {
    /// A bad pathspec located in the Standard's `config_json`: the key that holds the glob.
    pub(crate) fn with_config_key(mut self, config_json: &str) -> Self {
        if let ProducerErrorKind::BadPathspec { glob, key, .. } = &mut self.kind
            && let Ok(config) = serde_json::from_str::<serde_json::Value>(config_json)
        {
            *key = key_of(&config, glob, "config");
        }
        self
    }
}

/// Where `value` holds the string `wanted`, as `config.paths[1]`.
fn key_of(value: &serde_json::Value, wanted: &str, at: &str) -> Option<String> {
    match value {
        serde_json::Value::String(s) => (s == wanted).then(|| at.to_owned()),
        serde_json::Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| key_of(v, wanted, &format!("{at}[{i}]"))),
        serde_json::Value::Object(map) => map
            .iter()
            .find_map(|(k, v)| key_of(v, wanted, &format!("{at}.{k}"))),
        _ => None,
    }
}

fn secs(d: &Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s:.2} s")
    }
}
