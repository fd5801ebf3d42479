//! Human terminal text and Markdown renderings of an envelope.

use super::{Category, Envelope};

/// The default terminal rendering: the state, the sections, diagnostics, then hints.
pub fn human(envelope: &Envelope) -> String {
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
            let label = match hint.category {
                Category::NextStep => "next",
                Category::Guardrail => "note",
                Category::Notice => "info",
                Category::OwnerAttention => "owner",
            };
            out.push_str(&format!("{label}: {}\n", hint.text));
        }
    }
    out
}

/// The Markdown rendering (`--markdown`, and later the MCP text content).
pub fn markdown(envelope: &Envelope) -> String {
    let mut out = format!("# discern {}\n\n", envelope.verb);
    out.push_str("## Current state\n\n");
    out.push_str(&envelope.report.state);
    out.push('\n');
    for section in &envelope.report.sections {
        out.push_str(&format!("\n## {}\n\n", section.title));
        for line in &section.lines {
            out.push_str(&format!("- {line}\n"));
        }
    }
    if !envelope.diagnostics.is_empty() {
        out.push_str("\n## Evidence\n\n");
        for d in &envelope.diagnostics {
            out.push_str(&format!(
                "- **{}** {}: {} (reproduce: `{}`)\n",
                d.severity.as_str(),
                d.tool,
                d.message,
                d.reproduce_cmd
            ));
        }
    }
    let guardrails: Vec<_> = envelope
        .hints
        .iter()
        .filter(|h| h.category == Category::Guardrail)
        .collect();
    if !guardrails.is_empty() || !envelope.advisories.is_empty() {
        out.push_str("\n## Authority and boundaries\n\n");
        for a in &envelope.advisories {
            out.push_str(&format!("- {a}\n"));
        }
        for h in guardrails {
            out.push_str(&format!("- {}\n", h.text));
        }
    }
    let owner: Vec<_> = envelope
        .hints
        .iter()
        .filter(|h| h.category == Category::OwnerAttention)
        .collect();
    if !owner.is_empty() {
        out.push_str("\n## Owner attention\n\n");
        for h in owner {
            out.push_str(&format!("- {}\n", h.text));
        }
    }
    let notices: Vec<_> = envelope
        .hints
        .iter()
        .filter(|h| h.category == Category::Notice)
        .collect();
    let actions: Vec<_> = envelope
        .hints
        .iter()
        .filter(|h| h.category == Category::NextStep)
        .collect();
    if actions.len() > 1 || !notices.is_empty() {
        out.push_str("\n## Other actions\n\n");
        for h in notices.iter().chain(actions.iter().skip(1)) {
            out.push_str(&format!("- {}\n", h.text));
        }
    }
    if let Some(first) = actions.first() {
        out.push_str(&format!("\n## Next action\n\n{}\n", first.text));
    }
    out
}
