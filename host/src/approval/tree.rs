//! Approvals that travel in the tree: the owner's signed approval of exactly the items a change
//! makes, written by `discern approve` as a file under `.discern/approvals/` in an
//! approval-only commit on the branch. A merge commit, a squash, a rebase, a fork and a shallow
//! clone all carry it (it is content, not a note bound to a commit id), and it shows in the
//! pull request's diff.
//!
//! An approval counts only for a range that adds it, for exactly the items that range
//! changes, against its own baseline (the `discern.toml` blob it was judged against): copied
//! into another pull request, or left behind after the change moved on, it approves nothing.

use std::collections::BTreeSet;

use gix::ObjectId;
use serde::{Deserialize, Serialize};

use super::{Policy, SignError, Signer};
use crate::config::ApprovalPolicy;
use crate::git::{Repo, RepoError};
use crate::protected::{GateChanges, Loosening, ProtectedChange};

pub(crate) use crate::commit::approval::{DIR, beneath_approvals};
pub const VERSION: u32 = 2;

/// An approved loosening: the limit it moves, from what, to what, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LimitItem {
    pub standard: String,
    pub trunk_limit: f64,
    pub proposed_limit: f64,
    pub reason: String,
    pub token: String,
}

impl LimitItem {
    fn covers(&self, l: &Loosening) -> bool {
        self.standard == l.standard && self.trunk_limit == l.from && self.proposed_limit == l.to
    }
}

/// The items one approval approves, and what they were judged against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Items {
    /// The trunk commit the items were judged against: an approval counts only in a history
    /// that contains it and has not landed this approval before.
    pub base_commit: String,
    /// The blob id of the baseline's `discern.toml` (`None`: the baseline had none).
    pub base: Option<String>,
    pub limits: Vec<LimitItem>,
    pub protected: Vec<ProtectedChange>,
}

impl Items {
    /// Every token, sorted.
    pub fn tokens(&self) -> BTreeSet<String> {
        self.limits
            .iter()
            .map(|l| l.token.clone())
            .chain(self.protected.iter().map(|p| p.token.clone()))
            .collect()
    }

    /// The signed text: versioned, the baseline, then one token a line, sorted.
    pub fn payload(&self) -> String {
        let mut text = format!(
            "discern-approval-v2\nbase-commit {}\nbase {}\n",
            self.base_commit,
            self.base.as_deref().unwrap_or("none")
        );
        for token in self.tokens() {
            text.push_str(&format!("token {token}\n"));
        }
        text
    }

    /// Whether every token is the one its item's own fields give (a file cannot show one
    /// change and approve another).
    fn consistent(&self) -> bool {
        self.limits.iter().all(|l| {
            l.token == crate::protected::limit_token(&l.standard, l.proposed_limit, &l.reason)
        }) && self
            .protected
            .iter()
            .all(|p| p.token == crate::protected::token(&p.kind, &p.key, &p.old, &p.new))
    }

    /// Whether these items are exactly `changes`: every loosening and protected change, and
    /// nothing else.
    pub fn exactly(&self, changes: &GateChanges) -> bool {
        let limits = changes.loosened.len() == self.limits.len()
            && changes
                .loosened
                .iter()
                .all(|l| self.limits.iter().any(|item| item.covers(l)));
        let wanted: BTreeSet<&str> = changes.protected.iter().map(|p| p.token.as_str()).collect();
        let given: BTreeSet<&str> = self.protected.iter().map(|p| p.token.as_str()).collect();
        limits && wanted == given
    }
}

/// One approval file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TreeApproval {
    pub version: u32,
    #[serde(flatten)]
    pub items: Items,
    pub principal: String,
    pub fingerprint: String,
    pub signature: String,
}

impl TreeApproval {
    /// Where this approval is written: named by its payload, so two approvals never collide.
    pub fn path(&self) -> String {
        let digest = crate::digest::Digest::of(self.items.payload().as_bytes()).hex();
        format!("{DIR}/{}.json", &digest[..16])
    }

    /// The file's bytes, pretty-printed for the pull request's diff.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec_pretty(self).unwrap_or_default();
        bytes.push(b'\n');
        bytes
    }

    /// Signed by `signer` with `signature` over these items.
    pub fn signed(items: Items, signer: Signer, signature: String) -> Self {
        Self {
            version: VERSION,
            items,
            principal: signer.principal,
            fingerprint: signer.fingerprint,
            signature,
        }
    }

    /// Whether this approval is good under `policy` (the trust root's): a signature that
    /// verifies against its signers, by the key the file names, over exactly its items.
    pub fn verify(&self, policy: &Policy) -> Result<(), NotCounted> {
        if self.version != VERSION || !self.items.consistent() {
            return Err(NotCounted::Malformed);
        }
        let (ApprovalPolicy::Signed, Some((_, signers))) = (policy.approval, &policy.signers)
        else {
            return Err(NotCounted::NotSigned);
        };
        let signer = super::verify(signers, &self.items.payload(), &self.signature)
            .map_err(NotCounted::Signature)?;
        match signer.fingerprint == self.fingerprint {
            true => Ok(()),
            false => Err(NotCounted::OtherSigner),
        }
    }
}

/// Why an approval in the tree does not count.
#[derive(Debug, thiserror::Error)]
pub enum NotCounted {
    #[error("it is not an approval this discern reads")]
    Malformed,
    #[error(
        "the trunk does not require signed approvals, so an approval in the tree proves nothing"
    )]
    NotSigned,
    #[error("{0}")]
    Signature(SignError),
    #[error("it names another signer than the key that made it")]
    OtherSigner,
    #[error("it was judged against another discern.toml than this change's baseline")]
    OtherBase,
    #[error("it approves other items than this change makes")]
    OtherItems,
}

/// The approvals `from..to` adds for the first time: files under [`DIR`] at `to` that `from`
/// does not have, each under the name its own payload gives it, judged against a trunk commit
/// `from` contains, and not in any tree of the first-parent chain from that commit to `from`
/// (so one that landed once cannot be replayed: copied under another name, or again after a
/// revert). Unreadable ones are left out: they approve nothing.
pub(crate) fn added(
    repo: &Repo,
    from: ObjectId,
    to: ObjectId,
) -> Result<Vec<TreeApproval>, RepoError> {
    let prefix = format!("{DIR}/");
    let mut found = Vec::new();
    for path in repo.changed_between(from, to)? {
        if !path.starts_with(&prefix) || !path.ends_with(".json") {
            continue;
        }
        let Some(bytes) = repo.file_at(to, &path)? else {
            continue;
        };
        let Ok(approval) = serde_json::from_slice::<TreeApproval>(&bytes) else {
            continue;
        };
        if approval.path() == path && first_landing(repo, &approval, &path, from)? {
            found.push(approval);
        }
    }
    Ok(found)
}

/// Whether `approval` (at `path`) is judged against a trunk commit on `from`'s first-parent
/// chain, and no tree from there to `from` holds it yet.
fn first_landing(
    repo: &Repo,
    approval: &TreeApproval,
    path: &str,
    from: ObjectId,
) -> Result<bool, RepoError> {
    let Ok(base) = approval.items.base_commit.parse::<ObjectId>() else {
        return Ok(false);
    };
    let Some(chain) = repo.first_parent_chain(base, from)? else {
        return Ok(false);
    };
    for commit in chain {
        if repo.blob_at(commit, path)?.is_some() {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The approval among `approvals` that approves exactly `changes` against `base` (the blob id
/// of the baseline's `discern.toml`), verified under `policy`; otherwise why none does (the
/// reason of the closest one).
pub(crate) fn approving<'a>(
    approvals: &'a [TreeApproval],
    policy: Option<&Policy>,
    base: Option<&str>,
    changes: &GateChanges,
) -> Result<&'a TreeApproval, Option<NotCounted>> {
    let mut why = None;
    for approval in approvals {
        let Some(policy) = policy else {
            return Err(Some(NotCounted::NotSigned));
        };
        let verdict = approval.verify(policy).and_then(|()| {
            if approval.items.base.as_deref() != base {
                return Err(NotCounted::OtherBase);
            }
            match approval.items.exactly(changes) {
                true => Ok(()),
                false => Err(NotCounted::OtherItems),
            }
        });
        match verdict {
            Ok(()) => return Ok(approval),
            Err(e) => why = Some(e),
        }
    }
    Err(why)
}
