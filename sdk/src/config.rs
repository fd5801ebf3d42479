use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::Error;

/// The Standard's `config` table, as the JSON object the host hands to `run`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Config {
    table: Map<String, Value>,
}

impl Config {
    /// Parse the JSON the host passes; it must be an object (`{}` when the Standard has none).
    pub fn parse(json: &str) -> Result<Self, Error> {
        match serde_json::from_str::<Value>(json) {
            Ok(Value::Object(table)) => Ok(Self { table }),
            Ok(other) => Err(Error::new(format!(
                "config must be a table, got {}",
                kind(&other)
            ))),
            Err(e) => Err(Error::new(format!("config is not valid JSON: {e}"))),
        }
    }

    pub fn from_value(value: Value) -> Result<Self, Error> {
        Self::parse(&value.to_string())
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.table.get(key)
    }

    /// Refuse keys this producer does not know, naming the first one and the allowed ones.
    pub fn allow_only(&self, allowed: &[&str]) -> Result<(), Error> {
        match self.table.keys().find(|k| !allowed.contains(&k.as_str())) {
            Some(key) => Err(Error::new(format!(
                "config.{key} is not a known key (allowed: {})",
                allowed.join(", ")
            ))),
            None => Ok(()),
        }
    }

    /// A required string.
    pub fn str(&self, key: &str) -> Result<&str, Error> {
        self.opt_str(key)?
            .ok_or_else(|| Error::new(format!("config.{key} is required (a string)")))
    }

    pub fn opt_str(&self, key: &str) -> Result<Option<&str>, Error> {
        match self.table.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(Error::new(format!(
                "config.{key} must be a string, got {}",
                kind(other)
            ))),
        }
    }

    pub fn opt_bool(&self, key: &str) -> Result<Option<bool>, Error> {
        match self.table.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(Error::new(format!(
                "config.{key} must be true or false, got {}",
                kind(other)
            ))),
        }
    }

    pub fn opt_u64(&self, key: &str) -> Result<Option<u64>, Error> {
        match self.table.get(key) {
            None => Ok(None),
            Some(Value::Number(n)) if n.as_u64().is_some() => Ok(n.as_u64()),
            Some(other) => Err(Error::new(format!(
                "config.{key} must be a non-negative integer, got {other}"
            ))),
        }
    }

    /// A required, non-empty list of pathspec globs (a single string is accepted as a list of one).
    pub fn globs(&self, key: &str) -> Result<Vec<String>, Error> {
        self.opt_globs(key)?.ok_or_else(|| {
            Error::new(format!(
                "config.{key} is required: a non-empty list of pathspec globs such as [\"src/**/*.rs\"]"
            ))
        })
    }

    pub fn opt_globs(&self, key: &str) -> Result<Option<Vec<String>>, Error> {
        let invalid = || {
            Error::new(format!(
                "config.{key} must be a non-empty list of pathspec globs such as [\"src/**/*.rs\"]"
            ))
        };
        match self.table.get(key) {
            None => Ok(None),
            Some(Value::String(s)) if !s.is_empty() => Ok(Some(vec![s.clone()])),
            Some(Value::Array(items)) if !items.is_empty() => items
                .iter()
                .map(|v| match v {
                    Value::String(s) if !s.is_empty() => Ok(s.clone()),
                    _ => Err(invalid()),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(_) => Err(invalid()),
        }
    }

    /// The whole table as a typed value (use `#[serde(deny_unknown_fields)]` to stay strict).
    pub fn deserialize<T: DeserializeOwned>(&self) -> Result<T, Error> {
        serde_json::from_value(Value::Object(self.table.clone()))
            .map_err(|e| Error::new(format!("config: {e}")))
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a table",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_non_objects_and_bad_json() {
        assert!(
            Config::parse("[1]")
                .unwrap_err()
                .to_string()
                .contains("a list")
        );
        assert!(Config::parse("{").is_err());
        assert_eq!(Config::parse("{}").unwrap(), Config::default());
    }

    #[test]
    fn typed_getters_name_the_key() {
        let c = Config::parse(r#"{"paths": ["a/**", ""], "n": -1, "s": 3}"#).unwrap();
        assert!(
            c.globs("paths")
                .unwrap_err()
                .to_string()
                .contains("config.paths")
        );
        assert!(c.opt_u64("n").unwrap_err().to_string().contains("config.n"));
        assert!(
            c.str("s")
                .unwrap_err()
                .to_string()
                .contains("must be a string")
        );
        assert!(
            c.str("missing")
                .unwrap_err()
                .to_string()
                .contains("required")
        );
        assert!(
            c.allow_only(&["paths", "n"])
                .unwrap_err()
                .to_string()
                .contains("config.s")
        );
    }

    #[test]
    fn single_string_is_a_list_of_one() {
        let c = Config::parse(r#"{"paths": "src/**"}"#).unwrap();
        assert_eq!(c.globs("paths").unwrap(), vec!["src/**".to_owned()]);
    }
}
