//! discern: keeps a repository's measured quality limits (Standards) honest.
//!
//! The library holds every concern; the `discern` binary is a thin CLI over it. See
//! `ARCHITECTURE.md` at the repository root for the map and the invariants.
#![deny(unsafe_code)]
#![cfg_attr(not(test), deny(clippy::unwrap_used))]

pub mod builtins;
pub mod cli;
pub mod commit;
pub mod config;
pub mod digest;
pub mod evidence;
pub mod fsutil;
pub mod jobs;
pub mod lifecycle;
pub mod mcp;
pub mod planner;
pub mod producers;
pub mod proof;
pub mod proposals;
pub mod result;
pub mod runtime;
pub mod snapshot;
pub mod standards;
pub mod status;
pub mod workspace;
