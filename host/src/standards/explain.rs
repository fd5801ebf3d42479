//! `discern standards --explain NAME`: every finding behind one Standard's reading, grouped by
//! file, the new ones (versus the baseline) marked.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::findings::Explained;
use crate::measure::{Measured, StandardResult};
use crate::result::{ErrorSlug, Hint, HintId, Refused, Reply, Report, Section};

/// `data` of `--explain`.
#[derive(Debug, Serialize)]
struct ExplainData<'a> {
    standard: &'a StandardResult,
    /// Every finding, in the producer's order, each marked new (or `null` without a baseline).
    all: &'a [Explained],
}

pub(super) fn explain(measured: &Measured, name: &str) -> Result<Reply, Refused> {
    let Some(result) = measured.standards.iter().find(|s| s.name == name) else {
        return Err(Refused::new(
            ErrorSlug::UnknownStandard,
            format!("There is no Standard {name} in this measurement."),
            Hint::next_step(HintId::SeeHelp, "List the Standards")
                .with_action(crate::result::Action::new("standards")),
        ));
    };
    let report = Report {
        state: state(result),
        sections: by_file(&result.explained),
    };
    let data = ExplainData {
        standard: result,
        all: &result.explained,
    };
    let data = match serde_json::to_value(&data) {
        Ok(data) => data,
        Err(e) => {
            return Err(Refused::new(
                ErrorSlug::Internal,
                format!("The findings of {name} cannot be written as JSON: {e}"),
                Hint::next_step(HintId::ReportBug, "Report this as a bug in discern."),
            ));
        }
    };
    let mut envelope = Reply::new(data, report);
    envelope.ok = result.verdict.is_some_and(|v| v.passes());
    envelope
        .advisories
        .extend(measured.advisories.iter().cloned());
    Ok(envelope)
}

fn state(result: &StandardResult) -> String {
    let value = result.value.map_or("—".to_owned(), |v| v.to_string());
    let verdict = result.verdict.map_or("not measured", |v| v.as_str());
    match &result.findings {
        None => format!(
            "{}: {value}, {verdict}; its producer reported no findings.",
            result.name
        ),
        Some(f) => {
            let compared = match (f.new_total, f.fixed_total, &f.baseline) {
                (Some(new), Some(fixed), Some(base)) => format!(
                    "{new} new and {fixed} fixed versus {}",
                    crate::git::short(base)
                ),
                _ => format!(
                    "not compared ({})",
                    f.note.as_deref().unwrap_or("no baseline")
                ),
            };
            format!(
                "{}: {value}, {verdict}; {} finding(s), {compared}.",
                result.name, f.total
            )
        }
    }
}

/// One section per file (findings without a file last), new findings marked `NEW`.
fn by_file(all: &[Explained]) -> Vec<Section> {
    let mut files: BTreeMap<Option<&str>, Vec<&Explained>> = BTreeMap::new();
    for e in all {
        files.entry(e.finding.path.as_deref()).or_default().push(e);
    }
    let mut sections: Vec<Section> = files
        .into_iter()
        .map(|(path, findings)| {
            let new = findings.iter().filter(|e| e.new == Some(true)).count();
            Section {
                table: None,
                title: format!(
                    "{} ({} finding{}{})",
                    path.unwrap_or("(no file)"),
                    findings.len(),
                    if findings.len() == 1 { "" } else { "s" },
                    if new > 0 {
                        format!(", {new} new")
                    } else {
                        String::new()
                    }
                ),
                lines: findings.iter().map(|e| line(e)).collect(),
            }
        })
        .collect();
    // `None` sorts first in a BTreeMap; the findings without a file read best last.
    if sections
        .first()
        .is_some_and(|s| s.title.starts_with("(no file)"))
    {
        sections.rotate_left(1);
    }
    sections
}

fn line(e: &Explained) -> String {
    let mark = if e.new == Some(true) { "NEW " } else { "    " };
    let place = match (e.finding.line, e.finding.column) {
        (Some(l), Some(c)) => format!("{l}:{c}"),
        (Some(l), None) => l.to_string(),
        _ => "-".to_owned(),
    };
    format!("{mark}{place:>9}  {}", e.finding.message)
}
