//! One shape for every verb's refusals: a `thiserror` enum per verb (or per room) whose
//! `Display` is the message — what happened and what to do — and which implements
//! [`Refusal`] for the stable slug and the next step. The envelope is built in one place,
//! [`Refusal::refusal`], under the name of the verb that refuses.

use super::{Envelope, ErrorSlug, Hint};

/// A reason a verb refuses, typed.
pub trait Refusal: std::error::Error {
    /// The envelope's stable `error` slug.
    fn slug(&self) -> ErrorSlug;
    /// The next-step hint: the way past this refusal.
    fn hint(&self) -> Hint;
    /// The refusal envelope of `verb`: the slug, this error's message, the hint.
    fn refusal(&self, verb: &str) -> Envelope {
        Envelope::refusal(verb, self.slug(), self.to_string(), self.hint())
    }
}
