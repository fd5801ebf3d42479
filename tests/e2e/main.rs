//! End-to-end tests: the real producers, the real sandbox, real git repositories.

mod support;

mod abandon;
mod agreement;
mod approval;
mod attacks;
mod attacks_approval;
mod attacks_evidence;
mod attacks_protected;
mod builtin_inputs;
mod builtins;
mod ci_formats;
mod cli;
mod contract;
mod elicitation;
mod evidence;
mod examples;
mod findings;
mod findings_maxima;
mod forge;
mod forge_queue;
mod forge_release;
mod forge_second;
mod gains;
mod grouped;
mod init_ecosystems;
mod init_fit;
#[cfg(feature = "remote-cache")]
mod install;
mod kills;
mod kills_approval;
mod kills_publish;
mod landing;
mod lifecycle;
mod limit_changes;
mod locks;
mod mcp;
mod mcp_wire;
mod merging;
#[cfg(feature = "remote-cache")]
mod nginx;
mod oci_registry;
mod owner_gate;
mod producer_kit;
mod progress;
mod proposal_commits;
mod provision;
mod races;
mod ratchet;
mod red_team;
mod reference;
mod registry_producers;
#[cfg(feature = "remote-cache")]
mod remote_cache;
mod runtime_cache;
mod sandbox;
mod sarif;
mod signatures;
mod snapshot;
mod soak;
mod standards;
mod status;
mod status_lagging;
mod surfaces;
mod sync;
mod wording;
