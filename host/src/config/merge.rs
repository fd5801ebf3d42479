//! Two sides' edits of `discern.toml` merged by meaning, against their common base: a limit
//! one side changed takes that side; a limit both sides tightened takes the tighter; a
//! loosening meeting any other change of the same limit is a conflict, with its reason. The
//! rule is symmetric (a rebase swaps the sides and gets the same result), and the result is
//! never looser than either side. Only limit values are merged: anything else that differs is
//! a conflict for a person (`None` reason: not a limits-only conflict).

use super::{Config, Direction};

/// Why the two sides cannot be merged by meaning.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum LimitConflict {
    #[error("the two sides differ in more than limit values")]
    NotLimitsOnly,
    #[error("{0}")]
    Limit(String),
}

/// `ours` and `theirs` merged against `base` (`None`: the file was added on both sides).
pub(crate) fn merge_limits(
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
        let limit = settle(&mine.name, mine.direction, was, mine.limit, their.limit)?;
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
    name: &str,
    direction: Direction,
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
mod tests {
    use super::*;

    fn config(limit: f64) -> String {
        format!(
            "# a comment that survives\n[standards.todo]\ndirection = \"down\"\nlimit = {limit}\nproducer = \"builtin:pattern\"\nconfig = {{ pattern = \"TODO\", paths = [\"src/**\"] }}\nmetric = \"matches\"\n"
        )
    }

    fn limit(text: &str) -> f64 {
        Config::parse(text).unwrap().standards[0].limit
    }

    #[test]
    fn both_tightened_takes_the_tighter_and_one_side_takes_that_side() {
        let merged = merge_limits(Some(&config(10.0)), &config(8.0), &config(7.0)).unwrap();
        assert_eq!(limit(&merged), 7.0);
        assert!(merged.starts_with("# a comment that survives"));
        let merged = merge_limits(Some(&config(10.0)), &config(10.0), &config(7.0)).unwrap();
        assert_eq!(limit(&merged), 7.0);
    }

    #[test]
    fn a_loosening_against_a_tightening_is_a_conflict_with_its_reason() {
        let err = merge_limits(Some(&config(5.0)), &config(6.0), &config(4.0)).unwrap_err();
        assert!(
            err.to_string().contains("loosens its ceiling 5 -> 6"),
            "{err}"
        );
    }

    #[test]
    fn anything_but_limits_is_not_merged() {
        let other = config(5.0).replace("TODO", "FIXME");
        assert_eq!(
            merge_limits(Some(&config(5.0)), &config(4.0), &other),
            Err(LimitConflict::NotLimitsOnly)
        );
    }

    #[test]
    fn the_merge_is_symmetric_and_never_looser_than_either_side() {
        let values = [1.0, 3.0, 5.0, 7.0, 9.0];
        for base in values {
            for ours in values {
                for theirs in values {
                    let ab = merge_limits(Some(&config(base)), &config(ours), &config(theirs));
                    let ba = merge_limits(Some(&config(base)), &config(theirs), &config(ours));
                    let (ab_limit, ba_limit) = (
                        ab.as_ref().ok().map(|m| limit(m)),
                        ba.as_ref().ok().map(|m| limit(m)),
                    );
                    assert_eq!(ab_limit, ba_limit, "{base} {ours} {theirs}");
                    if let Ok(merged) = ab {
                        let merged = limit(&merged);
                        assert!(merged <= ours && merged <= theirs, "{base} {ours} {theirs}");
                    }
                }
            }
        }
    }
}
