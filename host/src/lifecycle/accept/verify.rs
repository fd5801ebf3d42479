//! The Proof is the gate's record, not the authority: before landing, `accept` judges the
//! Standards of the proven commit again (reusing the evidence the gate recorded for exactly
//! that commit, so it costs nothing when the gate ran), and a Proof whose claims do not hold —
//! a `gate-proof` written by hand, say — lands nothing.

use super::{Landing, VERB};
use crate::measure::{self, EvidenceUse, MeasureError, Measurement};
use crate::result::{Action, ErrorSlug, Hint, HintId, Refused, WithNext};
use crate::runtime::Runtime;
use crate::workspace::Workspace;

/// Every Standard of the proven commit reads and holds against its limit.
pub(super) fn standards_hold(
    ws: &Workspace,
    runtime: &Runtime,
    landing: &Landing,
    say: super::Say,
) -> Result<(), Refused> {
    let Some(config) = landing.config.as_ref() else {
        return Ok(());
    };
    let what = failing(ws, runtime, config, &landing.trunk, say).map_err(|e| e.refused_by(VERB))?;
    let Some(what) = what else {
        return Ok(());
    };
    Err(Refused::new(
        ErrorSlug::GateFailed,
        format!(
            "The Proof says the gate passed on this commit, but {what}; a Proof the gate did not write proves nothing. Nothing landed."
        ),
        Hint::next_step(HintId::FixGate, "Run the gate, then accept"),
    )
    .with_next(Action::new("done")))
}

/// What fails when HEAD's Standards are measured afresh against `trunk` (trusting no evidence
/// or compiled code an agent could have written): `None` when everything holds. `done` asks
/// this before it hands back an existing Proof, `accept` before it lands.
pub(crate) fn failing(
    ws: &Workspace,
    runtime: &Runtime,
    config: &crate::config::Config,
    trunk: &str,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Option<String>, MeasureError> {
    if config.standards.is_empty() {
        return Ok(None);
    }
    let options = measure::Options {
        trunk: Some(trunk.to_owned()),
        evidence: EvidenceUse::Proof,
        ..measure::Options::default()
    };
    let selected: Vec<_> = config.standards.iter().collect();
    let claims = crate::proposals::claims(ws, config);
    let ctx = measure::Context {
        ws,
        runtime,
        config,
        selected: &selected,
        claims: &claims,
        progress,
    };
    let measured = measure::measure(&ctx, &options)?;
    let fails: Vec<String> = measured
        .standards
        .iter()
        .filter(|s| {
            !matches!(s.measurement, Measurement::Measured | Measurement::Reused)
                || s.verdict.is_some_and(|v| !v.passes())
        })
        .map(|s| {
            format!(
                "{} ({})",
                s.name,
                s.note.as_deref().unwrap_or("not measured")
            )
        })
        .collect();
    if fails.is_empty() && !measured.limits.blocking() {
        return Ok(None);
    }
    Ok(Some(match fails.is_empty() {
        true => "its limits are loosened versus the trunk".to_owned(),
        false => format!("measured again, {} fail", fails.join(", ")),
    }))
}
