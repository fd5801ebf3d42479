//! The one protected set: every change from one commit's `discern.toml` and tree to another's
//! that only the owner may make, defined once and used by every judgement — the branch and PR
//! check, the trunk's range, `done`, `approve` and `accept`.
//!
//! - A **loosening**: a limit moved the way it may not (a floor down, a ceiling up); it lands
//!   only as a proposal the owner approves.
//! - A **protected change**, each with its own token: every field of every Standard, present on
//!   either side or defaulted (a repository component's blob included), a Standard's deletion
//!   (and its limit, once its meaning changed), a new Standard that runs something (a `run`
//!   command, `needs`, a repository component); every key of every other table (`[jobs]` — a
//!   new job too —, `[acceptance]`, `[repository]`, `[map]`, and any table this version does
//!   not know); the allowed-signers file's content; and every path under
//!   `[acceptance].protected` by what it holds (a file's blob and executable bit, a submodule's
//!   commit, a link's text and what its target holds; a link whose target the repository
//!   cannot show is refused).
//!
//! What is protected is read from the old side — the trunk's — never from the side being judged:
//! a branch that drops a path from `[acceptance].protected` still has that path judged, and its
//! change to the list is itself protected.

mod fields;
mod files;
mod links;

pub(crate) use fields::tighter;

use gix::ObjectId;
use serde::Serialize;
use serde_json::{Value, json};

use crate::config::{Config, Direction, canonical_json};
use crate::git::{Repo, RepoError};

/// One protected change: `key` went from `old` to `new` (`null` = absent).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct ProtectedChange {
    /// `standard`, `margin`, `file` or the table's name.
    pub kind: String,
    /// `standards.<name>.<field>`, `standards.<name>` (deleted), `jobs.<name>`, `file:<path>`, ….
    pub key: String,
    pub old: Value,
    pub new: Value,
    pub token: String,
}

impl ProtectedChange {
    fn new(kind: &str, key: String, old: Value, new: Value) -> Self {
        let token = token(kind, &key, &old, &new);
        Self {
            kind: kind.to_owned(),
            key,
            old,
            new,
            token,
        }
    }

    /// One line an owner can read: `jobs.test: {"run":"cargo test"} → {"run":"true"}`.
    pub fn line(&self) -> String {
        format!("{}: {} → {}", self.key, shown(&self.old), shown(&self.new))
    }

    /// What changed, for people: `"Standard x is deleted (its ceiling was 5)"`, `"Standard x is
    /// redefined (metric \"a\" → \"b\")"`, `"jobs.test: … → …"`, `"file:scripts/x.sh: … → …"`.
    pub fn describe(&self) -> String {
        let Some(standard) = self.standard() else {
            return match links::refused(&self.new) {
                Some(why) => format!(
                    "{}: a protected link the repository cannot show the target of ({why}), so a change there cannot be compared; commit the file itself in its place",
                    self.key
                ),
                None => self.line(),
            };
        };
        if self.adds_standard() {
            let new = &self.new;
            let mut runs = Vec::new();
            if !new["run"].is_null() {
                runs.push(format!("run {}", shown(&new["run"])));
            }
            if new["needs"].as_array().is_some_and(|n| !n.is_empty()) {
                runs.push(format!("needs {}", shown(&new["needs"])));
            }
            if let Some(blob) = new.get("producer_blob") {
                let producer = shown(&new["producer"]);
                runs.push(format!("producer {producer}, blob {}", shown(blob)));
            }
            return format!(
                "Standard {standard} is new and runs the repository's code ({})",
                runs.join("; ")
            );
        }
        if self.deletes_standard() {
            let bound = match self.old["direction"].as_str() {
                Some("up") => "floor",
                _ => "ceiling",
            };
            let limit = self.old["limit"].as_f64().map(|l| l.to_string());
            return format!(
                "Standard {standard} is deleted (its {bound} was {})",
                limit.as_deref().unwrap_or("unknown")
            );
        }
        let field = self.key.rsplit('.').next().unwrap_or_default();
        format!(
            "Standard {standard} is redefined ({field} {} → {})",
            shown(&self.old),
            shown(&self.new)
        )
    }

    /// The Standard this change is about, if any (`standards.<name>[.<field>]`).
    pub fn standard(&self) -> Option<&str> {
        let rest = self.key.strip_prefix("standards.")?;
        Some(rest.split_once('.').map_or(rest, |(name, _)| name))
    }

    /// Whether this change adds a Standard (one that runs something: see `fields::added`).
    pub fn adds_standard(&self) -> bool {
        self.old.is_null()
            && self
                .standard()
                .is_some_and(|s| self.key == format!("standards.{s}"))
    }

    /// Whether this change deletes a Standard.
    pub fn deletes_standard(&self) -> bool {
        self.new.is_null()
            && self
                .standard()
                .is_some_and(|s| self.key == format!("standards.{s}"))
    }
}

/// One line per Standard (its changed fields together) and per other change, for people:
/// `"Standard x is redefined (metric \"a\" → \"b\"; direction \"down\" → \"up\")"`.
pub(crate) fn describe_all(changes: &[ProtectedChange]) -> Vec<String> {
    let mut lines: Vec<(Option<&str>, String)> = Vec::new();
    for change in changes {
        let standard = change
            .standard()
            .filter(|_| !change.deletes_standard() && !change.adds_standard());
        let field = change.key.rsplit('.').next().unwrap_or_default();
        let part = format!("{field} {} → {}", shown(&change.old), shown(&change.new));
        match lines
            .iter_mut()
            .find(|(s, _)| standard.is_some() && *s == standard)
        {
            Some((_, text)) => text.push_str(&format!("; {part}")),
            None if standard.is_some() => lines.push((standard, part)),
            None => lines.push((None, change.describe())),
        }
    }
    lines
        .into_iter()
        .map(|(standard, text)| match standard {
            Some(name) => format!("Standard {name} is redefined ({text})"),
            None => text,
        })
        .collect()
}

/// A loosening's approval token: sha256 hex of `"standard-limit-approval-v1\n"` + JSON
/// `{standard, proposed_limit, reason}`. A changed value or reason gives a different token:
/// fresh agreement is required.
pub fn limit_token(standard: &str, proposed_limit: f64, reason: &str) -> String {
    let payload =
        json!({ "standard": standard, "proposed_limit": proposed_limit, "reason": reason });
    let text = format!("standard-limit-approval-v1\n{payload}");
    crate::digest::Digest::of(text.as_bytes()).hex()
}

/// sha256 hex of `"discern-protected-change-v1\n"` + canonical JSON `{kind, key, old, new}`.
pub fn token(kind: &str, key: &str, old: &Value, new: &Value) -> String {
    let payload = json!({ "kind": kind, "key": key, "old": old, "new": new });
    let text = format!("discern-protected-change-v1\n{}", canonical_json(&payload));
    crate::digest::Digest::of(text.as_bytes()).hex()
}

/// A limit moved the way it may not.
#[derive(Debug, Clone, PartialEq)]
pub struct Loosening {
    pub standard: String,
    pub direction: Direction,
    pub from: f64,
    pub to: f64,
}

impl Loosening {
    /// What changed, for people: `"Standard x loosens its ceiling 5 -> 6"`.
    pub fn describe(&self) -> String {
        format!(
            "Standard {} loosens its {} {} -> {}",
            self.standard,
            self.direction.bound(),
            self.from,
            self.to
        )
    }
}

/// Everything only the owner may change, from one side to the other.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GateChanges {
    pub loosened: Vec<Loosening>,
    pub protected: Vec<ProtectedChange>,
}

impl GateChanges {
    pub fn is_empty(&self) -> bool {
        self.loosened.is_empty() && self.protected.is_empty()
    }
}

/// One side of a comparison: a commit and the config committed there.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Side<'a> {
    pub commit: ObjectId,
    pub config: &'a Config,
}

/// Every change from `old` (the trunk's side) to `new` that only the owner may make, in a
/// stable order: Standards in `old`'s order, then tables, then files.
pub(crate) fn between(repo: &Repo, old: Side, new: Side) -> Result<GateChanges, RepoError> {
    let blob_at = |commit: ObjectId| {
        move |path: &str| -> Result<Option<String>, RepoError> {
            Ok(repo.blob_at(commit, path)?.map(|id| id.to_string()))
        }
    };
    let (old_blob, new_blob) = (blob_at(old.commit), blob_at(new.commit));
    let mut changes = compare(old.config, &old_blob, new.config, &new_blob)?;
    if !old.config.is_empty() {
        changes.protected.extend(files::changes(repo, old, new)?);
    }
    Ok(changes)
}

/// The config side of [`between`] alone, components' blobs read through `old_blob` and
/// `new_blob`: Standards in `old`'s order, then tables.
pub(crate) fn compare(
    old: &Config,
    old_blob: fields::BlobAt,
    new: &Config,
    new_blob: fields::BlobAt,
) -> Result<GateChanges, RepoError> {
    let mut changes = GateChanges::default();
    for before in &old.standards {
        let after = new.standard(&before.name).map(|a| (new, a, new_blob));
        fields::standard((old, before, old_blob), after, &mut changes)?;
    }
    // A side without a config protects nothing yet: adding the first one is the gate's start.
    if !old.is_empty() {
        for after in new.standards.iter() {
            if old.standard(&after.name).is_none() {
                fields::added(new, after, new_blob, &mut changes)?;
            }
        }
        changes.protected.extend(fields::tables(old, new));
    }
    Ok(changes)
}

/// A value for people, bounded.
fn shown(value: &Value) -> String {
    let text = match value {
        Value::Null => "(none)".to_owned(),
        other => canonical_json(other),
    };
    match text.chars().count() > 160 {
        true => format!("{}…", text.chars().take(159).collect::<String>()),
        false => text,
    }
}

#[cfg(test)]
mod paths_tests;
#[cfg(test)]
mod tests;
