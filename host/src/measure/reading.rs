//! Judging a reading against its limit, and what a pin would make of it.

use serde::Serialize;

use crate::config::Direction;

/// Readings within this of the limit count as equal to it.
pub(crate) const EPSILON: f64 = 1e-9;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Strictly better than the limit (beyond epsilon).
    Improved,
    Held,
    Regressed,
    /// The count held, but only because fixed findings hid new ones that would breach it.
    Swapped,
    /// Breached, but the baseline breaches too under the same producer and this is no worse:
    /// not this branch's doing (not failing; the owner re-baselines the limit).
    Inherited,
}

impl Verdict {
    /// The wire name (as serialized).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Improved => "improved",
            Verdict::Held => "held",
            Verdict::Regressed => "regressed",
            Verdict::Swapped => "swapped",
            Verdict::Inherited => "inherited",
        }
    }

    pub fn judge(direction: Direction, limit: f64, value: f64) -> Self {
        match direction {
            Direction::Up if value + EPSILON < limit => Verdict::Regressed,
            Direction::Down if value - EPSILON > limit => Verdict::Regressed,
            // Improved only by as much as the limit is written in: a pin (at no margin) would
            // tighten it. A reading that differs below that precision holds it.
            _ if tighter(direction, pin_target(direction, value, 0.0), limit) => Verdict::Improved,
            _ => Verdict::Held,
        }
    }

    pub fn passes(self) -> bool {
        !matches!(self, Verdict::Regressed | Verdict::Swapped)
    }
}

/// Whether `target` is a strictly tighter limit than `limit` in `direction`.
fn tighter(direction: Direction, target: f64, limit: f64) -> bool {
    match direction {
        Direction::Up => target > limit + EPSILON,
        Direction::Down => target < limit - EPSILON,
    }
}

/// The decimals a limit near `value` is written with: 4 significant digits, at least 2
/// (0.2306, 1.235, 83.46, 1234.57), so a rate's limit is neither coarse nor noise.
pub(crate) fn decimals(value: f64) -> i32 {
    if value == 0.0 || !value.is_finite() {
        return 2;
    }
    (3 - value.abs().log10().floor() as i32).clamp(2, 12)
}

/// The limit a pin would set: `value ∓ margin`, rounded to [`decimals`] in the looser
/// direction.
pub(crate) fn pin_target(direction: Direction, value: f64, margin: f64) -> f64 {
    let moved = match direction {
        Direction::Up => value - margin,
        Direction::Down => value + margin,
    };
    let scale = 10f64.powi(decimals(moved));
    // The tiny nudge keeps 0.3 (stored as 0.29999…) from rounding to 0.29; adding 0.0 turns
    // a -0.0 into 0.
    let target = match direction {
        Direction::Up => (moved * scale + 1e-7).floor() / scale,
        Direction::Down => (moved * scale - 1e-7).ceil() / scale,
    };
    target + 0.0
}

/// The pin target if a pin would tighten the limit: the measurement satisfies the target and
/// the target is strictly tighter than the current limit (so gains below the margin stay).
pub(crate) fn pin_eligible(
    direction: Direction,
    limit: f64,
    value: f64,
    margin: f64,
) -> Option<f64> {
    let target = pin_target(direction, value, margin);
    let satisfied = Verdict::judge(direction, target, value).passes();
    let tighter = match direction {
        Direction::Up => target > limit,
        Direction::Down => target < limit,
    };
    (satisfied && tighter).then_some(target)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Direction::{Down, Up};

    #[test]
    fn verdicts_with_epsilon() {
        assert_eq!(Verdict::judge(Up, 80.0, 80.0), Verdict::Held);
        assert_eq!(Verdict::judge(Up, 80.0, 80.0 - 1e-10), Verdict::Held);
        assert_eq!(Verdict::judge(Up, 80.0, 79.99), Verdict::Regressed);
        assert_eq!(Verdict::judge(Up, 80.0, 80.5), Verdict::Improved);
        assert_eq!(Verdict::judge(Down, 1.2, 1.2 + 1e-10), Verdict::Held);
        assert_eq!(Verdict::judge(Down, 1.2, 1.3), Verdict::Regressed);
        assert_eq!(Verdict::judge(Down, 1.2, 0.7), Verdict::Improved);
        // Below the precision the limit is written in, a reading holds it: no lasting
        // "improved" that no pin can take.
        assert_eq!(
            Verdict::judge(Down, 0.2306, 0.230553683538467),
            Verdict::Held
        );
        assert_eq!(Verdict::judge(Down, 0.2306, 0.2304), Verdict::Improved);
    }

    #[test]
    fn pin_rounds_loosely_and_only_tightens() {
        assert_eq!(pin_target(Up, 83.456, 0.0), 83.45);
        assert_eq!(pin_target(Down, 0.301, 0.0), 0.301);
        assert_eq!(pin_target(Down, 0.230553683538467, 0.0), 0.2306);
        assert_eq!(pin_target(Down, 1.2345, 0.0), 1.235);
        assert_eq!(pin_target(Up, 1234.5678, 0.0), 1234.56);
        assert_eq!(pin_target(Down, 0.3, 0.0), 0.3);
        assert_eq!(pin_target(Up, 0.3, 0.0), 0.3);
        assert!(pin_target(Down, 0.0, 0.0).is_sign_positive(), "never -0");
        assert_eq!(pin_eligible(Up, 80.0, 83.456, 1.0), Some(82.45));
        assert_eq!(
            pin_eligible(Up, 80.0, 80.5, 1.0),
            None,
            "gain below the margin"
        );
        assert_eq!(pin_eligible(Down, 10.0, 4.0, 0.5), Some(4.5));
        assert_eq!(
            pin_eligible(Down, 4.0, 4.0, 0.0),
            None,
            "not strictly tighter"
        );
        assert_eq!(pin_eligible(Up, 80.0, 79.0, 0.0), None, "regressed");
    }
}
