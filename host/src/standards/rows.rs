//! A Standard's result as the text and Markdown show it: its status word, its table row, and
//! the new findings shown under it when it fails.

use crate::git::short;
use crate::measure::{Measurement, StandardResult, Verdict, WHY_SHOWN, display, locate};
use crate::result::Action;
use crate::result::spelled::spell;

/// Under a failing Standard: its first new findings (`path:line  message`), or without a
/// baseline its first findings, and where the rest are.
pub(super) fn why(result: &StandardResult) -> Vec<String> {
    let failing = result.verdict.is_some_and(|v| !v.passes());
    let Some(findings) = result.findings.as_ref().filter(|_| failing) else {
        return Vec::new();
    };
    let mut out: Vec<String> = match findings.new_total {
        Some(_) => findings.new.iter().take(WHY_SHOWN).map(locate).collect(),
        None => result
            .explained
            .iter()
            .take(WHY_SHOWN)
            .map(|e| locate(&e.finding))
            .collect(),
    };
    let total = findings.new_total.unwrap_or(findings.total);
    if total > out.len() {
        let explain = Action::new("standards").arg("explain", result.name.as_str());
        out.push(format!(
            "… {} more: `{}`",
            total - out.len(),
            spell(&explain)
        ));
    }
    out
}

pub(super) fn status(result: &StandardResult) -> String {
    match (result.measurement, result.verdict) {
        (Measurement::Failed, _) => "FAILED".to_owned(),
        (Measurement::Skipped, _) => "BLOCKED".to_owned(),
        (_, Some(Verdict::Regressed)) => "REGRESSED".to_owned(),
        (_, Some(Verdict::Swapped)) => "SWAPPED".to_owned(),
        (_, Some(Verdict::Inherited)) => "inherited".to_owned(),
        (_, Some(Verdict::Improved)) => "improved".to_owned(),
        _ => "held".to_owned(),
    }
}

/// One Markdown row: Standard, verdict, value, limit, findings, how it was read.
pub(super) fn row(result: &StandardResult) -> Vec<String> {
    let bound = match result.direction {
        crate::config::Direction::Up => "≥",
        crate::config::Direction::Down => "≤",
    };
    let findings =
        result
            .findings
            .as_ref()
            .map_or(String::new(), |f| match (f.new_total, f.fixed_total) {
                (Some(new), Some(fixed)) => format!("{} ({new} new, {fixed} fixed)", f.total),
                _ => format!("{} (no baseline)", f.total),
            });
    vec![
        format!("`{}`", result.name),
        status(result),
        result.value.map_or("—".to_owned(), display),
        format!("{bound} {}", display(result.limit)),
        findings,
        how(result),
    ]
}

/// How the value was read, whether it can be pinned, and where a reused reading came from.
pub(super) fn how(result: &StandardResult) -> String {
    let mut how = result.note.clone().unwrap_or_default();
    if let Some(target) = result.pin_target {
        how.push_str(&format!("; pinnable to {target}"));
    }
    if result.measurement == Measurement::Reused
        && let Some(from) = &result.reused_from
    {
        how.push_str(&format!("; reused from {}", short(from)));
        if let Some(evidence) = &result.reused_evidence {
            how.push_str(&format!(" ({evidence})"));
        }
    }
    how
}
