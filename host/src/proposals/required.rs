//! What only the owner may approve before HEAD lands, derived and never remembered: the trunk
//! tip's committed `discern.toml` against HEAD's. Every loosening must be a live proposal (a
//! `Discern-Proposal:` commit); every protected change (`crate::protected`) is listed with its
//! token. Local records are a cache, never the authority.

use std::collections::BTreeSet;

use gix::ObjectId;
use serde::Serialize;

use crate::config::Config;
use crate::git::{Repo, RepoError};
use crate::proposals::{self, ApprovalItem, ProposalRecord};
use crate::protected::{self, GateChanges, ProtectedChange, Side};
use crate::result::{ErrorSlug, Hint, HintId, Refused};

#[derive(Debug, thiserror::Error)]
pub(crate) enum RequiredError {
    #[error("{0}")]
    Repo(#[from] RepoError),
    #[error("the trunk's discern.toml cannot be parsed: {0}")]
    TrunkConfig(String),
    #[error("HEAD's discern.toml cannot be parsed: {0}")]
    HeadConfig(String),
    #[error(transparent)]
    Proposals(#[from] proposals::LiveError),
}

/// Everything the owner must approve before HEAD lands on the trunk.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Required {
    /// Loosenings, each a live proposal.
    pub proposals: Vec<ApprovalItem>,
    pub protected: Vec<ProtectedChange>,
    /// Loosenings no live proposal explains: nothing can approve them.
    pub unexplained: Vec<String>,
    /// The live proposal records (for staleness), not part of the wire.
    #[serde(skip)]
    pub records: Vec<ProposalRecord>,
    /// The protected set these items come from (what an approval in the tree must match).
    #[serde(skip)]
    pub changes: GateChanges,
}

impl Required {
    pub(crate) fn is_empty(&self) -> bool {
        self.proposals.is_empty() && self.protected.is_empty()
    }

    /// The exact token set an approval must name.
    pub(crate) fn tokens(&self) -> BTreeSet<String> {
        self.proposals
            .iter()
            .map(|p| p.token.clone())
            .chain(self.protected.iter().map(|p| p.token.clone()))
            .collect()
    }

    /// Refused when a loosening is no live proposal: nothing can approve that.
    pub(crate) fn explained(&self, then: &str) -> Result<(), Refused> {
        if self.unexplained.is_empty() {
            return Ok(());
        }
        Err(Refused::new(
            ErrorSlug::PreconditionFailed,
            format!(
                "Limits are loosened without a proposal: {}; nothing can approve that.",
                self.unexplained.join("; ")
            ),
            Hint::next_step(
                HintId::StandardsPropose,
                format!(
                    "Restore the trunk's limits, or propose each change with a technical reason, {then}"
                ),
            ),
        ))
    }

    /// The live proposals these items include that are stale (each with why): a stale proposal
    /// authorizes nothing, so `approve` and `accept` refuse before anything is signed or lands.
    pub(crate) fn stale(&self, repo: &Repo, head: ObjectId, trunk: &str) -> Vec<String> {
        // The config committed at `head` is the one that lands, whatever the work tree holds.
        let config = Config::at_or_absent(repo, head).ok();
        self.records
            .iter()
            .filter(|r| self.proposals.iter().any(|p| p.standard == r.standard))
            .filter_map(|r| {
                let why = proposals::stale_reasons_at(repo, Some(head), config.as_ref(), trunk, r);
                (!why.is_empty()).then(|| format!("{} ({})", r.standard, why.join("; ")))
            })
            .collect()
    }

    /// One readable line an item, proposals first.
    pub(crate) fn lines(&self) -> Vec<String> {
        self.proposals
            .iter()
            .map(|p| format!("limit {}", p.line()))
            .chain(self.protected.iter().map(|p| {
                format!(
                    "protected {} — token {}",
                    p.line(),
                    &p.token[..12.min(p.token.len())]
                )
            }))
            .collect()
    }
}

/// What HEAD changes versus the trunk commit that only the owner may approve.
pub(crate) fn required(
    repo: &Repo,
    trunk: &str,
    trunk_commit: ObjectId,
    head: ObjectId,
) -> Result<Required, RequiredError> {
    let old = Config::at_or_absent(repo, trunk_commit)
        .map_err(|e| RequiredError::TrunkConfig(e.to_string()))?;
    let new =
        Config::at_or_absent(repo, head).map_err(|e| RequiredError::HeadConfig(e.to_string()))?;
    let live = proposals::live_at(repo, Some(head), trunk)?;
    let changes = protected::between(
        repo,
        Side {
            commit: trunk_commit,
            config: &old,
        },
        Side {
            commit: head,
            config: &new,
        },
    )?;
    let mut required = Required {
        protected: changes.protected.clone(),
        ..Required::default()
    };
    for l in &changes.loosened {
        match live.records.iter().find(|r| {
            r.standard == l.standard && r.trunk_limit == l.from && r.proposed_limit == l.to
        }) {
            Some(record) => required.proposals.push(ApprovalItem::of(record)),
            None => required.unexplained.push(l.describe()),
        }
    }
    required.records = live.records;
    required.changes = changes;
    Ok(required)
}
