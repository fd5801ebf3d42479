//! A branch is judged on what it changed: its config versus the config at its merge base with
//! the trunk. What the trunk added, tightened or redefined after the fork is a guardrail, not
//! the branch's doing; the gate still requires the trunk before anything lands.

use gix::ObjectId;

use super::compare;
use super::{Against, BaselineKind, Forbidden, LimitsCheck, ProposalClaim, fix};
use crate::config::{AtError, Config, Direction};
use crate::git::{Repo, RepoError, short};
use crate::protected::{Loosening, Side};
use crate::result::Action;
use crate::result::spelled::spell;

/// How to see what the check sees, for a redefinition or a loosening.
const DRY_RUN: &str = "discern standards --dry-run";

pub(super) fn judge(
    repo: &Repo,
    config: &Config,
    against: &Against,
    trunk_commit: ObjectId,
    proposals: &[ProposalClaim],
    check: &mut LimitsCheck,
) -> Result<(), RepoError> {
    let trunk = &against.trunk;
    let Some(base) = repo.merge_base(trunk_commit, against.head) else {
        let why = if repo.is_shallow() {
            format!("this shallow clone lacks the history HEAD shares with the trunk {trunk}")
        } else {
            format!("HEAD shares no history with the trunk {trunk}")
        };
        check.unverified(why, Some(fix::fetch(repo, trunk)));
        return Ok(());
    };
    check.summary.baseline = Some(base.to_string());
    check.summary.baseline_kind = Some(BaselineKind::MergeBase);
    let base_config = match Config::at_or_absent(repo, base) {
        Ok(found) => found,
        Err(AtError::Unreadable(e)) => return Err(e),
        Err(e) => {
            let e = e.to_string();
            parse_failed(check, trunk, base == trunk_commit, base, &e);
            return Ok(());
        }
    };
    // The trunk's name while the branch contains it, else the merge base it is judged on.
    let at = match base == trunk_commit {
        true => trunk.clone(),
        false => short(&base.to_string()),
    };
    let show = format!("git show {at}:{}", crate::config::FILE);
    let changes = crate::protected::between(
        repo,
        Side {
            commit: base,
            config: &base_config,
        },
        Side {
            commit: against.head,
            config,
        },
    )?;
    if !approved_in_tree(repo, (base, trunk_commit), against.head, &changes, check)? {
        for loosening in &changes.loosened {
            let message = match explained(loosening, proposals) {
                Some(ProposalClaim { stale: None, .. }) => {
                    check.proposed += 1;
                    continue;
                }
                Some(stale @ ProposalClaim { stale: Some(_), .. }) => renew(loosening, stale),
                None => loosened(loosening, trunk),
            };
            check.forbid(Forbidden::Loosened(loosening), message, DRY_RUN);
        }
        // Every other change is protected: the branch's definition is measured, and the
        // change lands only with the owner's approval of it.
        for described in crate::protected::describe_all(&changes.protected) {
            check.advisories.push(format!(
                "{described} versus {trunk}: a protected change; it lands only with the owner's exact approval (`discern approve`). See the trunk's side with `{show}`."
            ));
            check.protected.push(described);
        }
    }
    behind(
        repo,
        check,
        trunk,
        base,
        trunk_commit,
        &base_config,
        against.head,
    )
}

/// Whether a signed approval the branch added in its tree approves exactly `changes` and the
/// net change from the merge base, in the repository the trunk names, under the trunk tip's
/// anchored policy and signers (the trunk side).
/// One that does not count is named in an advisory, with why.
fn approved_in_tree(
    repo: &Repo,
    (base, trunk_commit): (ObjectId, ObjectId),
    head: ObjectId,
    changes: &crate::protected::GateChanges,
    check: &mut LimitsCheck,
) -> Result<bool, RepoError> {
    if changes.is_empty() {
        return Ok(false);
    }
    let approvals = crate::approval::tree::added(repo, base, head)?;
    if approvals.is_empty() {
        return Ok(false);
    }
    // The signers as the trunk has them now: a branch forked before a key's removal does not
    // bring the removed key back.
    let policy = crate::approval::anchored_policy(repo, trunk_commit);
    let range = crate::approval::tree::Range {
        from: base,
        to: head,
    };
    match crate::approval::tree::approving(repo, &approvals, policy.as_ref(), range, changes) {
        Ok(approval) => {
            check.approved_by = Some(format!("{} ({})", approval.principal, approval.path()));
            Ok(true)
        }
        Err(why) => {
            let why = why.map_or_else(|| "it cannot be read".to_owned(), |w| w.to_string());
            check.advisories.push(format!(
                "The approval this branch carries in {} does not count: {why}. {}",
                crate::approval::tree::DIR,
                crate::approval::tree::AGAIN
            ));
            Ok(false)
        }
    }
}

/// The proposal for exactly this loosening, an active one first.
fn explained<'a>(l: &Loosening, proposals: &'a [ProposalClaim]) -> Option<&'a ProposalClaim> {
    let exact = |p: &&ProposalClaim| {
        p.standard == l.standard
            && p.direction == l.direction
            && p.trunk_limit == l.from
            && p.proposed_limit == l.to
    };
    let mut matching = proposals.iter().filter(exact);
    let first = matching.clone().next();
    matching.find(|p| p.stale.is_none()).or(first)
}

/// A loosening whose proposal went stale: what made it stale, and the renewal.
fn renew(l: &Loosening, claim: &ProposalClaim) -> String {
    let why = claim.stale.as_deref().unwrap_or_default();
    let renewal = Action::new("standards propose")
        .arg("name", l.standard.as_str())
        .arg("reason", claim.reason.as_str());
    format!(
        "Standard {}'s proposal to loosen its {} {} -> {} is stale ({why}), so it authorizes nothing. Renew it on this commit: `{}`, then run the gate again.",
        l.standard,
        l.direction.bound(),
        l.from,
        l.to,
        spell(&renewal)
    )
}

/// Why a loosening the branch made is refused, and the way past it.
fn loosened(l: &Loosening, trunk: &str) -> String {
    let rule = match l.direction {
        Direction::Up => "floors only rise",
        Direction::Down => "ceilings only fall",
    };
    format!(
        "Standard {} loosens its {} {} -> {} versus {trunk} ({rule}). Move the metric, never the limit; if this work itself caused the breach, commit the final tree and propose the change for {} with a technical reason, for the owner's exact approval.",
        l.standard,
        l.direction.bound(),
        l.from,
        l.to,
        l.standard
    )
}

fn parse_failed(check: &mut LimitsCheck, trunk: &str, at_tip: bool, base: ObjectId, e: &str) {
    let base = match at_tip {
        true => trunk.to_owned(),
        false => short(&base.to_string()),
    };
    check.summary.status = super::LimitsStatus::ParseFailed;
    check.summary.reason = Some(format!("trunk's {} cannot be parsed", crate::config::FILE));
    check.diagnostics.push(super::diagnostic(
        format!(
            "trunk's {} (at {base}) cannot be parsed, so no limit can be verified; fix it on the trunk first:\n{e}",
            crate::config::FILE
        ),
        &format!("git show {base}:{}", crate::config::FILE),
    ));
}

/// The branch forked before trunk commits it does not contain: count them, and name the
/// Standards they changed, which apply when the branch brings the trunk in.
fn behind(
    repo: &Repo,
    check: &mut LimitsCheck,
    trunk: &str,
    base: ObjectId,
    trunk_commit: ObjectId,
    base_config: &Config,
    head: ObjectId,
) -> Result<(), RepoError> {
    if base == trunk_commit {
        return Ok(());
    }
    let (_, behind) = repo.ahead_behind(trunk_commit, head)?;
    check.summary.behind = Some(behind);
    let trunk_config = match Config::at_or_absent(repo, trunk_commit) {
        Ok(found) => found,
        Err(AtError::Unreadable(e)) => return Err(e),
        Err(_) => {
            check.advisories.push(format!(
                "This branch is {behind} commit(s) behind the trunk {trunk}, whose {} cannot be parsed; bring the trunk in (`{}`) once it is fixed there.",
                crate::config::FILE,
                spell(&Action::new("update"))
            ));
            return Ok(());
        }
    };
    let arrived = compare::arrived(base_config, &trunk_config)?;
    if !arrived.is_empty() {
        check.advisories.push(format!(
            "This branch is {behind} commit(s) behind the trunk {trunk}, whose Standards changed since it forked at {} ({}); they apply when it lands: `{}` brings in its limits.",
            short(&base.to_string()),
            arrived.join("; "),
            spell(&Action::new("update"))
        ));
    }
    Ok(())
}
