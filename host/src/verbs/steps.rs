//! How each surface spells a step ([`Action`]): the CLI as a command line read off the verb's
//! clap command (flags, values, positionals), MCP as a call of the verb's tool with its JSON
//! arguments. Both read the verb table, so a step can only name what a verb really takes.

use serde_json::{Value, json};

use super::{Entry, Surface, by_name};
use crate::result::Action;
use crate::result::spelled::{self, Spellers};

/// Run `work` with the steps its result names in prose (a report line, a refusal's message, a
/// diagnostic's command) spelled for `surface` ([`spelled::spell`]).
pub(crate) fn within<R>(surface: Surface, work: impl FnOnce() -> R) -> R {
    let here: spelled::Speller = match surface {
        Surface::Cli => command_line,
        Surface::Mcp => tool_call,
    };
    let spellers = Spellers { here, command_line };
    spelled::within(spellers, work)
}

/// The row and (for `standards propose`) subcommand an action names.
fn row(action: &Action) -> Option<(&'static dyn Entry, Option<&str>)> {
    let mut words = action.verb.split_whitespace();
    let entry = by_name(words.next()?)?;
    Some((entry, words.next()))
}

/// `discern accept --confirmed`: the step as a command line.
pub fn command_line(action: &Action) -> String {
    let mut words = vec!["discern".to_owned(), action.verb.clone()];
    let Some((entry, sub)) = row(action) else {
        return words.join(" ");
    };
    let mut command = entry.command();
    if let Some(sub) = sub
        && let Some(found) = command.find_subcommand(sub)
    {
        command = found.clone();
    }
    for (name, value) in &action.arguments {
        let Some(arg) = command
            .get_arguments()
            .find(|a| a.get_id() == name.as_str())
        else {
            words.push(format!("--{}", name.replace('_', "-")));
            continue;
        };
        let values: Vec<String> = match value {
            Value::Bool(true) => Vec::new(),
            Value::Array(items) => items.iter().map(text).collect(),
            other => vec![text(other)],
        };
        match arg.get_long() {
            Some(long) if values.is_empty() => words.push(format!("--{long}")),
            Some(long) => values
                .into_iter()
                .for_each(|v| words.push(format!("--{long} {}", quoted(&v)))),
            None => words.extend(values.iter().map(|v| quoted(v))),
        }
    }
    words.join(" ")
}

/// `discern_accept {"confirmed":true}`: the step as an MCP tool call.
pub fn tool_call(action: &Action) -> String {
    let Some((entry, sub)) = row(action) else {
        return action.verb.clone();
    };
    // A verb with no tool (init, producers) is only a command line, on every surface.
    let Some(tool) = entry.info().tool else {
        return command_line(action);
    };
    let mut arguments = action.arguments.clone();
    // The one tool whose shape ADR 0405 fixes: an action, and proposals as a list.
    if tool == "discern_standards" {
        let propose = sub == Some("propose");
        if propose
            && let (Some(name), Some(reason)) =
                (arguments.remove("name"), arguments.remove("reason"))
        {
            arguments.insert(
                "proposals".to_owned(),
                json!([{ "name": name, "reason": reason }]),
            );
        }
        arguments.insert("action".to_owned(), json!(sub.unwrap_or("measure")));
    }
    match arguments.is_empty() {
        true => tool.to_owned(),
        false => format!("{tool} {}", Value::Object(arguments)),
    }
}

fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A shell word: as it is when it is plain, else in single quotes.
fn quoted(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@,+…".contains(c));
    match plain {
        true => word.to_owned(),
        false => format!("'{}'", word.replace('\'', r"'\''")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prose_spells_a_step_for_the_surface_of_the_call() {
        use crate::result::spelled::spell;
        let explain = Action::new("standards").arg("explain", "longest");
        assert_eq!(spell(&explain), "discern standards --explain longest");
        let mcp = within(Surface::Mcp, || spell(&explain));
        assert_eq!(
            mcp,
            r#"discern_standards {"explain":"longest","action":"measure"}"#
        );
        let nested = within(Surface::Mcp, || within(Surface::Cli, || spell(&explain)));
        assert_eq!(nested, "discern standards --explain longest");
        assert_eq!(spell(&explain), "discern standards --explain longest");
    }

    #[test]
    fn a_step_is_a_command_line_on_the_cli_and_a_tool_call_over_mcp() {
        let accept = Action::new("accept").flag("confirmed");
        assert_eq!(command_line(&accept), "discern accept --confirmed");
        assert_eq!(tool_call(&accept), r#"discern_accept {"confirmed":true}"#);
        let resume = Action::new("await").arg("resume", "C1-ABCD-0123");
        assert_eq!(command_line(&resume), "discern await --resume C1-ABCD-0123");
        let progress = Action::new("progress").arg("handle", "R1-1");
        assert_eq!(command_line(&progress), "discern progress R1-1");
        let start = Action::new("start").arg("title", "A task");
        assert_eq!(command_line(&start), "discern start --title 'A task'");
        let pin = Action::new("standards").flag("pin");
        assert_eq!(command_line(&pin), "discern standards --pin");
        assert_eq!(
            tool_call(&pin),
            r#"discern_standards {"pin":true,"action":"measure"}"#
        );
        let propose = Action::new("standards propose")
            .arg("name", "todo")
            .arg("reason", "R");
        assert_eq!(
            command_line(&propose),
            "discern standards propose todo --reason R"
        );
        assert_eq!(
            tool_call(&propose),
            r#"discern_standards {"proposals":[{"name":"todo","reason":"R"}],"action":"propose"}"#
        );
        assert_eq!(tool_call(&Action::new("done")), "discern_done");
        assert_eq!(command_line(&Action::new("init")), "discern init");
        assert_eq!(tool_call(&Action::new("init")), "discern init");
    }
}
