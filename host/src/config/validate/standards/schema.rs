//! The JSON Schema a producer publishes for its `config` (through `describe()`), and the
//! problems of one `config` table against it: unknown keys (where the schema closes the table),
//! missing keys, then types and ranges, each naming the key and what to write instead.

use serde_json::{Map, Value};

/// One problem: the config key it is about (if any) and what to write instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigProblem {
    pub key: Option<String>,
    pub message: String,
}

/// Why a published schema cannot be used: the producer's fault, never the config's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    #[error("publishes a config schema that is not JSON ({0}); fix its describe()")]
    NotJson(String),
    #[error("publishes a config schema that is not a usable JSON Schema ({0}); fix its describe()")]
    Unusable(String),
}

/// A producer's config schema, compiled once.
pub struct ConfigSchema {
    /// The producer's label (`builtin:pattern`, `tools/x.wasm`), named in every message.
    producer: String,
    schema: Value,
    validator: jsonschema::Validator,
}

impl std::fmt::Debug for ConfigSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConfigSchema")
            .field("producer", &self.producer)
            .field("schema", &self.schema)
            .finish()
    }
}

impl ConfigSchema {
    /// The schema `producer` publishes as `text`.
    pub fn parse(producer: &str, text: &str) -> Result<Self, SchemaError> {
        let schema: Value =
            serde_json::from_str(text).map_err(|e| SchemaError::NotJson(e.to_string()))?;
        let validator =
            jsonschema::validator_for(&schema).map_err(|e| SchemaError::Unusable(e.to_string()))?;
        Ok(Self {
            producer: producer.to_owned(),
            schema,
            validator,
        })
    }

    /// The schema itself.
    pub fn value(&self) -> &Value {
        &self.schema
    }

    /// The keys the schema names (`properties`), in its order.
    pub fn keys(&self) -> Vec<&str> {
        self.schema["properties"]
            .as_object()
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default()
    }

    /// Every problem of `config`, each type described from the schema.
    pub fn problems(&self, config: &Map<String, Value>) -> Vec<ConfigProblem> {
        self.problems_described(config, &|key| expected(&self.schema["properties"][key]))
    }

    /// Every problem of `config`; `describe` says what a key's value should be.
    pub(super) fn problems_described(
        &self,
        config: &Map<String, Value>,
        describe: &dyn Fn(&str) -> String,
    ) -> Vec<ConfigProblem> {
        let mut problems = self.unknown(config);
        let required = self.schema["required"].as_array();
        for key in required.into_iter().flatten().filter_map(Value::as_str) {
            if !config.contains_key(key) {
                problems.push(ConfigProblem {
                    key: None,
                    message: format!("{} needs config.{key}", self.producer),
                });
            }
        }
        if problems.is_empty() {
            problems.extend(self.typed(config, describe));
        }
        problems
    }

    /// Keys the schema does not allow (`additionalProperties: false`), with the allowed ones.
    fn unknown(&self, config: &Map<String, Value>) -> Vec<ConfigProblem> {
        if self.schema["additionalProperties"] != Value::Bool(false) {
            return Vec::new();
        }
        let allowed = self.keys();
        config
            .keys()
            .filter(|k| !allowed.contains(&k.as_str()))
            .map(|key| ConfigProblem {
                key: Some(key.clone()),
                message: format!(
                    "is not a config key of {} (allowed: {})",
                    self.producer,
                    allowed.join(", ")
                ),
            })
            .collect()
    }

    /// What the validator says about the values (types, ranges, lengths).
    fn typed(
        &self,
        config: &Map<String, Value>,
        describe: &dyn Fn(&str) -> String,
    ) -> Vec<ConfigProblem> {
        let instance = Value::Object(config.clone());
        self.validator
            .iter_errors(&instance)
            .take(5)
            .map(|e| {
                let at = e.instance_path().to_string();
                let key = at.trim_start_matches('/').split('/').next().unwrap_or("");
                match key.is_empty() {
                    true => ConfigProblem {
                        key: None,
                        message: format!("{e} (the config schema of {})", self.producer),
                    },
                    false => ConfigProblem {
                        key: Some(key.to_owned()),
                        message: format!("{e} (expected: {})", describe(key)),
                    },
                }
            })
            .collect()
    }
}

/// What a value of `spec` looks like, in words: `an integer from 1 to 1000000`.
fn expected(spec: &Value) -> String {
    if let Some(values) = spec["enum"].as_array() {
        let values: Vec<String> = values.iter().map(Value::to_string).collect();
        return format!("one of {}", values.join(", "));
    }
    let types: Vec<&str> = match &spec["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if types.is_empty() {
        return format!("a value the schema {spec} allows");
    }
    let described: Vec<String> = types.iter().map(|t| one_type(t, spec)).collect();
    described.join(" or ")
}

fn one_type(kind: &str, spec: &Value) -> String {
    let at_least_one = |key: &str| spec[key].as_u64().is_some_and(|n| n >= 1);
    match kind {
        "string" if at_least_one("minLength") => "a non-empty string".to_owned(),
        "string" => "a string".to_owned(),
        "boolean" => "true or false".to_owned(),
        "integer" | "number" => number(kind, spec),
        "array" => {
            let items = match spec["items"]["type"].as_str() {
                Some("string") => "strings".to_owned(),
                Some("integer") => "integers".to_owned(),
                Some("number") => "numbers".to_owned(),
                Some("boolean") => "booleans".to_owned(),
                _ => match spec.get("items") {
                    Some(items) => format!("values, each {}", expected(items)),
                    None => "values".to_owned(),
                },
            };
            let size = if at_least_one("minItems") {
                "a non-empty list"
            } else {
                "a list"
            };
            format!("{size} of {items}")
        }
        "object" => "a table".to_owned(),
        other => other.to_owned(),
    }
}

fn number(kind: &str, spec: &Value) -> String {
    let noun = if kind == "integer" {
        "an integer"
    } else {
        "a number"
    };
    match (spec["minimum"].as_f64(), spec["maximum"].as_f64()) {
        (Some(min), None) if min == 0.0 && kind == "integer" => "a non-negative integer".to_owned(),
        (Some(min), Some(max)) => format!("{noun} from {min} to {max}"),
        (Some(min), None) => format!("{noun} of at least {min}"),
        (None, Some(max)) => format!("{noun} of at most {max}"),
        (None, None) => noun.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCHEMA: &str = r#"{"type":"object","required":["paths"],"additionalProperties":false,
        "properties":{"paths":{"type":"array","items":{"type":"string"}},
        "marker":{"type":"string","minLength":1},
        "lines":{"type":"integer","minimum":1,"maximum":1000000}}}"#;

    fn messages(config: Value) -> Vec<String> {
        let schema = ConfigSchema::parse("tools/x.wasm", SCHEMA).expect("a usable schema");
        let Value::Object(config) = config else {
            panic!("not a table")
        };
        schema
            .problems(&config)
            .into_iter()
            .map(|p| format!("{}: {}", p.key.unwrap_or_default(), p.message))
            .collect()
    }

    #[test]
    fn a_published_schema_names_keys_and_what_to_write() {
        assert_eq!(
            messages(serde_json::json!({"paths": ["a"], "colour": 1})),
            ["colour: is not a config key of tools/x.wasm (allowed: paths, marker, lines)"]
        );
        assert_eq!(
            messages(serde_json::json!({"lines": 6})),
            [": tools/x.wasm needs config.paths"]
        );
        let range = messages(serde_json::json!({"paths": ["a"], "lines": 0}));
        assert!(range[0].starts_with("lines: "), "{range:?}");
        assert!(
            range[0].contains("an integer from 1 to 1000000"),
            "{range:?}"
        );
        let list = messages(serde_json::json!({"paths": "a"}));
        assert!(list[0].contains("a list of strings"), "{list:?}");
        assert!(messages(serde_json::json!({"paths": ["a"], "lines": 6})).is_empty());
    }

    #[test]
    fn an_unusable_schema_is_the_producers_fault() {
        let not_json = ConfigSchema::parse("p", "{").expect_err("not JSON");
        assert!(not_json.to_string().contains("not JSON"), "{not_json}");
        let bad = ConfigSchema::parse("p", r#"{"type": 3}"#).expect_err("not a schema");
        assert!(
            bad.to_string().contains("not a usable JSON Schema"),
            "{bad}"
        );
    }
}
