//! The wire projector (ADR 0306): the single policy for CLI `--json`, MCP `structuredContent`
//! and the `discern://status` resource. Orientation mode (the default) bounds every repeated
//! collection so the size of a status result does not grow with the fleet; full mode keeps
//! everything.

use serde_json::{Map, Value, json};

use super::observation::{FleetRow, GitCount, Observation};
use crate::proof::ProofState;

/// Items any array keeps in orientation mode.
pub const CAP: usize = 6;

/// Fields a fleet row keeps in orientation mode. Its last activity only orders the sample.
const ROW_FIELDS: &[&str] = &[
    "path",
    "is_main",
    "is_current",
    "branch",
    "clean",
    "changed_files",
    "ahead",
    "behind",
    "line",
    "id",
    "task",
    "proof",
    "awaiting_approval",
    "approved_by",
    "setup",
    "collisions",
    "running",
    "broken",
    "unreadable",
];

/// Fields a sibling's row leaves out in orientation mode (the main and current rows keep them).
const SIBLING_HIDES: &[&str] = &["path", "changed_files"];

/// Fields the current checkout's row leaves out in orientation mode: `data.root`, `data.git`
/// and `data.proof` already say them, once.
const CURRENT_HIDES: &[&str] = &[
    "path",
    "branch",
    "clean",
    "changed_files",
    "ahead",
    "behind",
    "proof",
];

/// Row flags orientation mode shows only when they are true (most rows are neither).
const ROW_FLAGS: &[&str] = &["is_main", "is_current", "broken", "unreadable"];

/// Whether orientation mode leaves `value` out: nothing observed (an empty list, no task).
fn empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(items) => items.is_empty(),
        _ => false,
    }
}

/// Fields only full mode shows (history and per-row detail).
const FULL_ONLY: &[&str] = &["landing_history"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Orientation,
    Full,
}

/// What the projector made of an observation: the wire data, and which fleet rows it kept
/// (indices into the observation's fleet, main first), for the report to describe.
#[derive(Debug, Clone)]
pub struct Projected {
    pub data: Value,
    pub sample: Vec<usize>,
    /// Every non-main row, shown or not.
    pub fleet_total: usize,
}

/// Project an observation for the wire: serialized last, then bounded by `mode`. An
/// observation that cannot be written as JSON (a bug) is an error, never `null`.
pub fn project(observation: &Observation, mode: Mode) -> Result<Projected, serde_json::Error> {
    let data = serde_json::to_value(observation)?;
    let fleet = &observation.fleet;
    let fleet_total = fleet.iter().filter(|r| !r.is_main).count();
    let sample = match mode {
        Mode::Full => (0..fleet.len()).collect(),
        Mode::Orientation => sample_fleet(fleet),
    };
    // The rows kept, serialized from the observation's own rows.
    let rows = (sample.iter().filter_map(|&i| fleet.get(i)))
        .map(serde_json::to_value)
        .collect::<Result<Vec<_>, _>>()?;
    let fleet = (&rows[..], fleet.len(), fleet_total);
    Ok(Projected {
        data: project_value(&data, fleet, mode),
        sample,
        fleet_total,
    })
}

/// The serialized observation `data`, bounded: every array cut to [`CAP`], the fleet to the
/// sampled `rows` (of `all` rows, `fleet_total` of them not main) reduced to their allow-list
/// (orientation), or everything (full).
fn project_value(
    data: &Value,
    (rows, all, fleet_total): (&[Value], usize, usize),
    mode: Mode,
) -> Value {
    let Value::Object(data) = data else {
        return json!({ "projection": { "mode": "orientation" } });
    };
    if mode == Mode::Full {
        let mut out = data.clone();
        out.insert("fleet_total".to_owned(), json!(fleet_total));
        out.insert("projection".to_owned(), json!({ "mode": "full" }));
        return Value::Object(out);
    }
    let mut omitted = Map::new();
    let mut out = Map::new();
    for (key, value) in data {
        if key == "fleet" || FULL_ONLY.contains(&key.as_str()) || empty(value) {
            continue;
        }
        let value = match key.as_str() {
            "proof" => without_nulls(value),
            _ => value.clone(),
        };
        out.insert(key.clone(), bound(&value, key, &mut omitted));
    }
    let mut fleet = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        fleet.push(bound(&reduced(row), &format!("fleet[{i}]"), &mut omitted));
    }
    if all > rows.len() {
        omitted.insert("fleet".to_owned(), json!(all - rows.len()));
    }
    out.insert("fleet".to_owned(), Value::Array(fleet));
    out.insert("fleet_total".to_owned(), json!(fleet_total));
    let mut projection = Map::new();
    projection.insert("mode".to_owned(), json!("orientation"));
    if !omitted.is_empty() {
        projection.insert("omitted".to_owned(), Value::Object(omitted));
    }
    out.insert("projection".to_owned(), Value::Object(projection));
    Value::Object(out)
}

/// An object without its `null` members: a Proof that is missing has no line and no commit,
/// and orientation mode does not spell that out.
fn without_nulls(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A fleet row reduced to the orientation allow-list.
fn reduced(row: &Value) -> Value {
    // A sibling effort is named by its id and branch and judged by its state; its folder
    // and its changes are not the caller's to work on (ADR 0306), so only the main and
    // the current row carry their path and their count of changed files. The current row
    // is this checkout, whose state the result states once (`root`, `git`, `proof`).
    // A row serialized from a `FleetRow` is an object; anything else has no field to hide.
    let Value::Object(fields) = row else {
        return row.clone();
    };
    let current = row["is_current"] == true;
    let own = row["is_main"] == true || current;
    let fields: Map<String, Value> = fields
        .iter()
        .filter(|(k, _)| ROW_FIELDS.contains(&k.as_str()))
        .filter(|(k, _)| own || !SIBLING_HIDES.contains(&k.as_str()))
        .filter(|(k, _)| !current || !CURRENT_HIDES.contains(&k.as_str()))
        .filter(|(k, v)| !(ROW_FLAGS.contains(&k.as_str()) && **v == false))
        .map(|(k, v)| (k.clone(), counted(k, v)))
        .collect();
    Value::Object(fields)
}

/// A row's field as orientation shows it: a collision names the other effort and how many
/// files both changed; the paths are full mode's.
fn counted(key: &str, value: &Value) -> Value {
    match (key, value) {
        ("collisions", Value::Array(items)) => Value::Array(
            items
                .iter()
                .map(|c| json!({ "effort": c["effort"], "files": c["files"] }))
                .collect(),
        ),
        _ => value.clone(),
    }
}

/// The main row plus [`CAP`] non-main rows, attention first: dirty, ready, stale Proof, then
/// the current checkout, then the most recent activity, then by path. Indices into `rows`.
fn sample_fleet(rows: &[FleetRow]) -> Vec<usize> {
    let rank = |r: &FleetRow| -> u8 {
        let dirty = r.clean == Some(false) || r.unreadable || r.broken || r.setup.is_some();
        let ahead = matches!(r.ahead, Some(GitCount::Known(n)) if n > 0);
        let ready = r.clean == Some(true) && ahead && r.proof == Some(ProofState::Honored);
        let stale = matches!(r.proof, Some(ProofState::Stale | ProofState::Dirty));
        match () {
            _ if dirty => 0,
            _ if ready => 1,
            _ if stale => 2,
            _ if r.is_current => 3,
            _ => 4,
        }
    };
    let mut others: Vec<usize> = (0..rows.len()).filter(|i| !rows[*i].is_main).collect();
    others.sort_by(|a, b| {
        let (a, b) = (&rows[*a], &rows[*b]);
        rank(a)
            .cmp(&rank(b))
            .then_with(|| b.last_activity_secs.cmp(&a.last_activity_secs))
            .then_with(|| a.path.cmp(&b.path))
    });
    let main = rows.iter().position(|r| r.is_main);
    main.into_iter()
        .chain(others.into_iter().take(CAP))
        .collect()
}

/// Cut every array at any depth to [`CAP`] items, recording what was hidden under its dotted,
/// indexed path.
fn bound(value: &Value, path: &str, omitted: &mut Map<String, Value>) -> Value {
    match value {
        Value::Array(items) => {
            if items.len() > CAP {
                omitted.insert(path.to_owned(), json!(items.len() - CAP));
            }
            Value::Array(
                items
                    .iter()
                    .take(CAP)
                    .enumerate()
                    .map(|(i, item)| bound(item, &format!("{path}[{i}]"), omitted))
                    .collect(),
            )
        }
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), bound(v, &format!("{path}.{k}"), omitted)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(i: usize, clean: bool) -> FleetRow {
        FleetRow {
            path: format!("/w/e{i:03}"),
            branch: Some(format!("agent/e{i:03}")),
            clean: Some(clean),
            changed_files: Some(usize::from(!clean)),
            ahead: Some(GitCount::Known(1)),
            behind: Some(GitCount::Known(0)),
            last_activity_secs: Some((i % 60) as u64),
            id: format!("e{i:03}"),
            proof: Some(ProofState::Missing),
            changed_paths: (0..8).map(|n| format!("p{n}")).collect(),
            ..FleetRow::default()
        }
    }

    #[test]
    fn eighty_efforts_keep_seven_rows_attention_first() {
        let mut fleet = vec![FleetRow {
            is_main: true,
            is_current: true,
            ..row(999, true)
        }];
        fleet.extend((0..80).map(|i| row(i, i % 20 != 0)));
        let sample = sample_fleet(&fleet);
        assert_eq!(sample.len(), 7);
        assert_eq!(sample[0], 0, "the main row first");
        // Attention first: the 4 dirty rows (i % 20 == 0) lead the sample.
        assert!(sample[1..5].iter().all(|i| fleet[*i].clean == Some(false)));
        let data = json!({ "fleet": fleet, "standards": (0..9).map(|i| format!("s{i}")).collect::<Vec<_>>(),
                           "nested": { "groups": [ { "items": [1, 2, 3, 4, 5, 6, 7, 8] } ] } });
        let rows_at =
            |at: &[usize]| -> Vec<Value> { at.iter().map(|i| json!(fleet[*i])).collect() };
        let out = project_value(
            &data,
            (&rows_at(&sample), fleet.len(), 80),
            Mode::Orientation,
        );
        let rows = out["fleet"].as_array().expect("test fixture");
        assert_eq!(rows.len(), 7);
        assert!(
            rows.iter().all(|r| r.get("changed_paths").is_none()),
            "rows are reduced to the allow-list"
        );
        assert!(
            rows[1..].iter().all(|r| r.get("path").is_none()),
            "a sibling's row leaves out its path"
        );
        assert_eq!(out["fleet_total"], 80);
        let omitted = &out["projection"]["omitted"];
        assert_eq!(omitted["fleet"], 74);
        assert_eq!(omitted["standards"], 3);
        assert_eq!(omitted["nested.groups[0].items"], 2);
        assert_eq!(out["projection"]["mode"], "orientation");

        let all: Vec<usize> = (0..fleet.len()).collect();
        let full = project_value(&data, (&rows_at(&all), fleet.len(), 80), Mode::Full);
        assert_eq!(full["fleet"].as_array().expect("test fixture").len(), 81);
        assert_eq!(full["standards"].as_array().expect("test fixture").len(), 9);
        assert_eq!(full["projection"], json!({ "mode": "full" }));
    }

    #[test]
    fn nothing_cut_means_no_omitted_map() {
        let out = project_value(
            &json!({ "standards": ["a"], "fleet": [] }),
            (&[], 0, 0),
            Mode::Orientation,
        );
        assert_eq!(out["projection"], json!({ "mode": "orientation" }));
        assert_eq!(out["fleet_total"], 0);
    }
}
