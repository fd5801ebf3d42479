//! SARIF 2.1.0 (`serde-sarif`): one rule per Standard, one result per new finding (its
//! fingerprint in `partialFingerprints`, so code scanning follows it across commits) and one
//! per failing Standard without a listed finding; the refusals and other diagnostics as the
//! invocation's notifications.

use std::collections::BTreeMap;

use serde_sarif::sarif;

use super::view::{self, Issue, Level, Problem, StandardView};
use crate::result::Envelope;

/// The `partialFingerprints` key that carries a finding's fingerprint; `v2` since fingerprints
/// are where a finding is (`findings/identity.rs`; `v1` was the producer's).
pub const FINGERPRINT_KEY: &str = "discernFinding/v2";
/// The base every location is relative to: the repository root.
const SRCROOT: &str = "%SRCROOT%";
const SCHEMA: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// The SARIF log of `envelope`.
pub(super) fn render(envelope: &Envelope) -> String {
    let standards = view::standards(envelope);
    let issues = view::issues(&standards, envelope);
    let rules: Vec<sarif::ReportingDescriptor> = standards.iter().map(rule).collect();
    let results: Vec<sarif::Result> = issues
        .iter()
        .map(|issue| result(issue, &standards))
        .collect();
    let driver = sarif::ToolComponent::builder()
        .name("discern")
        .version(env!("CARGO_PKG_VERSION"))
        .rules(rules)
        .build();
    let run = sarif::Run::builder()
        .tool(driver)
        .results(results)
        .invocations(vec![invocation(envelope, &standards)])
        .original_uri_base_ids(BTreeMap::from([(
            SRCROOT.to_owned(),
            sarif::ArtifactLocation::builder()
                .description(sarif::Message::from("The repository root"))
                .build(),
        )]))
        .build();
    let log = sarif::Sarif::builder()
        .schema(SCHEMA)
        .version(sarif::Version::V2_1_0.to_string())
        .runs(vec![run])
        .build();
    serde_json::to_string_pretty(&log).unwrap_or_else(|_| "{}".to_owned()) + "\n"
}

/// A Standard as a rule: what it holds, never how this run went (a rule describes the check).
fn rule(standard: &StandardView) -> sarif::ReportingDescriptor {
    let limit = standard.limit.map_or("—".to_owned(), view::number);
    let holds = match standard.direction.as_deref() {
        Some("up") => format!("may not fall below its floor {limit}"),
        _ => format!("may not rise above its ceiling {limit}"),
    };
    sarif::ReportingDescriptor::builder()
        .id(standard.name.clone())
        .name(standard.name.clone())
        .short_description(&format!("Standard {}: {holds}", standard.name))
        .full_description(&format!(
            "The discern Standard {}: its reading {holds}, and a count that holds only because fixed findings hid new ones is a swap. Each result is a new finding versus the baseline (the merge base with the trunk on a branch), or the Standard itself when it fails without one.",
            standard.name
        ))
        .default_configuration(
            sarif::ReportingConfiguration::builder()
                .level(serde_json::Value::from(Level::Error.as_sarif()))
                .build(),
        )
        .build()
}

fn result(issue: &Issue, standards: &[StandardView]) -> sarif::Result {
    // An issue always belongs to one of the envelope's Standards; were it not found, the
    // result names its rule by id alone rather than pointing at another rule.
    let index = standards
        .iter()
        .position(|s| s.name == issue.standard.name)
        .and_then(|i| i64::try_from(i).ok());
    let text = match issue.finding {
        Some(_) => format!(
            "{} (new finding of {})",
            issue.message(),
            issue.standard.headline()
        ),
        None => issue.message(),
    };
    let builder = sarif::Result::builder()
        .rule_id(issue.standard.name.clone())
        .level(level(issue.level))
        .message(&text);
    let locations = location(issue.path(), issue.line(), issue.column());
    let mut result = match issue.finding {
        Some(finding) => builder
            .partial_fingerprints(BTreeMap::from([(
                FINGERPRINT_KEY.to_owned(),
                finding.fingerprint.clone(),
            )]))
            .locations(locations)
            .build(),
        None => builder.locations(locations).build(),
    };
    result.rule_index = index;
    result
}

fn level(level: Level) -> sarif::ResultLevel {
    match level {
        Level::Error => sarif::ResultLevel::Error,
        Level::Warning => sarif::ResultLevel::Warning,
        Level::Note => sarif::ResultLevel::Note,
    }
}

/// The place of an issue, relative to `%SRCROOT%`; none when it has no path.
fn location(path: Option<&str>, line: Option<u64>, column: Option<u32>) -> Vec<sarif::Location> {
    let Some(path) = path else {
        return Vec::new();
    };
    let artifact = sarif::ArtifactLocation::builder()
        .uri(path)
        .uri_base_id(SRCROOT)
        .build();
    let physical = match line.and_then(|l| i64::try_from(l).ok()) {
        Some(line) => {
            let region = match column {
                Some(column) => sarif::Region::builder()
                    .start_line(line)
                    .start_column(i64::from(column))
                    .build(),
                None => sarif::Region::builder().start_line(line).build(),
            };
            sarif::PhysicalLocation::builder()
                .artifact_location(artifact)
                .region(region)
                .build()
        }
        None => sarif::PhysicalLocation::builder()
            .artifact_location(artifact)
            .build(),
    };
    vec![
        sarif::Location::builder()
            .physical_location(physical)
            .build(),
    ]
}

/// Whether discern ran to a result (a failing Standard is a successful run that found
/// something; a run whose limits could not be verified is not, so code scanning never shows it
/// as clean), and what it said beside its Standards.
fn invocation(envelope: &Envelope, standards: &[StandardView]) -> sarif::Invocation {
    let status = envelope
        .data
        .as_ref()
        .and_then(|d| d.pointer("/limits/status"))
        .and_then(serde_json::Value::as_str);
    let verified = !matches!(status, Some("unverified" | "parse_failed"));
    let successful = envelope.ok || (verified && !standards.is_empty());
    let notifications: Vec<sarif::Notification> = view::problems(envelope, standards)
        .into_iter()
        .chain(view::advisories(envelope))
        .map(notification)
        .collect();
    if notifications.is_empty() {
        return sarif::Invocation::builder()
            .execution_successful(successful)
            .build();
    }
    sarif::Invocation::builder()
        .execution_successful(successful)
        .tool_execution_notifications(notifications)
        .build()
}

fn notification(problem: Problem) -> sarif::Notification {
    let level = problem.level.as_sarif();
    let text = format!("{}: {}", problem.title, problem.message);
    let locations = location(problem.file.as_deref(), problem.line, None);
    let builder = sarif::Notification::builder()
        .message(&text)
        .level(serde_json::Value::from(level));
    if locations.is_empty() {
        builder.build()
    } else {
        builder.locations(locations).build()
    }
}
