//! How a failed, regressed or swapped Standard is told: its diagnostic, the numbers and
//! findings in it as a reader writes them, and how many findings a failing row shows.

use super::reading::Verdict;
use super::result::{Measurement, StandardResult};
use crate::config::StandardDef;
use crate::result::{Diagnostic, Severity};

/// How many findings the text and Markdown show under a failing Standard (and so how many a
/// measurement keeps of a Standard nobody asked to explain).
pub(crate) const WHY_SHOWN: usize = 10;

/// The diagnostic of a regressed or failed Standard.
pub(super) fn standard_diagnostic(standard: &StandardDef, result: &StandardResult) -> Diagnostic {
    let message = match result.measurement {
        _ if result.verdict == Some(Verdict::Swapped) => swapped_message(standard, result),
        Measurement::Failed => format!(
            "Standard {} could not be measured: {}",
            standard.name,
            result.note.as_deref().unwrap_or("unknown failure")
        ),
        _ => {
            let value = result.value.unwrap_or(f64::NAN);
            let (relation, bound) = match standard.direction {
                crate::config::Direction::Up => ("is below", "floor"),
                crate::config::Direction::Down => ("exceeds", "ceiling"),
            };
            // No tip to hold a rate instead: a rate per line falls when lines are added and
            // rises when code is deleted, so it can be gamed both ways (see `init`).
            format!(
                "Standard {}: {} {relation} the {bound} {}. Move the metric back within your task's scope; never move the limit. If the work itself legitimately moved it, commit the final tree and propose the change for {} with a technical reason.",
                standard.name,
                display(value),
                standard.limit,
                standard.name
            )
        }
    };
    // Point at the first new finding when there is one: that is where the fix goes.
    let first_new = result
        .findings
        .as_ref()
        .and_then(|f| f.new.first())
        .filter(|f| f.path.is_some());
    let (file, line) = match first_new {
        Some(f) => (f.path.clone(), f.line.map(u64::from)),
        None => (
            Some(crate::config::FILE.to_owned()),
            standard.line.map(|l| l as u64),
        ),
    };
    Diagnostic {
        tool: format!("standard:{}", standard.name),
        severity: Severity::Error,
        message,
        reproduce_cmd: crate::result::spelled::spell(
            &crate::result::Action::new("standards").arg("explain", standard.name.as_str()),
        ),
        file,
        line,
    }
}

fn swapped_message(standard: &StandardDef, result: &StandardResult) -> String {
    // A swap is only ever judged against a baseline, so both totals are known.
    let Some((new, fixed, findings)) = result
        .findings
        .as_ref()
        .and_then(|f| Some((f.new_total?, f.fixed_total?, f)))
    else {
        return format!(
            "Standard {}: a swap (new findings hidden by fixed ones).",
            standard.name
        );
    };
    let first = findings
        .new
        .first()
        .map_or(String::new(), |f| format!(" (first: {})", locate(f)));
    format!(
        "Standard {}: {new} new finding(s){first} appeared while {fixed} fixed one(s) held the count at {} (ceiling {}): a swap. Fix the new findings; if the swap is the work's legitimate result, propose the change for {} with a technical reason.",
        standard.name,
        result.value.map_or("—".to_owned(), display),
        standard.limit,
        standard.name
    )
}

/// `path:line:column  message`, as far as the finding knows where it is.
pub(crate) fn locate(finding: &crate::runtime::Finding) -> String {
    let place = match (&finding.path, finding.line, finding.column) {
        (Some(p), Some(l), Some(c)) => format!("{p}:{l}:{c}"),
        (Some(p), Some(l), None) => format!("{p}:{l}"),
        (Some(p), None, _) => p.clone(),
        (None, _, _) => "(no file)".to_owned(),
    };
    format!("{place}  {}", finding.message)
}

/// A number as a reader writes it: whole numbers without a point, others to four places.
pub(crate) fn display(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        let text = format!("{value:.4}");
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    }
}
