//! The result envelope every verb returns, and its renderings.
//!
//! One type for every verb; the CLI prints it as human text, Markdown (`--markdown`) or JSON
//! (`--json`), and the MCP server will send the same JSON as `structuredContent`.

pub mod ci;
pub mod echo;
mod hints;
mod refusal;
mod refused;
mod render;
mod reply;
pub mod spelled;

use serde::Serialize;
use serde_json::Value;

pub use hints::{Action, Category, Hint, HintError, HintId};
pub use refusal::Refusal;
pub use refused::{Parts, Refused};
pub use render::{StepRenderer, human, markdown};
pub use reply::Reply;

/// A stable machine-readable reason for a refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorSlug {
    InvalidArguments,
    InvalidConfig,
    InvalidValue,
    UnknownStandard,
    DirtyWorktree,
    /// A state discern must know cannot be read (a git command failed, a listing or history is
    /// unreadable): it refuses rather than guess. The way past is to fix the repository.
    CannotTell,
    /// Another discern writer holds the lock: wait for it, then run the command again.
    WriterBusy,
    /// A transaction a crash interrupted cannot be finished or unwound by itself.
    Interrupted,
    /// The command runs somewhere else: the trunk, a detached HEAD, the main checkout instead
    /// of an effort (or the reverse), outside a repository.
    WrongCheckout,
    /// Nothing is committed (or nothing is ahead of the trunk) where a commit is needed.
    NothingCommitted,
    /// The trunk, its history or its config cannot be read here (fetch it).
    TrunkUnreadable,
    /// What the command would create already exists.
    AlreadyExists,
    /// Any other precondition of the verb's own domain (the message says which).
    PreconditionFailed,
    ProposalStale,
    ProposalFailed,
    PinFailed,
    AwaitingConsent,
    AwaitingStandardApproval,
    ProducerFailed,
    /// Standards were measured and some regressed.
    StandardsFailed,
    GateFailed,
    /// A `[worktree]` setup or ensure step failed (the effort is kept; `discern setup` runs a
    /// failed setup again).
    SetupFailed,
    NotFound,
    /// The command is interactive (the owner's desk) and stdin or stdout is not a terminal,
    /// `CI` is set or a machine format was asked for: `discern status` reads the same state.
    NotInteractive,
    Internal,
}

impl ErrorSlug {
    /// The process exit code of a refusal with this slug.
    pub fn exit_code(self) -> i32 {
        match self {
            ErrorSlug::InvalidArguments => 2,
            ErrorSlug::Internal => 70,
            _ => 1,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    Warning,
    Info,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

/// One finding of a verb: what tool saw it, how bad it is, and how to see it again.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diagnostic {
    pub tool: String,
    pub severity: Severity,
    pub message: String,
    pub reproduce_cmd: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
}

/// A presentation-neutral report of a result, for the human and Markdown renderings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    /// One sentence: the current state.
    pub state: String,
    pub sections: Vec<Section>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub title: String,
    pub lines: Vec<String>,
    /// The same content as a table, for Markdown (a pull-request comment or a job summary);
    /// the terminal shows `lines`.
    pub table: Option<Table>,
}

/// A Markdown table: a header row and rows of the same width, with notes under it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Lines shown under the table (the new findings of failing Standards).
    pub notes: Vec<String>,
}

/// `{ ok, verb, dry_run?, plan?, steps?, diagnostics?, data?, hints?, advisories?, error?, message? }`
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Envelope {
    pub ok: bool,
    pub verb: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<Diagnostic>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hints: Vec<Hint>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub advisories: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorSlug>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(skip)]
    pub report: Report,
}

impl Envelope {
    pub fn with_hint(mut self, hint: Hint) -> Self {
        self.hints.push(hint);
        self
    }

    pub fn with_diagnostic(mut self, diagnostic: Diagnostic) -> Self {
        self.diagnostics.push(diagnostic);
        self
    }

    /// The process exit code for this result.
    pub fn exit_code(&self) -> i32 {
        match (self.ok, self.error) {
            (true, _) => 0,
            (false, Some(slug)) => slug.exit_code(),
            (false, None) => 1,
        }
    }

    pub fn to_json(&self) -> String {
        // Serializing plain data with string keys cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_else(|e| {
            format!("{{\"ok\":false,\"verb\":\"{}\",\"error\":\"internal\",\"message\":\"cannot serialize the result: {e}\"}}", self.verb)
        })
    }
}

/// `data` as the JSON a verb answers with; data that cannot be written as JSON (a bug: a map
/// with keys that are not strings, a number JSON has not) is the `internal` error.
pub fn to_data(data: &impl Serialize) -> Result<Value, Refused> {
    serde_json::to_value(data).map_err(|e| Refused::internal(&e))
}

/// Naming the step a result's next-step hint advises, on an envelope or a boxed refusal.
pub trait WithNext {
    /// The step the (first) next-step hint names, as data each frontend renders.
    fn with_next(self, action: Action) -> Self;
}

/// `action` on the first next-step hint of `hints` (none: nothing to name it on), for every
/// [`WithNext`].
pub(crate) fn name_next(hints: &mut Vec<Hint>, action: Action) {
    if let Some(at) = hints
        .iter()
        .position(|h| h.category() == Category::NextStep)
    {
        let hint = hints.remove(at);
        hints.insert(at, hint.with_action(action));
    }
}

impl WithNext for Envelope {
    fn with_next(mut self, action: Action) -> Self {
        name_next(&mut self.hints, action);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undefined_fields_are_omitted_and_ok_forbids_error() {
        let ok =
            Reply::new(serde_json::json!({"n": 1}), Report::default()).into_envelope("producers");
        assert_eq!(
            ok.to_json(),
            "{\n  \"ok\": true,\n  \"verb\": \"producers\",\n  \"data\": {\n    \"n\": 1\n  }\n}"
        );
        assert_eq!(ok.exit_code(), 0);
        let refusal = Refused::new(
            ErrorSlug::InvalidArguments,
            "bad",
            Hint::next_step(HintId::SeeHelp, "Run `discern --help`."),
        )
        .into_envelope("standards");
        assert_eq!(refusal.exit_code(), 2);
        let json: Value = serde_json::from_str(&refusal.to_json()).expect("test fixture");
        assert_eq!(json["error"], "invalid_arguments");
        assert_eq!(json["hints"][0]["category"], "next-step");
    }
}
