//! The trunk judged cumulatively: every commit from a verified baseline to HEAD, each change
//! only the owner may make named with the commit that introduced it, and the approvals the
//! landings' Proof notes recorded.

use std::collections::HashMap;

use gix::ObjectId;
use serde::Deserialize;

use super::compare::{self, Change};
use crate::approval::Granted;
use crate::config::Config;
use crate::git::{Repo, RepoError};
use crate::protected::ProtectedChange;

/// A forbidden change and the commit that introduced it.
#[derive(Debug, Clone)]
pub struct Introduced {
    pub commit: ObjectId,
    /// The commit's subject line.
    pub subject: String,
    pub change: Change,
    /// Its place in the walk (parents before children).
    pub position: usize,
}

/// What a landing's Proof note approved: limit moves and protected changes, each only as far
/// as the approval the note carries is verified (a signature where the trunk requires one).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Approvals {
    pub limits: Vec<Approval>,
    /// The keys of approved protected changes (`standards.<name>.<field>`, `standards.<name>`).
    pub protected: Vec<String>,
}

/// An approved limit move.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Approval {
    pub standard: String,
    pub trunk_limit: f64,
    pub proposed_limit: f64,
    #[serde(default)]
    pub token: String,
}

/// The part of a Proof note the ratchet reads (the rest is the landing's record).
#[derive(Debug, Deserialize)]
struct LandedNote {
    version: u32,
    #[serde(default)]
    approved_proposals: Vec<Approval>,
    #[serde(default)]
    approved_changes: Vec<ProtectedChange>,
    #[serde(default)]
    approval: Option<Granted>,
}

/// Whether `commit` carries a landing's Proof note.
pub fn landed(repo: &Repo, commit: ObjectId) -> Result<bool, RepoError> {
    Ok(landed_note(repo, commit)?.is_some())
}

fn landed_note(repo: &Repo, commit: ObjectId) -> Result<Option<LandedNote>, RepoError> {
    let Some(bytes) = repo.note(crate::commit::NOTES_REF, commit)? else {
        return Ok(None);
    };
    Ok(serde_json::from_slice::<LandedNote>(&bytes)
        .ok()
        .filter(|note| note.version >= 1))
}

/// What `note` (on the landed `commit`, whose first parent is `parent`) approves: under a
/// trunk that requires signed approvals, only what a valid signature over exactly this commit
/// names; otherwise what the note says (an interactive approval is only as good as the note).
fn approved_by(
    repo: &Repo,
    commit: ObjectId,
    parent: Option<ObjectId>,
    note: LandedNote,
) -> Approvals {
    let policy = parent.and_then(|p| crate::approval::policy(repo, p).ok());
    let signed = policy
        .as_ref()
        .is_some_and(|p| p.approval == crate::config::ApprovalPolicy::Signed);
    let tokens: Option<std::collections::BTreeSet<String>> = match (signed, &note.approval) {
        (false, _) => None,
        (true, None) => Some(Default::default()),
        (true, Some(granted)) => {
            Some(verified_tokens(policy.as_ref(), commit, granted).unwrap_or_default())
        }
    };
    let counts = |token: &str| tokens.as_ref().is_none_or(|t| t.contains(token));
    Approvals {
        limits: note
            .approved_proposals
            .into_iter()
            .filter(|a| counts(&a.token))
            .collect(),
        protected: note
            .approved_changes
            .into_iter()
            .filter(|c| counts(&c.token))
            .map(|c| c.key)
            .collect(),
    }
}

/// The tokens a signed approval names, when its signature verifies and it is for `commit`.
fn verified_tokens(
    policy: Option<&crate::approval::Policy>,
    commit: ObjectId,
    granted: &Granted,
) -> Option<std::collections::BTreeSet<String>> {
    let subject = crate::approval::Subject::parse(&granted.payload)?;
    let policy = policy?;
    (subject.head == commit
        && crate::approval::check(policy, &subject, granted).is_ok()
        && matches!(granted.channel, crate::approval::Channel::Signed { .. }))
    .then_some(subject.tokens)
}

/// The commits of `from..to`, parents before children, each with its parents.
fn commits(repo: &Repo, from: ObjectId, to: ObjectId) -> Result<Vec<Vec<ObjectId>>, RepoError> {
    let out = repo.git(&[
        "rev-list",
        "--parents",
        "--topo-order",
        "--reverse",
        &format!("{from}..{to}"),
    ])?;
    out.lines()
        .map(|line| {
            line.split_whitespace()
                .map(|hex| {
                    ObjectId::from_hex(hex.as_bytes()).map_err(|e| RepoError::Read {
                        what: "the output of git rev-list".to_owned(),
                        message: e.to_string(),
                    })
                })
                .collect()
        })
        .collect()
}

/// Every forbidden change introduced in `from..to`, and every approval recorded there.
pub fn walk(
    repo: &Repo,
    from: ObjectId,
    to: ObjectId,
) -> Result<(Vec<Introduced>, Vec<Landing>), RepoError> {
    let mut configs = Configs::default();
    let mut introduced = Vec::new();
    let mut landings = Vec::new();
    for (position, line) in commits(repo, from, to)?.into_iter().enumerate() {
        let Some((&commit, parents)) = line.split_first() else {
            continue;
        };
        if let Some(note) = landed_note(repo, commit)? {
            let approvals = approved_by(repo, commit, parents.first().copied(), note);
            landings.push(Landing {
                position,
                approvals,
            });
        }
        let Some((&first, others)) = parents.split_first() else {
            continue;
        };
        let mine = configs.at(repo, commit, Some(first))?;
        let theirs = configs.at(repo, first, None)?;
        let mut changes = compare::forbidden(&theirs, &mine);
        // A merge introduces only what differs from every parent (what it resolved itself).
        for other in others {
            let other = configs.at(repo, *other, None)?;
            let versus_other = compare::forbidden(&other, &mine);
            changes.retain(|c| {
                versus_other.iter().any(|o| {
                    o.standard() == c.standard()
                        && std::mem::discriminant(o) == std::mem::discriminant(c)
                })
            });
        }
        if !changes.is_empty() {
            let subject = repo.git(&["log", "-1", "--format=%s", &commit.to_string()])?;
            introduced.extend(changes.into_iter().map(|change| Introduced {
                commit,
                subject: subject.clone(),
                change,
                position,
            }));
        }
    }
    Ok((introduced, landings))
}

/// A landing in the walk: where its Proof note is, and what it approved.
#[derive(Debug, Clone)]
pub struct Landing {
    pub position: usize,
    pub approvals: Approvals,
}

/// Whether the landing that brought `found` onto the trunk (the first one at or after it)
/// approved it: an approval never covers changes made after its landing.
pub fn landed_with_approval(found: &Introduced, landings: &[Landing]) -> bool {
    landings
        .iter()
        .find(|l| l.position >= found.position)
        .is_some_and(|l| approved(&found.change, &l.approvals))
}

/// Whether an approval covers `change` exactly.
pub fn approved(change: &Change, approvals: &Approvals) -> bool {
    match change {
        Change::Loosened {
            standard, from, to, ..
        } => approvals
            .limits
            .iter()
            .any(|a| &a.standard == standard && a.trunk_limit == *from && a.proposed_limit == *to),
        Change::Redefined { standard, .. } => {
            let prefix = format!("standards.{standard}.");
            approvals.protected.iter().any(|k| k.starts_with(&prefix))
        }
        Change::Deleted { standard, .. } => approvals
            .protected
            .contains(&format!("standards.{standard}")),
    }
}

/// The config of each commit, read once. A commit whose config cannot be parsed carries its
/// first parent's forward (a broken config in the middle of the range deletes nothing; the
/// one at HEAD is refused where it is loaded).
#[derive(Default)]
struct Configs {
    read: HashMap<ObjectId, Config>,
}

impl Configs {
    fn at(
        &mut self,
        repo: &Repo,
        commit: ObjectId,
        parent: Option<ObjectId>,
    ) -> Result<Config, RepoError> {
        if let Some(config) = self.read.get(&commit) {
            return Ok(config.clone());
        }
        let config = match super::config_at(repo, commit)? {
            Ok(Some(config)) => config,
            Ok(None) => Config::absent(),
            Err(_) => match parent {
                Some(parent) => self.at(repo, parent, None)?,
                None => Config::absent(),
            },
        };
        self.read.insert(commit, config.clone());
        Ok(config)
    }
}
