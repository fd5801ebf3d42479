//! A built-in producer's `config`, checked before anything runs: against the config schema the
//! built-in publishes through `describe()` (the same file, `producers/<name>/config.schema.json`),
//! plus the rules a schema cannot say well (which keys go together, pathspecs as the snapshot
//! reads them), so a bad key is refused with its line and the allowed values, never ignored.

use serde_json::{Map, Value};

use crate::snapshot::Pathspec;

pub(super) use super::schema::ConfigProblem as Problem;
use super::schema::ConfigSchema;

fn schema(builtin: &str) -> Option<&'static str> {
    Some(match builtin {
        "extent" => include_str!("../../../../../producers/extent/config.schema.json"),
        "pattern" => include_str!("../../../../../producers/pattern/config.schema.json"),
        "lcov" => include_str!("../../../../../producers/lcov/config.schema.json"),
        "discern-metric" => {
            include_str!("../../../../../producers/discern-metric/config.schema.json")
        }
        "file-size" => include_str!("../../../../../producers/file-size/config.schema.json"),
        "sarif" => include_str!("../../../../../producers/sarif/config.schema.json"),
        _ => return None,
    })
}

/// Every problem of `config` for `builtin:<builtin>`.
pub(super) fn problems(builtin: &str, config: &Map<String, Value>) -> Vec<Problem> {
    let label = format!("builtin:{builtin}");
    let Some(schema) = schema(builtin).and_then(|s| ConfigSchema::parse(&label, s).ok()) else {
        return Vec::new();
    };
    let mut problems = schema.problems_described(config, &|key| key_schema(schema.value(), key));
    if problems.is_empty() {
        problems.extend(combinations(builtin, config));
        problems.extend(pathspecs(config));
        problems.extend(regex(builtin, config));
    }
    problems
}

/// `builtin:pattern`'s `pattern`, compiled by the engine the producer uses.
fn regex(builtin: &str, config: &Map<String, Value>) -> Option<Problem> {
    let pattern = config.get("pattern").and_then(Value::as_str)?;
    if builtin != "pattern" {
        return None;
    }
    let error = regex::bytes::RegexBuilder::new(pattern).build().err()?;
    Some(Problem {
        key: Some("pattern".to_owned()),
        message: format!("is not a valid regex (Rust regex syntax): {error}"),
    })
}

fn key_schema(schema: &Value, key: &str) -> String {
    match schema["properties"][key]["type"].clone() {
        Value::String(t) if t == "string" => "a non-empty string".to_owned(),
        Value::String(t) if t == "boolean" => "true or false".to_owned(),
        Value::String(t) if t == "integer" => "a non-negative integer".to_owned(),
        Value::Array(_) => "a non-empty list of pathspecs such as [\"src/**/*.rs\"]".to_owned(),
        other => other.to_string(),
    }
}

/// Keys that exclude each other.
fn combinations(builtin: &str, config: &Map<String, Value>) -> Option<Problem> {
    let present = |k: &str| config.contains_key(k);
    let message = match builtin {
        "file-size"
            if ["path", "paths", "artifact"]
                .iter()
                .filter(|k| present(k))
                .count()
                != 1 =>
        {
            "builtin:file-size takes exactly one of config.path (one file), config.paths (pathspecs) or config.artifact"
        }
        "lcov" if present("path") && present("artifact") => {
            "builtin:lcov takes config.path (a committed tracefile) or config.artifact, not both"
        }
        "sarif" if present("path") && present("artifact") => {
            "builtin:sarif takes config.path (a committed SARIF log) or config.artifact, not both"
        }
        _ => return None,
    };
    Some(Problem {
        key: None,
        message: message.to_owned(),
    })
}

/// `paths` as the snapshot will read them.
fn pathspecs(config: &Map<String, Value>) -> Vec<Problem> {
    let specs: Vec<&str> = match config.get("paths") {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    specs
        .into_iter()
        .filter_map(|spec| Pathspec::check(spec).err())
        .map(|e| Problem {
            key: Some("paths".to_owned()),
            message: e.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(builtin: &str, config: Value) -> Vec<String> {
        let Value::Object(config) = config else {
            panic!("not a table")
        };
        problems(builtin, &config)
            .into_iter()
            .map(|p| format!("{}: {}", p.key.unwrap_or_default(), p.message))
            .collect()
    }

    #[test]
    fn every_builtin_has_a_readable_schema() {
        for name in crate::builtins::names() {
            let schema = schema(name).unwrap_or_else(|| panic!("{name} has no schema"));
            let schema: Value = serde_json::from_str(schema).expect("the schema is JSON");
            assert!(jsonschema::validator_for(&schema).is_ok(), "{name}");
        }
    }

    #[test]
    fn unknown_keys_missing_keys_and_types_are_named() {
        let unknown = messages("extent", serde_json::json!({"paths": ["a"], "path": "b"}));
        assert_eq!(
            unknown,
            ["path: is not a config key of builtin:extent (allowed: paths)"]
        );
        let missing = messages("pattern", serde_json::json!({"paths": ["a"]}));
        assert_eq!(missing, [": builtin:pattern needs config.pattern"]);
        let typed = messages(
            "pattern",
            serde_json::json!({"paths": ["a"], "pattern": "x", "max_findings": -1}),
        );
        assert!(typed[0].starts_with("max_findings: "), "{typed:?}");
        assert!(typed[0].contains("a non-negative integer"), "{typed:?}");
        let both = messages("lcov", serde_json::json!({"path": "a", "artifact": "b"}));
        assert!(both[0].contains("not both"), "{both:?}");
        let none = messages("file-size", serde_json::json!({}));
        assert!(none[0].contains("exactly one"), "{none:?}");
        let braces = messages("extent", serde_json::json!({"paths": ["*.{rs,toml}"]}));
        assert!(braces[0].contains("\"*.rs\", \"*.toml\""), "{braces:?}");
        assert!(messages("extent", serde_json::json!({"paths": "src"})).is_empty());
        let regex = messages(
            "pattern",
            serde_json::json!({"paths": ["a"], "pattern": "("}),
        );
        assert!(
            regex[0].starts_with("pattern: is not a valid regex"),
            "{regex:?}"
        );
    }

    #[test]
    fn sarif_selections_are_checked_against_its_schema() {
        let fine =
            serde_json::json!({"rule": ["F401", "E*"], "level": "error", "paths": ["src/**"]});
        assert!(messages("sarif", fine).is_empty());
        let level = messages("sarif", serde_json::json!({"level": ["error", "fatal"]}));
        assert!(level[0].starts_with("level: "), "{level:?}");
        let both = messages("sarif", serde_json::json!({"path": "a", "artifact": "b"}));
        assert!(both[0].contains("not both"), "{both:?}");
        let paths = messages("sarif", serde_json::json!({"paths": ["../x"]}));
        assert!(!paths.is_empty(), "a pathspec above the root is refused");
    }
}
