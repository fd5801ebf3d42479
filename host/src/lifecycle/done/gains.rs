//! Gains stick: before the gate proves anything, the gains beyond each Standard's margin are
//! pinned in one config-only commit (unless `[repository].pin_on_done = false` or proposals
//! are live), and the gate proves that commit.

use super::{Subject, subject};
use crate::config::{Config, StandardDef};
use crate::git::short;
use crate::lifecycle::steps::Step;
use crate::measure;
use crate::proposals;
use crate::result::{ErrorSlug, Hint, HintId, Refused};
use crate::runtime::Runtime;
use crate::standards::gains;
use crate::workspace::Workspace;

/// The subject to prove (a new one when gains were pinned) and the step that says so.
pub(super) fn stick(
    ws: &Workspace,
    runtime: &Runtime,
    subject_now: Subject,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<(Subject, Option<Step>), Refused> {
    // A branch behind the trunk fails the gate's merge stage; nothing is pinned on it first.
    // Whether gains are pinned is the trunk's setting: a branch's change to it (a protected
    // change) takes effect once landed.
    let trunk_config = match trunk_config(ws, &subject_now) {
        Ok(config) => config,
        // Unreadable, the trunk's setting and margins are unknown: nothing is pinned (pinning
        // only tightens, so not pinning loses nothing), and the step says why.
        Err(why) => return Ok((subject_now, Some(Step::check("pin", true, why)))),
    };
    let pin_on_done = trunk_config.as_ref().map_or_else(
        || subject_now.config.as_ref().is_some_and(|c| c.pin_on_done),
        |t| t.pin_on_done,
    );
    let Some(config) = subject_now
        .config
        .as_ref()
        .filter(|_| pin_on_done && subject_now.behind == 0)
    else {
        return Ok((subject_now, None));
    };
    // ADR 0405: proposal commits still invalidate Proof; no pin is stacked on live proposals.
    let live = proposals::live(&ws.repo, &subject_now.trunk).map_err(|e| {
        Refused::new(
            ErrorSlug::PreconditionFailed,
            format!("The proposal records cannot be read: {e}."),
            Hint::next_step(
                HintId::StandardsPropose,
                "Fix what the message names, then run the gate again",
            ),
        )
    })?;
    if !live.records.is_empty() {
        return Ok((subject_now, None));
    }
    let margin_of = |standard: &StandardDef| {
        trunk_config
            .as_ref()
            .and_then(|c| c.standard(&standard.name))
            .map_or(standard.margin, |t| t.margin)
    };
    let claims = proposals::claims(ws, config);
    let base = match (base_commit(ws, &subject_now), trunk_config.as_ref()) {
        (Some(commit), Some(base_config)) => {
            gains::Base::measure(ws, runtime, config, (commit, base_config), progress)
        }
        _ => gains::Base::default(),
    };
    let selected = gains::pinnable(config);
    let ctx = measure::Context {
        ws,
        runtime,
        config,
        selected: &selected,
        claims: &claims,
        progress,
    };
    let rule = gains::GainRule {
        margin_of: &margin_of,
        base: &base,
    };
    let gained = gains::pin_gains(&ctx, (&subject_now.branch, &subject_now.trunk), &rule)?;
    let Some(gained) = gained else {
        return Ok((subject_now, None));
    };
    let pins: Vec<String> = gained
        .pins
        .iter()
        .map(|p| format!("{} {} → {}", p.name, p.from, p.to))
        .collect();
    let step = Step::check(
        "pin",
        true,
        format!(
            "gains pinned in {}: {}",
            short(&gained.commit.to_string()),
            pins.join(", ")
        ),
    );
    // The gate proves the pin's commit: its config reloaded (the pin rewrote it; unreadable is
    // refused) and its cleanliness observed again, at the same level.
    let config = crate::preflight::load_config(ws)?;
    let again = crate::preflight::after_commit(ws.clone(), config, subject_now.level)?;
    Ok((subject(&again)?, Some(step)))
}

/// The trunk's config as of this branch's merge base (whose margins a pin leaves): none
/// without a merge base or a `discern.toml` there, and why not where it cannot be read.
fn trunk_config(ws: &Workspace, subject: &Subject) -> Result<Option<Config>, String> {
    let Some(base) = base_commit(ws, subject) else {
        return Ok(None);
    };
    Config::at(&ws.repo, base).map_err(|e| {
        format!(
            "gains not pinned: the trunk's discern.toml at the merge base {} cannot be read ({e})",
            short(&base.to_string())
        )
    })
}

/// This branch's merge base with the trunk.
fn base_commit(ws: &Workspace, subject: &Subject) -> Option<gix::ObjectId> {
    ws.repo.merge_base(subject.trunk_commit, subject.head)
}
