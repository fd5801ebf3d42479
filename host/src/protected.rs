//! Protected changes: what defines the gate itself. Every field of a Standard's definition (a
//! repository component's blob included), its margin, its deletion, and every key of the
//! `[jobs]`, `[acceptance]` and `[repository]` tables. A branch may change them, but they take
//! effect only with the owner's approval of each, by token.

use serde::Serialize;
use serde_json::{Value, json};

use crate::config::{Config, ProducerRef, StandardDef, canonical_json, item_to_json};

/// The tables whose every key is protected.
const TABLES: &[&str] = &["jobs", "acceptance", "repository"];

/// One protected change: `key` went from `old` to `new` (`null` = absent).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct ProtectedChange {
    /// `standard`, `margin` or the table's name.
    pub kind: String,
    /// `standards.<name>.<field>`, `standards.<name>` (deleted), `jobs.<name>`, ….
    pub key: String,
    pub old: Value,
    pub new: Value,
    pub token: String,
}

impl ProtectedChange {
    fn new(kind: &str, key: String, old: Value, new: Value) -> Self {
        let token = token(kind, &key, &old, &new);
        Self {
            kind: kind.to_owned(),
            key,
            old,
            new,
            token,
        }
    }

    /// One line an owner can read: `jobs.test: {"run":"cargo test"} → {"run":"true"}`.
    pub fn line(&self) -> String {
        format!("{}: {} → {}", self.key, shown(&self.old), shown(&self.new))
    }
}

/// sha256 hex of `"discern-protected-change-v1\n"` + canonical JSON `{kind, key, old, new}`.
pub fn token(kind: &str, key: &str, old: &Value, new: &Value) -> String {
    let payload = json!({ "kind": kind, "key": key, "old": old, "new": new });
    let text = format!("discern-protected-change-v1\n{}", canonical_json(&payload));
    crate::digest::Digest::of(text.as_bytes()).hex()
}

/// The blob id of a repository component at the commit its config came from.
pub type BlobAt<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Every protected change from `old` (the trunk's) to `new` (HEAD's), in a stable order.
pub fn changes(
    old: &Config,
    old_blob: BlobAt,
    new: &Config,
    new_blob: BlobAt,
) -> Vec<ProtectedChange> {
    let mut found = Vec::new();
    for before in &old.standards {
        let key = format!("standards.{}", before.name);
        match new.standard(&before.name) {
            None => found.push(ProtectedChange::new(
                "standard",
                key,
                definition(before, old_blob),
                Value::Null,
            )),
            Some(after) => found.extend(standard(before, old_blob, after, new_blob)),
        }
    }
    for table in TABLES {
        found.extend(table_changes(old, new, table));
    }
    found
}

/// A Standard's definition with its limit's meaning: every defining field, the margin, and a
/// repository component's blob.
fn definition(standard: &StandardDef, blob: BlobAt) -> Value {
    let mut fields: serde_json::Map<String, Value> = standard
        .definition()
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
    fields.insert("margin".to_owned(), json!(standard.margin));
    fields.insert("limit".to_owned(), json!(standard.limit));
    if let ProducerRef::Path(path) = &standard.producer {
        fields.insert("producer_blob".to_owned(), json!(blob(path)));
    }
    Value::Object(fields)
}

fn standard(
    before: &StandardDef,
    old_blob: BlobAt,
    after: &StandardDef,
    new_blob: BlobAt,
) -> Vec<ProtectedChange> {
    let (mut old, mut new) = (definition(before, old_blob), definition(after, new_blob));
    // The limit is the ratchet's, judged elsewhere (tightening is free; loosening is proposed).
    for side in [&mut old, &mut new] {
        if let Some(map) = side.as_object_mut() {
            map.remove("limit");
        }
    }
    let (Some(old), Some(new)) = (old.as_object(), new.as_object()) else {
        return Vec::new();
    };
    let mut fields: Vec<&String> = old.keys().chain(new.keys()).collect();
    fields.sort();
    fields.dedup();
    fields
        .into_iter()
        .filter_map(|field| {
            let (a, b) = (
                old.get(field).cloned().unwrap_or(Value::Null),
                new.get(field).cloned().unwrap_or(Value::Null),
            );
            let kind = if field == "margin" {
                "margin"
            } else {
                "standard"
            };
            (a != b).then(|| {
                ProtectedChange::new(kind, format!("standards.{}.{field}", after.name), a, b)
            })
        })
        .collect()
}

/// Every key of `[table]` that differs (a key added or removed is a change too).
fn table_changes(old: &Config, new: &Config, table: &str) -> Vec<ProtectedChange> {
    let read = |config: &Config| match config.document.get(table).map(item_to_json) {
        Some(Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    let (old, new) = (read(old), read(new));
    let mut keys: Vec<&String> = old.keys().chain(new.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter_map(|key| {
            let (a, b) = (
                old.get(key).cloned().unwrap_or(Value::Null),
                new.get(key).cloned().unwrap_or(Value::Null),
            );
            (canonical_json(&a) != canonical_json(&b))
                .then(|| ProtectedChange::new(table, format!("{table}.{key}"), a, b))
        })
        .collect()
}

/// A value for people, bounded.
fn shown(value: &Value) -> String {
    let text = match value {
        Value::Null => "(none)".to_owned(),
        other => canonical_json(other),
    };
    match text.chars().count() > 160 {
        true => format!("{}…", text.chars().take(159).collect::<String>()),
        false => text,
    }
}
