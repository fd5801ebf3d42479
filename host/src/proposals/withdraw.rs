//! `discern standards withdraw`: the way out of existing proposal state. Every live proposal's
//! limit goes back to the trunk's in one config-only commit that names what it withdraws
//! (`Discern-Withdrawn:` trailers), and this worktree's records are dropped with it; one batch
//! can then propose every Standard together.

use serde::Serialize;

use super::{LiveError, ProposalRecord, live, store, trailers};
use crate::commit::{self, CommitError, ConfigCommit};
use crate::config::{Config, Direction};
use crate::preflight::Prepared;
use crate::result::{Action, ErrorSlug, Hint, HintId, Refusal, Refused, Reply, Report, Section};
use crate::standards::pin::{Pinned, edit_limits};
use crate::workspace::Workspace;

pub(crate) const VERB: &str = "standards withdraw";

/// `withdraw` (MCP `discern_standards` with `action: "withdraw"`).
#[derive(Debug, Clone, Default, clap::Args, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WithdrawRequest {
    /// Preview only: the limits that would go back to the trunk's; nothing is written.
    #[arg(long)]
    #[serde(default)]
    pub dry_run: bool,
}

/// `data` of a withdrawal.
#[derive(Debug, Serialize)]
struct Withdrawn<'a> {
    withdrawn: Vec<&'a str>,
    reverted: &'a [Pinned],
    #[serde(skip_serializing_if = "Option::is_none")]
    commit: Option<String>,
}

/// Why nothing was withdrawn (a pending transaction, an unreadable config and a dirty tree
/// are refused by `preflight`).
#[derive(Debug, thiserror::Error)]
enum NotWithdrawn {
    #[error("There is no discern.toml, so there is nothing to withdraw.")]
    NoConfig,
    #[error("Cannot withdraw: {0}.")]
    NotCommittable(CommitError),
    #[error("The proposals cannot be read: {0}.")]
    LiveUnreadable(LiveError),
    #[error("Cannot clear the proposal store: {0}.")]
    StoreUncleared(std::io::Error),
    #[error("This branch has no commit yet.")]
    NoCommit,
    #[error("Nothing was withdrawn: {0}.")]
    Commit(CommitError),
    #[error("The trunk's limits at the merge base cannot be read: {0}.")]
    BaseUnreadable(String),
    #[error("{0}")]
    Internal(String),
}

/// The refusal of `standards withdraw` for each reason nothing was withdrawn.
fn refusal(why: &NotWithdrawn) -> Refused {
    why.refused()
}

impl Refusal for NotWithdrawn {
    fn slug(&self) -> ErrorSlug {
        match self {
            NotWithdrawn::NoCommit => ErrorSlug::NothingCommitted,
            NotWithdrawn::NoConfig | NotWithdrawn::NotCommittable(_) => {
                ErrorSlug::PreconditionFailed
            }
            NotWithdrawn::LiveUnreadable(_) => ErrorSlug::ProposalStale,
            NotWithdrawn::BaseUnreadable(_) => ErrorSlug::PreconditionFailed,
            NotWithdrawn::StoreUncleared(_) | NotWithdrawn::Commit(_) => ErrorSlug::ProposalFailed,
            NotWithdrawn::Internal(_) => ErrorSlug::Internal,
        }
    }

    fn hint(&self) -> Hint {
        let hint = match self {
            NotWithdrawn::NoConfig | NotWithdrawn::NoCommit => "Nothing to do.",
            NotWithdrawn::NotCommittable(_) => "Withdraw on the effort branch with a clean tree.",
            NotWithdrawn::LiveUnreadable(_) | NotWithdrawn::BaseUnreadable(_) => {
                "Fix what the message names, then withdraw again."
            }
            NotWithdrawn::StoreUncleared(_) => {
                "Check the git admin directory's permissions, then withdraw again."
            }
            NotWithdrawn::Commit(_) => {
                "Withdraw again; a half-finished transaction is finished or unwound first."
            }
            NotWithdrawn::Internal(_) => "Report this as a bug in discern.",
        };
        Hint::next_step(HintId::StandardsPropose, hint)
    }
}

pub(crate) fn withdraw(prepared: &Prepared, request: &WithdrawRequest) -> Result<Reply, Refused> {
    let (ws, repo) = (&prepared.ws, &prepared.ws.repo);
    let config = prepared
        .config()
        .cloned()
        .ok_or_else(|| refusal(&NotWithdrawn::NoConfig))?;
    let branch = commit::preflight(repo).map_err(|e| refusal(&NotWithdrawn::NotCommittable(e)))?;
    prepared.require_clean(VERB)?;
    // A branch of a release line goes back to the line's limits.
    let trunk = crate::measure::limits::landing_line(
        ws,
        ws.trunk(Some(&config)),
        repo.head().ok().flatten(),
    );
    let live = live(repo, &trunk).map_err(|e| refusal(&NotWithdrawn::LiveUnreadable(e)))?;
    let records: Vec<&ProposalRecord> = live.records.iter().chain(&live.orphans).collect();
    if records.is_empty() {
        return Ok(nothing(&branch));
    }
    let judged = base_config(repo, &trunk).map_err(|e| refusal(&e))?;
    let reverts = reverts(&config, judged.as_ref(), &live.records);
    if request.dry_run {
        let mut envelope = result(&live.records, &reverts, None, &branch);
        envelope.dry_run = Some(true);
        return Ok(envelope);
    }
    if reverts.is_empty() {
        // Only records no limit carries any more (orphans, or limits already restored).
        store::save(repo, &[]).map_err(|e| refusal(&NotWithdrawn::StoreUncleared(e)))?;
        crate::proof::clear(repo);
        return Ok(result(&live.records, &reverts, None, &branch));
    }
    let commit = commit_withdrawal(ws, &config, &branch, &live.records, &reverts)?;
    Ok(result(&live.records, &reverts, Some(commit), &branch))
}

/// The config the branch is judged against today: the trunk's at its merge base with HEAD
/// (after the branch took the trunk in, the trunk's tip). `None` when there is no trunk or
/// merge base to read (the proposals' remembered limits stand); a config that is there but
/// cannot be read is a refusal, never the remembered limits.
fn base_config(repo: &crate::git::Repo, trunk: &str) -> Result<Option<Config>, NotWithdrawn> {
    let unreadable = |e: &dyn std::fmt::Display| NotWithdrawn::BaseUnreadable(e.to_string());
    let head = repo.head().map_err(|e| unreadable(&e))?;
    let trunk_commit = repo.trunk_commit(trunk).map_err(|e| unreadable(&e))?;
    let Some(base) = head
        .zip(trunk_commit)
        .and_then(|(head, tip)| repo.merge_base(tip, head))
    else {
        return Ok(None);
    };
    Config::at(repo, base).map_err(|e| unreadable(&e))
}

/// Every live proposal's Standard whose limit is looser than the trunk's, back to that limit:
/// the trunk's at today's merge base (`judged`) where it has the Standard, else the one the
/// proposal started from.
fn reverts(config: &Config, judged: Option<&Config>, records: &[ProposalRecord]) -> Vec<Pinned> {
    records
        .iter()
        .filter_map(|r| {
            let standard = config.standard(&r.standard)?;
            let trunk_limit = judged
                .and_then(|c| c.standard(&r.standard))
                .map_or(r.trunk_limit, |s| s.limit);
            let looser = match standard.direction {
                Direction::Up => standard.limit < trunk_limit,
                Direction::Down => standard.limit > trunk_limit,
            };
            looser.then(|| Pinned {
                name: r.standard.clone(),
                from: standard.limit,
                to: trunk_limit,
                measured: r.measurement,
            })
        })
        .collect()
}

fn commit_withdrawal(
    ws: &Workspace,
    config: &Config,
    branch: &str,
    records: &[ProposalRecord],
    reverts: &[Pinned],
) -> Result<String, Refused> {
    let repo = &ws.repo;
    let head = repo
        .head()
        .ok()
        .flatten()
        .ok_or_else(|| refusal(&NotWithdrawn::NoCommit))?;
    let content = edit_limits(config, reverts).map_err(|e| refusal(&NotWithdrawn::Internal(e)))?;
    let names: Vec<&str> = records.iter().map(|r| r.standard.as_str()).collect();
    let mut message = format!(
        "discern: withdraw {} Standard limit proposal{}\n\n",
        names.len(),
        if names.len() == 1 { "" } else { "s" }
    );
    for pin in reverts {
        message.push_str(&format!(
            "- {}: {} -> {} (the trunk's)\n",
            pin.name, pin.from, pin.to
        ));
    }
    message.push('\n');
    message.push_str(&trailers::withdrawn_block(&names));
    let cleared = |_| store::state_file(&[]).map(|file| vec![file]);
    let commit = ConfigCommit {
        kind: "withdrawal",
        branch,
        head,
        base: config.source.as_bytes(),
        content: content.as_bytes(),
        message: &message,
        files: &cleared,
    };
    let new = commit::config_only_commit(repo, &commit, &ws.settings.faults)
        .map_err(|e| refusal(&NotWithdrawn::Commit(e)))?;
    crate::proof::clear(repo);
    Ok(new.to_string())
}

fn nothing(branch: &str) -> Reply {
    Reply::new(
        Withdrawn {
            withdrawn: Vec::new(),
            reverted: &[],
            commit: None,
        },
        Report {
            state: format!("{branch} has no proposal to withdraw."),
            sections: Vec::new(),
        },
    )
}

fn result(
    records: &[ProposalRecord],
    reverts: &[Pinned],
    commit: Option<String>,
    branch: &str,
) -> Reply {
    let withdrawn: Vec<&str> = records.iter().map(|r| r.standard.as_str()).collect();
    let lines = reverts
        .iter()
        .map(|p| format!("{}: {} → {} (the trunk's)", p.name, p.from, p.to))
        .collect();
    let state = match &commit {
        Some(commit) => format!(
            "Withdrew {} proposal(s) on {branch} in {}; every proposed limit is the trunk's again.",
            withdrawn.len(),
            crate::git::short(commit)
        ),
        None => format!(
            "Would withdraw {} proposal(s) on {branch}.",
            withdrawn.len()
        ),
    };
    let data = Withdrawn {
        withdrawn,
        reverted: reverts,
        commit,
    };
    Reply::new(
        &data,
        Report {
            state,
            sections: vec![Section {
                table: None,
                title: "Limits back to the trunk's".to_owned(),
                lines,
            }],
        },
    )
    .with_hint(
        Hint::next_step(
            HintId::StandardsPropose,
            "Propose every Standard this work breached together, in one batch",
        )
        .with_action(Action::new("standards propose")),
    )
}
