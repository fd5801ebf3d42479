//! Gains stick: at the start of `done`, every gain beyond a Standard's margin (the trunk's
//! margin, so a branch cannot widen its own) is pinned in one config-only commit from the
//! clean HEAD's readings, and the gate then proves that commit.

use super::pin::{Pinned, commit_pins, edit_limits, pin_message};
use super::{MeasureOptions, Measurement, ProposalClaim, measure_with, pin_eligible};
use crate::config::{Config, StandardDef};
use crate::result::{Envelope, ErrorSlug, Hint, HintId};
use crate::runtime::Runtime;
use crate::workspace::Workspace;

/// What `done` pinned before proving.
#[derive(Debug, Clone)]
pub struct Gained {
    pub pins: Vec<Pinned>,
    pub commit: gix::ObjectId,
}

/// Pin the gains of `config`'s Standards that read without a job (a job runs in the gate's own
/// stages), each against `margin_of` its Standard. `None` when nothing is pinned: no gain
/// beyond a margin, or a Standard that fails or is blocked (the gate reports it).
pub fn pin_gains(
    ws: &Workspace,
    runtime: &Runtime,
    config: &Config,
    (branch, trunk): (&str, &str),
    margin_of: &dyn Fn(&StandardDef) -> f64,
    claims: &[ProposalClaim],
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Option<Gained>, Box<Envelope>> {
    let selected: Vec<&StandardDef> = config
        .standards
        .iter()
        .filter(|s| s.needs.is_empty() && s.run.is_none())
        .collect();
    if selected.is_empty() {
        return Ok(None);
    }
    let options = MeasureOptions {
        trunk: Some(trunk.to_owned()),
        ..MeasureOptions::default()
    };
    let measured = measure_with(ws, runtime, config, &selected, &options, claims, progress)?;
    let failing = measured.standards.iter().any(|s| {
        !matches!(s.measurement, Measurement::Measured | Measurement::Reused)
            || s.verdict.is_some_and(|v| !v.passes())
    });
    if failing || measured.limits.blocking() {
        return Ok(None);
    }
    let pins: Vec<Pinned> = measured
        .standards
        .iter()
        // A limit an active proposal sets is the owner's to approve as proposed, never pinned.
        .filter(|result| !claims.iter().any(|c| c.standard == result.name))
        .filter_map(|result| {
            let standard = config.standard(&result.name)?;
            let value = result.value?;
            let to = pin_eligible(
                standard.direction,
                standard.limit,
                value,
                margin_of(standard),
            )?;
            Some(Pinned {
                name: result.name.clone(),
                from: standard.limit,
                to,
                measured: value,
            })
        })
        .collect();
    if pins.is_empty() {
        return Ok(None);
    }
    let content = edit_limits(config, &pins).map_err(|e| {
        Box::new(Envelope::refusal(
            super::VERB,
            ErrorSlug::Internal,
            e,
            Hint::next_step(HintId::ReportBug, "Report this as a bug in discern."),
        ))
    })?;
    let message = format!(
        "{}\nPinned by `discern done`: gains stick.\n",
        pin_message(config, &pins)
    );
    let commit = commit_pins(ws, branch, &measured, (&config.source, &content), &message)?;
    Ok(Some(Gained { pins, commit }))
}
