//! What a call does to each client's file, decided for all of them before any is written (a
//! file that cannot be edited stops the call with nothing written), then applied.

use std::path::Path;

use serde_json::Value;

use super::clients::Client;
use super::{FileError, Mode, guidance, hooks};

/// What became, or would become, of one client's file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum State {
    /// The file did not exist; discern wrote it with its entry alone.
    Created,
    /// discern's entry was added or set; the rest of the file is as it was.
    Updated,
    /// The entry already was what discern writes.
    Unchanged,
    /// discern's entry was taken out; the rest of the file is as it was.
    Removed,
    /// discern's entry was all the file held: the file is gone.
    Deleted,
    /// The file holds no entry of discern's.
    NotWired,
    /// `--check`: the entry is what discern writes.
    Current,
    /// `--check`: no file, or no entry of discern's in it.
    Missing,
    /// `--check`: the entry differs from what discern writes.
    Drifted,
}

impl State {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            State::Created => "created",
            State::Updated => "updated",
            State::Unchanged => "unchanged",
            State::Removed => "removed",
            State::Deleted => "deleted",
            State::NotWired => "not wired",
            State::Current => "current",
            State::Missing => "missing",
            State::Drifted => "drifted",
        }
    }

    pub(crate) fn changed(self) -> bool {
        matches!(
            self,
            State::Created | State::Updated | State::Removed | State::Deleted
        )
    }

    pub(crate) fn fails_check(self) -> bool {
        matches!(self, State::Missing | State::Drifted)
    }
}

/// A file the call looks after: a client's MCP entry, the guidance section of `AGENTS.md`, or
/// the import of it a client's own instructions file needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Item {
    Client(Client),
    Guidance,
    Import(Client),
    /// The session-start hook (Claude Code, Gemini CLI, Codex).
    Hook(Client),
}

impl Item {
    pub(crate) fn file(self) -> &'static str {
        match self {
            Item::Client(client) => client.file(),
            Item::Guidance => guidance::FILE,
            Item::Import(Client::Gemini) => "GEMINI.md",
            Item::Import(_) => "CLAUDE.md",
            Item::Hook(Client::Gemini) => ".gemini/settings.json",
            Item::Hook(Client::Codex) => ".codex/hooks.json",
            Item::Hook(_) => ".claude/settings.json",
        }
    }

    /// The client the file serves (`None`: every client, `AGENTS.md`).
    pub(crate) fn client(self) -> Option<Client> {
        match self {
            Item::Client(client) | Item::Import(client) | Item::Hook(client) => Some(client),
            Item::Guidance => None,
        }
    }

    /// What of discern's the file holds.
    pub(crate) fn part(self) -> &'static str {
        match self {
            Item::Client(_) => "mcp",
            Item::Guidance => "guidance",
            Item::Import(_) => "import",
            Item::Hook(_) => "hook",
        }
    }

    /// How a line names it: `claude`, `claude hook`, `guidance`.
    pub(crate) fn label(self) -> String {
        match (self.client(), self) {
            (Some(client), Item::Client(_)) => client.as_str().to_owned(),
            (Some(client), _) => format!("{} {}", client.as_str(), self.part()),
            (None, _) => self.part().to_owned(),
        }
    }
}

/// What the files should hold: the entry's command and the guidance section.
pub(crate) struct Wanted<'a> {
    pub command: &'a str,
    pub section: &'a str,
}

/// One file: its state, why (when it fails a check), and what to write.
#[derive(Debug, Clone)]
pub(crate) struct Planned {
    pub item: Item,
    pub state: State,
    pub detail: Option<String>,
    /// The file's new text, or `None` to delete it; only where the state changes it.
    write: Option<Option<String>>,
}

pub(crate) fn plan(
    root: &Path,
    items: &[Item],
    mode: Mode,
    wanted: &Wanted,
) -> Result<Vec<Planned>, (Item, FileError)> {
    // Two items may share a file (Gemini's entry and hook): each sees what the one before wrote.
    let mut pending: std::collections::HashMap<&str, Option<String>> = Default::default();
    let mut planned = Vec::new();
    for item in items {
        let text = match pending.get(item.file()) {
            Some(text) => text.clone(),
            None => super::read(&root.join(item.file())).map_err(|e| (*item, e))?,
        };
        let decided = match item {
            Item::Client(client) => plan_entry(*client, text, mode, wanted.command),
            Item::Guidance => Ok(plan_guidance(text, mode, wanted.section)),
            Item::Import(_) => Ok(plan_import(text, mode)),
            Item::Hook(_) => plan_hook(text, mode, &hooks::command(wanted.command)),
        };
        let (state, detail, write) = decided.map_err(|e| (*item, e))?;
        if let Some(written) = &write {
            pending.insert(item.file(), written.clone());
        }
        planned.push(Planned {
            item: *item,
            state,
            detail,
            write,
        });
    }
    Ok(planned)
}

/// A state, why it fails a check, and what to write (`Some(None)`: delete the file).
type Decided = (State, Option<String>, Option<Option<String>>);

fn plan_entry(
    client: Client,
    text: Option<String>,
    mode: Mode,
    command: &str,
) -> Result<Decided, FileError> {
    let existing = match &text {
        Some(text) => super::entry(client, text)?,
        None => None,
    };
    let desired = client.entry(command);
    Ok(match mode {
        Mode::Write if existing.as_ref() == Some(&desired) => (State::Unchanged, None, None),
        Mode::Write => {
            let written = super::upsert(client, text.as_deref().unwrap_or_default(), &desired)?;
            (created_or_updated(&text), None, Some(Some(written)))
        }
        Mode::Check => {
            let (state, detail) = checked(text.is_some(), existing.as_ref(), &desired);
            (state, detail, None)
        }
        Mode::Remove => match (&text, existing) {
            (Some(text), Some(_)) => removed(super::remove(client, text)?),
            _ => (State::NotWired, None, None),
        },
    })
}

fn plan_guidance(text: Option<String>, mode: Mode, section: &str) -> Decided {
    let current = text.as_deref().and_then(guidance::current);
    match (mode, current) {
        (Mode::Write, Some(current)) if current == section => (State::Unchanged, None, None),
        (Mode::Write, _) => {
            let written = guidance::upsert(text.as_deref().unwrap_or_default(), section);
            (created_or_updated(&text), None, Some(Some(written)))
        }
        (Mode::Check, Some(current)) if current == section => (State::Current, None, None),
        (Mode::Check, Some(_)) => (
            State::Drifted,
            Some(
                "discern's section is out of date with the verb table, Standards or jobs"
                    .to_owned(),
            ),
            None,
        ),
        (Mode::Check, None) => (
            State::Missing,
            Some("no section of discern's".to_owned()),
            None,
        ),
        (Mode::Remove, Some(_)) => removed(guidance::remove(text.as_deref().unwrap_or_default())),
        (Mode::Remove, None) => (State::NotWired, None, None),
    }
}

fn plan_import(text: Option<String>, mode: Mode) -> Decided {
    let imports = text.as_deref().is_some_and(guidance::imports);
    match (mode, imports) {
        (Mode::Write, true) => (State::Unchanged, None, None),
        (Mode::Write, false) => {
            let written = guidance::with_import(text.as_deref().unwrap_or_default());
            (created_or_updated(&text), None, Some(Some(written)))
        }
        (Mode::Check, true) => (State::Current, None, None),
        (Mode::Check, false) => (
            State::Missing,
            Some(format!("no `{}` line", guidance::IMPORT)),
            None,
        ),
        (Mode::Remove, _) => {
            let text = text.unwrap_or_default();
            match guidance::without_import(&text) {
                Some(left) if left == text => (State::NotWired, None, None),
                left => removed(left),
            }
        }
    }
}

fn plan_hook(text: Option<String>, mode: Mode, command: &str) -> Result<Decided, FileError> {
    let existing = match &text {
        Some(text) => hooks::entry(text)?,
        None => None,
    };
    Ok(match (mode, existing) {
        (Mode::Write, Some(current)) if current == command => (State::Unchanged, None, None),
        (Mode::Write, _) => {
            let written = hooks::upsert(text.as_deref().unwrap_or_default(), command)?;
            (created_or_updated(&text), None, Some(Some(written)))
        }
        (Mode::Check, Some(current)) if current == command => (State::Current, None, None),
        (Mode::Check, Some(_)) => (
            State::Drifted,
            Some("the session-start hook differs from the one `discern agents` writes".to_owned()),
            None,
        ),
        (Mode::Check, None) => (
            State::Missing,
            Some("no session-start hook of discern's".to_owned()),
            None,
        ),
        (Mode::Remove, Some(_)) => removed(hooks::remove(text.as_deref().unwrap_or_default())?),
        (Mode::Remove, None) => (State::NotWired, None, None),
    })
}

fn created_or_updated(text: &Option<String>) -> State {
    match text {
        None => State::Created,
        Some(_) => State::Updated,
    }
}

fn removed(left: Option<String>) -> Decided {
    match left {
        Some(left) => (State::Removed, None, Some(Some(left))),
        None => (State::Deleted, None, Some(None)),
    }
}

/// `--check`'s verdict on one entry, and why it fails.
fn checked(file: bool, existing: Option<&Value>, desired: &Value) -> (State, Option<String>) {
    let Some(existing) = existing else {
        let why = match file {
            true => "the file holds no entry of discern's",
            false => "there is no such file",
        };
        return (State::Missing, Some(why.to_owned()));
    };
    if existing == desired {
        return (State::Current, None);
    }
    let command = existing["command"].as_str().unwrap_or_default();
    let why = match super::launch::does_not_run(command) {
        Some(why) => format!("its command does not run: {why}"),
        None => "the entry differs from the one `discern agents` writes".to_owned(),
    };
    (State::Drifted, Some(why))
}

/// Write (or delete) each planned file; the error names what was done and what failed.
pub(crate) fn apply(root: &Path, planned: &[Planned]) -> Result<(), String> {
    let mut done: Vec<&str> = Vec::new();
    for one in planned {
        let Some(write) = &one.write else { continue };
        let path = root.join(one.item.file());
        let result = match write {
            Some(text) => path
                .parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|()| crate::fsutil::write_atomic(&path, text.as_bytes())),
            None => std::fs::remove_file(&path).map(|()| {
                // The folder discern made for it (`.codex/`), when nothing else is in it.
                if let Some(parent) = path.parent().filter(|p| *p != root) {
                    let _ = std::fs::remove_dir(parent);
                }
            }),
        };
        if let Err(e) = result {
            let written = match done.is_empty() {
                true => "nothing else was changed".to_owned(),
                false => format!("already changed: {}", done.join(", ")),
            };
            return Err(format!(
                "{} cannot be written ({e}); {written}. Fix its folder's permissions, then run `discern agents` again.",
                path.display()
            ));
        }
        done.push(one.item.file());
    }
    Ok(())
}
