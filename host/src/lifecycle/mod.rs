//! The effort lifecycle: `start`, `prepare`, `test`, `done`, `update`, `await`, `accept`,
//! `progress`, `map`. Each verb is a library function returning the shared envelope; the CLI
//! and the MCP server call the same functions.

pub(crate) mod abandon;
pub(crate) mod accept;
pub(crate) mod approve;
mod check_line;
mod checkup;
mod checkup_remote;
pub(crate) mod doctor;
pub(crate) mod done;
pub(crate) mod effort;
pub(crate) mod provision;
pub(crate) mod resolve;
pub(crate) mod setup;
pub(crate) mod stage_verbs;
pub(crate) mod start;
pub(crate) mod steps;
pub(crate) mod update;
pub(crate) mod wait;

use std::path::PathBuf;

use crate::result::{Refused, Reply};

/// A lifecycle verb's result, and the checkout the caller works in from now on when the verb
/// moved it (`start` into the new effort, a landing `accept` back to the main checkout) —
/// even when it then refused (an effort whose setup failed is still where to work).
#[derive(Debug, Clone)]
pub(crate) struct Moved {
    pub reply: Result<Reply, Refused>,
    pub root: Option<PathBuf>,
}

impl From<Reply> for Moved {
    fn from(reply: Reply) -> Self {
        Self {
            reply: Ok(reply),
            root: None,
        }
    }
}
