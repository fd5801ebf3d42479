//! discern: keeps a repository's measured quality limits (Standards) honest.
//!
//! The library holds every concern but the frontends: the `discern` binary (`frontend/`)
//! holds the CLI and the MCP server, built from the verb table ([`verbs`]). See
//! `ARCHITECTURE.md` at the repository root for the map and the invariants.
#![deny(unsafe_code)]
#![warn(unreachable_pub)]
#![cfg_attr(not(test), deny(clippy::unwrap_used))]

// The face the frontends are built on: the verb table and what it runs in, the envelope, the
// MCP wire, the status resource, cancellation. Everything else is the crate's own.
pub mod cancel;
pub mod mcp_wire;
pub mod result;
pub mod status;
pub mod verbs;
pub mod workspace;

pub use approval::asker;
pub use git::{Repo, RepoError};

#[doc(hidden)]
pub mod testing;

mod agents;
mod approval;
mod builtins;
mod commit;
mod config;
mod cores;
mod digest;
mod evidence;
mod findings;
mod fsutil;
mod git;
mod identity;
#[cfg(test)]
mod import_graph;
mod jobs;
mod lifecycle;
mod map;
mod measure;
mod oci;
mod operations;
mod planner;
mod preflight;
mod producers;
mod proof;
mod proposals;
#[cfg(test)]
mod props;
mod protected;
mod runtime;
mod setup_record;
mod snapshot;
mod standards;
mod sync;
mod task;
