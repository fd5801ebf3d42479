//! Proposals (ADR 0405): a recorded, owner-approvable loosening of a limit to the exact
//! measured value, made by one config-only commit for a whole batch, bound to that commit.

mod batch;
mod live;
pub(crate) mod reason;
mod renew;
mod report;
pub(crate) mod required;
pub(crate) mod store;
mod target;
pub(crate) mod token;
pub(crate) mod trailers;
mod why;
mod withdraw;

use serde::Serialize;

use crate::commit;
use crate::config::{Config, FILE};
use crate::git::Repo;
use crate::git::short;
use crate::measure::ProposalClaim;
use crate::snapshot::Pathspec;
use crate::workspace::Workspace;

pub(crate) use batch::propose;
pub(crate) use live::{LiveError, live, live_at};
pub(crate) use store::ProposalRecord;
pub(crate) use token::ApprovalItem;
pub use token::approval_token;
pub(crate) use withdraw::{VERB as WITHDRAW_VERB, WithdrawRequest, withdraw};

pub(crate) const VERB: &str = "standards propose";

/// One requested proposal.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProposalRequest {
    /// The Standard whose limit the work breached.
    pub name: String,
    /// The technical reason (one paragraph, at most 500 characters).
    pub reason: String,
}

/// `propose`: the batch, all or nothing (MCP `discern_standards` with `action: "propose"`;
/// the CLI's `standards propose NAME --reason R | --batch FILE` builds the same).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProposeRequest {
    /// Ordered {name, reason} requests, all recorded in one config-only commit.
    pub proposals: Vec<ProposalRequest>,
    /// Validate and preview only; measure and write nothing.
    #[serde(default)]
    pub dry_run: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum BatchStatus {
    Recorded,
    Rebound,
    Replaced,
    Unchanged,
    Recovered,
}

/// Why a record no longer authorizes anything (empty = active), for this checkout's HEAD.
pub(crate) fn stale_reasons(
    repo: &Repo,
    config: Option<&Config>,
    trunk: &str,
    record: &ProposalRecord,
) -> Vec<String> {
    stale_reasons_at(repo, repo.head().ok().flatten(), config, trunk, record)
}

/// Why a record no longer authorizes anything at `head` (empty = active); `config` is the
/// one at `head`.
pub(crate) fn stale_reasons_at(
    repo: &Repo,
    head: Option<gix::ObjectId>,
    config: Option<&Config>,
    trunk: &str,
    record: &ProposalRecord,
) -> Vec<String> {
    let mut reasons = Vec::new();
    // The owner's approval commits on top add no code: the proposal stays bound beneath them.
    let head = head
        .and_then(|h| crate::commit::approval::beneath_approvals(repo, h).ok())
        .map(|h| h.to_string());
    if head.as_deref() != Some(record.bound_commit.as_str()) {
        reasons.push(format!(
            "HEAD is {}, not the bound commit {}",
            head.as_deref().map_or("unborn".to_owned(), short),
            short(&record.bound_commit)
        ));
    }
    let trunk_now = repo
        .trunk_commit(trunk)
        .ok()
        .flatten()
        .map(|c| c.to_string());
    if trunk_now.as_deref() != Some(record.trunk_commit.as_str()) {
        reasons.push(format!("the trunk {trunk} moved since the proposal"));
    }
    match config.and_then(|c| c.standard(&record.standard)) {
        None => reasons.push(format!(
            "Standard {} is no longer configured",
            record.standard
        )),
        Some(standard) => {
            if standard.definition_fingerprint() != record.definition_fingerprint {
                reasons.push("the Standard's definition changed".to_owned());
            }
            if standard.limit != record.proposed_limit {
                reasons.push(format!(
                    "the branch limit is {}, not the proposed {}",
                    standard.limit, record.proposed_limit
                ));
            }
        }
    }
    let shape = record
        .commit
        .parse::<gix::ObjectId>()
        .ok()
        .zip(record.measured_commit.parse::<gix::ObjectId>().ok())
        .map(|(c, m)| commit::check_shape(repo, c, m));
    if !matches!(shape, Some(Ok(()))) {
        reasons.push(
            "the proposal commit is not a config-only commit on the measured commit".to_owned(),
        );
    }
    reasons
}

/// The proposals that explain a loosened limit, as claims the never-loosen check honours: this
/// worktree's own while they are active (stale ones are kept, marked with why, so the check
/// names the renewal instead of a missing proposal), and those a clone knows only from their
/// commits (CI) while the limit and the definition are still exactly what they proposed.
/// Proposals that cannot be read explain nothing.
pub(crate) fn claims(ws: &Workspace, config: &Config) -> Vec<ProposalClaim> {
    let trunk = ws.trunk(Some(config));
    let (Ok(live), Ok(stored)) = (live(&ws.repo, &trunk), store::load(&ws.repo)) else {
        return Vec::new();
    };
    live.records
        .into_iter()
        .filter_map(|r| {
            let own = stored
                .iter()
                .any(|s| s.commit == r.commit && s.standard == r.standard);
            let stale = match own {
                true => Some(stale_reasons(&ws.repo, Some(config), &trunk, &r)),
                false => None,
            };
            let exact = config.standard(&r.standard).is_some_and(|s| {
                s.limit == r.proposed_limit
                    && s.direction == r.direction
                    && s.definition_fingerprint() == r.definition_fingerprint
            });
            if !own && !exact {
                return None;
            }
            Some(ProposalClaim {
                stale: stale
                    .filter(|why| !why.is_empty())
                    .map(|why| why.join("; ")),
                standard: r.standard,
                direction: r.direction,
                trunk_limit: r.trunk_limit,
                proposed_limit: r.proposed_limit,
                reason: r.reason,
            })
        })
        .collect()
}

/// The changed paths inside what the Standard's producer read (paths read, or matched by a
/// glob it listed) or inside its declared `inputs`; never the config itself.
pub(crate) fn evidence_paths(
    changed: &[String],
    read_sets: &[&crate::runtime::ReadSet],
    inputs: Option<&[String]>,
) -> Vec<String> {
    let listed: Vec<Pathspec> = read_sets
        .iter()
        .flat_map(|r| &r.listings)
        .map(|l| Pathspec::new(&l.globs))
        .collect();
    let declared = inputs.map(Pathspec::new);
    changed
        .iter()
        .filter(|p| p.as_str() != FILE)
        .filter(|p| {
            read_sets.iter().any(|r| r.depends_on(p))
                || listed.iter().any(|spec| spec.matches(p))
                || declared.as_ref().is_some_and(|spec| spec.matches(p))
        })
        .cloned()
        .collect()
}
