//! The guidance agents read: a section of `AGENTS.md` between discern's markers, generated from
//! the verb table's tools and this repository's Standards and jobs, and the `@AGENTS.md` import
//! Claude Code's `CLAUDE.md` and Gemini CLI's `GEMINI.md` need to read it. Everything outside
//! the markers is the team's. Pure text in, text out.

use crate::config::Config;

pub(crate) const FILE: &str = "AGENTS.md";
const BEGIN: &str =
    "<!-- discern:begin (written by `discern agents`: edit outside these markers) -->";
const END: &str = "<!-- discern:end -->";
/// The line that makes Claude Code and Gemini CLI read `AGENTS.md`.
pub(crate) const IMPORT: &str = "@AGENTS.md";

/// An MCP tool as the guidance names it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tool {
    pub name: &'static str,
    pub description: &'static str,
}

/// The managed section, markers included, ending with a newline.
pub(crate) fn section(config: Option<&Config>, tools: &[Tool]) -> String {
    let mut text = format!("{BEGIN}\n## Working here with discern\n\n");
    text.push_str(
        "discern holds this repository to its Standards: measured limits that only tighten. \
Work through its MCP tools (the CLI has the same verbs: `discern status`, …):\n\n\
1. `discern_status` first in every session: where you are and the next step.\n\
2. `discern_start` for a new task (its own worktree and branch); continue an effort that has one.\n\
3. Commit, then `discern_done`: the gate proves that exact commit. Relay its Proof line to the owner.\n\
4. When work truly must make a number worse, `discern_standards` with `propose` and a technical \
reason. Never move a limit in `discern.toml` yourself.\n\
5. The owner lands: `discern_accept` only with their consent given in the conversation.\n",
    );
    if let Some(config) = config {
        text.push_str(&repository(config));
    }
    text.push_str("\nTools:\n");
    for tool in tools {
        text.push_str(&format!("- `{}`: {}\n", tool.name, tool.description));
    }
    text.push_str(END);
    text.push('\n');
    text
}

/// This repository's Standards and jobs, as the section lists them.
fn repository(config: &Config) -> String {
    let mut text = String::new();
    if !config.standards.is_empty() {
        let standards: Vec<String> = config
            .standards
            .iter()
            .map(|s| format!("`{}` ({})", s.name, s.direction.bound()))
            .collect();
        text.push_str(&format!("\nStandards: {}.\n", standards.join(", ")));
    }
    let jobs: Vec<String> = config
        .jobs
        .iter()
        .filter(|j| !j.run.is_empty())
        .map(|j| format!("{} `{}`", j.name, j.run))
        .collect();
    if !jobs.is_empty() {
        text.push_str(&format!("Jobs `discern_done` runs: {}.\n", jobs.join("; ")));
    }
    text
}

/// The managed section of `text`, markers included, if it has one.
pub(crate) fn current(text: &str) -> Option<&str> {
    let begin = text.find(BEGIN)?;
    let end = text[begin..].find(END)? + begin + END.len();
    let end = match text[end..].starts_with('\n') {
        true => end + 1,
        false => end,
    };
    Some(&text[begin..end])
}

/// `text` with the managed section set to `section`: replaced where it stands, or appended
/// after a blank line.
pub(crate) fn upsert(text: &str, section: &str) -> String {
    match current(text) {
        Some(old) => text.replacen(old, section, 1),
        None if text.is_empty() => section.to_owned(),
        None if text.ends_with('\n') => format!("{text}\n{section}"),
        None => format!("{text}\n\n{section}"),
    }
}

/// `text` without the managed section (and the blank line set before it); `None` when nothing
/// else is left.
pub(crate) fn remove(text: &str) -> Option<String> {
    let left = match current(text) {
        Some(old) => {
            let at = text.find(old).unwrap_or_default();
            let before = &text[..at];
            let before = before.strip_suffix('\n').filter(|b| b.ends_with('\n'));
            format!(
                "{}{}",
                before.unwrap_or(&text[..at]),
                &text[at + old.len()..]
            )
        }
        None => text.to_owned(),
    };
    (!left.trim().is_empty()).then_some(left)
}

/// Whether `text` (a `CLAUDE.md`, a `GEMINI.md`) imports `AGENTS.md`.
pub(crate) fn imports(text: &str) -> bool {
    text.lines().any(|l| l.trim() == IMPORT)
}

/// `text` with the import appended after a blank line (unchanged when it has one).
pub(crate) fn with_import(text: &str) -> String {
    match (imports(text), text.is_empty(), text.ends_with('\n')) {
        (true, _, _) => text.to_owned(),
        (_, true, _) => format!("{IMPORT}\n"),
        (_, _, true) => format!("{text}\n{IMPORT}\n"),
        _ => format!("{text}\n\n{IMPORT}\n"),
    }
}

/// `text` without the import discern appends; `None` when nothing else is left. An import the
/// team wrote elsewhere in the file is theirs and stays.
pub(crate) fn without_import(text: &str) -> Option<String> {
    let appended = format!("\n\n{IMPORT}\n");
    let left = match text.strip_suffix(&appended[1..]) {
        _ if text.trim() == IMPORT => String::new(),
        Some(kept) if text.ends_with(&appended) => kept.to_owned(),
        _ => text.to_owned(),
    };
    (!left.trim().is_empty()).then_some(left)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOOLS: &[Tool] = &[Tool {
        name: "discern_status",
        description: "Read first.",
    }];

    #[test]
    fn the_section_goes_in_and_out_leaving_the_teams_text_byte_for_byte() {
        let section = section(None, TOOLS);
        for team in ["", "# Our rules\n\nBe kind.\n", "# No newline"] {
            let with = upsert(team, &section);
            assert_eq!(current(&with), Some(section.as_str()));
            assert_eq!(upsert(&with, &section), with, "idempotent");
            let back = remove(&with).unwrap_or_default();
            match team.is_empty() || team.ends_with('\n') {
                true => assert_eq!(back, team),
                // A file without a final newline gets one: the only byte not restored.
                false => assert_eq!(back, format!("{team}\n")),
            }
        }
    }

    #[test]
    fn a_changed_section_is_replaced_where_it_stands() {
        let old = section(None, &[]);
        let text = format!("# Top\n\n{old}\n## Below\n");
        let new = section(None, TOOLS);
        let updated = upsert(&text, &new);
        assert_eq!(updated, format!("# Top\n\n{new}\n## Below\n"));
    }

    #[test]
    fn the_import_is_added_once_and_taken_back() {
        for team in ["", "# Claude notes\n", "# no newline"] {
            let with = with_import(team);
            assert!(imports(&with));
            assert_eq!(with_import(&with), with);
            let back = without_import(&with).unwrap_or_default();
            assert_eq!(back.trim_end(), team.trim_end());
        }
        let theirs = "@AGENTS.md\n\n# Claude notes\n";
        assert_eq!(without_import(theirs).as_deref(), Some(theirs));
    }
}
