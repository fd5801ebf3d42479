//! What the CI formats read from an envelope: its Standards (`data.standards`, read back from
//! the JSON every surface already carries, so any verb's envelope renders), and the problems
//! that are not a Standard's (refusals, diagnostics, advisories).

use serde::Deserialize;

use crate::result::{Envelope, Severity};

/// One Standard of `data.standards[]`, as far as a CI format needs it.
#[derive(Debug, Clone, Default, Deserialize)]
pub(super) struct StandardView {
    pub name: String,
    #[serde(default)]
    pub direction: Option<String>,
    #[serde(default)]
    pub limit: Option<f64>,
    #[serde(default)]
    pub value: Option<f64>,
    #[serde(default)]
    pub measurement: Option<String>,
    #[serde(default)]
    pub verdict: Option<String>,
    #[serde(default)]
    pub note: Option<String>,
    #[serde(default)]
    pub findings: Option<FindingsView>,
}

/// `data.standards[].findings`.
#[derive(Debug, Clone, Default, Deserialize)]
pub(super) struct FindingsView {
    #[serde(default)]
    pub new_total: Option<usize>,
    #[serde(default)]
    pub new: Vec<FindingView>,
}

/// One finding of `findings.new[]`.
#[derive(Debug, Clone, Default, Deserialize)]
pub(super) struct FindingView {
    pub fingerprint: String,
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub line: Option<u32>,
    #[serde(default)]
    pub column: Option<u32>,
    #[serde(default)]
    pub severity: Option<String>,
    pub message: String,
}

/// How a Standard came out, as a CI system reports a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    Passed,
    /// Regressed or swapped.
    Failed,
    /// Its producer failed: no reading.
    Errored,
    /// Blocked by the never-loosen check: not measured.
    Skipped,
}

impl StandardView {
    pub(super) fn outcome(&self) -> Outcome {
        match (self.measurement.as_deref(), self.verdict.as_deref()) {
            (Some("skipped"), _) => Outcome::Skipped,
            (Some("failed"), _) => Outcome::Errored,
            (_, Some("regressed" | "swapped")) => Outcome::Failed,
            _ => Outcome::Passed,
        }
    }

    pub(super) fn failing(&self) -> bool {
        matches!(self.outcome(), Outcome::Failed | Outcome::Errored)
    }

    /// The new findings listed (the envelope lists the first few; `new_total` counts all).
    pub(super) fn new_findings(&self) -> &[FindingView] {
        self.findings.as_ref().map_or(&[], |f| f.new.as_slice())
    }

    /// New findings the envelope counted but did not list.
    pub(super) fn unlisted(&self) -> usize {
        match &self.findings {
            // Counted: those past the ones listed.
            Some(FindingsView {
                new_total: Some(total),
                new,
            }) => total.saturating_sub(new.len()),
            // No baseline to compare with (nothing is new), or no findings at all.
            Some(FindingsView {
                new_total: None, ..
            })
            | None => 0,
        }
    }

    /// One line: `todo: swapped (2, ceiling 2)`, or why it has no reading.
    pub(super) fn headline(&self) -> String {
        let bound = match self.direction.as_deref() {
            Some("up") => "floor",
            _ => "ceiling",
        };
        let limit = self.limit.map_or("—".to_owned(), number);
        match (self.outcome(), self.value) {
            (Outcome::Skipped, _) => {
                format!(
                    "{}: not measured (blocked by the never-loosen check)",
                    self.name
                )
            }
            (Outcome::Errored, _) => format!("{}: could not be measured", self.name),
            (_, Some(value)) => format!(
                "{}: {} ({}, {bound} {limit})",
                self.name,
                self.verdict.as_deref().unwrap_or("measured"),
                number(value)
            ),
            (_, None) => format!("{}: {bound} {limit}", self.name),
        }
    }
}

/// A number as the other renderings print it: no `.0` on whole numbers.
pub(super) fn number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        let text = format!("{value:.4}");
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}

/// The Standards of an envelope's `data`, if it has any. Data that names Standards this
/// reading cannot read gives none here, and an error in [`problems`]: never a quiet pass.
pub(super) fn standards(envelope: &Envelope) -> Vec<StandardView> {
    // Not a default that passes: `problems` reports the same parse failure as an error.
    parse(envelope).unwrap_or_default()
}

fn parse(envelope: &Envelope) -> Result<Vec<StandardView>, serde_json::Error> {
    match envelope
        .data
        .as_ref()
        .and_then(|data| data.get("standards"))
    {
        Some(list) => serde_json::from_value(list.clone()),
        None => Ok(Vec::new()),
    }
}

/// How serious a CI entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Level {
    Error,
    Warning,
    Note,
}

impl Level {
    /// A finding's own severity, else `default`.
    pub(super) fn of(severity: Option<&str>, default: Level) -> Level {
        match severity {
            Some("error") => Level::Error,
            Some("warning") => Level::Warning,
            Some("note") => Level::Note,
            _ => default,
        }
    }

    pub(super) fn as_sarif(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Note => "note",
        }
    }
}

/// One thing a CI system shows beside the code: a new finding of a Standard, or a Standard
/// (failing without a listed finding).
#[derive(Debug, Clone)]
pub(super) struct Issue<'a> {
    pub standard: &'a StandardView,
    pub finding: Option<&'a FindingView>,
    pub level: Level,
    /// The Standard's diagnostic (what to do), where the envelope carries one.
    pub diagnostic: Option<&'a crate::result::Diagnostic>,
}

impl Issue<'_> {
    pub(super) fn failing(&self) -> bool {
        self.standard.failing()
    }

    /// What the entry says: the finding's message, else the Standard's diagnostic or note.
    pub(super) fn message(&self) -> String {
        if let Some(finding) = self.finding {
            return finding.message.clone();
        }
        self.diagnostic
            .map(|d| d.message.clone())
            .or_else(|| self.standard.note.clone())
            .unwrap_or_else(|| self.standard.headline())
    }

    /// Where it is: the finding's place, else where the diagnostic points (`discern.toml`).
    pub(super) fn path(&self) -> Option<&str> {
        match self.finding {
            Some(finding) => finding.path.as_deref(),
            None => self.diagnostic.and_then(|d| d.file.as_deref()),
        }
    }

    pub(super) fn line(&self) -> Option<u64> {
        match self.finding {
            Some(finding) => finding.line.map(u64::from),
            None => self.diagnostic.and_then(|d| d.line),
        }
    }

    pub(super) fn column(&self) -> Option<u32> {
        self.finding.and_then(|f| f.column)
    }
}

/// Every issue of `standards`: each new finding (of a failing Standard an error unless the
/// finding says otherwise, of a passing one a warning), and one per failing Standard that
/// lists no new finding.
pub(super) fn issues<'a>(standards: &'a [StandardView], envelope: &'a Envelope) -> Vec<Issue<'a>> {
    let mut out = Vec::new();
    for standard in standards {
        let diagnostic = envelope
            .diagnostics
            .iter()
            .find(|d| d.tool == format!("standard:{}", standard.name));
        let default = if standard.failing() {
            Level::Error
        } else {
            Level::Warning
        };
        for finding in standard.new_findings() {
            out.push(Issue {
                standard,
                finding: Some(finding),
                level: Level::of(finding.severity.as_deref(), default),
                diagnostic,
            });
        }
        if standard.failing() && standard.new_findings().is_empty() {
            out.push(Issue {
                standard,
                finding: None,
                level: Level::Error,
                diagnostic,
            });
        }
    }
    out
}

/// Something to report that is not a Standard's: a refusal, a diagnostic of another tool, an
/// advisory.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Problem {
    pub level: Level,
    pub title: String,
    pub message: String,
    pub file: Option<String>,
    pub line: Option<u64>,
}

/// The problems of `envelope` beside its Standards: diagnostics that are no Standard's, and
/// the refusal itself when nothing else explains it.
pub(super) fn problems(envelope: &Envelope, standards: &[StandardView]) -> Vec<Problem> {
    let owned = |tool: &str| {
        standards
            .iter()
            .any(|s| tool.strip_prefix("standard:") == Some(s.name.as_str()))
    };
    let mut out: Vec<Problem> = envelope
        .diagnostics
        .iter()
        .filter(|d| !owned(&d.tool))
        .map(|d| Problem {
            level: match d.severity {
                Severity::Error => Level::Error,
                Severity::Warning => Level::Warning,
                Severity::Info => Level::Note,
            },
            title: format!("discern {}: {}", envelope.verb, d.tool),
            message: d.message.clone(),
            file: d.file.clone(),
            line: d.line,
        })
        .collect();
    if let Err(e) = parse(envelope) {
        out.push(Problem {
            level: Level::Error,
            title: format!("discern {}: unreadable result", envelope.verb),
            message: format!(
                "the Standards in this result cannot be read for this format ({e}); `--json` shows the result as it is"
            ),
            file: None,
            line: None,
        });
    }
    let explained =
        out.iter().any(|p| p.level == Level::Error) || standards.iter().any(StandardView::failing);
    if let (false, false, Some(message)) = (envelope.ok, explained, envelope.message.as_ref()) {
        let slug = envelope
            .error
            .and_then(|e| serde_json::to_value(e).ok())
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| "failed".to_owned());
        out.insert(
            0,
            Problem {
                level: Level::Error,
                title: format!("discern {}: {slug}", envelope.verb),
                message: message.clone(),
                file: None,
                line: None,
            },
        );
    }
    out
}

/// The advisories of `envelope` (about the run, not the code: annotations and SARIF
/// notifications show them, Code Quality and JUnit reports do not).
pub(super) fn advisories(envelope: &Envelope) -> Vec<Problem> {
    envelope
        .advisories
        .iter()
        .map(|a| Problem {
            level: Level::Warning,
            title: format!("discern {}", envelope.verb),
            message: a.clone(),
            file: None,
            line: None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{Envelope, ErrorSlug, Hint, HintId, Reply, Report};

    fn envelope(data: serde_json::Value) -> Envelope {
        Reply::new(data, Report::default()).into_envelope("standards")
    }

    #[test]
    fn standards_are_read_from_the_data_and_outcomes_follow_verdict_and_measurement() {
        let env = envelope(serde_json::json!({"standards": [
            {"name": "a", "measurement": "measured", "verdict": "held", "value": 2.0, "limit": 2.0, "direction": "down"},
            {"name": "b", "measurement": "measured", "verdict": "swapped"},
            {"name": "c", "measurement": "failed", "note": "trap"},
            {"name": "d", "measurement": "skipped"},
        ]}));
        let list = standards(&env);
        let outcomes: Vec<Outcome> = list.iter().map(StandardView::outcome).collect();
        assert_eq!(
            outcomes,
            [
                Outcome::Passed,
                Outcome::Failed,
                Outcome::Errored,
                Outcome::Skipped
            ]
        );
        assert_eq!(list[0].headline(), "a: held (2, ceiling 2)");
        let issues = issues(&list, &env);
        assert_eq!(issues.len(), 2, "one per failing Standard without findings");
        assert_eq!(issues[1].message(), "trap");
    }

    #[test]
    fn standards_that_cannot_be_read_are_an_error_never_an_empty_pass() {
        let env = envelope(serde_json::json!({"standards": [{"name": 3}]}));
        assert!(standards(&env).is_empty());
        let problems = problems(&env, &standards(&env));
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].level, Level::Error);
        assert!(
            problems[0].message.contains("cannot be read"),
            "{}",
            problems[0].message
        );
    }

    #[test]
    fn a_refusal_without_standards_is_one_error_problem() {
        let env = crate::result::Refused::new(
            ErrorSlug::DirtyWorktree,
            "commit first",
            Hint::next_step(HintId::SeeHelp, "x"),
        )
        .into_envelope("accept");
        let problems = problems(&env, &standards(&env));
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].title, "discern accept: dirty_worktree");
        assert_eq!(problems[0].message, "commit first");
    }
}
