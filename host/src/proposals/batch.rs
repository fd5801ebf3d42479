//! One proposal batch: validate all, decide against existing state before any effect, then
//! measure every selected Standard once and make one config-only commit (ADR 0405).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::json;

use super::ProposeRequest;
use super::renew::rebind;
use super::report::{batch_result, proposal_message};
use super::{
    BatchStatus, ProposalRecord, ProposalRequest, VERB, evidence_paths, reason, refusal,
    stale_reasons, store,
};
use crate::commit::{self, ConfigCommit, Recovery};
use crate::config::{Config, FILE};
use crate::preflight::{self, Cleanliness};
use crate::result::{Envelope, ErrorSlug, Report};
use crate::runtime::Runtime;
use crate::snapshot::Repo;
use crate::standards::{self, EvidenceUse, MeasureOptions, Measurement, Verdict};
use crate::workspace::Workspace;

/// `discern standards propose`: one batch, all or nothing.
pub fn propose(
    ws: &Workspace,
    runtime: &Runtime,
    request: &ProposeRequest,
    progress: &(dyn Fn(&str) + Sync),
) -> Envelope {
    let repo = &ws.repo;
    let (requests, dry_run) = (&request.proposals[..], request.dry_run);
    let faults = &ws.settings.faults;
    // A crash in an earlier call is finished (or unwound) first; a dry run only reports it.
    let pending = dry_run
        .then(|| preflight::pending_transaction(repo))
        .flatten();
    let recovered = match dry_run {
        true => None,
        false => match preflight::recover(VERB, repo) {
            Ok(recovered) => recovered,
            Err(refusal) => return *refusal,
        },
    };

    // 1. Validate every request before any effect.
    if requests.is_empty() {
        return refusal(
            ErrorSlug::InvalidValue,
            "The batch is empty; name at least one Standard with a reason.",
            "Pass [{\"name\": \"...\", \"reason\": \"...\"}].",
        );
    }
    let mut seen = BTreeSet::new();
    let duplicates: Vec<&str> = requests
        .iter()
        .filter(|r| !seen.insert(r.name.as_str()))
        .map(|r| r.name.as_str())
        .collect();
    if !duplicates.is_empty() {
        return refusal(
            ErrorSlug::InvalidValue,
            format!("The batch names {} more than once.", duplicates.join(", ")),
            "Name each Standard once.",
        );
    }
    let bad_reasons: Vec<String> = requests
        .iter()
        .flat_map(|r| {
            reason::problems(&r.reason)
                .into_iter()
                .map(move |p| format!("{}: {p}", r.name))
        })
        .collect();
    if !bad_reasons.is_empty() {
        return refusal(
            ErrorSlug::InvalidValue,
            format!("Invalid reason: {}.", bad_reasons.join("; ")),
            "Give each proposal a one-paragraph technical reason (at most 500 characters, no secrets, no claim of approval).",
        );
    }
    let config = match crate::preflight::load_config(ws, VERB) {
        Ok(Some(config)) => config,
        Ok(None) => {
            return refusal(
                ErrorSlug::UnknownStandard,
                "There is no discern.toml, so there is nothing to propose.",
                "Configure Standards first (`discern init`).",
            );
        }
        Err(refusal) => return *refusal,
    };
    let unknown: Vec<&str> = requests
        .iter()
        .filter(|r| config.standard(&r.name).is_none())
        .map(|r| r.name.as_str())
        .collect();
    if !unknown.is_empty() {
        let configured: Vec<&str> = config.standards.iter().map(|s| s.name.as_str()).collect();
        return refusal(
            ErrorSlug::UnknownStandard,
            format!(
                "No Standard named {}; the configured Standards are: {}.",
                unknown.join(", "),
                configured.join(", ")
            ),
            "Name configured Standards.",
        );
    }
    let trunk = config
        .trunk(ws.settings.trunk_override.as_deref())
        .to_owned();
    let clean = match preflight::observe_clean(VERB, repo, Cleanliness::Full) {
        Ok(clean) => clean,
        Err(refusal) => return *refusal,
    };
    let branch = match commit::preflight(repo) {
        Ok(branch) => branch,
        Err(e) => {
            return refusal(
                ErrorSlug::PreconditionFailed,
                format!("Cannot propose: {e}."),
                "Propose from an effort branch with a clean tree.",
            );
        }
    };
    if branch == trunk {
        return refusal(
            ErrorSlug::PreconditionFailed,
            format!(
                "{branch} is the trunk; limits are proposed on an effort branch, never on the trunk."
            ),
            "Start an effort (`discern start`) or check out your work branch, then propose there.",
        );
    }
    if let Err(e) = clean {
        return preflight::clean_refusal(VERB, repo, &e);
    }
    let Some(trunk_commit) = repo.branch_commit(&trunk).ok().flatten() else {
        return refusal(
            ErrorSlug::PreconditionFailed,
            format!("The trunk {trunk} cannot be read, so no trunk limit can be verified."),
            "Fetch the trunk or set DISCERN_TRUNK, then propose again.",
        );
    };
    let trunk_config = match repo
        .file_at(trunk_commit, FILE)
        .ok()
        .flatten()
        .and_then(|b| String::from_utf8(b).ok())
        .map(|t| Config::parse_tolerant(&t))
    {
        Some(Ok(config)) => config,
        _ => {
            return refusal(
                ErrorSlug::PreconditionFailed,
                format!(
                    "The trunk {trunk} has no readable discern.toml, so there is no trunk limit to propose against."
                ),
                "Land the Standards on the trunk first.",
            );
        }
    };
    let mut trunk_limits = BTreeMap::new();
    for request in requests {
        match trunk_config.standard(&request.name) {
            Some(standard) => {
                trunk_limits.insert(request.name.clone(), standard.limit);
            }
            None => {
                return refusal(
                    ErrorSlug::PreconditionFailed,
                    format!(
                        "Standard {} is not on the trunk {trunk}: a new Standard has no trunk limit to breach.",
                        request.name
                    ),
                    "Set the new Standard's limit to its measured value instead.",
                );
            }
        }
    }

    // 2. A recovered transaction that was exactly this batch: done.
    if let Some(Recovery::Completed(journal)) = &recovered
        && journal.kind == "proposal"
    {
        let records = store::load(repo).unwrap_or_default();
        if same_batch(&records, requests) {
            return batch_result(BatchStatus::Recovered, &records, &branch, None);
        }
    }

    // 3. Existing state decides before anything is measured or written.
    let existing = match store::load(repo) {
        Ok(existing) => existing,
        Err(e) => {
            return refusal(
                ErrorSlug::ProposalStale,
                e.to_string(),
                "Fix or remove the proposal store named above.",
            );
        }
    };
    if !existing.is_empty() {
        let names: BTreeSet<&str> = existing.iter().map(|r| r.standard.as_str()).collect();
        let requested: BTreeSet<&str> = requests.iter().map(|r| r.name.as_str()).collect();
        let stale: Vec<Vec<String>> = existing
            .iter()
            .map(|r| stale_reasons(repo, Some(&config), &trunk, r))
            .collect();
        let all_active = stale.iter().all(Vec::is_empty);
        let all_stale = stale.iter().all(|s| !s.is_empty());
        if names != requested || !(all_active || all_stale) {
            let state: Vec<String> = existing
                .iter()
                .zip(&stale)
                .map(|(r, s)| {
                    format!(
                        "{} ({})",
                        r.standard,
                        if s.is_empty() {
                            "active".to_owned()
                        } else {
                            format!("stale: {}", s.join("; "))
                        }
                    )
                })
                .collect();
            return refusal(
                ErrorSlug::ProposalStale,
                format!(
                    "This worktree already has proposals: {}. A new batch must be exactly the existing set; nothing was measured or written.",
                    state.join(", ")
                ),
                "Repeat the existing batch (to renew or re-word it), or have the owner resolve the existing proposals first.",
            );
        }
        if all_active {
            let unchanged = requests.iter().all(|q| {
                existing
                    .iter()
                    .any(|r| r.standard == q.name && r.reason == q.reason)
            });
            if unchanged {
                return batch_result(BatchStatus::Unchanged, &existing, &branch, None);
            }
            if dry_run {
                return batch_result(BatchStatus::Replaced, &existing, &branch, Some(true));
            }
            let replaced: Vec<ProposalRecord> = existing
                .iter()
                .map(|r| {
                    let mut r = r.clone();
                    if let Some(q) = requests.iter().find(|q| q.name == r.standard) {
                        r.reason = q.reason.clone();
                    }
                    r
                })
                .collect();
            if let Err(e) = store::save(repo, &replaced) {
                return refusal(
                    ErrorSlug::ProposalFailed,
                    format!("Cannot write the proposal store: {e}"),
                    "Check the git admin directory's permissions and try again.",
                );
            }
            crate::proof::clear(repo);
            return batch_result(BatchStatus::Replaced, &replaced, &branch, None);
        }
        return rebind(
            ws,
            runtime,
            &config,
            &existing,
            requests,
            &branch,
            &trunk,
            trunk_commit,
            dry_run,
            progress,
        );
    }

    // 4. A new batch.
    for request in requests {
        let (Some(standard), Some(trunk_limit)) = (
            config.standard(&request.name),
            trunk_limits.get(&request.name),
        ) else {
            continue;
        };
        if standard.limit != *trunk_limit {
            return refusal(
                ErrorSlug::PreconditionFailed,
                format!(
                    "Standard {} already moved its limit on this branch ({} → {}); a proposal starts from the trunk's limit.",
                    request.name, trunk_limit, standard.limit
                ),
                "Restore the trunk's limit in discern.toml and commit, then propose.",
            );
        }
    }
    let selected: Vec<_> = requests
        .iter()
        .filter_map(|r| config.standard(&r.name))
        .collect();
    if dry_run {
        let mut envelope = Envelope::ok(
            VERB,
            json!({ "proposal_batch": { "status": "preview", "proposals": requests } }),
            Report {
                state: format!(
                    "Dry run: {} proposal(s) validated; nothing was measured or written.",
                    requests.len()
                ),
                sections: Vec::new(),
            },
        );
        envelope.dry_run = Some(true);
        envelope.advisories.extend(pending);
        return envelope;
    }
    let measured = match standards::measure_with(
        ws,
        runtime,
        &config,
        &selected,
        &MeasureOptions {
            evidence: EvidenceUse::Fresh,
            ..MeasureOptions::default()
        },
        &super::claims(ws, &config),
        progress,
    ) {
        Ok(measured) => measured,
        Err(refusal) => return *refusal,
    };
    let head: gix::ObjectId = match measured.commit.parse() {
        Ok(head) => head,
        Err(_) => {
            return refusal(
                ErrorSlug::Internal,
                "the measured commit id is unreadable",
                "Report this as a bug in discern.",
            );
        }
    };
    if repo.head().ok().flatten() != Some(head) {
        return refusal(
            ErrorSlug::ProposalStale,
            "HEAD moved during measurement; nothing was written.",
            "Propose again on the new HEAD.",
        );
    }
    let changed = match changed_since_trunk(repo, trunk_commit, head) {
        Ok(changed) => changed,
        Err(e) => {
            return refusal(
                ErrorSlug::PreconditionFailed,
                format!("Cannot read the changes since the trunk: {e}"),
                "Check the repository, then propose again.",
            );
        }
    };
    let mut records = Vec::new();
    for request in requests {
        let Some(standard) = config.standard(&request.name) else {
            continue;
        };
        let Some(result) = measured.standards.iter().find(|s| s.name == request.name) else {
            continue;
        };
        let trunk_limit = trunk_limits[&request.name];
        let Some(value) = result
            .value
            .filter(|_| result.measurement == Measurement::Measured)
        else {
            return refusal(
                ErrorSlug::PreconditionFailed,
                format!(
                    "Standard {} could not be measured ({}); nothing was written.",
                    request.name,
                    result.note.as_deref().unwrap_or("see diagnostics")
                ),
                "Fix the measurement first (`discern standards`).",
            );
        };
        if Verdict::judge(standard.direction, trunk_limit, value) != Verdict::Regressed {
            return refusal(
                ErrorSlug::PreconditionFailed,
                format!(
                    "Standard {} measures {value}, which meets the trunk's {} {trunk_limit}: there is no breach to propose.",
                    request.name,
                    standard.direction.bound()
                ),
                "Propose only Standards this work breached.",
            );
        }
        let read_set = measured.read_sets.of(&request.name);
        let evidence = evidence_paths(&changed, &read_set, standard.inputs.as_deref());
        if evidence.is_empty() {
            return refusal(
                ErrorSlug::PreconditionFailed,
                format!(
                    "Standard {}'s breach cannot be attributed to this work: no path changed since the trunk is among what its producer read.",
                    request.name
                ),
                "Move the metric back instead; a proposal must come from this work's own changes.",
            );
        }
        records.push(ProposalRecord {
            standard: request.name.clone(),
            commit: String::new(),
            bound_commit: String::new(),
            measured_commit: head.to_string(),
            definition_fingerprint: standard.definition_fingerprint(),
            trunk: trunk.clone(),
            trunk_commit: trunk_commit.to_string(),
            direction: standard.direction,
            trunk_limit,
            proposed_limit: value,
            measurement: value,
            delta: value - trunk_limit,
            reason: request.reason.clone(),
            evidence_paths: evidence,
        });
    }
    let pins: Vec<standards::pin::Pinned> = records
        .iter()
        .map(|r| standards::pin::Pinned {
            name: r.standard.clone(),
            from: r.trunk_limit,
            to: r.proposed_limit,
            measured: r.measurement,
        })
        .collect();
    let content = match standards::pin::edit_limits(&config, &pins) {
        Ok(content) => content,
        Err(e) => return refusal(ErrorSlug::Internal, e, "Report this as a bug in discern."),
    };
    let message = proposal_message(&records);
    // The records are bound to the proposal commit once it exists; the journal carries them.
    let bound = |commit: gix::ObjectId| {
        let mut records = records.clone();
        for record in &mut records {
            record.commit = commit.to_string();
            record.bound_commit = commit.to_string();
        }
        store::state_file(&records).map(|file| vec![file])
    };
    let commit_result = commit::config_only_commit(
        repo,
        &ConfigCommit {
            kind: "proposal",
            branch: &branch,
            head,
            content: content.as_bytes(),
            message: &message,
            files: &bound,
        },
        faults,
    );
    if let Err(e) = commit_result {
        let slug = if matches!(e, commit::CommitError::Moved { .. }) {
            ErrorSlug::ProposalStale
        } else {
            ErrorSlug::ProposalFailed
        };
        return refusal(
            slug,
            format!("Nothing was proposed: {e}."),
            "Run the same batch again; a half-finished transaction is finished or unwound first.",
        );
    }
    crate::proof::clear(repo);
    let records = store::load(repo).unwrap_or_default();
    batch_result(BatchStatus::Recorded, &records, &branch, None)
}

fn same_batch(records: &[ProposalRecord], requests: &[ProposalRequest]) -> bool {
    records.len() == requests.len()
        && requests.iter().all(|q| {
            records
                .iter()
                .any(|r| r.standard == q.name && r.reason == q.reason)
        })
}

/// Paths changed between the merge base of trunk and HEAD, and HEAD.
fn changed_since_trunk(
    repo: &Repo,
    trunk: gix::ObjectId,
    head: gix::ObjectId,
) -> Result<Vec<String>, String> {
    let base = repo
        .local()
        .merge_base(trunk, head)
        .map_err(|e| e.to_string())?
        .map(|id| id.detach())
        .ok_or_else(|| "the branch and the trunk have no common ancestor".to_owned())?;
    let before = repo.snapshot(base).map_err(|e| e.to_string())?;
    let after = repo.snapshot(head).map_err(|e| e.to_string())?;
    Ok(crate::snapshot::changed_paths(Some(&before), &after))
}
