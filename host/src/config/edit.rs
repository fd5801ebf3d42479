//! Limit edits: `discern.toml` with new limit values, every other byte (comments, formatting,
//! other keys) kept, and the result validated before anyone commits it.

use super::Config;

impl Config {
    /// The config text with each named Standard's `limit` set to its new value, validated and
    /// read back to those exact values.
    pub fn with_limits(&self, limits: &[(&str, f64)]) -> Result<String, String> {
        let mut document = self.document.clone();
        for (name, limit) in limits {
            set_limit(&mut document, name, *limit)?;
        }
        let text = document.to_string();
        let reparsed = Config::parse(&text)
            .map_err(|e| format!("the edited config does not validate: {e}"))?;
        for (name, limit) in limits {
            let found = reparsed.standard(name).map(|s| s.limit);
            if found != Some(*limit) {
                return Err(format!(
                    "the edited config holds {found:?} for {name}, not {limit}"
                ));
            }
        }
        Ok(text)
    }
}

/// Replace one Standard's `limit` value, keeping the value's surrounding whitespace and comments.
fn set_limit(
    document: &mut toml_edit::DocumentMut,
    standard: &str,
    limit: f64,
) -> Result<(), String> {
    let item = document
        .get_mut("standards")
        .and_then(|s| s.get_mut(standard))
        .and_then(|t| t.get_mut("limit"))
        .ok_or_else(|| format!("discern.toml has no standards.{standard}.limit"))?;
    let old = item
        .as_value()
        .ok_or_else(|| format!("standards.{standard}.limit is not a value"))?;
    let decor = old.decor().clone();
    let mut new = if limit.fract() == 0.0 && limit.abs() < 9.0e15 {
        toml_edit::Value::from(limit as i64)
    } else {
        toml_edit::Value::from(limit)
    };
    *new.decor_mut() = decor;
    *item = toml_edit::Item::Value(new);
    Ok(())
}
