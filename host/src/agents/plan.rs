//! What a call does to each client's file, decided for all of them before any is written (a
//! file that cannot be edited stops the call with nothing written), then applied.

use std::path::Path;

use serde_json::Value;

use super::clients::Client;
use super::{FileError, Mode};

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

/// One client's file: its state, why (when it fails a check), and what to write.
#[derive(Debug, Clone)]
pub(crate) struct Planned {
    pub client: Client,
    pub state: State,
    pub detail: Option<String>,
    /// The file's new text, or `None` to delete it; only where the state changes it.
    write: Option<Option<String>>,
}

pub(crate) fn plan(
    root: &Path,
    clients: &[Client],
    mode: Mode,
    command: &str,
) -> Result<Vec<Planned>, (Client, FileError)> {
    clients
        .iter()
        .map(|client| plan_one(root, *client, mode, command).map_err(|e| (*client, e)))
        .collect()
}

fn plan_one(root: &Path, client: Client, mode: Mode, command: &str) -> Result<Planned, FileError> {
    let text = super::read(&root.join(client.file()))?;
    let existing = match &text {
        Some(text) => super::entry(client, text)?,
        None => None,
    };
    let desired = client.entry(command);
    let planned = |state, detail, write| Planned {
        client,
        state,
        detail,
        write,
    };
    Ok(match mode {
        Mode::Write if existing.as_ref() == Some(&desired) => planned(State::Unchanged, None, None),
        Mode::Write => {
            let written = super::upsert(client, text.as_deref().unwrap_or_default(), &desired)?;
            let state = match text {
                None => State::Created,
                Some(_) => State::Updated,
            };
            planned(state, None, Some(Some(written)))
        }
        Mode::Check => {
            let (state, detail) = checked(text.is_some(), existing.as_ref(), &desired);
            planned(state, detail, None)
        }
        Mode::Remove => match (&text, existing) {
            (Some(text), Some(_)) => match super::remove(client, text)? {
                Some(left) => planned(State::Removed, None, Some(Some(left))),
                None => planned(State::Deleted, None, Some(None)),
            },
            _ => planned(State::NotWired, None, None),
        },
    })
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
        let path = root.join(one.client.file());
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
        done.push(one.client.file());
    }
    Ok(())
}
