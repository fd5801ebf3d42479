//! Renewing a stale proposal set (`rebound`): re-measure, require exactly the recorded values,
//! and bind them to HEAD with a commit that changes nothing and carries the proposals again
//! (`Discern-Proposal:` trailers), so every clone — the owner's, CI's — sees them live on the
//! new HEAD, not only this worktree's store.

use super::report::{batch_result, renewal_message};
use super::why::{NotProposed, refusal};
use super::{BatchStatus, ProposalRecord, ProposalRequest, VERB, store};
use crate::commit::ConfigCommit;
use crate::config::Config;
use crate::measure::{self, EvidenceUse};
use crate::result::{Refused, Reply};
use crate::runtime::Runtime;
use crate::workspace::Workspace;

/// A stale proposal set to renew, and where it is renewed.
pub(super) struct Renewal<'a> {
    pub existing: &'a [ProposalRecord],
    pub requests: &'a [ProposalRequest],
    pub branch: &'a str,
    pub trunk: &'a str,
    pub trunk_commit: gix::ObjectId,
    pub dry_run: bool,
}

/// Renew the complete stale set: re-measure; every value must equal its record exactly.
pub(super) fn rebind(
    ws: &Workspace,
    runtime: &Runtime,
    config: &Config,
    renewal: &Renewal,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Reply, Refused> {
    let Renewal {
        existing,
        requests,
        branch,
        trunk,
        trunk_commit,
        dry_run,
    } = *renewal;
    let repo = &ws.repo;
    for record in existing {
        let Some(standard) = config.standard(&record.standard) else {
            continue;
        };
        if standard.definition_fingerprint() != record.definition_fingerprint
            || standard.limit != record.proposed_limit
        {
            let name = record.standard.clone();
            return Err(refusal(&NotProposed::DefinitionChanged { name }));
        }
        if requests
            .iter()
            .any(|q| q.name == record.standard && q.reason != record.reason)
        {
            let name = record.standard.clone();
            return Err(refusal(&NotProposed::Reworded { name }));
        }
    }
    if dry_run {
        return Ok(batch_result(
            BatchStatus::Rebound,
            existing,
            branch,
            Some(true),
        ));
    }
    let selected: Vec<_> = existing
        .iter()
        .filter_map(|r| config.standard(&r.standard))
        .collect();
    let claims = super::claims(ws, config);
    let ctx = measure::Context {
        ws,
        runtime,
        config,
        selected: &selected,
        claims: &claims,
        progress,
    };
    let options = measure::Options {
        measure_blocked: true,
        evidence: EvidenceUse::Fresh,
        ..measure::Options::default()
    };
    let measured = match measure::measure(&ctx, &options) {
        Ok(measured) => measured,
        Err(error) => return Err(error.refused_by(VERB)),
    };
    // HEAD unreadable or moved since the measurement: nothing is renewed.
    let measured_commit = match repo.head() {
        Ok(Some(head)) if measured.commit.parse::<gix::ObjectId>().ok() == Some(head) => head,
        _ => return Err(refusal(&NotProposed::HeadMovedRenewing)),
    };
    let head = measured_commit.to_string();
    let mut renewed = Vec::new();
    for record in existing {
        let value = measured
            .standards
            .iter()
            .find(|s| s.name == record.standard)
            .and_then(|s| s.value);
        if value != Some(record.measurement) {
            return Err(refusal(&NotProposed::Remeasured {
                name: record.standard.clone(),
                now: value,
                recorded: record.measurement,
            }));
        }
        let mut record = record.clone();
        record.measured_commit = head.clone();
        record.trunk = trunk.to_owned();
        record.trunk_commit = trunk_commit.to_string();
        renewed.push(record);
    }
    let records = commit_renewal(ws, config, branch, measured_commit, &renewed)?;
    Ok(batch_result(BatchStatus::Rebound, &records, branch, None))
}

/// The renewal commit on `head`: the config unchanged, the proposals in its message, the
/// records bound to it (through the journal, as a proposal commit's are).
fn commit_renewal(
    ws: &Workspace,
    config: &Config,
    branch: &str,
    head: gix::ObjectId,
    renewed: &[ProposalRecord],
) -> Result<Vec<ProposalRecord>, Refused> {
    let message = renewal_message(renewed);
    let bound = |commit: gix::ObjectId| store::bound_to(renewed, commit);
    let source = config.source.as_bytes();
    let commit = ConfigCommit {
        kind: crate::commit::RENEWAL,
        branch,
        head,
        base: source,
        content: source,
        message: &message,
        files: &bound,
    };
    crate::commit::config_only_commit(&ws.repo, &commit, &ws.settings.faults)
        .map_err(|e| refusal(&NotProposed::Commit(e)))?;
    crate::proof::clear(&ws.repo);
    store::load(&ws.repo).map_err(|e| {
        refusal(&NotProposed::Internal(format!(
            "the renewal commit was made, but its records cannot be read back ({e}); `discern status` lists the live proposals from the commits"
        )))
    })
}
