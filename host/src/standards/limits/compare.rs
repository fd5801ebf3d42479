//! Two configs side by side: every change the ratchet forbids without the owner (a Standard
//! redefined, loosened or deleted), and every change that tightens (added or tightened).

use serde_json::Value;

use crate::config::{Config, Direction, StandardDef};

/// A change from one config to the next that only the owner may make.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// A field of the definition changed: `field old → new`, each.
    Redefined {
        standard: String,
        fields: Vec<String>,
    },
    /// The limit moved the way it may not.
    Loosened {
        standard: String,
        direction: Direction,
        from: f64,
        to: f64,
    },
    /// The Standard is gone (renaming is deleting one and adding another).
    Deleted {
        standard: String,
        direction: Direction,
        limit: f64,
    },
}

impl Change {
    pub fn standard(&self) -> &str {
        match self {
            Change::Redefined { standard, .. }
            | Change::Loosened { standard, .. }
            | Change::Deleted { standard, .. } => standard,
        }
    }

    /// What changed, for people: `"Standard x loosens its ceiling 5 -> 6"`.
    pub fn describe(&self) -> String {
        match self {
            Change::Redefined { standard, fields } => {
                format!("Standard {standard} is redefined ({})", fields.join("; "))
            }
            Change::Loosened {
                standard,
                direction,
                from,
                to,
            } => format!(
                "Standard {standard} loosens its {} {from} -> {to}",
                direction.bound()
            ),
            Change::Deleted {
                standard,
                direction,
                limit,
            } => format!(
                "Standard {standard} is deleted (its {} was {limit})",
                direction.bound()
            ),
        }
    }
}

/// Every change from `old` to `new` that only the owner may make, in `old`'s order.
pub fn forbidden(old: &Config, new: &Config) -> Vec<Change> {
    old.standards
        .iter()
        .filter_map(|before| match new.standard(&before.name) {
            None => Some(Change::Deleted {
                standard: before.name.clone(),
                direction: before.direction,
                limit: before.limit,
            }),
            Some(after) => versus(before, after),
        })
        .collect()
}

/// The Standards `new` added, tightened or redefined versus `old`: what a branch forked
/// before them does not have yet.
pub fn arrived(old: &Config, new: &Config) -> Vec<String> {
    new.standards
        .iter()
        .filter_map(|after| match old.standard(&after.name) {
            None => Some(format!("{} added", after.name)),
            Some(before) if !changed_fields(before, after).is_empty() => {
                Some(format!("{} redefined", after.name))
            }
            Some(before) if tighter(after.direction, after.limit, before.limit) => Some(format!(
                "{} tightened {} -> {}",
                after.name, before.limit, after.limit
            )),
            Some(_) => None,
        })
        .collect()
}

fn versus(before: &StandardDef, after: &StandardDef) -> Option<Change> {
    let fields = changed_fields(before, after);
    if !fields.is_empty() {
        return Some(Change::Redefined {
            standard: after.name.clone(),
            fields,
        });
    }
    tighter(after.direction, before.limit, after.limit).then(|| Change::Loosened {
        standard: after.name.clone(),
        direction: after.direction,
        from: before.limit,
        to: after.limit,
    })
}

/// Whether limit `a` is tighter than `b` for `direction`.
fn tighter(direction: Direction, a: f64, b: f64) -> bool {
    match direction {
        Direction::Up => a > b,
        Direction::Down => a < b,
    }
}

/// Every field of the definition that differs, as `field old → new` (values bounded).
fn changed_fields(old: &StandardDef, new: &StandardDef) -> Vec<String> {
    let (old, new) = (old.definition(), new.definition());
    old.iter()
        .filter(|(field, value)| new.get(*field) != Some(value))
        .map(|(field, value)| {
            format!(
                "{field} {} → {}",
                bounded(value),
                bounded(new.get(field).unwrap_or(&Value::Null))
            )
        })
        .collect()
}

fn bounded(value: &Value) -> String {
    let text = match value {
        Value::Null => "(none)".to_owned(),
        other => crate::config::canonical_json(other),
    };
    if text.chars().count() > 120 {
        format!("{}…", text.chars().take(119).collect::<String>())
    } else {
        text
    }
}
