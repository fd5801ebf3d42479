//! `discern status` (ADR 0306): observe everything once, then one projector bounds what every
//! surface shows, and cross-effort judgments go to the owner, never to the caller's next step.

pub mod observe;
pub mod project;

use serde_json::Value;

use crate::result::{Action, Envelope, Hint, HintId, Report, Section};
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
}

/// `discern status`: the projected envelope every surface shows.
pub fn status(ws: &Workspace, request: &StatusRequest) -> Envelope {
    if request.all && request.local {
        return Envelope::refusal(
            VERB,
            crate::result::ErrorSlug::InvalidArguments,
            "--all and --local contradict each other.",
            Hint::next_step(HintId::SeeHelp, "Pass at most one of --all and --local."),
        );
    }
    let verbose = request.verbose;
    let with_fleet = request.all || (!request.local && ws.repo.is_main_checkout());
    let data = match observe::observe(ws, with_fleet) {
        Ok(data) => data,
        Err(e) => {
            let mut refusal = crate::preflight::config_refusal(VERB, &e);
            refusal.data = Some(serde_json::json!({ "projection": { "mode": "orientation" } }));
            return refusal;
        }
    };
    let mode = if verbose {
        Mode::Full
    } else {
        Mode::Orientation
    };
    let projected = project(&data, mode);
    let mut envelope = Envelope::ok(VERB, projected.clone(), report(&projected));
    envelope.hints = hints(&data);
    if !verbose {
        envelope.hints.push(
            Hint::new(
                HintId::StatusFullDetail,
                "This is the bounded orientation view; for complete collections",
            )
            .with_action(Action::new("status").flag("verbose")),
        );
    }
    envelope
}

/// The `discern://status` resource: the orientation projection, computed fresh.
pub fn resource(ws: &Workspace) -> Value {
    match observe::observe(ws, ws.repo.is_main_checkout()) {
        Ok(data) => project(&data, Mode::Orientation),
        Err(e) => {
            serde_json::json!({ "error": e.to_string(), "projection": { "mode": "orientation" } })
        }
    }
}

fn count(value: &Value) -> String {
    match value {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        _ => "unknown".to_owned(),
    }
}

fn report(data: &Value) -> Report {
    let git = &data["git"];
    let branch = git["branch"].as_str().unwrap_or("(detached HEAD)");
    let trunk = git["trunk"].as_str().unwrap_or("main");
    let clean = match git["clean"].as_bool() {
        Some(true) => "clean",
        Some(false) => "dirty",
        None => "unreadable",
    };
    let state = if data["location"] == "main" && branch == trunk {
        format!("{branch} is {clean} in the main checkout.")
    } else if git["ahead_trunk"].is_null() {
        format!(
            "{branch} is {clean}; the trunk {trunk} cannot be read, so ahead/behind are unknown."
        )
    } else {
        format!(
            "{branch} is {clean}, {} ahead and {} behind {trunk}.",
            count(&git["ahead_trunk"]),
            count(&git["behind_trunk"])
        )
    };
    let mut facts = vec![format!("Root: {}", data["root"].as_str().unwrap_or(""))];
    if let Some(n) = git["changed_files"].as_u64().filter(|n| *n > 0) {
        facts.push(format!("Changed files: {n}"));
    }
    if data["location"] == "worktree" {
        let proof = &data["proof"];
        facts.push(format!(
            "Proof: {}{}",
            proof["status"].as_str().unwrap_or("missing"),
            proof["line"]
                .as_str()
                .map(|l| format!(". {l}"))
                .unwrap_or_default()
        ));
    }
    let standards = data["standards"].as_array().map_or(0, Vec::len);
    facts.push(format!("Standards configured: {standards}"));
    for p in data["proposals"].as_array().into_iter().flatten() {
        facts.push(format!(
            "Proposal {}: {} → {}{}",
            p["standard"].as_str().unwrap_or(""),
            p["trunk_limit"],
            p["proposed_limit"],
            if p["stale"] == true { " (stale)" } else { "" }
        ));
    }
    // The projector always counts the fleet; without it, the rows shown are all there is.
    let total = data["fleet_total"].as_u64().map_or(0, |n| n as usize);
    let mut fleet = Vec::new();
    for row in data["fleet"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["is_main"] != true)
    {
        let state = if row["broken"] == true {
            "folder missing".to_owned()
        } else if row["unreadable"] == true {
            "git state unavailable".to_owned()
        } else {
            format!(
                "{}, {} ahead, {} behind, Proof {}",
                if row["clean"] == true {
                    "clean"
                } else {
                    "dirty"
                },
                count(&row["ahead"]),
                count(&row["behind"]),
                row["proof"].as_str().unwrap_or("missing")
            )
        };
        fleet.push(format!(
            "{}{}: {state}",
            row["branch"].as_str().unwrap_or("(detached)"),
            if row["is_current"] == true {
                " (this checkout)"
            } else {
                ""
            }
        ));
    }
    if total > fleet.len() {
        fleet.push(format!("plus {} more effort(s)", total - fleet.len()));
    }
    let mut sections = vec![Section {
        title: "This checkout".to_owned(),
        lines: facts,
    }];
    if total > 0 {
        sections.push(Section {
            title: format!("Fleet: {total} active effort(s)"),
            lines: fleet,
        });
    }
    Report { state, sections }
}

/// Hints from the full observation: the caller's own next step last, owner decisions apart.
fn hints(data: &Value) -> Vec<Hint> {
    let rows: Vec<&Value> = data["fleet"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["is_main"] != true && r["is_current"] != true)
        .collect();
    let mut hints = owner_hints(data, &rows);
    if !rows.is_empty() {
        hints.push(Hint::new(HintId::FleetOwnership, "Continue a fleet worktree only if this effort created it; another effort's worktree, idle or clean, is not yours to adopt, land or discard."));
    }
    hints.extend(own_hints(data, rows.is_empty()));
    hints
}

/// The owner's judgments about the other efforts, unlanded branches and live proposals:
/// statements for the owner, never the caller's next step (ADR 0306).
fn owner_hints(data: &Value, rows: &[&Value]) -> Vec<Hint> {
    let mut hints = Vec::new();
    let names = |pick: &dyn Fn(&Value) -> bool| -> Vec<String> {
        rows.iter()
            .filter(|r| pick(r))
            .map(|r| {
                r["id"]
                    .as_str()
                    .or(r["branch"].as_str())
                    .unwrap_or("?")
                    .to_owned()
            })
            .collect()
    };
    let mut owner = |id: HintId, members: Vec<String>| {
        if members.is_empty() {
            return;
        }
        let shown: Vec<&str> = members
            .iter()
            .take(project::CAP)
            .map(String::as_str)
            .collect();
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
    owner(HintId::FleetDirty, names(&|r| r["clean"] == false));
    owner(
        HintId::FleetReady,
        names(&|r| {
            r["clean"] == true
                && r["ahead"].as_u64().is_some_and(|n| n > 0)
                && r["behind"].as_u64() == Some(0)
                && r["proof"] == "honored"
        }),
    );
    owner(HintId::FleetStale, names(&|r| r["stale"] == true));
    owner(HintId::FleetBroken, names(&|r| r["broken"] == true));
    owner(HintId::FleetUnreadable, names(&|r| r["unreadable"] == true));
    owner(
        HintId::UnlandedBranches,
        data["unlanded_branches"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|b| b.as_str().map(str::to_owned))
            .collect(),
    );
    let live_proposals: Vec<String> = data["proposals"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["stale"] != true)
        .filter_map(|p| p["standard"].as_str().map(str::to_owned))
        .collect();
    owner(HintId::ProposalAwaitsOwner, live_proposals);
    hints
}

/// The caller's own next step, from this checkout's state.
fn own_hints(data: &Value, alone: bool) -> Vec<Hint> {
    let mut hints = Vec::new();
    let git = &data["git"];
    if data["location"] == "main" {
        hints.push(Hint::next_step(
            if alone { HintId::StartEffort } else { HintId::ContinueEffort },
            "Start an effort for your task, or continue in the effort you started earlier (at its recorded path)",
        ).with_action(Action::new("start").arg("title", "…")));
        return hints;
    }
    if git["clean"] == false {
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
    let (Some(ahead), Some(behind)) = (git["ahead_trunk"].as_u64(), git["behind_trunk"].as_u64())
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
    } else if data["proof"]["status"] == "honored" {
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
