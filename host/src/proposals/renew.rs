//! Renewing a stale proposal set (`rebound`): re-measure, require exactly the recorded values,
//! move the binding to HEAD; no new commit.

use super::report::batch_result;
use super::why::{NotProposed, refusal};
use super::{BatchStatus, ProposalRecord, ProposalRequest, VERB, store};
use crate::config::Config;
use crate::measure::{self, EvidenceUse};
use crate::result::Envelope;
use crate::result::Refusal;
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
) -> Envelope {
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
            return *refusal(&NotProposed::DefinitionChanged { name });
        }
        if requests
            .iter()
            .any(|q| q.name == record.standard && q.reason != record.reason)
        {
            let name = record.standard.clone();
            return *refusal(&NotProposed::Reworded { name });
        }
    }
    if dry_run {
        return batch_result(BatchStatus::Rebound, existing, branch, Some(true));
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
        Err(error) => return error.refusal(VERB),
    };
    let head = repo
        .head()
        .ok()
        .flatten()
        .map(|h| h.to_string())
        .unwrap_or_default();
    if head != measured.commit {
        return *refusal(&NotProposed::HeadMovedRenewing);
    }
    let mut renewed = Vec::new();
    for record in existing {
        let value = measured
            .standards
            .iter()
            .find(|s| s.name == record.standard)
            .and_then(|s| s.value);
        if value != Some(record.measurement) {
            return *refusal(&NotProposed::Remeasured {
                name: record.standard.clone(),
                now: value,
                recorded: record.measurement,
            });
        }
        let mut record = record.clone();
        record.bound_commit = head.clone();
        record.trunk = trunk.to_owned();
        record.trunk_commit = trunk_commit.to_string();
        renewed.push(record);
    }
    if let Err(e) = store::save(repo, &renewed) {
        return *refusal(&NotProposed::StoreUnwritten(e));
    }
    crate::proof::clear(repo);
    batch_result(BatchStatus::Rebound, &renewed, branch, None)
}
