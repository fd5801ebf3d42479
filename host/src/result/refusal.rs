//! One shape for every verb's refusals: a `thiserror` enum per verb (or per room) whose
//! `Display` is the message — what happened and what to do — and which implements
//! [`Refusal`] for the stable slug and the next step. It becomes a [`Refused`] value
//! (`?` converts it), which only the verb table names and turns into the envelope.

use super::{ErrorSlug, Hint, Refused};

/// A reason a verb refuses, typed.
pub trait Refusal: std::error::Error {
    /// The envelope's stable `error` slug.
    fn slug(&self) -> ErrorSlug;
    /// The next-step hint: the way past this refusal.
    fn hint(&self) -> Hint;
    /// The refusal as a value: the slug, this error's message, the hint.
    fn refused(&self) -> Refused {
        Refused::new(self.slug(), self.to_string(), self.hint())
    }
}
