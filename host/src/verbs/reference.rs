//! The command reference (`docs/commands.md`), generated from the verb table and the clap
//! command each row builds, so the page cannot say what the binary does not do. The suite
//! compares the page with [`markdown`]; `DISCERN_REGENERATE=1` rewrites it.

use std::fmt::Write as _;

use super::{Info, TABLE};
use crate::preflight::Cleanliness;
use crate::result::HintId;

/// Where the page lives, relative to the workspace root.
pub const PAGE: &str = "docs/commands.md";

/// The whole page.
pub fn markdown() -> String {
    let mut page = String::from(
        "# Command reference\n\n\
         Generated from the verb table (`host/src/verbs/table.rs`) and the clap arguments of each\n\
         request type; `cargo test -p discern --lib verbs::reference` checks it and\n\
         `DISCERN_REGENERATE=1 cargo test -p discern --lib verbs::reference` rewrites it.\n\
         [The verbs in depth](verbs.md) says what each verb does, refuses and guarantees.\n\n\
         Every command also takes `-C DIR` (run as if started in DIR, as `git -C` does), `--json`\n\
         (the result envelope), `--markdown`, and `--output-format human|json|markdown|github|sarif|junit|gitlab`\n\
         (default: `$DISCERN_OUTPUT_FORMAT`, else human). Exit codes: 0 ok, 1 refusal or failure,\n\
         2 bad arguments, 70 internal error, 124 `await` not met.\n\n\
         | command | MCP tool | what it is for |\n|---|---|---|\n",
    );
    for entry in TABLE {
        let info = entry.info();
        let tool = info.tool.map_or("—".to_owned(), |t| format!("`{t}`"));
        let _ = writeln!(
            page,
            "| [`discern {}`](#discern-{}) | {tool} | {} |",
            info.name,
            info.name,
            cell(info.summary)
        );
    }
    page.push_str(
        "| [`discern desk`](#discern-desk) | — | The owner's desk: every effort grouped for deciding (a terminal UI; no MCP tool) |\n\
         | [`discern mcp`](#discern-mcp) | — | Serve the Model Context Protocol on stdin/stdout for coding agents |\n",
    );
    for entry in TABLE {
        let info = entry.info();
        let command = entry.command();
        page.push_str(&section(&command, &format!("discern {}", info.name), 2));
        page.push_str(&facts(info));
        // A flag that asks for more than the row (`standards --pin` commits limits).
        for mode in entry.modes() {
            if let Some(flag) = mode.name.strip_prefix(&format!("{} ", info.name))
                && flag.starts_with("--")
            {
                let _ = writeln!(page, "- Writes with `{flag}`: {}.", writes(mode));
            }
        }
        for sub in command.get_subcommands() {
            let path = format!("discern {} {}", info.name, sub.get_name());
            page.push_str(&section(sub, &path, 3));
            let name = format!("{} {}", info.name, sub.get_name());
            if let Some(mode) = entry.modes().iter().find(|mode| mode.name == name) {
                page.push_str(&facts(mode));
            }
        }
    }
    page.push_str(
        "\n## `discern desk`\n\nThe owner's desk, a full-screen terminal UI (also bare `discern` on a terminal where a\n\
         `discern.toml` is): the fleet `status` observes, grouped for deciding, and per effort the\n\
         actions its state allows (inspect, approve, land, update, abandon, a shell), each showing\n\
         the command it runs through the verb table. No MCP tool; off a terminal, under `CI` or\n\
         with `--json` it refuses (`not_interactive`), naming `discern status`.\n\n\
         ```text\ndiscern [-C DIR] desk\n```\n",
    );
    page.push_str(
        "\n## `discern mcp`\n\nServe the Model Context Protocol on stdin/stdout for coding agents: one tool per verb\n\
         that has one (the table above), each taking exactly its CLI verb's arguments as JSON and\n\
         answering with the same envelope, plus the resource `discern://status`.\n\n\
         ```text\ndiscern [-C DIR] mcp\n```\n",
    );
    page.push_str(&hints());
    page
}

/// The hint registry: every id a result's `hints[].id` can carry, with its category, and the
/// owner-attention templates.
fn hints() -> String {
    let wire = |value: serde_json::Result<serde_json::Value>| match value {
        Ok(serde_json::Value::String(s)) => s,
        _ => "?".to_owned(),
    };
    let mut text = String::from(
        "\n## Hints\n\nEvery hint a result carries has a stable `id` from this registry and one category:\n\
         `next-step` (what the caller does next; may name its step as `action`), `guardrail`,\n\
         `notice`, or `owner-attention` (a judgment only the owner makes: never an action).\n\n\
         | id | category | owner-attention text |\n|---|---|---|\n",
    );
    for id in HintId::ALL {
        let template = HintId::OWNER_ATTENTION
            .iter()
            .find(|(owner, _)| owner == id)
            .map_or(String::new(), |(_, template)| cell(template));
        let _ = writeln!(
            text,
            "| `{}` | {} | {template} |",
            wire(serde_json::to_value(id)),
            wire(serde_json::to_value(id.category()))
        );
    }
    text
}

/// One command's heading, summary, usage line and arguments.
fn section(command: &clap::Command, path: &str, level: usize) -> String {
    let mut text = format!(
        "\n{} `{path}`\n\n{}\n\n```text\n{}\n```\n",
        "#".repeat(level),
        command
            .get_about()
            .map(|a| a.to_string())
            .unwrap_or_default(),
        usage(command, path)
    );
    let rows: Vec<String> = command
        .get_arguments()
        .filter(|a| !matches!(a.get_id().as_str(), "help" | "version"))
        .map(|arg| format!("| `{}` | {} |", cell(&spelling(arg)), cell(&help(arg))))
        .collect();
    if !rows.is_empty() {
        text.push_str("\n| argument | what |\n|---|---|\n");
        text.push_str(&rows.join("\n"));
        text.push('\n');
    }
    text
}

/// What the table says about a verb beyond its arguments.
fn facts(info: &Info) -> String {
    let tool = match info.tool {
        Some(tool) => format!("`{tool}` — {}", info.tool_description),
        None => "none (CLI only)".to_owned(),
    };
    format!("\n- MCP tool: {tool}\n- Writes: {}.\n", writes(info))
}

/// Whether and where a row writes: never, in any checkout, or only as clean as it declares.
fn writes(info: &Info) -> String {
    let moves = match info.annotations.destructive {
        true => ", and can move or remove what exists",
        false => "",
    };
    match (info.annotations.read_only, info.cleanliness) {
        (true, _) => "no".to_owned(),
        (false, Cleanliness::Any) => format!("yes{moves}; in any checkout"),
        (false, Cleanliness::TrackedFiles) => {
            format!("yes{moves}; only when no tracked file has changed (untracked files may exist)")
        }
        (false, Cleanliness::Full) => format!(
            "yes{moves}; only on a clean checkout (no change, no untracked file that is not ignored)"
        ),
    }
}

/// The usage line clap prints, under the command's full name.
fn usage(command: &clap::Command, path: &str) -> String {
    let rendered = command
        .clone()
        .bin_name(path)
        .disable_help_flag(true)
        .render_usage()
        .to_string();
    rendered
        .trim_start_matches("Usage: ")
        .lines()
        .map(str::trim)
        .collect::<Vec<_>>()
        .join("\n")
}

/// How an argument is written: `--flag`, `--name <VALUE>`, `-s, --long`, or `NAME...`.
fn spelling(arg: &clap::Arg) -> String {
    let value = arg
        .get_value_names()
        .and_then(|names| names.first())
        .map(|n| n.to_string())
        .unwrap_or_else(|| arg.get_id().as_str().to_uppercase());
    let takes_value = arg.get_action().takes_values();
    let many = matches!(arg.get_action(), clap::ArgAction::Append);
    if arg.is_positional() {
        let value = match arg.is_required_set() {
            true => format!("<{value}>"),
            false => format!("[{value}]"),
        };
        return match many {
            true => format!("{value}..."),
            false => value,
        };
    }
    let mut names = Vec::new();
    if let Some(short) = arg.get_short() {
        names.push(format!("-{short}"));
    }
    if let Some(long) = arg.get_long() {
        names.push(format!("--{long}"));
    }
    let names = names.join(", ");
    match (takes_value, many) {
        (true, true) => format!("{names} <{value}>..."),
        (true, false) => format!("{names} <{value}>"),
        (false, _) => names,
    }
}

/// An argument's help, with its possible values.
fn help(arg: &clap::Arg) -> String {
    let text = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
    let values: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| format!("`{}`", v.get_name()))
        .collect();
    match (values.is_empty(), arg.get_action().takes_values()) {
        (false, true) => format!("{text} (one of {})", values.join(", ")),
        _ => text,
    }
}

/// Text made safe for one Markdown table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    #[test]
    fn the_command_reference_is_generated_from_the_table() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(super::PAGE);
        let page = super::markdown();
        if std::env::var_os("DISCERN_REGENERATE").is_some() {
            std::fs::write(&path, &page).expect("docs/commands.md is writable");
            return;
        }
        let written = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            written == page,
            "{} is stale: regenerate it with `DISCERN_REGENERATE=1 cargo test -p discern --lib verbs::reference`",
            super::PAGE
        );
    }

    #[test]
    fn every_verb_and_every_argument_is_on_the_page() {
        let page = super::markdown();
        for entry in super::TABLE {
            let name = entry.info().name;
            assert!(page.contains(&format!("## `discern {name}`")), "{name}");
            for arg in entry.command().get_arguments() {
                if let Some(long) = arg.get_long() {
                    assert!(page.contains(&format!("--{long}")), "{name} --{long}");
                }
            }
        }
    }
}
