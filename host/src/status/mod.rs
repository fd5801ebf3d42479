//! `discern status` (ADR 0306): observe everything once, then one projector bounds what every
//! surface shows, and cross-effort judgments go to the owner, never to the caller's next step.

mod activity;
mod collisions;
mod fleet;
pub mod observation;
pub mod observe;
pub mod project;

use serde_json::Value;

use crate::proof::ProofState;
use observation::{FleetRow, GitCount, Location, Observation};

use crate::result::{Action, Hint, HintId, Refused, Reply, Report, Section};
use crate::workspace::Workspace;

pub use project::{CAP, Mode, project};

pub const VERB: &str = "status";

/// What `status` shows.
#[derive(Debug, Clone, Copy, Default, clap::Args, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusRequest {
    /// Complete collections (`projection.mode = "full"`) instead of the bounded orientation view.
    #[arg(long, short)]
    #[serde(default)]
    pub verbose: bool,
    /// Survey the fleet even from an effort worktree.
    #[arg(long)]
    #[serde(default)]
    pub all: bool,
    /// Leave the fleet out.
    #[arg(long)]
    #[serde(default)]
    pub local: bool,
    /// A few lines: the state, advisories and next step (a session-start hook's output; exit 0).
    #[arg(long)]
    #[serde(default)]
    pub brief: bool,
}

impl StatusRequest {
    /// The request's own check, on both surfaces: `--all` and `--local` contradict.
    pub(crate) fn validate(&self) -> Result<(), Refused> {
        match self.all && self.local {
            true => Err(Refused::new(
                crate::result::ErrorSlug::InvalidArguments,
                "--all and --local contradict each other.",
                Hint::next_step(HintId::SeeHelp, "Pass at most one of --all and --local."),
            )),
            false => Ok(()),
        }
    }
}

/// `data` of a status that cannot observe (its config is invalid): the projection only.
#[derive(serde::Serialize)]
struct Unobserved {
    projection: Projection,
}

#[derive(serde::Serialize)]
struct Projection {
    mode: &'static str,
}

/// `discern status`: the projected reply every surface shows.
pub fn status(ws: &Workspace, request: &StatusRequest) -> Result<Reply, Refused> {
    request.validate()?;
    let verbose = request.verbose;
    let with_fleet = request.all || (!request.local && ws.repo.is_main_checkout());
    let data = match observe::observe(ws, with_fleet) {
        Ok(data) => data,
        Err(e) => {
            let orientation = Unobserved {
                projection: Projection {
                    mode: "orientation",
                },
            };
            return Err(crate::preflight::config_refusal(&e).with_data(orientation));
        }
    };
    let mode = if verbose {
        Mode::Full
    } else {
        Mode::Orientation
    };
    let projected = match project(&data, mode) {
        Ok(projected) => projected,
        Err(e) => return Err(Refused::internal(&e)),
    };
    let report = report(&data, &projected, verbose);
    let mut envelope = Reply::new(projected.data, report);
    envelope.hints = hints(&data);
    // Read-only: an interrupted transaction is reported, never recovered here.
    envelope
        .advisories
        .extend(crate::preflight::pending_transaction(&ws.repo));
    if request.brief {
        envelope.report.sections.clear();
    } else if !verbose {
        envelope.hints.push(
            Hint::new(HintId::StatusFullDetail, "Bounded view; every row and list")
                .with_action(Action::new("status").flag("verbose")),
        );
    }
    Ok(envelope)
}

/// The `discern://status` resource: the orientation projection, computed fresh.
pub fn resource(ws: &Workspace) -> Value {
    match observe::observe(ws, ws.repo.is_main_checkout()) {
        Ok(data) => match project(&data, Mode::Orientation) {
            Ok(projected) => projected.data,
            Err(e) => {
                serde_json::json!({ "error": e.to_string(), "projection": { "mode": "orientation" } })
            }
        },
        Err(e) => {
            serde_json::json!({ "error": e.to_string(), "projection": { "mode": "orientation" } })
        }
    }
}

fn count(value: Option<GitCount>) -> String {
    match value {
        Some(GitCount::Known(n)) => n.to_string(),
        Some(GitCount::Unknown) | None => "unknown".to_owned(),
    }
}

fn clean_word(clean: Option<bool>) -> &'static str {
    match clean {
        Some(true) => "clean",
        Some(false) => "dirty",
        None => "unreadable",
    }
}

/// The human report: this checkout's state and facts, then the sampled fleet.
fn report(observation: &Observation, projected: &project::Projected, verbose: bool) -> Report {
    let git = &observation.git;
    let branch = git.branch.as_deref().unwrap_or("(detached HEAD)");
    let trunk = &git.trunk;
    let clean = clean_word(git.clean);
    let state = if observation.location == Location::Main && branch == trunk {
        format!("{branch} is {clean} in the main checkout.")
    } else if git.ahead_trunk.is_none() {
        format!(
            "{branch} is {clean}; the trunk {trunk} cannot be read, so ahead/behind are unknown."
        )
    } else {
        format!(
            "{branch} is {clean}, {} ahead and {} behind {trunk}.",
            count(git.ahead_trunk),
            count(git.behind_trunk)
        )
    };
    let mut sections = vec![Section {
        table: None,
        title: "This checkout".to_owned(),
        lines: facts(observation, verbose),
    }];
    let total = projected.fleet_total;
    if total > 0 {
        sections.push(Section {
            table: None,
            title: format!("Fleet: {total} active effort(s)"),
            lines: fleet_lines(observation, projected, verbose),
        });
    }
    Report { state, sections }
}

/// The facts about this checkout: where, what changed, its Proof, Standards and proposals.
fn facts(observation: &Observation, verbose: bool) -> Vec<String> {
    let mut facts = vec![format!("Root: {}", observation.root.display())];
    if let Some(n) = observation.git.changed_files.filter(|n| *n > 0) {
        facts.push(format!("Changed files: {n}"));
    }
    if observation.location == Location::Worktree {
        let proof = &observation.proof;
        facts.push(match &proof.line {
            Some(line) => format!("Proof: {}. {line}", proof.status.as_str()),
            None => format!("Proof: {}", proof.status.as_str()),
        });
    }
    facts.push(format!(
        "Standards configured: {}",
        observation.standards.len()
    ));
    facts.push(format!(
        "Approval: {}: {}.",
        observation.approval.policy, observation.approval.note
    ));
    if let Some(why) = &observation.proposals_unreadable {
        facts.push(format!("Proposals: cannot be read ({why})"));
    }
    if let Some(why) = &observation.fleet_unreadable {
        facts.push(format!(
            "Fleet: cannot be listed ({why}); `git worktree list` shows what git sees"
        ));
    }
    if !observation.unpushed_refs.is_empty() {
        facts.push(format!(
            "Unpushed: {} (share them: `{}`)",
            observation.unpushed_refs.join(", "),
            crate::result::spelled::spell(&Action::new("sync").flag("push"))
        ));
    }
    let shown = if verbose { usize::MAX } else { CAP };
    for p in observation.proposals.iter().take(shown) {
        let stale = match (p.stale, verbose) {
            (false, _) => String::new(),
            (true, false) => " (stale)".to_owned(),
            (true, true) => format!(" (stale: {})", p.stale_reasons.join("; ")),
        };
        facts.push(format!(
            "Proposal {}: {} → {}{stale}",
            p.standard,
            serde_json::json!(p.trunk_limit),
            serde_json::json!(p.proposed_limit),
        ));
    }
    if verbose {
        facts.extend(
            observation
                .standards
                .iter()
                .map(|name| format!("Standard: {name}")),
        );
        if let Some(task) = &observation.task
            && let Some(title) = &task.title
        {
            facts.push(format!("Task: {title}"));
        }
    }
    facts
}

/// What the full status adds to a fleet row: where it is, its task, Proof line and changes.
fn row_detail(row: &FleetRow) -> String {
    let mut detail = format!(" — {}", row.path);
    if let Some(task) = &row.task {
        detail.push_str(&format!("; task: {}", task.title));
    }
    if let Some(line) = &row.proof_line {
        detail.push_str(&format!("; {line}"));
    }
    if !row.changed_paths.is_empty() {
        detail.push_str(&format!("; changed: {}", row.changed_paths.join(", ")));
    }
    detail
}

/// One line per sampled effort (the main checkout apart), and how many are not shown.
fn fleet_lines(
    observation: &Observation,
    projected: &project::Projected,
    verbose: bool,
) -> Vec<String> {
    let mut lines: Vec<String> = projected
        .sample
        .iter()
        .filter_map(|i| observation.fleet.get(*i))
        .filter(|row| !row.is_main)
        .map(|row| {
            let state = if row.broken {
                "folder missing".to_owned()
            } else if row.unreadable {
                "git state unavailable".to_owned()
            } else {
                format!(
                    "{}{}, Proof {}",
                    if row.clean == Some(true) {
                        "clean"
                    } else {
                        "dirty"
                    },
                    distance(row, verbose),
                    row.proof.map_or("missing", ProofState::as_str)
                ) + &approval_note(row)
                    + &setup_note(row)
                    + &lag_note(row, &observation.git.trunk)
                    + &collisions::note(row, verbose)
                    + &activity::note(row)
            };
            let detail = match verbose {
                true => row_detail(row),
                false => String::new(),
            };
            format!(
                "{}{}: {state}{detail}",
                row.branch.as_deref().unwrap_or("(detached)"),
                if row.is_current {
                    " (this checkout)"
                } else {
                    ""
                }
            )
        })
        .collect();
    let total = projected.fleet_total;
    if total > lines.len() {
        lines.push(format!("plus {} more effort(s)", total - lines.len()));
    }
    lines
}

/// How far a fleet row is from the trunk: `, 2 ahead, 0 behind`; the bounded view leaves it
/// out for an effort that has not moved from where it forked (no commit yet, the common case
/// in a big fleet; `data.fleet` still has both counts).
fn distance(row: &FleetRow, verbose: bool) -> String {
    match (row.ahead, row.behind) {
        (Some(GitCount::Known(0)), Some(GitCount::Known(0))) if !verbose => String::new(),
        (ahead, behind) => format!(", {} ahead, {} behind", count(ahead), count(behind)),
    }
}

/// A fleet row whose setup needs attention: what happened and the command that runs it again.
fn setup_note(row: &FleetRow) -> String {
    row.setup.as_ref().map_or_else(String::new, |setup| {
        format!(
            "; needs attention: {setup} — run `{}` in {}",
            crate::setup_record::RETRY,
            row.path
        )
    })
}

/// What of a fleet row awaits the owner, or who approved it: `; awaiting the owner: limit …`.
fn approval_note(row: &FleetRow) -> String {
    match (&row.approved_by, row.awaiting_approval.as_slice()) {
        (Some(by), _) => format!("; approved by {by}"),
        (None, []) => String::new(),
        (None, items) => format!("; awaiting the owner's approval: {}", items.join("; ")),
    }
}

/// How far a fleet row's effort lags the trunk, and how it catches up: its own changes are
/// judged from where it forked, so the trunk's changes since are never listed as its own.
fn lag_note(row: &FleetRow, trunk: &str) -> String {
    match row.behind {
        Some(GitCount::Known(n)) if n > 0 => format!(
            "; lags {trunk} by {n} commit(s): `{}` in its worktree brings them in",
            crate::result::spelled::spell(&Action::new("update"))
        ),
        _ => String::new(),
    }
}

/// Hints from the full observation: the caller's own next step last, owner decisions apart.
fn hints(observation: &Observation) -> Vec<Hint> {
    let rows: Vec<&FleetRow> = observation
        .fleet
        .iter()
        .filter(|r| !r.is_main && !r.is_current)
        .collect();
    let mut hints = owner_hints(observation, &rows);
    if !rows.is_empty() {
        hints.push(Hint::new(HintId::FleetOwnership, "Continue a fleet worktree only if this effort created it; another effort's worktree, idle or clean, is not yours to adopt, land or discard."));
    }
    hints.extend(own_hints(observation, rows.is_empty()));
    hints
}

/// The owner's judgments about the other efforts, unlanded branches and live proposals:
/// statements for the owner, never the caller's next step (ADR 0306).
fn owner_hints(observation: &Observation, rows: &[&FleetRow]) -> Vec<Hint> {
    let mut hints = Vec::new();
    let names = |pick: &dyn Fn(&FleetRow) -> bool| -> Vec<String> {
        rows.iter()
            .filter(|r| pick(r))
            .map(|r| match r.id.is_empty() {
                false => r.id.clone(),
                true => r.branch.clone().unwrap_or_else(|| "?".to_owned()),
            })
            .collect()
    };
    let mut owner = |id: HintId, members: Vec<String>| {
        if members.is_empty() {
            return;
        }
        let shown: Vec<&str> = members.iter().take(CAP).map(String::as_str).collect();
        let more = members.len().saturating_sub(shown.len());
        let list = if more > 0 {
            format!("{}, plus {more} more", shown.join(", "))
        } else {
            shown.join(", ")
        };
        if let Ok(hint) = Hint::owner_attention(
            id,
            &[("total", &members.len().to_string()), ("names", &list)],
        ) {
            hints.push(hint);
        }
    };
    owner(HintId::FleetDirty, names(&|r| r.clean == Some(false)));
    owner(HintId::FleetReady, names(&ready));
    owner(HintId::FleetStale, names(&|r| r.stale));
    owner(
        HintId::FleetAwaitsApproval,
        names(&|r| !r.awaiting_approval.is_empty()),
    );
    owner(HintId::FleetCollides, names(&|r| !r.collisions.is_empty()));
    owner(HintId::FleetBroken, names(&|r| r.broken));
    owner(HintId::FleetUnreadable, names(&|r| r.unreadable));
    owner(
        HintId::UnlandedBranches,
        observation.unlanded_branches.clone(),
    );
    let live_proposals: Vec<String> = observation
        .proposals
        .iter()
        .filter(|p| !p.stale)
        .map(|p| p.standard.clone())
        .collect();
    owner(HintId::ProposalAwaitsOwner, live_proposals);
    hints
}

/// The next step of an effort whose own setup failed or was interrupted: run it again.
fn setup_hint(observation: &Observation) -> Option<Hint> {
    let setup = observation.setup.as_ref()?;
    Some(
        Hint::next_step(
            HintId::RetrySetup,
            format!("This effort's {setup}; fix the step, then run its setup again"),
        )
        .with_action(Action::new(crate::setup_record::VERB)),
    )
}

/// Whether a fleet row's effort is ready to land: clean, ahead, not behind, Proof honored.
fn ready(r: &FleetRow) -> bool {
    r.clean == Some(true)
        && matches!(r.ahead, Some(GitCount::Known(n)) if n > 0)
        && r.behind == Some(GitCount::Known(0))
        && r.proof == Some(ProofState::Honored)
}

/// The caller's own next step, from this checkout's state.
fn own_hints(observation: &Observation, alone: bool) -> Vec<Hint> {
    let mut hints = Vec::new();
    if let Some(retry) = setup_hint(observation) {
        hints.push(retry);
        return hints;
    }
    let git = &observation.git;
    if observation.location == Location::Main {
        hints.push(Hint::next_step(
            if alone { HintId::StartEffort } else { HintId::ContinueEffort },
            "Start an effort for your task, or continue in the one you started earlier (its path is in the full status)",
        ).with_action(Action::new("start").arg("title", "…")));
        return hints;
    }
    if git.clean == Some(false) {
        hints.push(
            Hint::next_step(
                HintId::CommitChanges,
                "Commit your changes, then run the gate",
            )
            .with_action(Action::new("done")),
        );
        return hints;
    }
    // Unknown counts (an unreadable trunk) are never read as 0.
    let (Some(GitCount::Known(ahead)), Some(GitCount::Known(behind))) =
        (git.ahead_trunk, git.behind_trunk)
    else {
        hints.push(
            Hint::next_step(
                HintId::UpdateFromTrunk,
                "How far this effort is from the trunk cannot be told; fetch the trunk (or set DISCERN_TRUNK), then run the gate",
            )
            .with_action(Action::new("done")),
        );
        return hints;
    };
    if behind > 0 {
        hints.push(
            Hint::next_step(
                HintId::UpdateFromTrunk,
                format!("Bring in {behind} trunk commit(s), then run the gate"),
            )
            .with_action(Action::new("update")),
        );
    } else if ahead == 0 {
        hints.push(
            Hint::next_step(
                HintId::CommitChanges,
                "Make your change and commit it, then run the gate",
            )
            .with_action(Action::new("done")),
        );
    } else if observation.proof.status == ProofState::Honored {
        hints.push(
            Hint::next_step(
                HintId::Accept,
                "Report the Proof line to the owner; with their consent, land it",
            )
            .with_action(Action::new("accept").flag("confirmed")),
        );
    } else {
        hints.push(
            Hint::next_step(HintId::RunDone, "Prove this commit").with_action(Action::new("done")),
        );
    }
    hints
}
