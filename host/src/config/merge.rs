//! Two sides' edits of `discern.toml` merged by meaning, against their common base: a limit
//! one side changed takes that side; a limit both sides tightened takes the tighter; a
//! loosening meeting any other change of the same limit is a conflict, with its reason. The
//! rule is symmetric (a rebase swaps the sides and gets the same result), and the result is
//! never looser than either side. Only limit values are merged: anything else that differs is
//! a conflict for a person (`None` reason: not a limits-only conflict).
//!
//! `update` brings the trunk into a branch and knows which side is the trunk: there a limit the
//! trunk loosened (a landed, approved change) takes the trunk's value even where the branch
//! tightened it (its pin of a gain, measured before the trunk's work came in): the result is the
//! trunk's own limit, never looser than the trunk, and `done` pins the branch's gain again.

use super::{Config, Direction};

/// Why the two sides cannot be merged by meaning.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum LimitConflict {
    #[error("the two sides differ in more than limit values")]
    NotLimitsOnly,
    #[error("{0}")]
    Limit(String),
}

/// Which side, if any, is the trunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sides {
    /// A merge of two branches (git's merge driver, `resolve`): symmetric.
    Peers,
    /// `theirs` is the trunk (`update`).
    TheirsIsTrunk,
}

/// `ours` and `theirs` merged against `base` (`None`: the file was added on both sides).
pub(crate) fn merge_limits(
    base: Option<&str>,
    ours: &str,
    theirs: &str,
) -> Result<String, LimitConflict> {
    merge_with(Sides::Peers, base, ours, theirs)
}

/// [`merge_limits`] where `theirs` is the trunk brought into a branch: a limit the trunk
/// loosened takes the trunk's value, whatever the branch did to it.
pub(crate) fn merge_limits_from_trunk(
    base: Option<&str>,
    ours: &str,
    theirs: &str,
) -> Result<String, LimitConflict> {
    merge_with(Sides::TheirsIsTrunk, base, ours, theirs)
}

fn merge_with(
    sides: Sides,
    base: Option<&str>,
    ours: &str,
    theirs: &str,
) -> Result<String, LimitConflict> {
    let parse = |text: &str| Config::parse(text).map_err(|_| LimitConflict::NotLimitsOnly);
    let (o, t) = (parse(ours)?, parse(theirs)?);
    let b = base.and_then(|text| Config::parse_tolerant(text).ok());
    let mut limits = Vec::new();
    for mine in &o.standards {
        let Some(their) = t.standard(&mine.name) else {
            return Err(LimitConflict::NotLimitsOnly);
        };
        let was = b
            .as_ref()
            .and_then(|b| b.standard(&mine.name))
            .map(|s| s.limit);
        let limit = settle(
            sides,
            (&mine.name, mine.direction),
            was,
            mine.limit,
            their.limit,
        )?;
        limits.push((mine.name.as_str(), limit));
    }
    let merged = t
        .with_limits(&limits)
        .map_err(|_| LimitConflict::NotLimitsOnly)?;
    let same = o
        .with_limits(&limits)
        .map_err(|_| LimitConflict::NotLimitsOnly)?;
    match same == merged && o.standards.len() == t.standards.len() {
        true => Ok(merged),
        false => Err(LimitConflict::NotLimitsOnly),
    }
}

/// One limit: `was` on the base, `ours` and `theirs` on the two sides.
fn settle(
    sides: Sides,
    (name, direction): (&str, Direction),
    was: Option<f64>,
    ours: f64,
    theirs: f64,
) -> Result<f64, LimitConflict> {
    let tighter = |a: f64, b: f64| match direction {
        Direction::Up => a.max(b),
        Direction::Down => a.min(b),
    };
    if ours == theirs {
        return Ok(ours);
    }
    let Some(was) = was else {
        // Added on both sides: each tightens from nothing.
        return Ok(tighter(ours, theirs));
    };
    let loosens = |side: f64| tighter(side, was) == was && side != was;
    if sides == Sides::TheirsIsTrunk && loosens(theirs) && !loosens(ours) {
        return Ok(theirs);
    }
    let conflict = |side: &str, to: f64| {
        LimitConflict::Limit(format!(
            "{name}: {side} loosens its {} {was} -> {to} while the other side changed it too; a loosening is the owner's to approve against the merged limit",
            direction.bound()
        ))
    };
    match (ours == was, theirs == was) {
        (true, _) if loosens(theirs) => Err(conflict("one side", theirs)),
        (true, _) => Ok(theirs),
        (_, true) if loosens(ours) => Err(conflict("one side", ours)),
        (_, true) => Ok(ours),
        _ if loosens(ours) => Err(conflict("one side", ours)),
        _ if loosens(theirs) => Err(conflict("one side", theirs)),
        _ => Ok(tighter(ours, theirs)),
    }
}

#[cfg(test)]
mod tests;
