//! The owner's approval of what `accept` derived needs it: recorded on HEAD (and verified,
//! its signature again where the trunk requires one), or — where the trunk allows the
//! interactive channels — given now on this terminal or through the MCP client's
//! elicitation, bound to HEAD and the items and checked again after the answer. Tokens the
//! caller passes never approve.

use serde::Serialize;

use super::{AcceptRequest, Landing, refuse};
use crate::approval::{self, Channel, Granted, Subject};
use crate::config::ApprovalPolicy;
use crate::git::short;
use crate::proposals::required::{self, Required};
use crate::result::{Action, ErrorSlug, HintId, Refused, Section, WithNext};
use crate::workspace::Workspace;

/// The owner's approval of exactly `required`: recorded (and verified) on HEAD, or, where the
/// trunk allows it, given now on this terminal. Tokens the caller passes never approve.
pub(super) fn approve(
    ws: &Workspace,
    request: &AcceptRequest,
    landing: &Landing,
    required: &Required,
) -> Result<Granted, Refused> {
    let repo = &ws.repo;
    required.explained("prove the new commit, then accept.")?;
    let stale = required.stale(repo, landing.head, &landing.trunk);
    if !stale.is_empty() {
        return Err(refuse(
            ErrorSlug::ProposalStale,
            format!("Stale proposals authorize nothing: {}.", stale.join(", ")),
            HintId::StandardsPropose,
            "Renew them (repeat the same proposal batch), prove the new commit, then accept.",
        )
        .with_next(Action::new("standards propose")));
    }
    let policy = approval::policy(repo, landing.trunk_commit).map_err(|e| {
        refuse(
            ErrorSlug::CannotTell,
            format!("How the owner approves cannot be told: {e}."),
            HintId::AskOwner,
            "Ask the owner to fix [acceptance] on the trunk, then accept again",
        )
    })?;
    let subject = Subject {
        trunk: landing.trunk.clone(),
        trunk_commit: landing.trunk_commit,
        head: landing.head,
        tokens: required.tokens(),
    };
    // The policy an approval in the tree is held to: the trunk tip's, anchored.
    if let Some(anchored) = approval::anchored_policy(repo, landing.trunk_commit)
        && let Some(granted) = in_tree(repo, &anchored, landing, required)
    {
        return Ok(granted);
    }
    let why = match approval::verified(repo, &policy, &subject) {
        Ok(granted) => return Ok(granted),
        Err(why) => why,
    };
    if policy.approval == ApprovalPolicy::Interactive
        && let Some(channel) = asked(ws, landing, required)?
    {
        return Ok(Granted {
            version: approval::VERSION,
            payload: subject.payload(),
            channel,
        });
    }
    Err(awaiting_approval(ws, request, &policy, required, &why))
}

/// A signed approval the branch carries in its tree (`discern approve`'s approval commit),
/// added since the trunk commit, for exactly these items and the net change since the trunk
/// commit, in the repository the trunk names, verified under the trunk tip's policy.
fn in_tree(
    repo: &crate::git::Repo,
    policy: &approval::Policy,
    landing: &Landing,
    required: &Required,
) -> Option<Granted> {
    let approvals = approval::tree::added(repo, landing.trunk_commit, landing.head).ok()?;
    if approvals.is_empty() {
        return None;
    }
    let range = approval::tree::Range {
        from: landing.trunk_commit,
        to: landing.head,
    };
    let found =
        approval::tree::approving(repo, &approvals, Some(policy), range, &required.changes).ok()?;
    Some(Granted {
        version: approval::VERSION,
        payload: found.items.payload(),
        channel: Channel::Signed {
            principal: found.principal.clone(),
            fingerprint: found.fingerprint.clone(),
            signature: found.signature.clone(),
        },
    })
}

/// The interactive channels, where the trunk allows them: this terminal, else the MCP
/// client's elicitation. `None` when neither can ask; a refusal when the owner said no or
/// anything changed while they were asked.
fn asked(
    ws: &Workspace,
    landing: &Landing,
    required: &Required,
) -> Result<Option<Channel>, Refused> {
    let title = format!(
        "Approve these changes for {} landing on {}?",
        short(&landing.head.to_string()),
        landing.trunk
    );
    let (answer, channel) = if ws.settings.terminal {
        (
            Some(approval::ask_on_terminal(&title, &required.lines())),
            Channel::Terminal,
        )
    } else {
        match approval::asker::current() {
            Some(asker) => (asker.ask(&title, &required.lines()), Channel::Elicitation),
            None => (None, Channel::Elicitation),
        }
    };
    match answer {
        None => Ok(None),
        Some(false) => Err(refuse(
            ErrorSlug::AwaitingStandardApproval,
            "The owner did not approve every item; nothing landed.",
            HintId::AskOwner,
            "Ask the owner what to change, or accept again to ask once more",
        )),
        Some(true) => {
            // The answer is for exactly what was shown: HEAD and the items, checked again.
            let now =
                required::required(&ws.repo, &landing.trunk, landing.trunk_commit, landing.head)
                    .map(|r| r.tokens())
                    .ok();
            if ws.repo.head().ok().flatten() != Some(landing.head) || now != Some(required.tokens())
            {
                return Err(refuse(
                    ErrorSlug::PreconditionFailed,
                    "HEAD or what needs approval changed while the owner was asked; nothing landed.",
                    HintId::FixGate,
                    "Run the gate on the new HEAD, then accept again",
                ));
            }
            Ok(Some(channel))
        }
    }
}

/// The title of the items the owner approves, which the next step names (it is printed after
/// them on the CLI, so it cannot say "below").
const AWAITING: &str = "Awaiting the owner's exact approval";

/// `data` of the refusal that awaits the owner: the policy and the items to approve.
#[derive(Serialize)]
struct Awaiting<'a> {
    approval: &'static str,
    standard_approvals_required: &'a [crate::proposals::ApprovalItem],
    protected_changes: &'a [crate::protected::ProtectedChange],
}

/// The refusal that lists what awaits the owner's approval, and how the owner gives it.
fn awaiting_approval(
    ws: &Workspace,
    request: &AcceptRequest,
    policy: &approval::Policy,
    required: &Required,
    why: &approval::NotApproved,
) -> Refused {
    let effort = ws
        .root()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut problems = vec![why.to_string()];
    if !request.approve_standard.is_empty() {
        problems.push("tokens passed as arguments never approve on their own".to_owned());
    }
    let how = match policy.approval {
        ApprovalPolicy::Signed => format!(
            "the owner reviews it with `discern approve --effort {effort} --dry-run` (from any checkout) and signs exactly it with the command that prints, then accept again"
        ),
        ApprovalPolicy::Interactive => format!(
            "the owner approves with `discern approve --effort {effort}` on their terminal, or answers `discern accept` there"
        ),
    };
    let e = refuse(
        ErrorSlug::AwaitingStandardApproval,
        format!(
            "{} change(s) need the owner's exact approval ({}).",
            required.proposals.len() + required.protected.len(),
            problems.join("; ")
        ),
        HintId::AskOwner,
        &format!("Show the owner each item under \"{AWAITING}\"; {how}"),
    )
    .with_next(Action::new("accept").flag("confirmed"));
    let mut e = e.with_data(Awaiting {
        approval: policy.approval.as_str(),
        standard_approvals_required: &required.proposals,
        protected_changes: &required.protected,
    });
    e.sections = vec![Section {
        table: None,
        title: AWAITING.to_owned(),
        lines: required.lines(),
    }];
    e
}
