//! The live proposals of a checkout: what the commits between the merge base and HEAD propose
//! (the source of truth, readable in any clone), each with the binding this worktree's store
//! remembers. A store record no reachable commit carries is an orphan: its commit was reset or
//! rebased away, and it authorizes nothing.

use gix::ObjectId;

use super::ProposalRecord;
use super::store::{self, StoreError};
use super::trailers::{self, Committed};
use crate::git::{Repo, RepoError};

#[derive(Debug, thiserror::Error)]
pub(crate) enum LiveError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the proposal commits cannot be read: {0}")]
    Repo(#[from] RepoError),
}

/// The live proposals, and the store's orphans.
#[derive(Debug, Clone, Default)]
pub(crate) struct Live {
    pub records: Vec<ProposalRecord>,
    pub orphans: Vec<ProposalRecord>,
}

/// The live proposals of `repo`'s HEAD against the trunk named `trunk`. Without a readable
/// trunk or merge base nothing can be told about the commits, so the store is taken as it is.
pub(crate) fn live(repo: &Repo, trunk: &str) -> Result<Live, LiveError> {
    live_at(repo, repo.head()?, trunk)
}

/// [`live`] for the branch at `head` (which need not be checked out: the owner approving a
/// fetched pull request from another checkout).
pub(crate) fn live_at(repo: &Repo, head: Option<ObjectId>, trunk: &str) -> Result<Live, LiveError> {
    let stored = store::load(repo)?;
    let (Some(head), Some(trunk_commit)) = (head, repo.trunk_commit(trunk)?) else {
        return Ok(Live {
            records: stored,
            orphans: Vec::new(),
        });
    };
    let Some(base) = repo.merge_base(trunk_commit, head) else {
        return Ok(Live {
            records: stored,
            orphans: Vec::new(),
        });
    };
    let committed = trailers::committed(repo, base, head)?;
    let records = committed
        .iter()
        .map(|c| {
            let commit = c.commit.to_string();
            stored
                .iter()
                .find(|r| r.commit == commit && c.trailer.matches(r))
                .cloned()
                .unwrap_or_else(|| from_trailer(c, trunk, base))
        })
        .collect::<Vec<_>>();
    let orphans = stored
        .into_iter()
        .filter(|r| {
            !records
                .iter()
                .any(|live| live.commit == r.commit && live.standard == r.standard)
        })
        .collect();
    Ok(Live { records, orphans })
}

/// A record rebuilt from its commit alone (a fresh clone, or a store that was deleted): bound
/// to the proposal commit, against the trunk as of the merge base.
fn from_trailer(c: &Committed, trunk: &str, base: ObjectId) -> ProposalRecord {
    let t = &c.trailer;
    ProposalRecord {
        standard: t.standard.clone(),
        commit: c.commit.to_string(),
        bound_commit: c.commit.to_string(),
        measured_commit: c.measured_commit.map(|m| m.to_string()).unwrap_or_default(),
        definition_fingerprint: t.definition_fingerprint.clone(),
        trunk: trunk.to_owned(),
        trunk_commit: base.to_string(),
        direction: t.direction,
        trunk_limit: t.trunk_limit,
        proposed_limit: t.proposed_limit,
        measurement: t.measurement,
        delta: t.measurement - t.trunk_limit,
        reason: t.reason.clone(),
        evidence_paths: t.evidence_paths.clone(),
    }
}

impl Live {
    /// Forget the orphans (what a writing verb does first), and say which were forgotten.
    pub(crate) fn clear_orphans(&self, repo: &Repo) -> Result<Option<String>, StoreError> {
        if self.orphans.is_empty() {
            return Ok(None);
        }
        let kept: Vec<ProposalRecord> = store::load(repo)?
            .into_iter()
            .filter(|r| !self.orphans.contains(r))
            .collect();
        store::save(repo, &kept).map_err(|e| StoreError::Write {
            path: repo.admin_path(store::FILE).display().to_string(),
            message: e.to_string(),
        })?;
        let names: Vec<String> = self
            .orphans
            .iter()
            .map(|r| format!("{} ({})", r.standard, crate::git::short(&r.commit)))
            .collect();
        Ok(Some(format!(
            "Cleared orphaned proposal(s) {}: their commit is no longer on this branch (reset or rebased away), so they authorize nothing.",
            names.join(", ")
        )))
    }
}
