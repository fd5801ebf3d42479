//! A refusal as a value: what domain code returns when it will not go on, without the name
//! of the verb that asked. The verb table alone turns one into the refusal [`Envelope`]
//! ([`Refused::into_envelope`]), under the verb it ran, for both surfaces.

use serde::Serialize;
use serde_json::Value;

use super::{Action, Diagnostic, Envelope, ErrorSlug, Hint, HintId, Reply, Report, Section};

/// Why something was refused, and everything the refusal reports besides (the steps that ran,
/// their diagnostics, data a caller reads). Boxed: a `Result` carrying it stays small.
#[derive(Debug, Clone, PartialEq)]
pub struct Refused(Box<Parts>);

/// The parts of a [`Refused`], as the envelope will carry them.
#[derive(Debug, Clone, PartialEq)]
pub struct Parts {
    pub error: ErrorSlug,
    /// What happened and what to do: the envelope's `message` and the report's state.
    pub message: String,
    /// The next step first.
    pub hints: Vec<Hint>,
    pub data: Option<Value>,
    pub steps: Option<Value>,
    pub plan: Option<Value>,
    pub dry_run: Option<bool>,
    pub diagnostics: Vec<Diagnostic>,
    pub advisories: Vec<String>,
    pub sections: Vec<Section>,
}

impl std::ops::Deref for Refused {
    type Target = Parts;
    fn deref(&self) -> &Parts {
        &self.0
    }
}

impl std::ops::DerefMut for Refused {
    fn deref_mut(&mut self) -> &mut Parts {
        &mut self.0
    }
}

impl Refused {
    /// A refusal: a slug, a message saying what happened and what to do, and a next-step hint.
    pub fn new(error: ErrorSlug, message: impl Into<String>, next: Hint) -> Self {
        Self(Box::new(Parts {
            error,
            message: message.into(),
            hints: vec![next],
            data: None,
            steps: None,
            plan: None,
            dry_run: None,
            diagnostics: Vec::new(),
            advisories: Vec::new(),
            sections: Vec::new(),
        }))
    }

    /// The `internal` error: a result cannot be written as JSON (a bug in discern).
    pub fn internal(error: &serde_json::Error) -> Self {
        Self::new(
            ErrorSlug::Internal,
            format!("The result cannot be written as JSON: {error}."),
            Hint::next_step(HintId::ReportBug, "Report this as a bug in discern."),
        )
    }

    /// This refusal carrying `data`; data that cannot be written as JSON turns it into the
    /// `internal` error (a bug), never `data: null`.
    pub fn with_data(mut self, data: impl Serialize) -> Self {
        match serde_json::to_value(data) {
            Ok(value) => {
                self.0.data = Some(value);
                self
            }
            Err(e) => Self::internal(&e),
        }
    }

    /// This refusal carrying the steps that ran (data that cannot be written as JSON is the
    /// `internal` error).
    pub fn with_steps(mut self, steps: impl Serialize) -> Self {
        match serde_json::to_value(steps) {
            Ok(value) => {
                self.0.steps = Some(value);
                self
            }
            Err(e) => Self::internal(&e),
        }
    }

    pub fn with_hint(mut self, hint: Hint) -> Self {
        self.0.hints.push(hint);
        self
    }

    pub fn with_diagnostic(mut self, diagnostic: Diagnostic) -> Self {
        self.0.diagnostics.push(diagnostic);
        self
    }

    /// A refusal that reports everything a reply `carried` had (its data, steps, diagnostics,
    /// advisories and sections): a result whose own checks failed.
    pub fn carrying(mut self, carried: Reply) -> Self {
        let parts = &mut self.0;
        parts.data = carried.data;
        parts.steps = carried.steps;
        parts.plan = carried.plan;
        parts.dry_run = carried.dry_run;
        parts.diagnostics = carried.diagnostics;
        parts.advisories = carried.advisories;
        parts.sections = carried.report.sections;
        self
    }

    /// The process exit code of this refusal.
    pub fn exit_code(&self) -> i32 {
        self.0.error.exit_code()
    }

    /// The refusal envelope of `verb`: the one place a refusal becomes the reply both
    /// surfaces send (the verb table, and a frontend's refusal of what never reached it).
    pub fn into_envelope(self, verb: &str) -> Envelope {
        let Parts {
            error,
            message,
            hints,
            data,
            steps,
            plan,
            dry_run,
            diagnostics,
            advisories,
            sections,
        } = *self.0;
        Envelope {
            ok: false,
            verb: verb.to_owned(),
            dry_run,
            plan,
            steps,
            diagnostics,
            data,
            hints,
            advisories,
            error: Some(error),
            report: Report {
                state: message.clone(),
                sections,
            },
            message: Some(message),
        }
    }
}

impl super::WithNext for Refused {
    fn with_next(mut self, action: Action) -> Self {
        super::name_next(&mut self.0.hints, action);
        self
    }
}

impl<R: super::Refusal> From<R> for Refused {
    fn from(why: R) -> Self {
        why.refused()
    }
}
