//! The effort lifecycle: `start`, `prepare`, `test`, `done`, `update`, `await`, `accept`,
//! `progress`, `map`. Each verb is a library function returning the shared envelope; the CLI
//! and the MCP server call the same functions.

pub mod abandon;
pub mod accept;
pub mod approve;
pub mod done;
pub mod effort;
pub mod required;
pub mod resolve;
pub mod stage_verbs;
pub mod start;
pub mod steps;
pub mod update;
pub mod wait;

use std::path::PathBuf;

use crate::result::Envelope;

/// A lifecycle verb's result, and the checkout the caller works in from now on when the verb
/// moved it (`start` into the new effort, a landing `accept` back to the main checkout).
#[derive(Debug, Clone)]
pub struct Moved {
    pub envelope: Envelope,
    pub root: Option<PathBuf>,
}

impl From<Envelope> for Moved {
    fn from(envelope: Envelope) -> Self {
        Self {
            envelope,
            root: None,
        }
    }
}
