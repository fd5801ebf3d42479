//! `discern agents`: each agent client's project file given discern's MCP entry, in the
//! client's own format, touching nothing else in the file; `--check` says which files drifted,
//! `--remove` takes discern's entries out. The clients are one typed registry
//! ([`clients::Client`]).
//!
//! The owner's verb, with no MCP tool: it writes the configuration that starts the agent's own
//! server (what it runs, with which timeouts), which an agent does not rewire for itself.

pub(crate) mod clients;
pub(crate) mod guidance;
mod hooks;
mod json_file;
pub(crate) mod launch;
mod plan;
pub(crate) mod probe;
mod reply;
mod toml_file;

use std::path::Path;

use clients::{Client, Format};
use plan::Item;
use serde_json::Value;

use crate::result::{ErrorSlug, Hint, HintId, Refused, Reply};
use crate::workspace::Workspace;

pub(crate) const VERB: &str = "agents";

/// `discern agents [--client NAME…] [--check] [--remove]`.
#[derive(Debug, Clone, Default, clap::Args, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AgentsRequest {
    /// A client to wire (repeat it for several); without it, the clients found on PATH.
    #[arg(long = "client", value_name = "NAME", value_enum)]
    #[serde(default)]
    pub client: Vec<Client>,
    /// Change nothing: fail naming each file whose entry is missing or differs.
    #[arg(long)]
    #[serde(default)]
    pub check: bool,
    /// Take discern's entries out; everything else in the files stays as it was.
    #[arg(long)]
    #[serde(default)]
    pub remove: bool,
}

impl AgentsRequest {
    /// Whether the flags combine (`--check` and `--remove` do not).
    pub(crate) fn conflicting(&self) -> bool {
        self.check && self.remove
    }

    fn mode(&self) -> Mode {
        match (self.check, self.remove) {
            (true, _) => Mode::Check,
            (_, true) => Mode::Remove,
            _ => Mode::Write,
        }
    }
}

/// What the call does to each file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Write,
    Check,
    Remove,
}

/// Why a client's file cannot be edited (it is left untouched, and so is every other file).
#[derive(Debug, thiserror::Error)]
pub(crate) enum FileError {
    #[error("it does not parse: {0}")]
    Parse(String),
    #[error("{0}")]
    Shape(String),
    #[error("it cannot be read: {0}")]
    Io(String),
}

/// `discern agents`, with the config the table's preflight loaded (its `AGENTS.md` section).
pub(crate) fn agents(
    ws: &Workspace,
    config: Option<&crate::config::Config>,
    request: &AgentsRequest,
    tools: &[guidance::Tool],
) -> Result<Reply, Refused> {
    let root = ws.repo.root();
    let command = launch::command().map_err(|why| refuse(ErrorSlug::Internal, why))?;
    let found: Vec<Client> = Client::ALL
        .into_iter()
        .filter(|c| launch::installed(c.programs()))
        .collect();
    let mode = request.mode();
    let clients = select(root, &request.client, mode, &found)?;
    let section = guidance::section(config, tools);
    let wanted = plan::Wanted {
        command: &command,
        section: &section,
    };
    let items = items(root, &clients, mode);
    let planned = match plan::plan(root, &items, mode, &wanted) {
        Ok(planned) => planned,
        Err((item, e)) => {
            return Err(refuse(
                ErrorSlug::InvalidValue,
                format!(
                    "{} ({}) was left as it is, and so was every other file: {e}. Fix it by hand, or name the other clients with --client.",
                    item.file(),
                    item.label()
                ),
            ));
        }
    };
    if mode != Mode::Check
        && let Err(message) = plan::apply(root, &planned)
    {
        return Err(refuse(ErrorSlug::PreconditionFailed, message));
    }
    reply::reply(mode, &command, &found, &planned)
}

/// The files the call looks after for `clients`: their entries, the `@AGENTS.md` import for
/// the clients that need one, the session-start hooks where a client has them, and `AGENTS.md`'s section (taken out only once no client is left
/// wired).
fn items(root: &Path, clients: &[Client], mode: Mode) -> Vec<Item> {
    let mut items: Vec<Item> = clients.iter().map(|c| Item::Client(*c)).collect();
    let guided = match mode {
        Mode::Remove => Client::ALL
            .into_iter()
            .all(|c| clients.contains(&c) || !wired(root, c)),
        _ => !clients.is_empty(),
    };
    if guided {
        items.push(Item::Guidance);
    }
    items.extend(
        [Client::Claude, Client::Gemini]
            .into_iter()
            .filter(|c| clients.contains(c))
            .map(Item::Import),
    );
    items.extend(
        [Client::Claude, Client::Codex, Client::Gemini]
            .into_iter()
            .filter(|c| clients.contains(c))
            .map(Item::Hook),
    );
    items
}

/// `status`'s advisory when `AGENTS.md` holds discern's section and it is out of date (one file
/// read and the config parsed: nothing when there is no section).
pub(crate) fn stale_guidance(root: &Path, tools: &[guidance::Tool]) -> Option<String> {
    let text = read(&root.join(guidance::FILE)).ok()??;
    let current = guidance::current(&text)?;
    // An unreadable config is said, never compared as none.
    let config = match crate::config::Config::load(root) {
        Ok(config) => config,
        Err(_) => {
            return Some("Whether AGENTS.md's discern section is up to date cannot be told: discern.toml does not load (`discern standards` names what is wrong).".to_owned());
        }
    };
    (current != guidance::section(config.as_ref(), tools)).then(|| {
        "AGENTS.md's discern section is out of date with the verb table, Standards or jobs: the owner's `discern agents` writes it again.".to_owned()
    })
}

/// The clients this call acts on: the ones named; else, to write, those found on PATH; to
/// check, those found and those already wired; to remove, those wired.
fn select(
    root: &Path,
    named: &[Client],
    mode: Mode,
    found: &[Client],
) -> Result<Vec<Client>, Refused> {
    if !named.is_empty() {
        let mut named = named.to_vec();
        named.sort();
        named.dedup();
        return Ok(named);
    }
    let wired = || Client::ALL.into_iter().filter(|c| wired(root, *c));
    let selected: Vec<Client> = match mode {
        Mode::Write => found.to_vec(),
        Mode::Check => {
            let mut all: Vec<Client> = found.iter().copied().chain(wired()).collect();
            all.sort();
            all.dedup();
            all
        }
        Mode::Remove => wired().collect(),
    };
    if selected.is_empty() && mode != Mode::Remove {
        let programs: Vec<&str> = Client::ALL
            .iter()
            .flat_map(|c| c.programs())
            .copied()
            .collect();
        let names: Vec<&str> = Client::ALL.iter().map(|c| c.as_str()).collect();
        return Err(refuse(
            ErrorSlug::PreconditionFailed,
            format!(
                "No agent client was found on PATH ({}), and none is wired here. Name the clients to wire with --client NAME ({}).",
                programs.join(", "),
                names.join(", ")
            ),
        ));
    }
    Ok(selected)
}

/// Whether `client`'s file holds an entry of discern's (an unreadable file counts: the call
/// then names it).
fn wired(root: &Path, client: Client) -> bool {
    match read(&root.join(client.file())) {
        Ok(Some(text)) => entry(client, &text).map_or(true, |e| e.is_some()),
        Ok(None) => false,
        Err(_) => true,
    }
}

/// The file's text, `None` when there is none.
pub(crate) fn read(path: &Path) -> Result<Option<String>, FileError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(FileError::Io(e.to_string())),
    }
}

/// discern's entry in `client`'s file text.
pub(crate) fn entry(client: Client, text: &str) -> Result<Option<Value>, FileError> {
    match client.format() {
        Format::Json { servers } => json_file::entry(text, servers),
        Format::Toml => toml_file::entry(text),
    }
}

fn upsert(client: Client, text: &str, entry: &Value) -> Result<String, FileError> {
    match client.format() {
        Format::Json { servers } => json_file::upsert(text, servers, entry),
        Format::Toml => toml_file::upsert(text, entry),
    }
}

fn remove(client: Client, text: &str) -> Result<Option<String>, FileError> {
    match client.format() {
        Format::Json { servers } => json_file::remove(text, servers),
        Format::Toml => toml_file::remove(text),
    }
}

fn refuse(slug: ErrorSlug, message: String) -> Refused {
    Refused::new(
        slug,
        message,
        Hint::next_step(HintId::SeeHelp, "See `discern agents --help`."),
    )
}
