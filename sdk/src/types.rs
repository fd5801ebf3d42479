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
    /// Whether `value` is the number of things found, each one a finding (see
    /// [`Metric::counting`]).
    pub counted: bool,
}

impl Metric {
    pub fn new(name: &str, value: f64) -> Self {
        Self {
            name: name.to_owned(),
            value,
            findings: Vec::new(),
            counted: false,
        }
    }

    /// The findings behind the value, which they only illustrate (the largest file).
    pub fn with_findings(mut self, findings: Vec<Finding>) -> Self {
        self.findings = findings;
        self
    }

    /// The findings the value counts, one per thing found (a match, a violation): the host
    /// then catches a swap (one fixed, another added, the count held). A list cut shorter
    /// than the value (`max_findings`) leaves that check unverified.
    pub fn counting(mut self, findings: Vec<Finding>) -> Self {
        self.findings = findings;
        self.counted = true;
        self
    }
}

/// One identity behind a count. The fingerprint never contains a line number, so a finding
/// keeps its identity when unrelated lines move.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub fingerprint: String,
    pub path: Option<String>,
    /// The 1-based line the finding starts on, if known (as `git grep -n` numbers lines).
    pub line: Option<u32>,
    /// The 1-based byte column on that line, if known (as `git grep --column` counts).
    pub column: Option<u32>,
    pub severity: Option<Severity>,
    pub message: String,
}

/// A finding's level, as linters and SARIF name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
    Note,
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
            line: None,
            column: None,
            severity: None,
            message: truncate(message, MAX_MESSAGE_BYTES),
        }
    }

    /// The same finding, located at 1-based `line` and byte `column` (0 means unknown).
    pub fn at(mut self, line: u32, column: u32) -> Self {
        self.line = (line > 0).then_some(line);
        self.column = (column > 0 && line > 0).then_some(column);
        self
    }

    /// The same finding with a level.
    pub fn with_severity(mut self, severity: Severity) -> Self {
        self.severity = Some(severity);
        self
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
