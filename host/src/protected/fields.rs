//! The config side of the protected set: every field of a Standard, and every key of every
//! other table.

use serde_json::{Map, Value, json};

use super::{GateChanges, Loosening, ProtectedChange};
use crate::config::{
    Config, Direction, Per, ProducerRef, StandardDef, canonical_json, item_to_json,
};
use crate::git::RepoError;

/// The blob id of a repository component on one side (`None`: not there).
pub(super) type BlobAt<'a> = &'a dyn Fn(&str) -> Result<Option<String>, RepoError>;

/// Fields whose change gives the limit another meaning (after which the numbers are not
/// compared: the limit's own change is then protected too).
const MEANING: &[&str] = &[
    "direction",
    "producer",
    "producer_blob",
    "config",
    "metric",
    "per",
    "scale",
    "needs",
    "artifact",
    "inputs",
    "run",
    "findings",
];

/// Every field of `standard`, defaults applied, plus its component's blob and any key of its
/// table this version does not know (a tolerant read of another version's config).
pub(super) fn fields(
    config: &Config,
    standard: &StandardDef,
    blob: BlobAt,
) -> Result<Map<String, Value>, RepoError> {
    let mut needs = standard.needs.clone();
    needs.sort();
    needs.dedup();
    let per = match &standard.per {
        None => Value::Null,
        Some(Per::Metric(m)) => json!(m),
        Some(Per::Extent { kind, paths }) => json!({ kind.as_str(): paths }),
    };
    let mut map = Map::new();
    map.insert("direction".into(), json!(standard.direction.as_str()));
    map.insert("producer".into(), json!(producer(&standard.producer)));
    map.insert("config".into(), standard.config.clone());
    map.insert("metric".into(), json!(standard.metric));
    map.insert("per".into(), per);
    map.insert("scale".into(), json!(standard.scale));
    map.insert("margin".into(), json!(standard.margin));
    map.insert("timeout".into(), json!(standard.timeout));
    map.insert("needs".into(), json!(needs));
    map.insert("artifact".into(), json!(standard.artifact));
    map.insert("inputs".into(), json!(standard.inputs));
    map.insert("run".into(), json!(standard.run));
    map.insert("findings".into(), json!(standard.findings.as_str()));
    if let ProducerRef::Path(path) = &standard.producer {
        map.insert("producer_blob".into(), json!(blob(path)?));
    }
    for (key, value) in raw_table(config, &standard.name) {
        if !crate::config::STANDARD_KEYS.contains(&key.as_str()) {
            map.insert(key, value);
        }
    }
    Ok(map)
}

/// What a producer is, for the protected set: a registry component by its registry, repository
/// and digest, its tag left out (a tag changed with the digest kept runs the same bytes; a new
/// digest is a new component, like a committed component's new blob).
fn producer(producer: &ProducerRef) -> String {
    match producer {
        ProducerRef::Oci(reference) => reference.pinned(),
        other => other.label(),
    }
}

/// The Standard's table as written.
fn raw_table(config: &Config, name: &str) -> Map<String, Value> {
    let table = config
        .document
        .get("standards")
        .and_then(|s| s.get(name))
        .map(item_to_json);
    match table {
        Some(Value::Object(map)) => map,
        _ => Map::new(),
    }
}

/// One Standard of the old side judged against the new side's (`None`: deleted).
pub(super) fn standard(
    (old, before, old_blob): (&Config, &StandardDef, BlobAt),
    after: Option<(&Config, &StandardDef, BlobAt)>,
    changes: &mut GateChanges,
) -> Result<(), RepoError> {
    let mut old_fields = fields(old, before, old_blob)?;
    let Some((new, after, new_blob)) = after else {
        old_fields.insert("limit".into(), json!(before.limit));
        changes.protected.push(ProtectedChange::new(
            "standard",
            format!("standards.{}", before.name),
            Value::Object(old_fields),
            Value::Null,
        ));
        return Ok(());
    };
    let new_fields = fields(new, after, new_blob)?;
    let differing = differing(&old_fields, &new_fields);
    let redefined = differing
        .iter()
        .any(|(k, _, _)| MEANING.contains(&k.as_str()));
    for (field, a, b) in differing {
        let kind = if field == "margin" {
            "margin"
        } else {
            "standard"
        };
        let key = format!("standards.{}.{field}", after.name);
        changes
            .protected
            .push(ProtectedChange::new(kind, key, a, b));
    }
    if redefined && before.limit != after.limit {
        let key = format!("standards.{}.limit", after.name);
        let change = ProtectedChange::new("standard", key, json!(before.limit), json!(after.limit));
        changes.protected.push(change);
    } else if !redefined && tighter(after.direction, before.limit, after.limit) {
        changes.loosened.push(Loosening {
            standard: after.name.clone(),
            direction: after.direction,
            from: before.limit,
            to: after.limit,
        });
    }
    Ok(())
}

/// A Standard only the new side has: free (a new limit only tightens the gate) unless it runs
/// something — a command (`run`), a job (`needs`), a repository or registry component — which is a
/// protected change like an edited one: its definition, every field but the numbers a branch may
/// move on its own (`limit`, `margin`), in one item the owner approves.
pub(super) fn added(
    new: &Config,
    after: &StandardDef,
    new_blob: BlobAt,
    changes: &mut GateChanges,
) -> Result<(), RepoError> {
    if !runs_something(after) {
        return Ok(());
    }
    let mut definition = fields(new, after, new_blob)?;
    definition.remove("margin");
    changes.protected.push(ProtectedChange::new(
        "standard",
        format!("standards.{}", after.name),
        Value::Null,
        Value::Object(definition),
    ));
    Ok(())
}

/// Whether measuring `standard` runs anything of the repository's besides the sandboxed
/// built-ins: a command, a job, or a component committed there or pinned in a registry.
pub(super) fn runs_something(standard: &StandardDef) -> bool {
    standard.run.is_some()
        || !standard.needs.is_empty()
        || matches!(
            standard.producer,
            ProducerRef::Path(_) | ProducerRef::Oci(_)
        )
}

/// Every field whose value differs (a field on one side only is `null` on the other), sorted.
fn differing(old: &Map<String, Value>, new: &Map<String, Value>) -> Vec<(String, Value, Value)> {
    let mut keys: Vec<&String> = old.keys().chain(new.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter_map(|key| {
            let a = old.get(key).cloned().unwrap_or(Value::Null);
            let b = new.get(key).cloned().unwrap_or(Value::Null);
            (canonical_json(&a) != canonical_json(&b)).then(|| (key.clone(), a, b))
        })
        .collect()
}

/// Whether limit `a` is tighter than `b` for `direction`.
pub(crate) fn tighter(direction: Direction, a: f64, b: f64) -> bool {
    match direction {
        Direction::Up => a > b,
        Direction::Down => a < b,
    }
}

/// Every key of every top-level table but `[standards]` that differs, as written (a key added
/// or removed is a change too; a top-level value that is not a table is compared whole).
pub(super) fn tables(old: &Config, new: &Config) -> Vec<ProtectedChange> {
    let (old, new) = (top_level(old), top_level(new));
    let mut names: Vec<&String> = old.keys().chain(new.keys()).collect();
    names.sort();
    names.dedup();
    let mut found = Vec::new();
    for name in names {
        let (a, b) = (
            old.get(name).cloned().unwrap_or(Value::Null),
            new.get(name).cloned().unwrap_or(Value::Null),
        );
        match (&a, &b) {
            (Value::Object(_) | Value::Null, Value::Object(_) | Value::Null) => {
                let (a, b) = (as_map(a), as_map(b));
                for (key, old, new) in differing(&a, &b) {
                    found.push(ProtectedChange::new(
                        name,
                        format!("{name}.{key}"),
                        old,
                        new,
                    ));
                }
            }
            _ if canonical_json(&a) != canonical_json(&b) => {
                found.push(ProtectedChange::new(name, name.clone(), a, b));
            }
            _ => {}
        }
    }
    found
}

fn top_level(config: &Config) -> Map<String, Value> {
    config
        .document
        .iter()
        .filter(|(name, _)| *name != "standards")
        .map(|(name, item)| (name.to_owned(), item_to_json(item)))
        .collect()
}

fn as_map(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}
