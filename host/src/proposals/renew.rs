//! Renewing a stale proposal set (`rebound`): re-measure, require exactly the recorded values,
//! move the binding to HEAD; no new commit.

use super::report::batch_result;
use super::{BatchStatus, ProposalRecord, ProposalRequest, refusal, store};
use crate::config::Config;
use crate::result::{Envelope, ErrorSlug};
use crate::runtime::Runtime;
use crate::standards::{self, EvidenceUse, MeasureOptions};
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
            return refusal(
                ErrorSlug::ProposalStale,
                format!(
                    "Proposal {} cannot be renewed: its definition or limit changed since it was recorded.",
                    record.standard
                ),
                "Restore the proposal's limit and definition, or have the owner resolve it.",
            );
        }
        if requests
            .iter()
            .any(|q| q.name == record.standard && q.reason != record.reason)
        {
            return refusal(
                ErrorSlug::ProposalStale,
                format!(
                    "Proposal {} is stale; renew it with its recorded reason first, then re-word it.",
                    record.standard
                ),
                "Repeat the batch with the recorded reasons.",
            );
        }
    }
    if dry_run {
        return batch_result(BatchStatus::Rebound, existing, branch, Some(true));
    }
    let selected: Vec<_> = existing
        .iter()
        .filter_map(|r| config.standard(&r.standard))
        .collect();
    let measured = match standards::measure_with(
        ws,
        runtime,
        config,
        &selected,
        &MeasureOptions {
            measure_blocked: true,
            evidence: EvidenceUse::Fresh,
            ..MeasureOptions::default()
        },
        &super::claims(ws, config),
        progress,
    ) {
        Ok(measured) => measured,
        Err(refusal) => return *refusal,
    };
    let head = repo
        .head()
        .ok()
        .flatten()
        .map(|h| h.to_string())
        .unwrap_or_default();
    if head != measured.commit {
        return refusal(
            ErrorSlug::ProposalStale,
            "HEAD moved during measurement; nothing was written.",
            "Renew again on the new HEAD.",
        );
    }
    let mut renewed = Vec::new();
    for record in existing {
        let value = measured
            .standards
            .iter()
            .find(|s| s.name == record.standard)
            .and_then(|s| s.value);
        if value != Some(record.measurement) {
            return refusal(
                ErrorSlug::ProposalStale,
                format!(
                    "Proposal {} cannot be renewed: it measures {} now, not the recorded {}; nothing was written.",
                    record.standard,
                    value.map_or("nothing".to_owned(), |v| v.to_string()),
                    record.measurement
                ),
                "Move the metric back to the recorded value, or have the owner resolve the proposal.",
            );
        }
        let mut record = record.clone();
        record.bound_commit = head.clone();
        record.trunk = trunk.to_owned();
        record.trunk_commit = trunk_commit.to_string();
        renewed.push(record);
    }
    if let Err(e) = store::save(repo, &renewed) {
        return refusal(
            ErrorSlug::ProposalFailed,
            format!("Cannot write the proposal store: {e}"),
            "Check the git admin directory's permissions and try again.",
        );
    }
    crate::proof::clear(repo);
    batch_result(BatchStatus::Rebound, &renewed, branch, None)
}
