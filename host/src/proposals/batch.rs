//! One proposal batch: validate all, decide against existing state before any effect, then
//! measure every selected Standard once and make one config-only commit (ADR 0405).

use std::collections::BTreeSet;

use serde::Serialize;

use super::ProposeRequest;
use super::renew::{Renewal, rebind};
use super::report::{batch_result, proposal_message};
use super::target::{Target, configured, target, validate};
use super::why::{NotProposed, refusal};
use super::{
    BatchStatus, LiveError, ProposalRecord, ProposalRequest, VERB, evidence_paths, stale_reasons,
    store,
};
use crate::commit::{self, ConfigCommit, Recovery};
use crate::config::Config;
use crate::git::Repo;
use crate::measure::{self, EvidenceUse, Measurement, Verdict};
use crate::preflight::{self, Prepared};
use crate::result::{Refused, Reply, Report};
use crate::runtime::Runtime;
use crate::standards;
use crate::workspace::Workspace;

/// `discern standards propose`: one batch, all or nothing.
pub(crate) fn propose(
    prepared: &Prepared,
    runtime: &Runtime,
    request: &ProposeRequest,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Reply, Refused> {
    let (ws, repo) = (&prepared.ws, &prepared.ws.repo);
    let (requests, dry_run) = (&request.proposals[..], request.dry_run);
    // A crash in an earlier call was finished (or unwound) by the table's preflight; a dry run
    // only reports it.
    let recovered = &prepared.recovered;
    let mut cleared = None;
    let decided = validate(requests)
        .and_then(|()| configured(prepared, requests))
        .and_then(|config| Ok((target(prepared, &config, requests)?, config)))
        .and_then(|(target, config)| {
            if !dry_run {
                cleared = clear_orphans(repo, &target.trunk)?;
            }
            // A recovered transaction that was exactly this batch: done.
            if let Some(Recovery::Completed(journal)) = recovered
                && journal.kind == "proposal"
            {
                let records = store::load(repo).map_err(|e| {
                    refusal(&NotProposed::Internal(format!(
                        "whether the recovered proposal transaction was this batch cannot be told: {e}"
                    )))
                })?;
                if same_batch(&records, requests) {
                    let status = BatchStatus::Recovered;
                    return Ok(batch_result(status, &records, &target.branch, None));
                }
            }
            let batch = Batch {
                ws,
                config: &config,
                requests,
                target: &target,
                dry_run,
            };
            match existing_state(&batch, runtime, progress)? {
                Some(decided) => Ok(decided),
                None => new_batch(&batch, runtime, progress),
            }
        });
    let Some(message) = cleared else {
        return decided;
    };
    let steps = [Cleared {
        label: "proposals",
        outcome: "ok",
        note: &message,
    }];
    match decided {
        Ok(reply) => {
            let mut reply = reply.with_steps(steps);
            reply.advisories.push(message);
            Ok(reply)
        }
        Err(refused) => {
            let mut refused = refused.with_steps(steps);
            refused.advisories.push(message);
            Err(refused)
        }
    }
}

/// Forget the records whose commit was reset or rebased away, so they never wedge a branch;
/// what was forgotten, if anything.
fn clear_orphans(repo: &Repo, trunk: &str) -> Result<Option<String>, Refused> {
    let failed = |e: LiveError| refusal(&NotProposed::OrphansUncleared(e));
    let live = super::live(repo, trunk).map_err(failed)?;
    live.clear_orphans(repo).map_err(|e| failed(e.into()))
}

/// The step that says what clearing the proposals of a landed batch did.
#[derive(Serialize)]
struct Cleared<'a> {
    label: &'static str,
    outcome: &'static str,
    note: &'a str,
}

/// `data` of a dry run: the batch as it would be proposed.
#[derive(Serialize)]
struct Preview<'a> {
    proposal_batch: PreviewBatch<'a>,
}

#[derive(Serialize)]
struct PreviewBatch<'a> {
    status: &'static str,
    proposals: &'a [ProposalRequest],
}

/// One batch being decided.
struct Batch<'a> {
    ws: &'a Workspace,
    config: &'a Config,
    requests: &'a [ProposalRequest],
    target: &'a Target,
    dry_run: bool,
}

/// Existing proposals decide before anything is measured or written: the same set is
/// unchanged, re-worded (`replaced`) or renewed (`rebound`); anything else is refused.
/// `None`: there are none, so this is a new batch.
fn existing_state(
    batch: &Batch,
    runtime: &Runtime,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Option<Reply>, Refused> {
    let Batch {
        ws,
        config,
        requests,
        target,
        dry_run,
    } = batch;
    let repo = &ws.repo;
    let existing = super::live(repo, &target.trunk)
        .map_err(|e| refusal(&NotProposed::LiveUnreadable(e)))?
        .records;
    if existing.is_empty() {
        return Ok(None);
    }
    let stale: Vec<Vec<String>> = existing
        .iter()
        .map(|r| stale_reasons(repo, Some(config), &target.trunk, r))
        .collect();
    let all_active = stale.iter().all(Vec::is_empty);
    let all_stale = stale.iter().all(|s| !s.is_empty());
    let names: BTreeSet<&str> = existing.iter().map(|r| r.standard.as_str()).collect();
    let requested: BTreeSet<&str> = requests.iter().map(|r| r.name.as_str()).collect();
    if names != requested || !(all_active || all_stale) {
        return Err(other_proposals(&existing, &stale));
    }
    if !all_active {
        let renewal = Renewal {
            existing: &existing,
            requests,
            branch: &target.branch,
            trunk: &target.trunk,
            trunk_commit: target.trunk_commit,
            dry_run: *dry_run,
        };
        return Ok(Some(rebind(ws, runtime, config, &renewal, progress)?));
    }
    let unchanged = requests.iter().all(|q| {
        existing
            .iter()
            .any(|r| r.standard == q.name && r.reason == q.reason)
    });
    let branch = &target.branch;
    if unchanged {
        return Ok(Some(batch_result(
            BatchStatus::Unchanged,
            &existing,
            branch,
            None,
        )));
    }
    if *dry_run {
        return Ok(Some(batch_result(
            BatchStatus::Replaced,
            &existing,
            branch,
            Some(true),
        )));
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
    store::save(repo, &replaced).map_err(|e| refusal(&NotProposed::StoreUnwritten(e)))?;
    crate::proof::clear(repo);
    Ok(Some(batch_result(
        BatchStatus::Replaced,
        &replaced,
        branch,
        None,
    )))
}

/// The refusal for a batch that is not exactly the existing (all active or all stale) set.
fn other_proposals(existing: &[ProposalRecord], stale: &[Vec<String>]) -> Refused {
    let state = existing
        .iter()
        .zip(stale)
        .map(|(r, s)| (r.standard.clone(), s.clone()))
        .collect();
    refusal(&NotProposed::OtherProposals(state))
}

/// A new batch: every limit still the trunk's, measured fresh on the clean HEAD, each breach
/// attributed to this work, then one config-only commit binding every record to it.
fn new_batch(
    batch: &Batch,
    runtime: &Runtime,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Reply, Refused> {
    let Batch {
        ws,
        config,
        requests,
        target,
        dry_run,
    } = batch;
    for request in requests.iter() {
        let (Some(standard), Some(trunk_limit)) = (
            config.standard(&request.name),
            target.trunk_limits.get(&request.name),
        ) else {
            continue;
        };
        if standard.limit != *trunk_limit {
            return Err(refusal(&NotProposed::LimitMoved {
                name: request.name.clone(),
                trunk_limit: *trunk_limit,
                limit: standard.limit,
            }));
        }
    }
    if *dry_run {
        let mut envelope = Reply::new(
            Preview {
                proposal_batch: PreviewBatch {
                    status: "preview",
                    proposals: requests,
                },
            },
            Report {
                state: format!(
                    "Dry run: {} proposal(s) validated; nothing was measured or written.",
                    requests.len()
                ),
                sections: Vec::new(),
            },
        );
        envelope.dry_run = Some(true);
        envelope
            .advisories
            .extend(preflight::pending_transaction(&ws.repo));
        return Ok(envelope);
    }
    let (head, records) = measure_records(batch, runtime, progress)?;
    commit_batch(batch, head, &records)
}

/// Measure the batch fresh and turn each breach into its record (measured on `head`).
fn measure_records(
    batch: &Batch,
    runtime: &Runtime,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<(gix::ObjectId, Vec<ProposalRecord>), Refused> {
    let Batch {
        ws,
        config,
        requests,
        target,
        ..
    } = batch;
    let repo = &ws.repo;
    let selected: Vec<_> = requests
        .iter()
        .filter_map(|r| config.standard(&r.name))
        .collect();
    let options = measure::Options {
        evidence: EvidenceUse::Fresh,
        ..measure::Options::default()
    };
    let claims = super::claims(ws, config);
    let ctx = measure::Context {
        ws,
        runtime,
        config,
        selected: &selected,
        claims: &claims,
        progress,
    };
    let measured = measure::measure(&ctx, &options).map_err(|e| e.refused_by(VERB))?;
    let head: gix::ObjectId = measured.commit.parse().map_err(|_| {
        let why = "the measured commit id is unreadable".to_owned();
        refusal(&NotProposed::Internal(why))
    })?;
    if repo.head().ok().flatten() != Some(head) {
        return Err(refusal(&NotProposed::HeadMoved));
    }
    let changed = changed_since_trunk(repo, target.trunk_commit, head)
        .map_err(|e| refusal(&NotProposed::ChangesUnreadable(e)))?;
    let mut records = Vec::new();
    for request in requests.iter() {
        let Some(standard) = config.standard(&request.name) else {
            continue;
        };
        let Some(result) = measured.standards.iter().find(|s| s.name == request.name) else {
            continue;
        };
        let read_sets = measured.read_sets.of(&request.name);
        let evidence = evidence_paths(&changed, &read_sets, standard.inputs.as_deref());
        let evidence = behind_the_maximum(standard, result, evidence);
        let trunk_limit = target.trunk_limits[&request.name];
        let (value, proposed) = breach(standard, result, trunk_limit, &evidence)?;
        records.push(ProposalRecord {
            standard: request.name.clone(),
            commit: String::new(),
            bound_commit: String::new(),
            measured_commit: head.to_string(),
            definition_fingerprint: standard.definition_fingerprint(),
            trunk: target.trunk.clone(),
            trunk_commit: target.trunk_commit.to_string(),
            direction: standard.direction,
            trunk_limit,
            proposed_limit: proposed,
            measurement: value,
            delta: proposed - trunk_limit,
            reason: request.reason.clone(),
            evidence_paths: evidence,
        });
    }
    Ok((head, records))
}

/// For a maximum whose finding names its file (the longest file, the largest): the changed
/// files its new findings name, the one file the reading is; else `evidence` as it is.
fn behind_the_maximum(
    standard: &crate::config::StandardDef,
    result: &measure::StandardResult,
    evidence: Vec<String>,
) -> Vec<String> {
    if !crate::builtins::names_its_file(&standard.producer.label(), &standard.metric) {
        return evidence;
    }
    let Some(findings) = &result.findings else {
        return evidence;
    };
    let named: Vec<String> = evidence
        .iter()
        .filter(|p| {
            findings
                .new
                .iter()
                .any(|f| f.path.as_deref() == Some(p.as_str()))
        })
        .cloned()
        .collect();
    match named.is_empty() {
        true => evidence,
        false => named,
    }
}

/// The measured value of a real breach this work caused and the limit that admits it, or why it
/// is not one. A swap is proposed as the limit that has room for its new findings (the value
/// plus the fixed ones): what the count would read had nothing been fixed.
fn breach(
    standard: &crate::config::StandardDef,
    result: &measure::StandardResult,
    trunk_limit: f64,
    evidence: &[String],
) -> Result<(f64, f64), Refused> {
    let name = standard.name.clone();
    let Some(value) = result
        .value
        .filter(|_| result.measurement == Measurement::Measured)
    else {
        let note = result.note.clone();
        return Err(refusal(&NotProposed::Unmeasured { name, note }));
    };
    let direction = standard.direction;
    // An inherited breach (the baseline breaches too, under the same producer) is the owner's
    // re-baseline: no change of this work caused it, so none is attributed.
    let inherited = result.verdict == Some(Verdict::Inherited);
    let swapped = result.verdict == Some(Verdict::Swapped);
    if !inherited && !swapped && Verdict::judge(direction, trunk_limit, value) != Verdict::Regressed
    {
        return Err(refusal(&NotProposed::NoBreach {
            name,
            value,
            direction,
            trunk_limit,
        }));
    }
    if evidence.is_empty() && !inherited {
        return Err(refusal(&NotProposed::Unattributed { name }));
    }
    if !swapped {
        return Ok((value, value));
    }
    // A swap is only ever judged with a baseline, so its fixed findings are known.
    match result.findings.as_ref().and_then(|f| f.fixed_total) {
        Some(fixed) => Ok((value, value + fixed as f64)),
        None => {
            let note = Some("the swap's fixed findings are unknown".to_owned());
            Err(refusal(&NotProposed::Unmeasured { name, note }))
        }
    }
}

/// One config-only commit setting every proposed limit, its records bound to it.
fn commit_batch(
    batch: &Batch,
    head: gix::ObjectId,
    records: &[ProposalRecord],
) -> Result<Reply, Refused> {
    let repo = &batch.ws.repo;
    let branch = &batch.target.branch;
    let pins: Vec<standards::pin::Pinned> = records
        .iter()
        .map(|r| standards::pin::Pinned {
            name: r.standard.clone(),
            from: r.trunk_limit,
            to: r.proposed_limit,
            measured: r.measurement,
        })
        .collect();
    let content = standards::pin::edit_limits(batch.config, &pins)
        .map_err(|e| refusal(&NotProposed::Internal(e)))?;
    let message = proposal_message(records);
    // The records are bound to the proposal commit once it exists; the journal carries them.
    let bound = |commit: gix::ObjectId| store::bound_to(records, commit);
    let commit = ConfigCommit {
        kind: "proposal",
        branch,
        head,
        base: batch.config.source.as_bytes(),
        content: content.as_bytes(),
        message: &message,
        files: &bound,
    };
    if let Err(e) = commit::config_only_commit(repo, &commit, &batch.ws.settings.faults) {
        return Err(refusal(&NotProposed::Commit(e)));
    }
    crate::proof::clear(repo);
    let records = store::load(repo).map_err(|e| {
        refusal(&NotProposed::Internal(format!(
            "the proposal commit was made, but its records cannot be read back ({e}); `discern status` lists the live proposals from the commits"
        )))
    })?;
    Ok(batch_result(BatchStatus::Recorded, &records, branch, None))
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
