//! Proposals travel with their commit: a proposal commit carries each proposal as a
//! `Discern-Proposal:` trailer (one JSON object a line), a withdrawal commit names what it
//! withdraws in `Discern-Withdrawn:` trailers. Any clone, CI included, reads what was proposed
//! from the commits between the merge base and HEAD; the local store only remembers which
//! HEAD a proposal vouches for.

use std::collections::BTreeMap;

use gix::ObjectId;
use serde::{Deserialize, Serialize};

use super::ProposalRecord;
use crate::config::Direction;
use crate::git::{Repo, RepoError};

pub(crate) const PROPOSAL: &str = "Discern-Proposal";
pub(crate) const WITHDRAWN: &str = "Discern-Withdrawn";
/// At most this many responsible paths travel in a trailer.
const PATHS: usize = 20;

/// What a proposal commit says it proposes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Trailer {
    pub standard: String,
    pub direction: Direction,
    pub trunk_limit: f64,
    pub proposed_limit: f64,
    pub measurement: f64,
    pub definition_fingerprint: String,
    pub reason: String,
    pub token: String,
    #[serde(default)]
    pub evidence_paths: Vec<String>,
}

impl Trailer {
    fn of(record: &ProposalRecord) -> Self {
        Self {
            standard: record.standard.clone(),
            direction: record.direction,
            trunk_limit: record.trunk_limit,
            proposed_limit: record.proposed_limit,
            measurement: record.measurement,
            definition_fingerprint: record.definition_fingerprint.clone(),
            reason: record.reason.clone(),
            token: super::approval_token(&record.standard, record.proposed_limit, &record.reason),
            evidence_paths: record.evidence_paths.iter().take(PATHS).cloned().collect(),
        }
    }

    /// Whether `record` is this trailer's proposal (its reason may have been re-worded).
    pub(crate) fn matches(&self, record: &ProposalRecord) -> bool {
        self.standard == record.standard
            && self.direction == record.direction
            && self.trunk_limit == record.trunk_limit
            && self.proposed_limit == record.proposed_limit
            && self.measurement == record.measurement
    }
}

/// The trailer block of a proposal commit's message.
pub(crate) fn proposal_block(records: &[ProposalRecord]) -> String {
    records
        .iter()
        .filter_map(|r| serde_json::to_string(&Trailer::of(r)).ok())
        .map(|json| format!("{PROPOSAL}: {json}\n"))
        .collect()
}

/// The trailer block of a withdrawal commit's message.
pub(crate) fn withdrawn_block(standards: &[&str]) -> String {
    standards
        .iter()
        .map(|s| format!("{WITHDRAWN}: {s}\n"))
        .collect()
}

/// A proposal some commit between the merge base and HEAD carries and nothing later withdrew.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Committed {
    pub commit: ObjectId,
    /// The proposal commit's first parent: what was measured.
    pub measured_commit: Option<ObjectId>,
    pub trailer: Trailer,
}

/// The live proposals of `base..head`, oldest commit first: a later proposal of the same
/// Standard replaces an earlier one, a withdrawal ends it.
pub(crate) fn committed(
    repo: &Repo,
    base: ObjectId,
    head: ObjectId,
) -> Result<Vec<Committed>, RepoError> {
    let listed = repo.range(base, head)?;
    let local = repo.local();
    let mut live: BTreeMap<String, Committed> = BTreeMap::new();
    for commit in listed.into_iter().map(|c| c.commit) {
        let object = local.find_commit(commit).map_err(|e| RepoError::Read {
            what: format!("the commit {commit}"),
            message: e.to_string(),
        })?;
        let message = String::from_utf8_lossy(object.message_raw_sloppy()).into_owned();
        let measured_commit = object.parent_ids().next().map(|p| p.detach());
        for line in message.lines() {
            if let Some(json) = line.strip_prefix(&format!("{PROPOSAL}: "))
                && let Ok(trailer) = serde_json::from_str::<Trailer>(json)
            {
                live.insert(
                    trailer.standard.clone(),
                    Committed {
                        commit,
                        measured_commit,
                        trailer,
                    },
                );
            } else if let Some(standard) = line.strip_prefix(&format!("{WITHDRAWN}: ")) {
                live.remove(standard.trim());
            }
        }
    }
    let mut found: Vec<Committed> = live.into_values().collect();
    found.sort_by_key(|c| c.commit);
    Ok(found)
}
