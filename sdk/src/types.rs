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

/// The longest finding message (and path) the host accepts, in bytes.
pub const MAX_MESSAGE_BYTES: usize = 4096;

impl Finding {
    /// A finding of `rule` at `path` whose identity is the normalized `content` (for example
    /// the matched text) and its `occurrence` among equal contents in the same file. A message
    /// longer than [`MAX_MESSAGE_BYTES`] is cut at a character boundary and ends in `…`: a long
    /// match is still one finding, never a failed run.
    pub fn new(rule: &str, path: &str, content: &str, occurrence: usize, message: String) -> Self {
        Self {
            fingerprint: fingerprint(rule, path, content, occurrence),
            path: Some(path.to_owned()),
            message: truncate(message, MAX_MESSAGE_BYTES),
        }
    }
}

/// `text` cut to at most `max` bytes at a character boundary, marked with `…` when cut.
pub fn truncate(mut text: String, max: usize) -> String {
    const MARK: &str = "…";
    if text.len() <= max {
        return text;
    }
    let mut end = max.saturating_sub(MARK.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push_str(MARK);
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_messages_are_cut_at_a_character_boundary() {
        let long = "é".repeat(3000);
        let finding = Finding::new("r", "a", "x", 0, long);
        assert!(finding.message.len() <= MAX_MESSAGE_BYTES);
        assert!(finding.message.ends_with('…'));
        assert_eq!(truncate("short".into(), 10), "short");
    }
}
