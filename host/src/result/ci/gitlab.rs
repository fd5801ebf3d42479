//! GitLab Code Quality JSON (`artifacts: reports: codequality:`): an array of issues, one per
//! new finding and one per failing Standard without a listed finding, plus the refusals and
//! other diagnostics. GitLab compares a merge request's report with its target's by
//! fingerprint, so each fingerprint is unique in the report.

use std::collections::HashMap;

use serde::Serialize;

use super::view::{self, Issue, Level, Problem};
use crate::result::Envelope;

#[derive(Debug, Serialize)]
struct CodeQuality {
    description: String,
    check_name: String,
    fingerprint: String,
    severity: &'static str,
    location: Location,
}

#[derive(Debug, Serialize)]
struct Location {
    path: String,
    lines: Lines,
}

#[derive(Debug, Serialize)]
struct Lines {
    begin: u64,
}

/// The Code Quality report of `envelope`.
pub(super) fn render(envelope: &Envelope) -> String {
    let standards = view::standards(envelope);
    let mut unique = Unique::default();
    let mut report: Vec<CodeQuality> = view::issues(&standards, envelope)
        .iter()
        .map(|issue| from_issue(issue, &mut unique))
        .collect();
    report.extend(
        view::problems(envelope, &standards)
            .into_iter()
            .map(|problem| from_problem(problem, &mut unique)),
    );
    serde_json::to_string_pretty(&report).unwrap_or_else(|_| "[]".to_owned()) + "\n"
}

fn from_issue(issue: &Issue, unique: &mut Unique) -> CodeQuality {
    let standard = issue.standard;
    let identity = match issue.finding {
        Some(finding) => format!("finding\0{}\0{}", standard.name, finding.fingerprint),
        None => format!("standard\0{}", standard.name),
    };
    let description = match issue.finding {
        Some(_) => format!(
            "{} — new finding of {}",
            issue.message(),
            standard.headline()
        ),
        None => issue.message(),
    };
    CodeQuality {
        description,
        check_name: format!("discern/{}", standard.name),
        fingerprint: unique.fingerprint(&identity),
        severity: severity(issue.level),
        location: location(issue.path(), issue.line()),
    }
}

fn from_problem(problem: Problem, unique: &mut Unique) -> CodeQuality {
    let identity = format!("problem\0{}\0{}", problem.title, problem.message);
    CodeQuality {
        fingerprint: unique.fingerprint(&identity),
        check_name: problem.title,
        description: problem.message,
        severity: severity(problem.level),
        location: location(problem.file.as_deref(), problem.line),
    }
}

/// GitLab needs a path and a line; what has neither is shown on `discern.toml`.
fn location(path: Option<&str>, line: Option<u64>) -> Location {
    Location {
        path: path.unwrap_or(crate::config::FILE).to_owned(),
        lines: Lines {
            begin: line.unwrap_or(1),
        },
    }
}

fn severity(level: Level) -> &'static str {
    match level {
        Level::Error => "major",
        Level::Warning => "minor",
        Level::Note => "info",
    }
}

/// Fingerprints made unique within one report: a repeated identity (two equal findings are
/// two findings) gets its occurrence number hashed in.
#[derive(Default)]
struct Unique {
    seen: HashMap<String, usize>,
}

impl Unique {
    fn fingerprint(&mut self, identity: &str) -> String {
        let occurrence = self.seen.entry(identity.to_owned()).or_insert(0);
        let bytes = format!("{identity}\0{occurrence}");
        *occurrence += 1;
        crate::digest::Digest::of(bytes.as_bytes()).short_hex()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_identities_get_distinct_fingerprints_and_stable_ones() {
        let mut a = Unique::default();
        let first = a.fingerprint("x");
        let second = a.fingerprint("x");
        assert_ne!(first, second);
        assert_eq!(Unique::default().fingerprint("x"), first);
        assert_eq!(first.len(), 32);
    }

    #[test]
    fn a_report_without_problems_is_an_empty_array() {
        let ok = crate::result::Reply::new(serde_json::json!({}), crate::result::Report::default())
            .into_envelope("status");
        assert_eq!(render(&ok), "[]\n");
    }
}
