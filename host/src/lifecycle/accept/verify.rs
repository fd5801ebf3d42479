//! The Proof is the gate's record, not the authority: before landing, `accept` judges the
//! Standards of the proven commit again (reusing the evidence the gate recorded for exactly
//! that commit, so it costs nothing when the gate ran), and a Proof whose claims do not hold —
//! a `gate-proof` written by hand, say — lands nothing.

use super::{Landing, VERB};
use crate::result::{Action, Envelope, ErrorSlug, Hint, HintId, WithNext};
use crate::runtime::Runtime;
use crate::standards::{self, EvidenceUse, MeasureOptions, Measurement};
use crate::workspace::Workspace;

/// Every Standard of the proven commit reads and holds against its limit.
pub(super) fn standards_hold(
    ws: &Workspace,
    runtime: &Runtime,
    landing: &Landing,
) -> Result<(), Box<Envelope>> {
    let Some(config) = landing.config.as_ref().filter(|c| !c.standards.is_empty()) else {
        return Ok(());
    };
    let options = MeasureOptions {
        trunk: Some(landing.trunk.clone()),
        evidence: EvidenceUse::Proof,
        ..MeasureOptions::default()
    };
    let selected: Vec<_> = config.standards.iter().collect();
    let claims = crate::proposals::claims(ws, config);
    let measured =
        standards::measure_with(ws, runtime, config, &selected, &options, &claims, &|_| ())?;
    let failing: Vec<String> = measured
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
    if failing.is_empty() && !measured.limits.blocking() {
        return Ok(());
    }
    let what = match failing.is_empty() {
        true => "its limits are loosened versus the trunk".to_owned(),
        false => format!("measured again, {} fail", failing.join(", ")),
    };
    Err(Box::new(
        Envelope::refusal(
            VERB,
            ErrorSlug::GateFailed,
            format!(
                "The Proof says the gate passed on this commit, but {what}; a Proof the gate did not write proves nothing. Nothing landed."
            ),
            Hint::next_step(HintId::FixGate, "Run the gate, then accept"),
        )
        .with_next(Action::new("done")),
    ))
}
