//! A success as a value: what domain code returns when it answers, without the name of the
//! verb that asked. The verb table alone turns one into the success [`Envelope`]
//! ([`Reply::into_envelope`]), under the verb it ran, for both surfaces — the mirror of
//! [`Refused`].

use serde::Serialize;
use serde_json::Value;

use super::{Action, Diagnostic, Envelope, Hint, Refused, Report, to_data};

/// A verb's answer: its typed data (serialised once, here), the human report, and what the
/// envelope carries besides.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// `false` for a result whose own check failed without a refusal (an explained Standard
    /// that fails): the envelope's `ok`.
    pub ok: bool,
    pub dry_run: Option<bool>,
    pub plan: Option<Value>,
    pub steps: Option<Value>,
    pub diagnostics: Vec<Diagnostic>,
    pub data: Option<Value>,
    pub hints: Vec<Hint>,
    pub advisories: Vec<String>,
    pub report: Report,
    /// The data, plan or steps could not be written as JSON: the reply is the `internal`
    /// error (a bug), never `data: null`.
    failed: Option<Refused>,
}

impl Reply {
    /// A success carrying `data`; data that cannot be written as JSON makes the reply the
    /// `internal` error.
    pub fn new(data: impl Serialize, report: Report) -> Self {
        let mut reply = Self {
            ok: true,
            dry_run: None,
            plan: None,
            steps: None,
            diagnostics: Vec::new(),
            data: None,
            hints: Vec::new(),
            advisories: Vec::new(),
            report,
            failed: None,
        };
        reply.set_data(data);
        reply
    }

    /// Replace the data (data that cannot be written as JSON is the `internal` error).
    pub fn set_data(&mut self, data: impl Serialize) {
        match to_data(&data) {
            Ok(value) => self.data = Some(value),
            Err(refused) => self.failed = Some(refused),
        }
    }

    /// This reply carrying `data` instead (see [`Reply::set_data`]).
    pub fn with_data(mut self, data: impl Serialize) -> Self {
        self.set_data(data);
        self
    }

    /// This reply carrying the steps that ran (steps that cannot be written as JSON are the
    /// `internal` error, never a reply without them).
    pub fn with_steps(mut self, steps: impl Serialize) -> Self {
        match to_data(&steps) {
            Ok(value) => self.steps = Some(value),
            Err(refused) => self.failed = Some(refused),
        }
        self
    }

    /// This reply carrying the plan it would carry out (see [`Reply::with_steps`]).
    pub fn with_plan(mut self, plan: impl Serialize) -> Self {
        match to_data(&plan) {
            Ok(value) => self.plan = Some(value),
            Err(refused) => self.failed = Some(refused),
        }
        self
    }

    pub fn with_hint(mut self, hint: Hint) -> Self {
        self.hints.push(hint);
        self
    }

    pub fn with_diagnostic(mut self, diagnostic: Diagnostic) -> Self {
        self.diagnostics.push(diagnostic);
        self
    }

    /// The `internal` error when a part of this reply could not be written as JSON.
    pub fn failure(&self) -> Option<&Refused> {
        self.failed.as_ref()
    }

    /// The success envelope of `verb`: the one place a reply becomes what both surfaces send
    /// (the verb table).
    pub fn into_envelope(self, verb: &str) -> Envelope {
        if let Some(refused) = self.failed {
            return refused.into_envelope(verb);
        }
        Envelope {
            ok: self.ok,
            verb: verb.to_owned(),
            dry_run: self.dry_run,
            plan: self.plan,
            steps: self.steps,
            diagnostics: self.diagnostics,
            data: self.data,
            hints: self.hints,
            advisories: self.advisories,
            error: None,
            message: None,
            report: self.report,
        }
    }
}

impl super::WithNext for Reply {
    fn with_next(mut self, action: Action) -> Self {
        super::name_next(&mut self.hints, action);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::ErrorSlug;
    use std::collections::BTreeMap;

    #[test]
    fn a_reply_is_named_by_the_verb_that_sends_it() {
        let reply = Reply::new(serde_json::json!({"n": 1}), Report::default());
        let envelope = reply.into_envelope("producers");
        assert!(envelope.ok);
        assert_eq!(envelope.verb, "producers");
        assert_eq!(envelope.data, Some(serde_json::json!({"n": 1})));
    }

    #[test]
    fn data_that_cannot_be_json_is_the_internal_error_never_null() {
        // A map whose keys are not strings cannot be written as JSON.
        let data = BTreeMap::from([((1, 2), "x")]);
        let envelope = Reply::new(data, Report::default()).into_envelope("map");
        assert!(!envelope.ok);
        assert_eq!(envelope.error, Some(ErrorSlug::Internal));
        assert_eq!(envelope.data, None);
    }
}
