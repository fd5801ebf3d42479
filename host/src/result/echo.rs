//! How much of a caller's input a response may quote back: at most [`MAX_ECHO`] bytes per
//! field, the cut named in the field itself (`…(cut: 65536 bytes, showing the first 4096)`).
//!
//! Where the bound applies: on the whole result, just before a frontend serialises it, not at
//! each place that quotes an input. Inputs reach messages through many roads — an error's
//! `Display` naming a path (`{path}: not inside a git repository (…)`), a library's own error
//! text quoting it again, a dry run showing a title, a hint's step carrying an argument — and
//! a helper that each quoting site must remember to call is bypassed by the next site that
//! forgets. A pass over every string of the finished [`Envelope`] cannot be: the MCP server
//! builds every tool result from the envelope after [`bound_envelope`], and its gate passes
//! every JSON-RPC error (rmcp's own, which quote a method or tool name, included) through
//! [`bound_value`]. What else it sends quotes no caller input of any size: the status
//! resource takes no argument, and the gate refuses an `id` or a progress token (which every
//! response or progress notification repeats whole) over the bound. The cost: a long string
//! no input made is cut the same way — a failing job's output tail shows its first 4 KiB in an
//! MCP result, and the whole log stays at the `output_path` the result names.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::{Envelope, Hint, Report};

/// The most bytes of one field a response carries (4 KiB).
pub const MAX_ECHO: usize = 4096;

/// `text`, or its first [`MAX_ECHO`] bytes (at a character boundary) with the cut named.
pub fn cut(text: &str) -> Cow<'_, str> {
    if text.len() <= MAX_ECHO {
        return Cow::Borrowed(text);
    }
    let mut end = MAX_ECHO;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!(
        "{}…(cut: {} bytes, showing the first {end})",
        &text[..end],
        text.len()
    ))
}

/// Cut `text` in place where it is over the bound.
pub fn cut_string(text: &mut String) {
    if let Cow::Owned(shorter) = cut(text) {
        *text = shorter;
    }
}

/// Every string of `value`, object keys included, held to the bound.
pub fn bound_value(value: &mut Value) {
    match value {
        Value::String(text) => cut_string(text),
        Value::Array(items) => items.iter_mut().for_each(bound_value),
        Value::Object(map) => bound_map(map),
        _ => {}
    }
}

fn bound_map(map: &mut Map<String, Value>) {
    if map.keys().any(|key| key.len() > MAX_ECHO) {
        *map = std::mem::take(map)
            .into_iter()
            .map(|(key, value)| (cut(&key).into_owned(), value))
            .collect();
    }
    map.values_mut().for_each(bound_value);
}

fn bound_strings<'a>(texts: impl IntoIterator<Item = &'a mut String>) {
    texts.into_iter().for_each(cut_string);
}

fn bound_report(report: &mut Report) {
    cut_string(&mut report.state);
    for section in &mut report.sections {
        cut_string(&mut section.title);
        bound_strings(&mut section.lines);
        if let Some(table) = &mut section.table {
            bound_strings(&mut table.header);
            bound_strings(table.rows.iter_mut().flatten());
            bound_strings(&mut table.notes);
        }
    }
}

fn bound_hint(hint: &mut Hint) {
    match hint {
        Hint::Advice { text, action, .. } => {
            cut_string(text);
            if let Some(action) = action {
                bound_map(&mut action.arguments);
            }
        }
        Hint::OwnerAttention { text, .. } => cut_string(text),
    }
}

/// Every string a frontend renders from `envelope` (its JSON and its report), held to the
/// bound.
pub fn bound_envelope(envelope: &mut Envelope) {
    for value in [&mut envelope.plan, &mut envelope.steps, &mut envelope.data]
        .into_iter()
        .flatten()
    {
        bound_value(value);
    }
    for diagnostic in &mut envelope.diagnostics {
        cut_string(&mut diagnostic.message);
        cut_string(&mut diagnostic.reproduce_cmd);
        if let Some(file) = &mut diagnostic.file {
            cut_string(file);
        }
    }
    envelope.hints.iter_mut().for_each(bound_hint);
    bound_strings(&mut envelope.advisories);
    if let Some(message) = &mut envelope.message {
        cut_string(message);
    }
    bound_report(&mut envelope.report);
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::result::{ErrorSlug, HintId, Refused};

    #[test]
    fn a_long_field_is_cut_and_the_cut_named() {
        let long = "\u{0}".repeat(65536);
        let shown = cut(&long);
        assert!(shown.ends_with("…(cut: 65536 bytes, showing the first 4096)"));
        assert_eq!(shown.matches('\u{0}').count(), MAX_ECHO);
        assert_eq!(cut("short"), "short");
    }

    #[test]
    fn the_cut_falls_on_a_character_boundary() {
        let long = "é".repeat(MAX_ECHO);
        let shown = cut(&long);
        assert!(shown.contains("showing the first 4096)"), "{shown:.40}");
        let long = format!("x{}", "é".repeat(MAX_ECHO));
        assert!(cut(&long).contains("showing the first 4095)"));
    }

    #[test]
    fn every_string_of_an_envelope_is_bounded() {
        let long = "p".repeat(3 * MAX_ECHO);
        let hint = Hint::next_step(HintId::SeeHelp, "again");
        let mut envelope =
            Refused::new(ErrorSlug::InvalidArguments, &long, hint).into_envelope("status");
        envelope.data = Some(json!({ "path": long, long.clone(): [long] }));
        envelope.advisories.push(long.clone());
        bound_envelope(&mut envelope);
        let json = serde_json::to_string(&envelope).unwrap();
        assert!(json.len() < 6 * MAX_ECHO, "{} bytes", json.len());
        assert!(!json.contains(&"p".repeat(MAX_ECHO + 1)));
        assert!(envelope.report.state.len() < MAX_ECHO + 64);
        assert!(json.contains("(cut: 12288 bytes, showing the first 4096)"));
    }
}
