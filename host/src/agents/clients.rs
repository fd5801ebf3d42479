//! The registry of agent clients discern wires: for each, the project file it reads its MCP
//! servers from, that file's format, the programs that say it is installed, and discern's entry
//! in that client's own shape.

use serde_json::{Value, json};

/// The name discern's entry has in every client's file.
pub(crate) const SERVER: &str = "discern";

/// How long Codex and Gemini let one tool call run: `done` runs the whole gate (build, tests,
/// every Standard), which can take many minutes on a large repository.
pub(crate) const TOOL_TIMEOUT_S: u64 = 1800;

/// How long Codex waits for the server to answer `initialize` (its default, 10 s, is short
/// for a first start that opens a large repository).
pub(crate) const STARTUP_TIMEOUT_S: u64 = 30;

/// An agent client discern can wire.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    clap::ValueEnum,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Client {
    /// Claude Code: `.mcp.json`.
    Claude,
    /// OpenAI Codex: `.codex/config.toml` (read in a trusted project).
    Codex,
    /// Cursor: `.cursor/mcp.json`.
    Cursor,
    /// Gemini CLI: `.gemini/settings.json`.
    Gemini,
    /// VS Code (Copilot agent mode): `.vscode/mcp.json`.
    Vscode,
    /// GitHub Copilot CLI: `.github/mcp.json` (read in a trusted folder).
    Copilot,
}

/// The format of a client's file, and where its servers sit in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// JSON (comments kept where the client allows them): servers under this top-level key.
    Json { servers: &'static str },
    /// TOML: servers under `[mcp_servers.<name>]`.
    Toml,
}

impl Client {
    pub(crate) const ALL: [Client; 6] = [
        Client::Claude,
        Client::Codex,
        Client::Cursor,
        Client::Gemini,
        Client::Vscode,
        Client::Copilot,
    ];

    /// The name `--client` takes.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Client::Claude => "claude",
            Client::Codex => "codex",
            Client::Cursor => "cursor",
            Client::Gemini => "gemini",
            Client::Vscode => "vscode",
            Client::Copilot => "copilot",
        }
    }

    /// The client's project file, relative to the repository root.
    pub(crate) fn file(self) -> &'static str {
        match self {
            Client::Claude => ".mcp.json",
            Client::Codex => ".codex/config.toml",
            Client::Cursor => ".cursor/mcp.json",
            Client::Gemini => ".gemini/settings.json",
            Client::Vscode => ".vscode/mcp.json",
            Client::Copilot => ".github/mcp.json",
        }
    }

    pub(crate) fn format(self) -> Format {
        match self {
            Client::Codex => Format::Toml,
            Client::Vscode => Format::Json { servers: "servers" },
            _ => Format::Json {
                servers: "mcpServers",
            },
        }
    }

    /// The programs on PATH that say the client is installed.
    pub(crate) fn programs(self) -> &'static [&'static str] {
        match self {
            Client::Claude => &["claude"],
            Client::Codex => &["codex"],
            Client::Cursor => &["cursor-agent", "cursor"],
            Client::Gemini => &["gemini"],
            Client::Vscode => &["code"],
            Client::Copilot => &["copilot"],
        }
    }

    /// discern's entry in this client's shape, starting `command`. Clients that start servers
    /// in the project (Claude Code, Codex, Gemini, Copilot CLI) need no directory; Cursor and
    /// VS Code name it with their `${workspaceFolder}`.
    pub(crate) fn entry(self, command: &str) -> Value {
        let in_workspace = json!(["-C", "${workspaceFolder}", "mcp"]);
        match self {
            Client::Claude => json!({ "command": command, "args": ["mcp"] }),
            Client::Codex => json!({
                "command": command,
                "args": ["mcp"],
                "startup_timeout_sec": STARTUP_TIMEOUT_S,
                "tool_timeout_sec": TOOL_TIMEOUT_S,
            }),
            Client::Cursor => json!({ "command": command, "args": in_workspace }),
            Client::Gemini => json!({
                "command": command,
                "args": ["mcp"],
                "timeout": TOOL_TIMEOUT_S * 1000,
            }),
            Client::Vscode => json!({ "type": "stdio", "command": command, "args": in_workspace }),
            Client::Copilot => json!({
                "type": "local",
                "command": command,
                "args": ["mcp"],
                "tools": ["*"],
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_client_has_its_own_file_and_its_entry_names_the_command() {
        let files: std::collections::BTreeSet<&str> =
            Client::ALL.iter().map(|c| c.file()).collect();
        assert_eq!(files.len(), Client::ALL.len());
        for client in Client::ALL {
            assert_eq!(client.entry("/bin/discern")["command"], "/bin/discern");
            assert!(!client.programs().is_empty());
        }
    }
}
