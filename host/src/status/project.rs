//! The wire projector (ADR 0306): the single policy for CLI `--json`, MCP `structuredContent`
//! and the `discern://status` resource. Orientation mode (the default) bounds every repeated
//! collection so the size of a status result does not grow with the fleet; full mode keeps
//! everything.

use serde_json::{Map, Value, json};

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
    "id",
    "task",
    "proof",
    "broken",
    "unreadable",
];

/// Fields a sibling's row leaves out in orientation mode (the main and current rows keep them).
const SIBLING_HIDES: &[&str] = &["path", "changed_files"];

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

/// Project the observed status `data` for the wire.
pub fn project(data: &Value, mode: Mode) -> Value {
    let Value::Object(data) = data else {
        return json!({ "projection": { "mode": "orientation" } });
    };
    if mode == Mode::Full {
        let mut out = data.clone();
        let non_main = fleet_rows(data)
            .iter()
            .filter(|r| r["is_main"] != true)
            .count();
        out.insert("fleet_total".to_owned(), json!(non_main));
        out.insert("projection".to_owned(), json!({ "mode": "full" }));
        return Value::Object(out);
    }
    let mut omitted = Map::new();
    let mut out = Map::new();
    for (key, value) in data {
        if key == "fleet" || FULL_ONLY.contains(&key.as_str()) || empty(value) {
            continue;
        }
        out.insert(key.clone(), bound(value, key, &mut omitted));
    }
    let rows = fleet_rows(data);
    let (kept, total_non_main) = sample_fleet(&rows);
    let mut fleet = Vec::new();
    for (i, row) in kept.iter().enumerate() {
        // A sibling effort is named by its id and branch and judged by its state; its folder
        // and its changes are not the caller's to work on (ADR 0306), so only the main and
        // the current row carry their path and their count of changed files.
        let own = row["is_main"] == true || row["is_current"] == true;
        let reduced: Map<String, Value> = row
            .as_object()
            .map(|r| {
                r.iter()
                    .filter(|(k, _)| ROW_FIELDS.contains(&k.as_str()))
                    .filter(|(k, _)| own || !SIBLING_HIDES.contains(&k.as_str()))
                    .filter(|(k, v)| !(ROW_FLAGS.contains(&k.as_str()) && **v == false))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default();
        fleet.push(bound(
            &Value::Object(reduced),
            &format!("fleet[{i}]"),
            &mut omitted,
        ));
    }
    if rows.len() > kept.len() {
        omitted.insert("fleet".to_owned(), json!(rows.len() - kept.len()));
    }
    out.insert("fleet".to_owned(), Value::Array(fleet));
    out.insert("fleet_total".to_owned(), json!(total_non_main));
    let mut projection = Map::new();
    projection.insert("mode".to_owned(), json!("orientation"));
    if !omitted.is_empty() {
        projection.insert("omitted".to_owned(), Value::Object(omitted));
    }
    out.insert("projection".to_owned(), Value::Object(projection));
    Value::Object(out)
}

fn fleet_rows(data: &Map<String, Value>) -> Vec<Value> {
    data.get("fleet")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// The main row plus [`CAP`] non-main rows, attention first: dirty, ready, stale Proof, then
/// the current checkout, then the most recent activity. Returns the rows and the non-main total.
fn sample_fleet(rows: &[Value]) -> (Vec<Value>, usize) {
    let main = rows.iter().find(|r| r["is_main"] == true).cloned();
    let mut others: Vec<&Value> = rows.iter().filter(|r| r["is_main"] != true).collect();
    let total = others.len();
    let rank = |r: &Value| -> u8 {
        let dirty = r["clean"] == false || r["unreadable"] == true || r["broken"] == true;
        let ahead = r["ahead"].as_u64().is_some_and(|n| n > 0);
        let ready = r["clean"] == true && ahead && r["proof"] == "honored";
        let stale = r["proof"] == "stale" || r["proof"] == "dirty";
        if dirty {
            0
        } else if ready {
            1
        } else if stale {
            2
        } else if r["is_current"] == true {
            3
        } else {
            4
        }
    };
    others.sort_by(|a, b| {
        rank(a)
            .cmp(&rank(b))
            .then_with(|| {
                b["last_activity"]
                    .as_str()
                    .unwrap_or("")
                    .cmp(a["last_activity"].as_str().unwrap_or(""))
            })
            .then_with(|| {
                a["path"]
                    .as_str()
                    .unwrap_or("")
                    .cmp(b["path"].as_str().unwrap_or(""))
            })
    });
    let kept = main
        .into_iter()
        .chain(others.into_iter().take(CAP).cloned())
        .collect();
    (kept, total)
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

    fn row(i: usize, clean: bool) -> Value {
        json!({ "path": format!("/w/e{i:03}"), "is_main": false, "is_current": false, "clean": clean, "ahead": 1, "proof": "missing",
                "last_activity": format!("2026-01-01T00:{:02}:00Z", i % 60), "changed_paths": ["a", "b", "c", "d", "e", "f", "g", "h"] })
    }

    #[test]
    fn eighty_efforts_keep_seven_rows_with_exact_totals() {
        let mut fleet =
            vec![json!({ "path": "/w", "is_main": true, "is_current": true, "clean": true })];
        fleet.extend((0..80).map(|i| row(i, i % 20 != 0)));
        let data = json!({ "fleet": fleet, "standards": (0..9).map(|i| format!("s{i}")).collect::<Vec<_>>(),
                           "nested": { "groups": [ { "items": [1, 2, 3, 4, 5, 6, 7, 8] } ] } });
        let out = project(&data, Mode::Orientation);
        let fleet = out["fleet"].as_array().expect("test fixture");
        assert_eq!(fleet.len(), 7);
        assert_eq!(fleet[0]["is_main"], true);
        // Attention first: the 4 dirty rows (i % 20 == 0) lead the sample.
        assert!(
            fleet[1..5].iter().all(|r| r["clean"] == false),
            "{fleet:#?}"
        );
        assert!(
            fleet.iter().all(|r| r.get("changed_paths").is_none()),
            "rows are reduced to the allow-list"
        );
        assert_eq!(out["fleet_total"], 80);
        let omitted = &out["projection"]["omitted"];
        assert_eq!(omitted["fleet"], 74);
        assert_eq!(omitted["standards"], 3);
        assert_eq!(omitted["nested.groups[0].items"], 2);
        assert_eq!(out["projection"]["mode"], "orientation");

        let full = project(&data, Mode::Full);
        assert_eq!(full["fleet"].as_array().expect("test fixture").len(), 81);
        assert_eq!(full["standards"].as_array().expect("test fixture").len(), 9);
        assert_eq!(full["projection"], json!({ "mode": "full" }));
    }

    #[test]
    fn nothing_cut_means_no_omitted_map() {
        let out = project(
            &json!({ "standards": ["a"], "fleet": [] }),
            Mode::Orientation,
        );
        assert_eq!(out["projection"], json!({ "mode": "orientation" }));
        assert_eq!(out["fleet_total"], 0);
    }
}
