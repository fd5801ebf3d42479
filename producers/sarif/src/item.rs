//! One SARIF result as this producer counts it: rule, level, place, line and column, message,
//! and a fingerprint that never contains a line number.

use std::collections::HashMap;

use discern_sdk::{Finding, Severity, Snapshot, fingerprint};

use crate::location::{Locator, Place};
use crate::model::{Run, SarifResult};

/// The longest fingerprint the host accepts, in bytes.
const MAX_FINGERPRINT_BYTES: usize = 256;

#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub rule: String,
    pub level: &'static str,
    pub place: Place,
    pub suppressed: bool,
    pub finding: Finding,
}

/// What the items of one log share while they are built: how often each identity was seen
/// (equal findings in one file are several findings) and the text of the files columns are
/// counted in.
#[derive(Default)]
pub struct Context {
    seen: HashMap<(String, String, String), usize>,
    lines: HashMap<String, Option<Vec<String>>>,
}

impl Context {
    /// The item of `result`, or `None` for a result that is no problem (`kind` pass,
    /// notApplicable or informational).
    pub fn item(
        &mut self,
        run: &Run,
        result: &SarifResult,
        locator: &Locator,
        snapshot: &dyn Snapshot,
    ) -> Option<Item> {
        if !result.is_problem() {
            return None;
        }
        let rule = run.rule_id(result);
        let level = run.level(result);
        let physical = result.physical();
        let place = locator.place(physical.and_then(|p| p.artifact_location.as_ref()));
        let region = physical.and_then(|p| p.region.as_ref());
        let line = region
            .and_then(|r| r.start_line)
            .and_then(|l| u32::try_from(l).ok())
            .filter(|l| *l > 0);
        let column = region
            .and_then(|r| r.start_column)
            .and_then(|c| u32::try_from(c).ok())
            .filter(|c| *c > 0);
        let path = match &place {
            Place::Inside(path) => Some(path.clone()),
            _ => None,
        };
        let column = match (&path, line, column) {
            (Some(path), Some(line), Some(column)) => {
                self.byte_column(snapshot, path, line, column, run.column_kind.as_deref())
            }
            _ => None,
        };
        let message = result.text(&rule);
        let snippet = region
            .and_then(|r| r.snippet.as_ref())
            .and_then(|s| s.text.clone());
        let id = self.fingerprint(
            &rule,
            result,
            path.as_deref(),
            snippet.unwrap_or_else(|| message.clone()),
        );
        let mut finding = Finding::new(
            &rule,
            path.as_deref().unwrap_or(""),
            "",
            0,
            format!("{rule}: {message}"),
        );
        finding.fingerprint = id;
        finding.path = path;
        let finding = finding.at(line.unwrap_or(0), column.unwrap_or(0));
        let finding = match severity(level) {
            Some(severity) => finding.with_severity(severity),
            None => finding,
        };
        Some(Item {
            rule,
            level,
            place,
            suppressed: result.suppressed(),
            finding,
        })
    }

    /// From the tool's own fingerprints when it has any (`fingerprints` before
    /// `partialFingerprints`, keys in order, the first non-empty value: `key/hash`), else rule +
    /// path + the normalised snippet or message; with the occurrence of that identity so far.
    fn fingerprint(
        &mut self,
        rule: &str,
        result: &SarifResult,
        path: Option<&str>,
        content: String,
    ) -> String {
        let given = result
            .fingerprints
            .iter()
            .chain(&result.partial_fingerprints)
            .find_map(|(key, value)| {
                let value = match value {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (!value.is_empty()).then(|| (key.clone(), value))
            });
        let (prefix, part, content) = match given {
            Some((key, value)) => (Some(key.clone()), key, value),
            None => (None, path.unwrap_or("").to_owned(), content),
        };
        let seen = self
            .seen
            .entry((
                rule.to_owned(),
                part.clone(),
                content.split_whitespace().collect::<Vec<_>>().join(" "),
            ))
            .or_insert(0);
        let hash = fingerprint(rule, &part, &content, *seen);
        *seen += 1;
        match prefix {
            Some(key) if key.len() + 1 + hash.len() <= MAX_FINGERPRINT_BYTES => {
                format!("{key}/{hash}")
            }
            _ => hash,
        }
    }

    /// The 1-based byte column of `column` (counted in UTF-16 code units, or code points when
    /// the run says `unicodeCodePoints`) on `line` of `path`; `None` when the file is not in
    /// the snapshot or the line is shorter.
    fn byte_column(
        &mut self,
        snapshot: &dyn Snapshot,
        path: &str,
        line: u32,
        column: u32,
        kind: Option<&str>,
    ) -> Option<u32> {
        let lines = self.lines.entry(path.to_owned()).or_insert_with(|| {
            snapshot.read(path).ok().map(|bytes| {
                String::from_utf8_lossy(&bytes)
                    .split('\n')
                    .map(str::to_owned)
                    .collect()
            })
        });
        let text = lines.as_ref()?.get(usize::try_from(line).ok()? - 1)?;
        byte_offset(text, column - 1, kind == Some("unicodeCodePoints"))
            .and_then(|at| u32::try_from(at + 1).ok())
    }
}

/// The byte offset of `units` characters into `text` (UTF-16 code units unless `code_points`);
/// the end of the line is a valid place.
pub fn byte_offset(text: &str, units: u32, code_points: bool) -> Option<usize> {
    let mut counted = 0u32;
    for (at, c) in text.char_indices() {
        if counted >= units {
            return Some(at);
        }
        counted += if code_points { 1 } else { c.len_utf16() as u32 };
    }
    (counted >= units).then_some(text.len())
}

fn severity(level: &str) -> Option<Severity> {
    match level {
        "error" => Some(Severity::Error),
        "warning" => Some(Severity::Warning),
        "note" => Some(Severity::Note),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_become_byte_columns() {
        assert_eq!(byte_offset("abc", 2, false), Some(2));
        // "é" is one UTF-16 unit and two bytes; "😀" two units and four bytes.
        assert_eq!(byte_offset("é=x", 1, false), Some(2));
        assert_eq!(byte_offset("😀x", 2, false), Some(4));
        assert_eq!(byte_offset("😀x", 1, true), Some(4));
        assert_eq!(byte_offset("ab", 2, false), Some(2), "the line end");
        assert_eq!(byte_offset("ab", 5, false), None);
    }
}
