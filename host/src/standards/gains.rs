//! Gains stick: at the start of `done`, every gain the branch itself made beyond a Standard's
//! margin (the trunk's margin, so a branch cannot widen its own) is pinned in one config-only
//! commit from the clean HEAD's readings, and the gate then proves that commit.
//!
//! A gain is what the branch made: its reading against the merge base's, by the same
//! definition. A ceiling becomes `min(limit, limit − (base − value))` when that improvement
//! exceeds the margin (a floor likewise upward): where the limit equals the base's reading
//! that is the exact pin; where the owner left headroom, the headroom stays and the gain is
//! banked in it, so a parallel effort that adds a little is not blocked by this one's pin.
//! A Standard the merge base cannot read by the same definition is pinned to its reading, as
//! `standards --pin` pins.

use std::collections::BTreeMap;

use super::pin::{Pinned, commit_pins, edit_limits, pin_message};
use crate::config::{Config, StandardDef};
use crate::measure::{self, EPSILON, Measurement, Verdict, pin_eligible, pin_target};
use crate::result::{ErrorSlug, Hint, HintId, Refusal, Refused};
use crate::runtime::Runtime;
use crate::workspace::Workspace;

/// The verb whose gains are pinned (`done`, at its start), under whose name this refuses.
const VERB: &str = "done";

/// What the branch's gains are counted from: the merge base's readings, of the Standards it
/// defines exactly as the branch does.
#[derive(Debug, Clone, Default)]
pub(crate) struct Base {
    pub readings: BTreeMap<String, f64>,
}

impl Base {
    /// The merge base's config read at `base` for every Standard `config` defines the same way.
    pub(crate) fn measure(
        ws: &Workspace,
        runtime: &Runtime,
        config: &Config,
        (base, base_config): (gix::ObjectId, &Config),
        progress: &(dyn Fn(&str) + Sync),
    ) -> Self {
        let same: Vec<&StandardDef> = base_config
            .standards
            .iter()
            .filter(|b| {
                config.standard(&b.name).is_some_and(|s| {
                    s.definition_fingerprint() == b.definition_fingerprint()
                        && s.needs.is_empty()
                        && s.run.is_none()
                })
            })
            .collect();
        let Ok(snapshot) = ws.repo.snapshot(base) else {
            return Self::default();
        };
        let store = crate::evidence::Store::new(ws.repo.shared_path("evidence"));
        let readings = measure::at::readings(
            ws,
            runtime,
            base_config,
            &same,
            &snapshot,
            Some(&store),
            progress,
        );
        Self { readings }
    }
}

/// The limit a gain moves `standard` to from `value`: the branch's own improvement over `base`
/// taken off the limit, when it exceeds `margin`; without a base reading, the measured value
/// and margin (`pin_eligible`). `None`: nothing to pin.
pub(crate) fn gain_target(
    standard: &StandardDef,
    value: f64,
    margin: f64,
    base: &Base,
) -> Option<f64> {
    let direction = standard.direction;
    let Some(&was) = base.readings.get(&standard.name) else {
        return pin_eligible(direction, standard.limit, value, margin);
    };
    let improvement = match direction {
        crate::config::Direction::Down => was - value,
        crate::config::Direction::Up => value - was,
    };
    if improvement <= margin + EPSILON {
        return None;
    }
    let moved = match direction {
        crate::config::Direction::Down => standard.limit - improvement,
        crate::config::Direction::Up => standard.limit + improvement,
    };
    // Rounded in the looser direction, kept only if the reading holds it and it tightens.
    pin_eligible(direction, standard.limit, value, 0.0)?;
    let target = pin_target(direction, moved, 0.0);
    let holds = Verdict::judge(direction, target, value).passes();
    let tighter = match direction {
        crate::config::Direction::Down => target < standard.limit,
        crate::config::Direction::Up => target > standard.limit,
    };
    (holds && tighter).then_some(target)
}

/// How a gain is counted: each Standard's margin (the trunk's), and the merge base's readings.
pub(crate) struct GainRule<'a> {
    pub margin_of: &'a dyn Fn(&StandardDef) -> f64,
    pub base: &'a Base,
}

/// What `done` pinned before proving.
#[derive(Debug, Clone)]
pub(crate) struct Gained {
    pub pins: Vec<Pinned>,
    pub commit: gix::ObjectId,
}

/// The Standards whose gains can be pinned before the gate: those that read without a job (a
/// job runs in the gate's own stages).
pub(crate) fn pinnable(config: &Config) -> Vec<&StandardDef> {
    config
        .standards
        .iter()
        .filter(|s| s.needs.is_empty() && s.run.is_none())
        .collect()
}

/// Pin the gains of `ctx`'s Standards (see [`pinnable`]), each against `margin_of` its
/// Standard. `None` when nothing is pinned: no gain beyond a margin, or a Standard that fails
/// or is blocked (the gate reports it).
pub(crate) fn pin_gains(
    ctx: &measure::Context,
    (branch, trunk): (&str, &str),
    rule: &GainRule,
) -> Result<Option<Gained>, Refused> {
    let measure::Context {
        ws, config, claims, ..
    } = *ctx;
    if ctx.selected.is_empty() {
        return Ok(None);
    }
    let options = measure::Options {
        trunk: Some(trunk.to_owned()),
        ..measure::Options::default()
    };
    let measured = measure::measure(ctx, &options).map_err(|e| e.refused_by(VERB))?;
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
            let to = gain_target(standard, value, (rule.margin_of)(standard), rule.base)?;
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
        Refused::new(
            ErrorSlug::Internal,
            e,
            Hint::next_step(HintId::ReportBug, "Report this as a bug in discern."),
        )
    })?;
    let message = format!(
        "{}\nPinned by `discern done`: gains stick.\n",
        pin_message(config, &pins)
    );
    let commit = commit_pins(ws, branch, &measured, (&config.source, &content), &message)
        .map_err(|why| why.refused())?;
    Ok(Some(Gained { pins, commit }))
}
