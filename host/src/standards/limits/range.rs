//! The trunk judged cumulatively: every commit from a verified baseline to HEAD, each change
//! only the owner may make named with the commit that introduced it, and the approvals the
//! landings' Proof notes recorded.

use std::collections::HashMap;

use gix::ObjectId;
use serde::Deserialize;

use super::compare::{self, Change};
use crate::config::Config;
use crate::git::{Repo, RepoError};

/// A forbidden change and the commit that introduced it.
#[derive(Debug, Clone)]
pub struct Introduced {
    pub commit: ObjectId,
    /// The commit's subject line.
    pub subject: String,
    pub change: Change,
}

/// An approval a landing's Proof note recorded: this exact limit move.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Approval {
    pub standard: String,
    pub trunk_limit: f64,
    pub proposed_limit: f64,
}

/// The part of a Proof note the ratchet reads (the rest is the landing's record).
#[derive(Debug, Deserialize)]
struct LandedNote {
    version: u32,
    #[serde(default)]
    approved_proposals: Vec<Approval>,
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
) -> Result<(Vec<Introduced>, Vec<Approval>), RepoError> {
    let mut configs = Configs::default();
    let mut introduced = Vec::new();
    let mut approvals = Vec::new();
    for line in commits(repo, from, to)? {
        let Some((&commit, parents)) = line.split_first() else {
            continue;
        };
        if let Some(note) = landed_note(repo, commit)? {
            approvals.extend(note.approved_proposals);
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
            }));
        }
    }
    Ok((introduced, approvals))
}

/// Whether an approval covers `change` exactly (only a loosening can be approved).
pub fn approved(change: &Change, approvals: &[Approval]) -> bool {
    match change {
        Change::Loosened {
            standard, from, to, ..
        } => approvals
            .iter()
            .any(|a| &a.standard == standard && a.trunk_limit == *from && a.proposed_limit == *to),
        Change::Redefined { .. } | Change::Deleted { .. } => false,
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
