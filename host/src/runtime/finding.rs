//! A producer's findings, checked: the identities behind a count. Bad input is handled as
//! the output rules say: a fingerprint or path out of bounds, or a line or column of 0, is a
//! clean error naming the finding; a message over the limit is cut with a note, never a
//! failed run; past [`MAX_FINDINGS`] the rest are counted, not kept.

use serde::{Deserialize, Serialize};

use super::bindings::wit_measure;
use super::error::ProducerErrorKind;

/// The findings kept per metric; past it the swap check is unverified, never guessed.
pub const MAX_FINDINGS: usize = 100_000;
/// The longest fingerprint, in bytes.
pub(super) const MAX_FINGERPRINT_BYTES: usize = 256;
/// The longest finding message and path, in bytes.
pub(super) const MAX_TEXT_BYTES: usize = 4096;

/// A finding's level, as linters and SARIF name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Note,
}

/// One validated finding. The fingerprint is its identity; where it is (`line`, `column`)
/// and how serious (`severity`) are not part of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub fingerprint: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
    pub message: String,
}

/// A metric's findings: those kept (at most [`MAX_FINDINGS`]) and how many more there were.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Findings {
    pub kept: Vec<Finding>,
    pub dropped: usize,
}

fn invalid(message: String) -> ProducerErrorKind {
    ProducerErrorKind::InvalidOutput(message)
}

/// Check `raw`, the findings of metric `metric`.
pub(super) fn check(
    metric: &str,
    raw: Vec<wit_measure::Finding>,
) -> Result<Findings, ProducerErrorKind> {
    let dropped = raw.len().saturating_sub(MAX_FINDINGS);
    let mut kept = Vec::with_capacity(raw.len().min(MAX_FINDINGS));
    for finding in raw.into_iter().take(MAX_FINDINGS) {
        kept.push(one(metric, finding)?);
    }
    Ok(Findings { kept, dropped })
}

fn one(metric: &str, raw: wit_measure::Finding) -> Result<Finding, ProducerErrorKind> {
    let len = raw.fingerprint.len();
    if len == 0 || len > MAX_FINGERPRINT_BYTES {
        return Err(invalid(format!(
            "a finding of metric {metric} has a fingerprint of {len} bytes (1 to {MAX_FINGERPRINT_BYTES} allowed)"
        )));
    }
    if let Some(path) = &raw.path
        && (path.len() > MAX_TEXT_BYTES || path.is_empty())
    {
        return Err(invalid(format!(
            "a finding of metric {metric} has a path of {} bytes (1 to {MAX_TEXT_BYTES} allowed)",
            path.len()
        )));
    }
    for (what, value) in [("line", raw.line), ("column", raw.column)] {
        if value == Some(0) {
            return Err(invalid(format!(
                "a finding of metric {metric} has {what} 0 ({what}s are 1-based; leave it out when unknown)"
            )));
        }
    }
    if raw.path.is_none() && raw.line.is_some() {
        return Err(invalid(format!(
            "a finding of metric {metric} has a line but no path"
        )));
    }
    if raw.line.is_none() && raw.column.is_some() {
        return Err(invalid(format!(
            "a finding of metric {metric} has a column but no line"
        )));
    }
    Ok(Finding {
        fingerprint: raw.fingerprint,
        path: raw.path,
        line: raw.line,
        column: raw.column,
        severity: raw.severity.map(|s| match s {
            wit_measure::Severity::Error => Severity::Error,
            wit_measure::Severity::Warning => Severity::Warning,
            wit_measure::Severity::Note => Severity::Note,
        }),
        message: cut(raw.message),
    })
}

/// `message` cut to [`MAX_TEXT_BYTES`] at a character boundary, saying how long it was.
pub(super) fn cut(message: String) -> String {
    if message.len() <= MAX_TEXT_BYTES {
        return message;
    }
    let note = format!("… (cut from {} bytes)", message.len());
    let mut end = MAX_TEXT_BYTES - note.len();
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{note}", &message[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(fingerprint: &str, line: Option<u32>, message: String) -> wit_measure::Finding {
        wit_measure::Finding {
            fingerprint: fingerprint.into(),
            path: Some("a.rs".into()),
            line,
            column: None,
            severity: None,
            message,
        }
    }

    #[test]
    fn a_long_message_is_cut_with_a_note_never_a_failure() {
        let checked = check("m", vec![raw("f", Some(3), "é".repeat(5000))]).expect("accepted");
        let message = &checked.kept[0].message;
        assert!(message.len() <= MAX_TEXT_BYTES, "{}", message.len());
        assert!(message.ends_with("… (cut from 10000 bytes)"), "{message}");
    }

    #[test]
    fn duplicates_are_kept_and_the_cap_counts_the_rest() {
        let many = (0..MAX_FINDINGS + 5)
            .map(|_| raw("same", None, "x".into()))
            .collect();
        let checked = check("m", many).expect("accepted");
        assert_eq!((checked.kept.len(), checked.dropped), (MAX_FINDINGS, 5));
    }

    #[test]
    fn bad_positions_and_fingerprints_are_clean_errors() {
        let err = |f| check("m", vec![f]).expect_err("refused").to_string();
        assert!(err(raw("f", Some(0), String::new())).contains("line 0"));
        assert!(err(raw("", None, String::new())).contains("fingerprint of 0 bytes"));
        assert!(err(raw(&"x".repeat(257), None, String::new())).contains("257 bytes"));
        let mut no_path = raw("f", Some(1), String::new());
        no_path.path = None;
        assert!(err(no_path).contains("no path"));
    }
}
