//! The effort lifecycle: `start`, `prepare`, `test`, `done`, `update`, `await`, `accept`,
//! `progress`, `map`. Each verb is a library function returning the shared envelope; the CLI
//! and the MCP server call the same functions.

pub mod accept;
pub mod done;
pub mod map;
pub mod operations;
pub mod stage_verbs;
pub mod start;
pub mod steps;
pub mod task;
pub mod update;
pub mod wait;
