//! What `inspect` shows of an effort: its state and Proof line, what awaits the owner, its
//! commits and diffstat against the trunk (git, read-only), and each Standard's reading
//! against its limit with new findings, as `discern standards` run in its worktree says them.

use std::path::Path;

use discern::workspace::Settings;

use super::board::Item;
use super::command::{Command, human};

/// The inspection's lines, and the command lines it ran to get them.
pub fn inspect(item: &Item, (root, trunk): (&Path, &str), settings: &Settings) -> Vec<String> {
    let mut lines = vec![format!("{}: {}", item.id, item.state)];
    lines.extend(item.path.iter().map(|p| format!("Worktree: {p}")));
    lines.extend(item.proof_line.iter().cloned());
    lines.extend(
        item.awaiting
            .iter()
            .map(|a| format!("Awaiting the owner: {a}")),
    );
    lines.extend(item.collisions.iter().map(|c| format!("Same files as {c}")));
    let Some(branch) = &item.branch else {
        lines.push("No branch: nothing to compare with the trunk.".to_owned());
        return lines;
    };
    let range = format!("{trunk}..{branch}");
    let diff = format!("{trunk}...{branch}");
    let git = |args: &[&str]| -> Vec<String> {
        let read = discern::Repo::discover(root).and_then(|repo| repo.git(args));
        match read {
            Ok(out) if out.is_empty() => vec!["  (none)".to_owned()],
            Ok(out) => out.lines().map(|l| format!("  {l}")).collect(),
            Err(e) => vec![format!("  cannot be read: {e}")],
        }
    };
    lines.push(String::new());
    lines.push(format!("Commits (git log --oneline {range}):"));
    lines.extend(git(&["log", "--oneline", "--no-decorate", &range]));
    lines.push(format!("Diffstat (git diff --stat {diff}):"));
    lines.extend(git(&["diff", "--stat", &diff]));
    lines.push(String::new());
    match &item.path {
        Some(path) if Path::new(path).is_dir() => {
            let command = Command::new("standards", &[]).within(path);
            lines.push(format!("$ {}", command.line()));
            lines.extend(human(&command.run(settings, root)));
        }
        _ => lines.push("No worktree: its Standards are measured once it has one.".to_owned()),
    }
    lines
}
