//! End-to-end tests: the real producers, the real sandbox, real git repositories.

mod support;

mod agreement;
mod approval;
mod builtin_inputs;
mod builtins;
mod ci_formats;
mod cli;
mod contract;
mod elicitation;
mod evidence;
mod examples;
mod findings;
mod gains;
mod init_fit;
mod kills;
mod landing;
mod lifecycle;
mod limit_changes;
mod locks;
mod mcp;
mod mcp_wire;
mod producer_kit;
mod proposal_commits;
mod races;
mod ratchet;
mod reference;
mod runtime_cache;
mod sandbox;
mod sarif;
mod snapshot;
mod standards;
mod status;
mod surfaces;
