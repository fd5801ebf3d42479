use std::fmt;

/// One problem in `discern.toml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigIssue {
    /// The table, e.g. `standards.coverage` (empty for the document root).
    pub table: String,
    pub key: Option<String>,
    /// 1-based line of the offending key or value.
    pub line: Option<usize>,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl fmt::Display for ConfigIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "discern.toml")?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        write!(f, ": ")?;
        match (&self.table, &self.key) {
            (table, Some(key)) if !table.is_empty() => write!(f, "[{table}] {key}: ")?,
            (table, None) if !table.is_empty() => write!(f, "[{table}]: ")?,
            (_, Some(key)) => write!(f, "{key}: ")?,
            _ => {}
        }
        f.write_str(&self.message)
    }
}

/// Every problem found in `discern.toml` (validation does not stop at the first).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ConfigError {
    pub issues: Vec<ConfigIssue>,
}

impl ConfigError {
    pub fn single(issue: ConfigIssue) -> Self {
        Self {
            issues: vec![issue],
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines: Vec<String> = self.issues.iter().map(ToString::to_string).collect();
        f.write_str(&lines.join("\n"))
    }
}
