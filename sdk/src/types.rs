use crate::finding::fingerprint;

/// What [`Producer::describe`](crate::Producer::describe) returns.
#[derive(Debug, Clone, PartialEq)]
pub struct Info {
    pub name: String,
    pub version: String,
    pub metrics: Vec<String>,
    /// A JSON Schema for the Standard's `config` table, if published.
    pub config_schema: Option<String>,
}

impl Info {
    pub fn new(name: &str, version: &str, metrics: &[&str]) -> Self {
        Self {
            name: name.to_owned(),
            version: version.to_owned(),
            metrics: metrics.iter().map(|m| (*m).to_owned()).collect(),
            config_schema: None,
        }
    }

    pub fn with_config_schema(mut self, schema: &str) -> Self {
        self.config_schema = Some(schema.to_owned());
        self
    }
}

/// One measured number and the findings behind it.
#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    pub name: String,
    pub value: f64,
    pub findings: Vec<Finding>,
}

impl Metric {
    pub fn new(name: &str, value: f64) -> Self {
        Self {
            name: name.to_owned(),
            value,
            findings: Vec::new(),
        }
    }

    pub fn with_findings(mut self, findings: Vec<Finding>) -> Self {
        self.findings = findings;
        self
    }
}

/// One identity behind a count. The fingerprint never contains a line number, so a finding
/// keeps its identity when unrelated lines move.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub fingerprint: String,
    pub path: Option<String>,
    pub message: String,
}

impl Finding {
    /// A finding of `rule` at `path` whose identity is the normalized `content` (for example
    /// the matched text) and its `occurrence` among equal contents in the same file.
    pub fn new(rule: &str, path: &str, content: &str, occurrence: usize, message: String) -> Self {
        Self {
            fingerprint: fingerprint(rule, path, content, occurrence),
            path: Some(path.to_owned()),
            message,
        }
    }
}
