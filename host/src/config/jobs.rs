use serde::Serialize;

/// When a job runs in the gate: fix → build → check ∥ test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    Fix,
    Build,
    Check,
    Test,
}

impl Stage {
    pub const NAMES: &'static str = "fix, build, check, test";

    /// The wire name (as serialized and as written in `discern.toml`).
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Fix => "fix",
            Stage::Build => "build",
            Stage::Check => "check",
            Stage::Test => "test",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "fix" => Some(Stage::Fix),
            "build" => Some(Stage::Build),
            "check" => Some(Stage::Check),
            "test" => Some(Stage::Test),
            _ => None,
        }
    }

    /// The stage of a job with a well-known name.
    pub fn of_known(name: &str) -> Option<Self> {
        match name {
            "format" => Some(Stage::Fix),
            "build" => Some(Stage::Build),
            "lint" | "typecheck" => Some(Stage::Check),
            "test" | "smoke" => Some(Stage::Test),
            _ => None,
        }
    }
}

/// One host command of `[jobs]`: the project's own build, not sandboxed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Job {
    pub name: String,
    pub stage: Stage,
    /// Empty = knowably absent: skipped.
    pub run: String,
    /// Files the job writes that Standards may read (repository-relative).
    pub artifacts: Vec<String>,
    /// Globs making the job's input boundary explicit (for evidence reuse).
    pub inputs: Option<Vec<String>>,
    /// Seconds; 0 = no limit.
    pub timeout: f64,
}
