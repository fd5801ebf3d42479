//! discern: keeps a repository's measured quality limits (Standards) honest.
//!
//! The library holds every concern but the frontends: the `discern` binary (`frontend/`)
//! holds the CLI and the MCP server, built from the verb table ([`verbs`]). See
//! `ARCHITECTURE.md` at the repository root for the map and the invariants.
#![deny(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::unwrap_used))]

pub mod approval;
pub mod builtins;
pub mod cancel;
pub mod commit;
pub mod config;
pub mod digest;
pub mod evidence;
pub mod findings;
pub mod fsutil;
pub mod git;
#[cfg(test)]
mod import_graph;
pub mod jobs;
pub mod lifecycle;
pub mod map;
pub mod mcp_wire;
pub mod measure;
pub mod operations;
pub mod planner;
pub mod preflight;
pub mod producers;
pub mod proof;
pub mod proposals;
#[cfg(test)]
mod props;
pub mod protected;
pub mod result;
pub mod runtime;
pub mod snapshot;
pub mod standards;
pub mod status;
pub mod sync;
pub mod task;
pub mod verbs;
pub mod workspace;
