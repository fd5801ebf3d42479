//! `discern desk` (and bare `discern` on a terminal where a `discern.toml` is): the owner's
//! full-screen view of the fleet, grouped for deciding, each action the CLI command it shows
//! and then runs through the verb table. A frontend, like `cli` and `mcp`: it reads the
//! observation `status` reads and calls verbs, never their internals. No MCP tool reaches it:
//! landing, approving and discarding are the owner's decisions.
//!
//! `board` groups the observation, `state` is the pure state machine (key → state + effect),
//! `view` draws a state, `command` shows and runs a verb, `inspect` gathers an effort's detail,
//! `terminal` is the thin loop that owns the terminal.

mod board;
mod command;
mod inspect;
mod state;
mod terminal;
#[cfg(test)]
mod tests;
mod view;

use std::io::IsTerminal;
use std::path::Path;

use discern::result::{Action, ErrorSlug, Hint, HintId, Refused};
use discern::workspace::{Settings, Workspace};

pub const VERB: &str = "desk";

/// Why the desk cannot be interactive here, if it cannot: `--json` and the other formats,
/// `CI`, stdin or stdout not a terminal.
fn not_interactive(human: bool) -> Option<&'static str> {
    let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
    match () {
        _ if !human => Some("a format other than the human one was asked for"),
        _ if ci => Some("CI is set"),
        _ if !std::io::stdin().is_terminal() => Some("stdin is not a terminal"),
        _ if !std::io::stdout().is_terminal() => Some("stdout is not a terminal"),
        _ => None,
    }
}

/// The refusal where the desk cannot run: it names `discern status`, and nothing was read or
/// written.
fn refusal(why: &str) -> Refused {
    Refused::new(
        ErrorSlug::NotInteractive,
        format!(
            "The desk is the owner's full-screen terminal view and cannot run here: {why}. Nothing was read or written; `discern status` shows the same fleet as text, Markdown or JSON."
        ),
        Hint::next_step(HintId::SeeHelp, "Read the fleet as text or JSON instead")
            .with_action(Action::new("status")),
    )
}

/// Whether bare `discern` opens the desk: on a terminal (stdin and stdout), not under CI, in
/// a repository whose checkout has a `discern.toml`.
pub fn wanted(dir: &Path, settings: &Settings) -> bool {
    not_interactive(true).is_none()
        && Workspace::open(dir, settings.clone())
            .is_ok_and(|ws| ws.repo.root().join("discern.toml").is_file())
}

/// Run the desk in `dir`: its exit code, or the refusal to print (in the asked `human` format
/// or not) when it cannot run here.
pub fn run(dir: &Path, settings: &Settings, human: bool) -> Result<i32, Refused> {
    if let Some(why) = not_interactive(human) {
        return Err(refusal(why));
    }
    terminal::run(dir, settings)
}
