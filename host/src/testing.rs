//! What the end-to-end suite, the benches and the fuzz targets reach below the face: the
//! internals they drive or inspect directly (the sandbox, snapshots, signatures, the steps a
//! kill test stops at). Not part of discern's interface; nothing here is for a frontend.

pub mod approval {
    pub use crate::approval::{NAMESPACE, sign, sign_for, sign_in_process, verify, verify_for};

    /// The digest of the net change from `from` to `to` (commit ids or names) in the
    /// repository at `dir`, as a signed approval names it.
    pub fn net_change(dir: &std::path::Path, from: &str, to: &str) -> Result<String, String> {
        let repo = crate::git::Repo::discover(dir).map_err(|e| e.to_string())?;
        let from = repo.rev_parse(from).map_err(|e| e.to_string())?;
        let to = repo.rev_parse(to).map_err(|e| e.to_string())?;
        crate::approval::net_change(&repo, from, to).map_err(|e| e.to_string())
    }
    pub mod tree {
        pub use crate::approval::tree::{Items, LimitItem, TreeApproval, VERSION};
    }
}

pub mod builtins {
    pub use crate::builtins::{BUILTINS, component, names};
}

pub mod commit {
    pub use crate::commit::{fork, landing, lock, merging, shared_refs, step};
}

/// The fault point inside `start` once the effort exists, before its setup runs.
pub mod provision {
    pub use crate::setup_record::SETUP_BEGUN;
}

pub mod config {
    pub use crate::config::{Config, MAX_TIMEOUT_S};
}

pub mod digest {
    pub use crate::digest::Digest;
}

pub mod evidence {
    #[cfg(feature = "remote-cache")]
    pub use crate::evidence::remote;
    pub use crate::evidence::{Entry, VERSION, bundle, findings, shared};
}

pub mod measure {
    pub use crate::measure::{Context, EvidenceUse, Measured, Options, measure};
}

pub mod preflight {
    pub use crate::preflight::Cleanliness;
}

pub mod proposals {
    pub use crate::proposals::approval_token;
}

pub mod protected {
    pub use crate::protected::{limit_token, token};
}

pub mod runtime {
    pub use crate::runtime::{
        Artifacts, Finding, Limits, MAX_FINDINGS, Metric, Origin, ProducerComponent, ProducerError,
        ProducerErrorKind, RunOutput, Runtime,
    };
}

pub mod snapshot {
    pub use crate::snapshot::{EntryKind, Pathspec, Snapshot, changed_paths};
}
