//! The signed approval, in the tree: the change the owner approves — the repository, the trunk
//! commit it was judged against, the items and the digest of what it does to the tree — signed
//! with the owner's key, checked as `accept` and CI will check it, and written under
//! `.discern/approvals/` in an approval-only commit on the branch, which every merge strategy
//! carries.

use std::path::Path;

use super::refused::NotApproved;
use super::{Pending, listing};
use crate::approval::{self, Channel, Granted, tree};
use crate::commit::ApprovalCommit;
use crate::git::short;
use crate::result::{Hint, HintId, Refused, Reply};
use crate::workspace::Workspace;

/// Where a signed approval was committed, and how it reaches the pull request (`data` of
/// `approve` beyond the listing).
#[derive(Debug, serde::Serialize)]
pub(super) struct Committed {
    approval_commit: String,
    approval_file: String,
    approval_branch: String,
    repository: String,
    change: String,
    push: String,
}

pub(super) fn in_tree(
    ws: &Workspace,
    pending: &Pending,
    policy: &approval::Policy,
    key: Option<&Path>,
) -> Result<Reply, Refused> {
    let failed = |why: String| Refused::from(NotApproved::NotCommitted { why });
    let Some(repository) = tree::repository_for(policy, &pending.required.changes) else {
        return Err(NotApproved::NoRepository.into());
    };
    let range = tree::Range {
        from: pending.subject.trunk_commit,
        to: pending.subject.head,
    };
    let change = approval::net_change(&pending.repo, range.from, range.to)
        .map_err(|e| failed(e.to_string()))?;
    let config = Some(crate::config::FILE);
    let change_outside = approval::net_change_outside(&pending.repo, range.from, range.to, config)
        .map_err(|e| failed(e.to_string()))?;
    let items = tree::Items {
        repository,
        base_commit: range.from.to_string(),
        change,
        change_outside: Some(change_outside),
        limits: pending
            .required
            .proposals
            .iter()
            .map(|p| tree::LimitItem {
                standard: p.standard.clone(),
                trunk_limit: p.trunk_limit,
                proposed_limit: p.proposed_limit,
                reason: p.reason.clone(),
                token: p.token.clone(),
            })
            .collect(),
        protected: pending.required.protected.clone(),
    };
    let (signer, signature) = super::key::signed(&pending.repo, policy, key, &items.payload())?;
    let approval = tree::TreeApproval::signed(items, signer, signature);
    // Checked as `accept` and CI check it, before anything is committed.
    let found = [approval];
    tree::approving(
        &pending.repo,
        &found,
        Some(policy),
        range,
        &pending.required.changes,
    )
    .map_err(|why| {
        failed(why.map_or_else(
            || "the approval does not verify".to_owned(),
            |w| format!("the approval would not count: {w}"),
        ))
    })?;
    let [approval] = found;
    let Some(receiving) = &pending.branch else {
        return Err(failed(
            "HEAD is detached: name the branch to approve (`discern approve BRANCH`)".to_owned(),
        ));
    };
    let branch = receiving.name.clone();
    if receiving.create {
        crate::commit::create_branch(
            &pending.repo,
            &branch,
            pending.subject.head,
            "branch: discern approve",
        )
        .map_err(|e| failed(e.to_string()))?;
    }
    if let Some(from) = receiving.forward {
        crate::commit::move_branch(
            &pending.repo,
            &branch,
            from,
            pending.subject.head,
            "branch: discern approve (fast-forward to the approved commit)",
        )
        .map_err(|e| failed(e.to_string()))?;
    }
    let message = format!(
        "discern: the owner approves {} change(s)\n\n{}\n",
        pending.required.tokens().len(),
        pending.required.lines().join("\n")
    );
    let content = approval.to_bytes().map_err(|e| failed(e.to_string()))?;
    let commit = ApprovalCommit {
        branch: &branch,
        head: pending.subject.head,
        path: &approval.path(),
        content: &content,
        message: &message,
    };
    let new = crate::commit::approval_commit(&pending.repo, &commit, &ws.settings.faults)
        .map_err(|e| failed(e.to_string()))?;
    let granted = Granted {
        version: approval::VERSION,
        payload: approval.items.payload(),
        channel: Channel::Signed {
            principal: approval.principal.clone(),
            fingerprint: approval.fingerprint.clone(),
            signature: approval.signature.clone(),
        },
    };
    let push = pending
        .push
        .clone()
        .unwrap_or_else(|| format!("push the branch (`git push origin {branch}`)"));
    let committed = Committed {
        approval_commit: new.to_string(),
        approval_file: approval.path(),
        approval_branch: branch.clone(),
        repository: approval.items.repository.clone(),
        change: approval.items.change.clone(),
        push: push.clone(),
    };
    let details = super::Details {
        command: None,
        signed: Some(committed),
    };
    let mut envelope = listing(pending, policy.approval, Some(&granted), details);
    // What comes next is carrying the approval to the pull request, not landing from here.
    envelope.hints.insert(
        0,
        Hint::next_step(
            HintId::AskOwner,
            format!("Carry the approval to the pull request: {push}."),
        ),
    );
    envelope.report.state.push_str(&format!(
        " The approval is {} in commit {} on {branch}: {push}, so the pull request carries it.",
        approval.path(),
        short(&new.to_string())
    ));
    Ok(envelope)
}
