//! Human terminal text and Markdown renderings of an envelope.

use super::{Action, Category, Envelope, Hint, Table};

/// How a frontend spells a step: a CLI command line, or an MCP tool call.
pub type StepRenderer<'a> = &'a dyn Fn(&Action) -> String;

/// A hint as one line: its text, then the step it names as the frontend spells it.
fn line(hint: &Hint, render: StepRenderer) -> String {
    match hint.action() {
        Some(action) => format!("{}: `{}`.", hint.text(), render(action)),
        None => hint.text().to_owned(),
    }
}

/// The default terminal rendering: the state, the sections, diagnostics, then hints.
pub fn human(envelope: &Envelope, render: StepRenderer) -> String {
    let mut out = String::new();
    let state = &envelope.report.state;
    if !state.is_empty() {
        let prefix = if envelope.ok { "" } else { "error: " };
        out.push_str(&format!("{prefix}{state}\n"));
    }
    for section in &envelope.report.sections {
        out.push('\n');
        if !section.title.is_empty() {
            out.push_str(&format!("{}\n", section.title));
        }
        for line in &section.lines {
            out.push_str(&format!("  {line}\n"));
        }
    }
    if !envelope.diagnostics.is_empty() {
        out.push('\n');
        for d in &envelope.diagnostics {
            out.push_str(&format!("{}: {}\n", d.severity.as_str(), d.message));
            out.push_str(&format!("  reproduce: {}\n", d.reproduce_cmd));
        }
    }
    for advisory in &envelope.advisories {
        out.push_str(&format!("\nwarning: {advisory}\n"));
    }
    let hints: Vec<_> = envelope.hints.iter().collect();
    if !hints.is_empty() {
        out.push('\n');
        for hint in hints {
            let label = match hint.category() {
                Category::NextStep => "next",
                Category::Guardrail => "note",
                Category::Notice => "info",
                Category::OwnerAttention => "owner",
            };
            out.push_str(&format!("{label}: {}\n", line(hint, render)));
        }
    }
    out
}

/// The Markdown rendering (`--markdown`, and the MCP text content). Sections in a fixed order:
/// current state, evidence, authority and boundaries, owner attention, other actions, and the
/// next action last.
pub fn markdown(envelope: &Envelope, render: StepRenderer) -> String {
    let by = |category: Category| -> Vec<String> {
        envelope
            .hints
            .iter()
            .filter(|h| h.category() == category)
            .map(|h| line(h, render))
            .collect()
    };
    let mut out = format!(
        "# discern {}\n\n## Current state\n\n{}\n",
        envelope.verb, envelope.report.state
    );
    let notices = by(Category::Notice);
    if !envelope.report.sections.is_empty()
        || !envelope.diagnostics.is_empty()
        || !notices.is_empty()
    {
        out.push_str("\n## Evidence\n");
        for section in &envelope.report.sections {
            out.push_str(&format!("\n### {}\n\n", section.title));
            match &section.table {
                Some(table) => out.push_str(&table_markdown(table)),
                None => {
                    for line in &section.lines {
                        out.push_str(&format!("- {line}\n"));
                    }
                }
            }
        }
        if !envelope.diagnostics.is_empty() || !notices.is_empty() {
            out.push('\n');
        }
        for d in &envelope.diagnostics {
            out.push_str(&format!(
                "- **{}** {}: {} (reproduce: `{}`)\n",
                d.severity.as_str(),
                d.tool,
                d.message,
                d.reproduce_cmd
            ));
        }
        for notice in notices {
            out.push_str(&format!("- {notice}\n"));
        }
    }
    let guardrails = by(Category::Guardrail);
    if !guardrails.is_empty() || !envelope.advisories.is_empty() {
        out.push_str("\n## Authority and boundaries\n\n");
        for line in envelope.advisories.iter().cloned().chain(guardrails) {
            out.push_str(&format!("- {line}\n"));
        }
    }
    let owner = by(Category::OwnerAttention);
    if !owner.is_empty() {
        out.push_str("\n## Owner attention\n\n");
        for line in owner {
            out.push_str(&format!("- {line}\n"));
        }
    }
    let actions = by(Category::NextStep);
    if actions.len() > 1 {
        out.push_str("\n## Other actions\n\n");
        for line in &actions[1..] {
            out.push_str(&format!("- {line}\n"));
        }
    }
    if let Some(first) = actions.first() {
        out.push_str(&format!("\n## Next action\n\n{first}\n"));
    }
    out
}

/// A GitHub-flavoured Markdown table, then its notes as a list.
pub(super) fn table_markdown(table: &Table) -> String {
    let row = |cells: &[String]| {
        let cells: Vec<String> = cells.iter().map(|c| cell(c)).collect();
        format!("| {} |\n", cells.join(" | "))
    };
    let mut out = row(&table.header);
    out.push_str(&format!("|{}\n", " --- |".repeat(table.header.len())));
    for r in &table.rows {
        out.push_str(&row(r));
    }
    if !table.notes.is_empty() {
        out.push('\n');
        for note in &table.notes {
            out.push_str(&format!("- {note}\n"));
        }
    }
    out
}

/// A table cell: one line, `|` escaped.
fn cell(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\n', '\r'], " ")
}
