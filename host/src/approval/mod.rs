//! The owner's approval, derived and verified, never remembered. What needs approval is
//! computed from the trunk tip's committed `discern.toml` against HEAD's: every loosening
//! (each must be a live proposal) and every protected change. How it may be approved — a
//! signature by a key in the trunk's allowed-signers file, or (without one) an interactive
//! channel — is read from the trunk tip's config only. Arguments a caller passes never approve.

pub mod asker;
mod change;
mod merged;
mod prompt;
mod record;
mod sign;
pub(crate) mod signers;
pub(crate) mod tree;
mod trust;

pub(crate) use change::{net_change, net_change_outside};
pub(crate) use trust::anchored_policy;

use gix::ObjectId;

pub(crate) use prompt::ask_on_terminal;
pub(crate) use record::{Channel, Granted, NOTES_REF, Subject, VERSION, recorded};
pub use sign::{NAMESPACE, sign, sign_for, sign_in_process, verify, verify_for};
pub(crate) use sign::{SignError, Signer};

use crate::config::{ApprovalPolicy, Config};
use crate::git::{Repo, RepoError};

#[derive(Debug, thiserror::Error)]
pub(crate) enum ApprovalError {
    #[error("{0}")]
    Repo(#[from] RepoError),
    #[error("the trunk's discern.toml cannot be parsed: {0}")]
    TrunkConfig(String),
    #[error(
        "[acceptance].allowed_signers names {0}, which the trunk's tree does not hold; signed approvals cannot be verified"
    )]
    NoSigners(String),
}

/// The trunk a branch names is a trunk: not the branch itself, and its own committed config
/// names itself as the trunk (a branch cannot point the landing at a ref it controls).
pub(crate) fn trunk_agrees(
    repo: &Repo,
    trunk: &str,
    trunk_commit: ObjectId,
    branch: &str,
) -> Result<(), String> {
    if trunk == branch || trunk.strip_prefix("refs/heads/") == Some(branch) {
        return Err(format!(
            "the trunk is named {trunk:?}, which is this effort's own branch"
        ));
    }
    let named = Config::at_or_absent(repo, trunk_commit)
        .map_err(|e| e.to_string())
        .map(|c| c.trunk)
        .map_err(|e| format!("the trunk's discern.toml cannot be parsed: {e}"))?;
    match named == trunk {
        true => Ok(()),
        false => Err(format!(
            "this branch names the trunk {trunk:?}, but that trunk's own discern.toml names {named:?}"
        )),
    }
}

/// How approvals are given on this trunk, from its tip's committed config only.
#[derive(Debug, Clone)]
pub struct Policy {
    pub approval: ApprovalPolicy,
    /// The allowed-signers file's path and content, as the trunk commits them.
    pub signers: Option<(String, Vec<u8>)>,
    /// `[acceptance].repository`: the repository a signed approval must name.
    pub repository: Option<String>,
}

/// The trunk tip's approval policy.
pub(crate) fn policy(repo: &Repo, trunk_commit: ObjectId) -> Result<Policy, ApprovalError> {
    let config = Config::at_or_absent(repo, trunk_commit)
        .map_err(|e| e.to_string())
        .map_err(ApprovalError::TrunkConfig)?;
    let signers = match &config.allowed_signers {
        None => None,
        Some(path) => match repo.file_at(trunk_commit, path)? {
            Some(bytes) => Some((path.clone(), bytes)),
            None => return Err(ApprovalError::NoSigners(path.clone())),
        },
    };
    Ok(Policy {
        approval: config.approval,
        signers,
        repository: config.approval_repository,
    })
}

/// Why a recorded approval does not approve this subject.
#[derive(Debug, thiserror::Error)]
pub(crate) enum NotApproved {
    #[error("no approval is recorded for {0}")]
    None(String),
    #[error("the recorded approval is for another {0}; the owner approves again")]
    OtherSubject(&'static str),
    #[error(
        "the recorded approval is unsigned ({0}), and the trunk requires approval = \"signed\""
    )]
    Unsigned(&'static str),
    #[error("the recorded approval's signature is not valid: {0}")]
    BadSignature(String),
}

/// The approval recorded on `subject.head`, verified against `subject` and `policy`.
pub(crate) fn verified(
    repo: &Repo,
    policy: &Policy,
    subject: &Subject,
) -> Result<Granted, NotApproved> {
    let head = crate::git::short(&subject.head.to_string());
    let granted = recorded(repo, subject.head)
        .ok()
        .flatten()
        .ok_or(NotApproved::None(head))?;
    check(policy, subject, &granted)?;
    Ok(granted)
}

/// Whether `granted` approves exactly `subject` under `policy` (a signature re-verified).
pub(crate) fn check(
    policy: &Policy,
    subject: &Subject,
    granted: &Granted,
) -> Result<(), NotApproved> {
    let Some(stated) = Subject::parse(&granted.payload) else {
        return Err(NotApproved::OtherSubject("subject (it cannot be read)"));
    };
    if stated.head != subject.head {
        return Err(NotApproved::OtherSubject("commit"));
    }
    if stated.trunk != subject.trunk || stated.trunk_commit != subject.trunk_commit {
        return Err(NotApproved::OtherSubject("trunk commit"));
    }
    if stated.tokens != subject.tokens {
        return Err(NotApproved::OtherSubject("set of changes"));
    }
    match (&granted.channel, &policy.signers) {
        (
            Channel::Signed {
                signature,
                principal,
                fingerprint,
            },
            Some((path, signers)),
        ) => {
            let signer = sign::verify_file((path, signers), &granted.payload, signature)
                .map_err(|e| NotApproved::BadSignature(e.to_string()))?;
            if &signer.principal != principal || &signer.fingerprint != fingerprint {
                return Err(NotApproved::BadSignature(
                    "it names another signer than the one whose key made it".to_owned(),
                ));
            }
            Ok(())
        }
        (Channel::Signed { .. }, None) => match policy.approval {
            ApprovalPolicy::Signed => Err(NotApproved::BadSignature(
                "the trunk names no allowed-signers file".to_owned(),
            )),
            // Without signers a signature proves nothing more than a prompt would.
            ApprovalPolicy::Interactive => Ok(()),
        },
        (other, _) => match policy.approval {
            ApprovalPolicy::Signed => Err(NotApproved::Unsigned(other.name())),
            ApprovalPolicy::Interactive => Ok(()),
        },
    }
}
