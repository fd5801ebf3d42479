//! Who authorizes the landing: the owner's consent in conversation, or every changed path
//! inside a standing grant of the trunk's config; and the owner's approval of every item the
//! change makes that only the owner may decide (`approvals.rs`).

use serde::Serialize;

use super::{AcceptRequest, Authority, Consent, Landing, approvals, refuse};
use crate::config::Config;
use crate::git::short;
use crate::proposals::required;
use crate::result::{Action, ErrorSlug, HintId, Refused, WithNext};
use crate::snapshot::Pathspec;
use crate::workspace::Workspace;

/// `data` of a refusal for want of consent.
#[derive(Debug, Serialize)]
struct AwaitingConsent<'a> {
    proof_line: &'a str,
    changed_paths: &'a [&'a str],
    pre_authorized: &'a [String],
}

/// Consent in conversation, or every changed path inside a standing grant; and every live
/// proposal approved by exactly its token.
pub(super) fn authority(
    ws: &Workspace,
    request: &AcceptRequest,
    landing: &Landing,
) -> Result<Authority, Refused> {
    let repo = &ws.repo;
    let Landing {
        trunk,
        branch,
        head,
        trunk_commit,
        proof,
        ..
    } = landing;
    let base = repo
        .merge_base(*trunk_commit, *head)
        .unwrap_or(*trunk_commit);
    // Fail closed: paths that cannot be listed are never inside a grant.
    let changed = repo
        // Without rename detection: a file moved into a granted folder also lists the path it
        // left, which the grant must cover too. In-process, never a `git` found on `PATH`.
        .changed_between(base, *head)
        .map_err(|e| {
            refuse(
                ErrorSlug::CannotTell,
                format!("The changed paths cannot be listed: {e}."),
                HintId::CheckRepository,
                &format!("Run `git diff --name-only {base}..HEAD` and fix what it reports, then accept again."),
            )
        })?;
    let changed: Vec<&str> = changed.iter().map(String::as_str).collect();
    // Standing grants are the owner's: read from the trunk's committed config, never from the
    // branch being landed (a branch that widens its own grant takes effect only after landing).
    // Unreadable, they are refused as unknown, never read as "no grant".
    let scopes = Config::at(repo, *trunk_commit)
        .map_err(|e| {
            refuse(
                ErrorSlug::CannotTell,
                format!("The trunk's discern.toml at {} cannot be read: {e}.", short(&trunk_commit.to_string())),
                HintId::CheckRepository,
                &format!("Fix discern.toml on {trunk} (`git show {trunk}:discern.toml`), then accept again."),
            )
        })?
        .map(|c| c.pre_authorized)
        .unwrap_or_default();
    let granted = !scopes.is_empty() && {
        let spec = Pathspec::new(&scopes);
        changed.iter().all(|p| spec.matches(p))
    };
    if !request.confirmed && !granted {
        let mut e = refuse(
            ErrorSlug::AwaitingConsent,
            format!(
                "Landing {branch} on {trunk} needs the owner's consent: {}",
                proof.line
            ),
            HintId::AskOwner,
            "Ask the owner; with their consent in this conversation, land it",
        )
        .with_next(Action::new("accept").flag("confirmed"));
        e = e.with_data(&AwaitingConsent {
            proof_line: &proof.line,
            changed_paths: &changed,
            pre_authorized: &scopes,
        });
        return Err(e);
    }
    // What needs approval is derived from the trunk's config and HEAD's, never remembered.
    let required = required::required(repo, trunk, *trunk_commit, *head).map_err(|e| {
        refuse(
            ErrorSlug::CannotTell,
            format!("What needs the owner's approval cannot be told: {e}."),
            HintId::CheckRepository,
            "Fix what is named above, run the gate, then accept again",
        )
        .with_next(Action::new("done"))
    })?;
    let approval = match required.is_empty() && required.unexplained.is_empty() {
        true => None,
        false => Some(approvals::approve(ws, request, landing, &required)?),
    };
    let consent = match request.confirmed {
        true => Consent::Confirmed,
        false => Consent::PreAuthorized { scopes },
    };
    Ok(Authority {
        consent,
        items: required.proposals,
        protected: required.protected,
        approval,
    })
}
