//! The result of a proposal batch: data, the owner listing, hints; and the commit message.

use serde::Serialize;

use super::{ApprovalItem, BatchStatus, ProposalRecord};
use crate::git::short;
use crate::result::{Action, Hint, HintId, Reply, Report, Section};

/// `data` of a proposal batch result.
#[derive(Debug, Serialize)]
struct BatchData<'a> {
    proposal_batch: Batch<'a>,
}

#[derive(Debug, Serialize)]
struct Batch<'a> {
    status: BatchStatus,
    proposals: Vec<Proposal<'a>>,
}

/// A record as the owner approves it: everything recorded, and its approval token.
#[derive(Debug, Serialize)]
struct Proposal<'a> {
    #[serde(flatten)]
    record: &'a ProposalRecord,
    approval_token: &'a str,
}

pub(super) fn proposal_message(records: &[ProposalRecord]) -> String {
    message_with(records, "propose", "for owner approval")
}

/// The message of a renewal commit: the same proposals, measured again on its parent.
pub(super) fn renewal_message(records: &[ProposalRecord]) -> String {
    message_with(
        records,
        "renew",
        "(measured the same on this commit's parent)",
    )
}

fn message_with(records: &[ProposalRecord], verb: &str, what: &str) -> String {
    let mut message = format!(
        "discern: {verb} {} Standard limit{} {what}\n\n",
        records.len(),
        if records.len() == 1 { "" } else { "s" }
    );
    for r in records {
        message.push_str(&format!(
            "- {} ({}): {} -> {} (measured {}): {}\n",
            r.standard,
            r.direction.bound(),
            r.trunk_limit,
            r.proposed_limit,
            r.measurement,
            r.reason
        ));
    }
    message.push('\n');
    message.push_str(&super::trailers::proposal_block(records));
    message
}

pub(super) fn batch_result(
    status: BatchStatus,
    records: &[ProposalRecord],
    branch: &str,
    dry_run: Option<bool>,
) -> Reply {
    let items: Vec<ApprovalItem> = records.iter().map(ApprovalItem::of).collect();
    let proposals: Vec<Proposal> = records
        .iter()
        .zip(&items)
        .map(|(record, item)| Proposal {
            record,
            approval_token: &item.token,
        })
        .collect();
    let commit = records
        .first()
        .map(|r| short(&r.commit))
        .unwrap_or_default();
    let state = match status {
        BatchStatus::Recorded => format!(
            "Recorded {} proposal(s) in config-only commit {commit} on {branch}; they await the owner's exact approval.",
            records.len()
        ),
        BatchStatus::Rebound => format!(
            "Renewed {} stale proposal(s) on the current HEAD of {branch} (no new commit).",
            records.len()
        ),
        BatchStatus::Replaced => format!(
            "Replaced the reasons of {} proposal(s); earlier Proof no longer applies.",
            records.len()
        ),
        BatchStatus::Unchanged => format!(
            "The same {} proposal(s) are already recorded; nothing was measured or written.",
            records.len()
        ),
        BatchStatus::Recovered => format!(
            "Finished an interrupted proposal transaction: {} proposal(s) recorded in commit {commit}.",
            records.len()
        ),
    };
    let mut envelope = Reply::new(
        BatchData {
            proposal_batch: Batch { status, proposals },
        },
        Report {
            state,
            sections: vec![Section {
                table: None,
                title: "Awaiting exact owner approval".to_owned(),
                lines: items.iter().map(ApprovalItem::line).collect(),
            }],
        },
    );
    envelope.dry_run = dry_run;
    let names: Vec<String> = records
        .iter()
        .map(|r| format!("{} {} → {}", r.standard, r.trunk_limit, r.proposed_limit))
        .collect();
    if let Ok(hint) = Hint::owner_attention(
        HintId::ProposalAwaitsOwner,
        &[
            ("total", &records.len().to_string()),
            ("names", &names.join(", ")),
        ],
    ) {
        envelope.hints.push(hint);
    }
    if status != BatchStatus::Unchanged {
        envelope.hints.push(
            Hint::next_step(
                HintId::StandardsPinNeedsDone,
                "Run the gate on the new HEAD: a proposal changes what earlier Proof covered",
            )
            .with_action(Action::new("done")),
        );
    }
    envelope
}
