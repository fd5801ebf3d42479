//! Approvals that travel in the tree: the owner's signed approval of exactly one change, written
//! by `discern approve` as a file under `.discern/approvals/` in an approval-only commit on the
//! branch. A merge commit, a squash, a rebase, a fork and a shallow clone all carry it (it is
//! content, not a note bound to a commit id), and it shows in the pull request's diff.
//!
//! What is signed is the change, in one repository: the repository's name (the trunk side's
//! `[acceptance].repository`), the trunk commit it was judged against, the items (each
//! loosening with its limits, each protected change, by token) and the digest of what the
//! change does to the tree (`change`: the net diff from that trunk commit to the approved
//! head, approvals left out). It counts only for a range that adds it, whose items and net
//! change are exactly those, in the repository it names: copied into another pull request
//! (other code), into another repository, or left behind after the change moved on, it
//! approves nothing. The same change landed by a merge commit, a squash or a rebase, onto a
//! trunk that moved on other paths meanwhile, verifies the same.

use std::collections::BTreeSet;

use gix::ObjectId;
use serde::{Deserialize, Serialize};

use super::{Policy, SignError, Signer};
use crate::config::ApprovalPolicy;
use crate::git::{Repo, RepoError};
use crate::protected::{GateChanges, Loosening, ProtectedChange};

pub(crate) use crate::commit::approval::{DIR, beneath_approvals};
pub const VERSION: u32 = 3;

/// How the owner approves a change again, for a message that says one does not count.
pub(crate) const AGAIN: &str = "The owner approves the change as it now is: `discern approve origin/BRANCH --dry-run` (or `--effort ID`) shows it and prints the command that signs exactly it";

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

/// The change one approval approves, in which repository, against which trunk commit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Items {
    /// The repository the change is approved in (`[acceptance].repository`; empty in an
    /// approval an older discern wrote, which is read only to be refused).
    #[serde(default)]
    pub repository: String,
    /// The trunk commit the items were judged against: an approval counts only in a history
    /// that contains it and has not landed this approval before.
    pub base_commit: String,
    /// The digest of the net change from `base_commit`'s tree to the approved head's
    /// (`approval::change`).
    #[serde(default)]
    pub change: String,
    /// The digest of that net change outside `discern.toml`, whose changes the items name one
    /// by one: what lets the change count where a squash or a rebase lands it on a trunk whose
    /// `discern.toml` moved meanwhile (a merge queue's later entry). Absent in approvals older
    /// discerns wrote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change_outside: Option<String>,
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

    /// The signed text: versioned, the repository, the baseline and the net change, each
    /// loosening with its limits, then one token a line, sorted.
    pub fn payload(&self) -> String {
        let mut text = format!(
            "discern-approval-v{VERSION}\nrepository {}\nbase-commit {}\nchange {}\n",
            self.repository, self.base_commit, self.change
        );
        if let Some(outside) = &self.change_outside {
            text.push_str(&format!("change-outside {outside}\n"));
        }
        let mut limits: Vec<&LimitItem> = self.limits.iter().collect();
        limits.sort_by(|a, b| a.token.cmp(&b.token));
        for l in limits {
            text.push_str(&format!(
                "limit {} {} -> {}\n",
                l.token,
                serde_json::json!(l.trunk_limit),
                serde_json::json!(l.proposed_limit)
            ));
        }
        for token in self.tokens() {
            text.push_str(&format!("token {token}\n"));
        }
        text
    }

    /// Whether every token is the one its item's own fields give (a file cannot show one
    /// change and approve another).
    fn consistent(&self) -> bool {
        // One word each, so no field can carry a line of another into the signed text.
        let word =
            |s: &str| !s.is_empty() && !s.chars().any(|c| c.is_whitespace() || c.is_control());
        let hex = |s: &str, len: usize| s.len() == len && s.chars().all(|c| c.is_ascii_hexdigit());
        word(&self.repository)
            && hex(&self.base_commit, 40)
            && hex(&self.change, 64)
            && self.change_outside.as_deref().is_none_or(|c| hex(c, 64))
            && self.limits.iter().all(|l| {
                l.token == crate::protected::limit_token(&l.standard, l.proposed_limit, &l.reason)
            })
            && self
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

    /// The file's bytes, pretty-printed for the pull request's diff; an approval that cannot
    /// be written is an error, never an empty file committed in its place.
    pub fn to_bytes(&self) -> Result<Vec<u8>, serde_json::Error> {
        let mut bytes = serde_json::to_vec_pretty(self)?;
        bytes.push(b'\n');
        Ok(bytes)
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
        if self.version < VERSION {
            return Err(NotCounted::OlderVersion(self.version));
        }
        if self.version != VERSION || !self.items.consistent() {
            return Err(NotCounted::Malformed);
        }
        let (ApprovalPolicy::Signed, Some((path, signers))) = (policy.approval, &policy.signers)
        else {
            return Err(NotCounted::NotSigned);
        };
        let signer =
            super::sign::verify_file((path, signers), &self.items.payload(), &self.signature)
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
        "an older discern wrote it (approval v{0}), which bound neither the repository nor the change it approves; the owner approves again"
    )]
    OlderVersion(u32),
    #[error(
        "the trunk does not require signed approvals, so an approval in the tree proves nothing"
    )]
    NotSigned,
    #[error("{0}")]
    Signature(SignError),
    #[error("it names another signer than the key that made it")]
    OtherSigner,
    #[error(
        "the trunk's discern.toml names no repository, so no approval can say it is for this one; add [acceptance].repository (e.g. \"github.com/acme/app\") on the trunk, or in the change the owner approves"
    )]
    NoRepository,
    #[error("it approves a change in the repository {named}, and this one is {here}")]
    OtherRepository { named: String, here: String },
    #[error("it approves other items than this change makes")]
    OtherItems,
    #[error("what the change does to the tree cannot be read: {0}")]
    Unreadable(String),
    #[error(
        "it approves another change to the tree than this one makes: this code is not what the owner approved"
    )]
    OtherChange,
    #[error(
        "the trunk moved since the owner approved it (against {approved}; this change is judged against {now}), and what the change does to the tree is not what the owner approved (the trunk, brought in, changed a path the change touches too, or the code changed); bring the trunk in and have the owner approve the change as it now is"
    )]
    TrunkMoved { approved: String, now: String },
}

impl NotCounted {
    /// How far the approval got before it failed: the reason shown is the furthest one's.
    fn rank(&self) -> u8 {
        match self {
            Self::Malformed | Self::OlderVersion(_) | Self::NotSigned => 0,
            Self::Signature(_) | Self::OtherSigner => 1,
            Self::NoRepository | Self::OtherRepository { .. } => 2,
            Self::OtherItems => 3,
            Self::Unreadable(_) | Self::OtherChange | Self::TrunkMoved { .. } => 4,
        }
    }
}

/// The range an approval is judged for: what `from..to` changes, `from` the trunk side.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Range {
    pub from: ObjectId,
    pub to: ObjectId,
}

/// The repository a range's approvals must name: the trunk side's `[acceptance].repository`,
/// or, where the trunk side names none, the name the range itself gives it (the change that adds
/// it is approved under it); `None` when neither names one.
pub(crate) fn repository_for(policy: &Policy, changes: &GateChanges) -> Option<String> {
    policy.repository.clone().or_else(|| {
        changes
            .protected
            .iter()
            .find(|p| p.key == "acceptance.repository" && p.old.is_null())
            .and_then(|p| p.new.as_str().map(str::to_owned))
    })
}

/// The approvals `from..to` adds for the first time: files under [`DIR`] at `to` that `from`
/// does not have, each under the name its own payload gives it, judged against a trunk commit
/// `from` contains, and not in any tree of the first-parent chain from that commit to `from`
/// (so one that landed once cannot be replayed: copied under another name, or again after a
/// revert). One an older discern wrote is kept only to be refused by name. Unreadable ones are
/// left out: they approve nothing.
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
        if approval.version < VERSION
            || (approval.path() == path && first_landing(repo, &approval, &path, from)?)
        {
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

/// The approval among `approvals` that approves exactly `changes`, the net change of `range`,
/// in the repository `policy` names, verified under `policy`; otherwise why none does (the
/// reason of the closest one). The net change is computed once, and only for an approval
/// whose signature, repository and items already hold.
pub(crate) fn approving<'a>(
    repo: &Repo,
    approvals: &'a [TreeApproval],
    policy: Option<&Policy>,
    range: Range,
    changes: &GateChanges,
) -> Result<&'a TreeApproval, Option<NotCounted>> {
    let mut why = None;
    let mut net: Option<Result<String, String>> = None;
    for approval in approvals {
        let Some(policy) = policy else {
            return Err(Some(NotCounted::NotSigned));
        };
        let verdict = approval.verify(policy).and_then(|()| {
            let here = repository_for(policy, changes).ok_or(NotCounted::NoRepository)?;
            if approval.items.repository != here {
                let named = approval.items.repository.clone();
                return Err(NotCounted::OtherRepository { named, here });
            }
            match approval.items.exactly(changes) {
                true => Ok(()),
                false => Err(NotCounted::OtherItems),
            }
        });
        let verdict = match verdict {
            Ok(()) => {
                let net = net.get_or_insert_with(|| {
                    super::change::net_change(repo, range.from, range.to).map_err(|e| e.to_string())
                });
                match net {
                    Ok(net) if *net == approval.items.change => Ok(()),
                    Ok(_) if lands_approved_head(repo, approval, range) => Ok(()),
                    Ok(_) if replays_approved_change(repo, approval, range) => Ok(()),
                    Ok(_) => Err(moved_or_other(approval, range)),
                    Err(e) => Err(NotCounted::Unreadable(e.clone())),
                }
            }
            Err(e) => Err(e),
        };
        match verdict {
            Ok(()) => return Ok(approval),
            Err(e)
                if why
                    .as_ref()
                    .is_none_or(|w: &NotCounted| w.rank() <= e.rank()) =>
            {
                why = Some(e);
            }
            Err(_) => {}
        }
    }
    Err(why)
}

/// Whether `range` does outside `discern.toml` exactly what the approved change does there:
/// the change a squash or a rebase replayed onto a trunk whose `discern.toml` moved meanwhile,
/// its gate changes judged by the items (already matched); `false` when that cannot be read.
fn replays_approved_change(repo: &Repo, approval: &TreeApproval, range: Range) -> bool {
    let Some(outside) = approval.items.change_outside.as_deref() else {
        return false;
    };
    let config = Some(crate::config::FILE);
    super::change::net_change_outside(repo, range.from, range.to, config)
        .is_ok_and(|net| net == outside)
}

/// Whether `range` merges the head `approval` approved onto its start, adding nothing
/// (`approval::merged`); `false` when that cannot be read.
fn lands_approved_head(repo: &Repo, approval: &TreeApproval, range: Range) -> bool {
    let approved = super::merged::Approved {
        base_commit: &approval.items.base_commit,
        change: &approval.items.change,
    };
    super::merged::lands_approved_head(repo, approved, (range.from, range.to)).unwrap_or(false)
}

/// Why an approval's net change is not the range's: the trunk moved under it (the range is
/// judged against a later trunk commit) or the code is other than what was approved.
fn moved_or_other(approval: &TreeApproval, range: Range) -> NotCounted {
    match approval.items.base_commit.parse::<ObjectId>().ok() == Some(range.from) {
        true => NotCounted::OtherChange,
        false => NotCounted::TrunkMoved {
            approved: crate::git::short(&approval.items.base_commit),
            now: crate::git::short(&range.from.to_string()),
        },
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn policy(repository: Option<&str>) -> Policy {
        Policy {
            approval: ApprovalPolicy::Signed,
            signers: None,
            repository: repository.map(str::to_owned),
        }
    }

    fn change(key: &str, old: Value, new: Value) -> ProtectedChange {
        let token = crate::protected::token("acceptance", key, &old, &new);
        ProtectedChange {
            kind: "acceptance".to_owned(),
            key: key.to_owned(),
            old,
            new,
            token,
        }
    }

    fn items() -> Items {
        Items {
            repository: "example.com/a".to_owned(),
            base_commit: "1".repeat(40),
            change: "2".repeat(64),
            change_outside: None,
            limits: vec![LimitItem {
                standard: "todo".to_owned(),
                trunk_limit: 5.0,
                proposed_limit: 6.0,
                reason: "why".to_owned(),
                token: crate::protected::limit_token("todo", 6.0, "why"),
            }],
            protected: Vec::new(),
        }
    }

    #[test]
    fn the_repository_is_the_trunk_sides_or_the_one_the_change_adds() {
        let adds = GateChanges {
            loosened: Vec::new(),
            protected: vec![change("acceptance.repository", Value::Null, json!("b"))],
        };
        let renames = GateChanges {
            loosened: Vec::new(),
            protected: vec![change("acceptance.repository", json!("a"), json!("b"))],
        };
        assert_eq!(
            repository_for(&policy(Some("a")), &adds).as_deref(),
            Some("a")
        );
        assert_eq!(repository_for(&policy(None), &adds).as_deref(), Some("b"));
        assert_eq!(repository_for(&policy(None), &renames), None);
        assert_eq!(repository_for(&policy(None), &GateChanges::default()), None);
    }

    #[test]
    fn the_payload_signs_the_repository_the_change_and_each_limit() {
        let payload = items().payload();
        let token = crate::protected::limit_token("todo", 6.0, "why");
        assert_eq!(
            payload,
            format!(
                "discern-approval-v3\nrepository example.com/a\nbase-commit {}\nchange {}\nlimit {token} 5.0 -> 6.0\ntoken {token}\n",
                "1".repeat(40),
                "2".repeat(64)
            )
        );
        assert!(items().consistent());
        // No field can carry another line into the signed text, and the limits are signed.
        let mut spaced = items();
        spaced.repository = "a\nchange x".to_owned();
        assert!(!spaced.consistent());
        let mut other = items();
        other.limits[0].trunk_limit = 4.0;
        assert_ne!(other.payload(), items().payload());
    }

    #[test]
    fn an_older_approval_is_refused_by_its_version() {
        let approval = TreeApproval {
            version: 2,
            items: items(),
            principal: "owner".to_owned(),
            fingerprint: "SHA256:x".to_owned(),
            signature: String::new(),
        };
        let why = approval.verify(&policy(Some("example.com/a")));
        assert!(matches!(why, Err(NotCounted::OlderVersion(2))), "{why:?}");
    }
}
