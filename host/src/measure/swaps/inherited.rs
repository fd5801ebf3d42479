//! A breach the baseline has too: `inherited` only when the baseline breached its own limit
//! (the limit its own `discern.toml` held), never because it is over the limit this branch
//! wrote. A branch that tightened a limit the trunk later loosened by approval breaches its
//! own, tighter limit: that is the branch's, and fails.

use gix::ObjectId;

use super::{Base, BaselineKind, Batch, Reading, StandardDef, StandardResult, Verdict};
use crate::config::Config;
use crate::git::short;

/// What a regressed reading's baseline says about the breach.
pub(super) enum Inheritance {
    /// The baseline breached its own limit too, no better: the advisory, and the Standard's
    /// entry of a proposal batch (`{"name", "reason"}`).
    Inherited(String, serde_json::Value),
    /// The baseline held its own limit: this branch's limit is tighter than the trunk's now.
    HeldItsOwn(String),
}

/// One command that re-baselines every inherited breach in one config-only commit, when there
/// are several: the proposal batch (ADR 0405) on standard input.
pub(super) fn rebaseline_all(rebaselines: &[serde_json::Value]) -> Option<String> {
    if rebaselines.len() < 2 {
        return None;
    }
    let batch = serde_json::Value::Array(rebaselines.to_vec()).to_string();
    Some(format!(
        "{} Standards inherit their breach; the owner re-baselines them all in one config-only commit from an effort: `echo '{}' | discern standards propose --batch -`, then `discern approve` and `discern accept`.",
        rebaselines.len(),
        batch.replace('\'', r"'\''"),
    ))
}

/// A breach the baseline has too, against the baseline's own limit, measured by the same
/// producer, and no worse here: not this branch's doing (a producer whose reading moved in a
/// new version, or a trunk that already breached). The verdict becomes `inherited` (not
/// failing), and the advisory names the producer and the owner's way to re-baseline the limit.
/// A baseline that held its own limit leaves the breach this branch's, with the advisory why.
pub(super) fn inherited(
    batch: &Batch,
    standard: &StandardDef,
    result: &mut StandardResult,
    reading: &Reading,
    base: Option<&Base>,
) -> Option<Inheritance> {
    // Only a branch inherits: the trunk holds its own limits, so a merge base that breaches
    // under this producer means the producer's reading moved (or the trunk broke). On the trunk
    // a breach is always a regression, or one commit after it would pass.
    let on_branch = batch.limits.summary.baseline_kind == Some(BaselineKind::MergeBase);
    if result.verdict != Some(Verdict::Regressed) || standard.per.is_some() || !on_branch {
        return None;
    }
    let (Some(base), Ok(metrics)) = base? else {
        return None;
    };
    let base_value = metrics.iter().find(|m| m.name == reading.metric)?.value;
    let value = result.value?;
    let direction = standard.direction;
    // A baseline whose own limit cannot be read inherits nothing: the breach stays failing.
    let base_limit = own_limit(batch, *base, standard)?;
    if Verdict::judge(direction, base_limit, base_value) != Verdict::Regressed {
        // Said only where it explains something: this branch's limit is the tighter one.
        let tighter = Verdict::judge(direction, standard.limit, base_limit) == Verdict::Regressed;
        return tighter.then(|| {
            Inheritance::HeldItsOwn(held_its_own(standard, *base, base_limit, base_value))
        });
    }
    if Verdict::judge(direction, base_value, value) == Verdict::Regressed {
        return None;
    }
    let producer = producer_version(batch, reading);
    let base = short(&base.to_string());
    result.verdict = Some(Verdict::Inherited);
    result.note = Some(format!(
        "{value} {} breaches the {} {}, as the baseline {base} does ({base_value}) under the same producer {producer}: not this branch's doing",
        standard.metric,
        direction.bound(),
        standard.limit,
    ));
    let reason = format!("{producer} reads {base_value} at {base}");
    let advisory = format!(
        "Standard {}: the baseline {base} breaches its {} {base_limit} too ({base_value} under {producer}), so the breach is inherited: the producer's reading moved (see the release notes) or the trunk already breached. The owner re-baselines it in one config-only commit from an effort: `discern standards propose {} --reason \"{reason}\"`, then `discern approve` and `discern accept`.",
        standard.name,
        direction.bound(),
        standard.name,
    );
    let entry = serde_json::json!({ "name": standard.name, "reason": reason });
    Some(Inheritance::Inherited(advisory, entry))
}

/// The limit `standard` had in the baseline's own `discern.toml`.
fn own_limit(batch: &Batch, base: ObjectId, standard: &StandardDef) -> Option<f64> {
    let config = Config::at(batch.repo, base).ok()??;
    let own = config.standards.iter().find(|s| s.name == standard.name)?;
    Some(own.limit)
}

/// Why a breach the baseline also reads is still this branch's.
fn held_its_own(
    standard: &StandardDef,
    base: ObjectId,
    base_limit: f64,
    base_value: f64,
) -> String {
    let bound = standard.direction.bound();
    format!(
        "Standard {name}: the baseline {base} holds its own {bound} {base_limit} ({base_value}), so this branch's breach of its {bound} {limit} is its own, not inherited: this branch's {limit} is tighter than the trunk's {base_limit} now. Get back within {limit} by changing the code, or write the trunk's limit back (`limit = {base_limit}` in [standards.{name}] of discern.toml: no loosening against the trunk), commit, and run `discern standards` again.",
        name = standard.name,
        base = short(&base.to_string()),
        limit = standard.limit,
    )
}

/// `builtin:pattern 0.2.0`: the producer and the version its `describe()` declares.
fn producer_version(batch: &Batch, reading: &Reading) -> String {
    let execution = &batch.plan.executions[reading.execution];
    let version = execution
        .component
        .as_ref()
        .ok()
        .and_then(|c| batch.runtime.describe(c).ok())
        .map(|info| info.version);
    match version {
        Some(version) => format!("{} {version}", execution.producer),
        None => execution.producer.clone(),
    }
}
