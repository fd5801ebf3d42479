//! What the end-to-end suite, the benches and the fuzz targets reach below the face: the
//! internals they drive or inspect directly (the sandbox, snapshots, signatures, the steps a
//! kill test stops at). Not part of discern's interface; nothing here is for a frontend.
//!
//! Items, not modules: each name below is one a test, bench or fuzz target uses, grouped as
//! they are in the library so that a path reads the same from both sides. A test that needs
//! another item adds it here by name.

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

/// The named steps of the transactions a kill test stops at, and the refs and lock they write.
pub mod commit {
    pub mod fork {
        pub mod step {
            pub use crate::commit::fork::step::{ALL, WORKTREE_ADDED};
        }
    }
    pub mod landing {
        pub mod step {
            pub use crate::commit::landing::step::{ALL, JOURNAL_WRITTEN, NOTE_WRITTEN};
        }
    }
    pub mod lock {
        pub use crate::commit::lock::FILE;
    }
    pub mod merging {
        pub use crate::commit::merging::JOURNAL_WRITTEN;
    }
    pub mod shared_refs {
        pub use crate::commit::shared_refs::{edit_tree, set_ref, tree_of, write_commit};
    }
    pub mod step {
        pub use crate::commit::step::{ALL, REF_MOVED};
    }
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
    pub use crate::evidence::{Entry, VERSION};
    pub mod bundle {
        pub use crate::evidence::bundle::{Bundle, NAMESPACE, remote_key};
    }
    pub mod findings {
        pub use crate::evidence::findings::encode;
    }
    pub mod shared {
        pub use crate::evidence::shared::tree;
    }
    #[cfg(feature = "remote-cache")]
    pub mod remote {
        pub use crate::evidence::remote::{
            ActionResult, BlobDigest, Client, ENTRY, FINDINGS, Options, OutputFile, RemoteError,
            SIGNATURE,
        };
    }
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
    pub use crate::snapshot::{Entries, Entry, EntryKind, Pathspec, Snapshot, changed_paths};
}
