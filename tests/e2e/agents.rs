//! `discern agents`: each client's file written in its own format beside the team's content,
//! parsed by that format's own library, and the server started exactly as each entry says by a
//! real MCP client (the Python MCP SDK) that lists discern's tools.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::LazyLock;

use crate::support::Fixture;
use crate::support::config::Config;

/// The Python MCP SDK the suite starts servers with, pinned.
const MCP_SDK: &str = "mcp==2.3.0";

/// Every client, as `--client` names them, with its file and where its servers sit.
const CLIENTS: &[(&str, &str, &str)] = &[
    ("claude", ".mcp.json", "mcpServers"),
    ("codex", ".codex/config.toml", "mcp_servers"),
    ("cursor", ".cursor/mcp.json", "mcpServers"),
    ("gemini", ".gemini/settings.json", "mcpServers"),
    ("vscode", ".vscode/mcp.json", "servers"),
    ("copilot", ".github/mcp.json", "mcpServers"),
];

const TEAM_MCP_JSON: &str = r#"{
  "mcpServers": {
    "search": {
      "command": "npx",
      "args": ["-y", "@acme/search-mcp"],
      "env": { "SEARCH_KEY": "${SEARCH_KEY}" }
    }
  }
}
"#;

const TEAM_CODEX_TOML: &str = r#"# The team's Codex settings: reviewed like code.
model = "o3" # the model we pay for

[mcp_servers.search]
command = "npx"
args = ["-y", "@acme/search-mcp"]

# Faster answers for small edits.
[profiles.quick]
model = "o4-mini"
"#;

const TEAM_AGENTS_MD: &str = "# How we work\n\nSmall commits, one concern each.\n";
const TEAM_CLAUDE_MD: &str = "# Claude\n\nRun the tests before you commit.\n";

/// A venv under the target dir with the Python MCP SDK, made on first use (pip from PyPI).
static PYTHON: LazyLock<PathBuf> = LazyLock::new(|| {
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target dir")
        .join("agent-clients/python");
    let python = venv.join("bin/python");
    let pinned = MCP_SDK.trim_start_matches("mcp==");
    let check = format!("import importlib.metadata as m; assert m.version('mcp') == '{pinned}'");
    if Command::new(&python)
        .args(["-c", &check])
        .status()
        .is_ok_and(|s| s.success())
    {
        return python;
    }
    let _ = std::fs::remove_dir_all(&venv);
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .status();
    assert!(
        made.is_ok_and(|s| s.success()),
        "python3 -m venv failed: install python3 and python3-venv (Debian), as scripts/test does"
    );
    let pip = Command::new(venv.join("bin/pip"))
        .args(["install", "--disable-pip-version-check", "--quiet", MCP_SDK])
        .status();
    assert!(
        pip.is_ok_and(|s| s.success()),
        "pip install {MCP_SDK} failed"
    );
    python
});

/// The tools a real MCP client lists from the server `file`'s entry starts (command, args,
/// `${workspaceFolder}` and the working directory as the client gives them).
fn tools_listed(root: &Path, file: &str, key: &str) -> Vec<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/e2e/agents/list_tools.py");
    let mut cmd = Command::new(&*PYTHON);
    cmd.arg(script)
        .arg(root)
        .args([file, key])
        .current_dir(root);
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{file}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed["server"], "discern", "{file}: {listed}");
    serde_json::from_value(listed["tools"].clone()).unwrap()
}

fn every_client() -> Vec<&'static str> {
    CLIENTS
        .iter()
        .flat_map(|(name, _, _)| ["--client", *name])
        .collect()
}

/// `discern agents` with a PATH of git alone, so no client is found on the machine's PATH.
fn agents(fixture: &Fixture, extra: &[&str]) -> crate::support::Run {
    let mut args = vec!["agents"];
    args.extend_from_slice(extra);
    let bin = git_only(fixture);
    fixture.run_with(&args, &[("PATH", bin.to_str().unwrap())])
}

/// A folder holding only `git`, for PATH.
fn git_only(fixture: &Fixture) -> PathBuf {
    let bin = fixture.repo.parent().join("bin");
    if !bin.join("git").exists() {
        std::fs::create_dir_all(&bin).unwrap();
        std::os::unix::fs::symlink(which("git"), bin.join("git")).unwrap();
    }
    bin
}

fn read(fixture: &Fixture, file: &str) -> String {
    std::fs::read_to_string(fixture.path().join(file)).unwrap()
}

/// The issue's "done when": beside a team's `.mcp.json` and commented `.codex/config.toml`,
/// every client is wired, each file parses in its own format with the team's content intact,
/// a real MCP client started from each entry lists discern's tools; a second run changes
/// nothing; `--check` fails on a hand edit and passes after a re-run; `--remove` restores the
/// team's files byte for byte and deletes the ones discern made.
#[test]
fn every_client_is_wired_beside_the_teams_config_and_a_real_client_lists_the_tools() {
    let fixture = Fixture::new(Config::landing());
    fixture.repo.write(".mcp.json", TEAM_MCP_JSON);
    fixture.repo.write(".codex/config.toml", TEAM_CODEX_TOML);
    fixture.repo.write("AGENTS.md", TEAM_AGENTS_MD);
    fixture.repo.write("CLAUDE.md", TEAM_CLAUDE_MD);
    let clients = every_client();
    let first = agents(&fixture, &clients);
    assert_eq!(first.code, 0, "{}{}", first.stdout, first.stderr);
    snapshot("agents_wired", &fixture, &first.stdout);

    let claude: serde_json::Value = serde_json::from_str(&read(&fixture, ".mcp.json")).unwrap();
    let team: serde_json::Value = serde_json::from_str(TEAM_MCP_JSON).unwrap();
    assert_eq!(claude["mcpServers"]["search"], team["mcpServers"]["search"]);
    let agents_md = read(&fixture, "AGENTS.md");
    assert!(agents_md.starts_with(TEAM_AGENTS_MD), "{agents_md}");
    snapshot("agents_md", &fixture, &agents_md);
    assert_eq!(
        read(&fixture, "CLAUDE.md"),
        format!("{TEAM_CLAUDE_MD}\n@AGENTS.md\n")
    );
    assert_eq!(read(&fixture, "GEMINI.md"), "@AGENTS.md\n");
    session_start_orients_in_a_few_hundred_bytes(&fixture);
    let codex = read(&fixture, ".codex/config.toml");
    assert!(codex.starts_with(TEAM_CODEX_TOML.split("\n# Faster").next().unwrap()));
    assert!(codex.contains("# Faster answers for small edits.\n[profiles.quick]"));
    assert!(codex.contains("tool_timeout_sec = 1800"), "{codex}");
    let expected: Vec<String> = discern::verbs::tool_names()
        .into_iter()
        .map(str::to_owned)
        .collect();
    for (client, file, key) in CLIENTS {
        assert_eq!(
            tools_listed(fixture.path(), file, key),
            expected,
            "{client}"
        );
    }

    let before: Vec<String> = CLIENTS.iter().map(|(_, f, _)| read(&fixture, f)).collect();
    let second = agents(&fixture, &[&clients[..], &["--json"]].concat()).json();
    assert_eq!(second["data"]["changed"], false, "{second}");
    let after: Vec<String> = CLIENTS.iter().map(|(_, f, _)| read(&fixture, f)).collect();
    assert_eq!(before, after, "a second run writes nothing");
    assert_eq!(agents(&fixture, &["--check"]).code, 0);

    let cursor = read(&fixture, ".cursor/mcp.json").replace("\"mcp\"]", "\"mcp\", \"--x\"]");
    fixture.repo.write(".cursor/mcp.json", &cursor);
    let drifted = agents(&fixture, &["--check"]);
    assert_ne!(drifted.code, 0);
    snapshot("agents_check_drifted", &fixture, &drifted.stdout);
    assert_eq!(agents(&fixture, &clients).code, 0);
    assert_eq!(agents(&fixture, &["--check"]).code, 0, "a re-run mends it");

    let removed = agents(&fixture, &["--remove"]);
    assert_eq!(removed.code, 0, "{}", removed.stdout);
    assert_eq!(read(&fixture, ".mcp.json"), TEAM_MCP_JSON);
    assert_eq!(read(&fixture, ".codex/config.toml"), TEAM_CODEX_TOML);
    assert_eq!(read(&fixture, "AGENTS.md"), TEAM_AGENTS_MD);
    assert_eq!(read(&fixture, "CLAUDE.md"), TEAM_CLAUDE_MD);
    for (_, file, _) in &CLIENTS[2..] {
        assert!(!fixture.path().join(file).exists(), "{file} is gone");
    }
    assert_eq!(
        fixture.git_out(fixture.path(), &["status", "--porcelain"]),
        "?? .codex/\n?? .mcp.json\n?? AGENTS.md\n?? CLAUDE.md",
        "only the team's own files are left"
    );
}

/// The `SessionStart` hook of Claude Code, Gemini CLI and Codex, each run as the client runs
/// it (`sh -c` in the project): exit 0, and JSON whose added context is a few hundred bytes that
/// say where the session is and what is next.
fn session_start_orients_in_a_few_hundred_bytes(fixture: &Fixture) {
    for file in [
        ".claude/settings.json",
        ".gemini/settings.json",
        ".codex/hooks.json",
    ] {
        let settings: serde_json::Value = serde_json::from_str(&read(fixture, file)).unwrap();
        let command = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
            .as_str()
            .unwrap_or_else(|| panic!("{file}: {settings}"));
        let mut cmd = Command::new("sh");
        cmd.args(["-c", command]).current_dir(fixture.path());
        discern_tests::hermetic(&mut cmd, fixture.repo.home());
        let out = cmd.output().unwrap();
        let hook: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(out.status.success(), "{file}: {hook}");
        assert_eq!(hook["hookSpecificOutput"]["hookEventName"], "SessionStart");
        let text = hook["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap();
        assert!(text.contains("main is") && text.contains("next:"), "{text}");
        assert!(text.len() < 600, "{} bytes: {text}", text.len());
    }
}

/// Without `--client`, the clients found on PATH are wired and named; with none found, the
/// refusal names `--client`.
#[test]
fn without_a_client_named_those_on_path_are_wired_and_none_found_is_refused() {
    let fixture = Fixture::new(Config::landing());
    let bin = git_only(&fixture);
    let none = agents(&fixture, &["--json"]).json();
    assert_eq!(none["ok"], false, "{none}");
    assert!(
        none["message"].as_str().unwrap().contains("--client"),
        "{none}"
    );

    let gemini = bin.join("gemini");
    std::fs::write(&gemini, "#!/bin/sh\n").unwrap();
    let executable = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    std::fs::set_permissions(&gemini, executable).unwrap();
    let found = agents(&fixture, &["--json"]).json();
    assert_eq!(
        found["data"]["found_on_path"],
        serde_json::json!(["gemini"])
    );
    assert_eq!(found["data"]["files"][0]["file"], ".gemini/settings.json");
    assert!(fixture.path().join(".gemini/settings.json").exists());
    assert!(!fixture.path().join(".mcp.json").exists());
}

/// `status` (and `done`) say when `AGENTS.md`'s section no longer matches the repository (a job
/// added), and stop once `discern agents` wrote it again.
#[test]
fn status_says_when_the_guidance_is_out_of_date() {
    let fixture = Fixture::new(Config::landing());
    let says = |fixture: &Fixture, args: &[&str]| {
        let json = fixture.run(args).json();
        json["advisories"]
            .as_array()
            .is_some_and(|a| a.iter().any(|l| l.as_str().unwrap().contains("AGENTS.md")))
    };
    let stale = |fixture: &Fixture| says(fixture, &["status", "--json"]);
    assert!(!stale(&fixture), "no section, no advisory");
    assert_eq!(agents(&fixture, &["--client", "codex"]).code, 0);
    assert!(!stale(&fixture));
    let config = Config::landing().job("lint", "true").to_string();
    fixture.repo.write("discern.toml", &config);
    assert!(stale(&fixture), "a job was added");
    assert!(
        says(&fixture, &["done", "--dry-run", "--json"]),
        "done says so too"
    );
    assert_ne!(agents(&fixture, &["--check"]).code, 0);
    assert_eq!(agents(&fixture, &["--client", "codex"]).code, 0);
    assert!(!stale(&fixture));
}

/// `doctor --quick` reports every check with the wired clients answering `initialize`; a
/// client whose entry no longer starts fails it, naming the fix. Without `--quick` the checks
/// come before the gate's rehearsal.
#[test]
fn doctor_checks_each_wired_client_and_names_the_fix() {
    let fixture = Fixture::new(Config::landing());
    fixture.repo.write(".mcp.json", TEAM_MCP_JSON);
    assert_eq!(
        agents(&fixture, &["--client", "claude", "--client", "codex"]).code,
        0
    );
    let run = fixture.run(&["doctor", "--quick"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let mut filters = vec![
        (r" \(commit [0-9a-f]{12}\)".to_owned(), String::new()),
        (
            r"git version [0-9a-z. ()]+".to_owned(),
            "git version [git]".to_owned(),
        ),
        (r"[0-9]+\.[0-9] MiB".to_owned(), "[size] MiB".to_owned()),
        (
            r"discern [0-9]+\.[0-9]+\.[0-9]+".to_owned(),
            "discern [version]".to_owned(),
        ),
        (
            regex::escape(crate::support::cache_dir().to_str().unwrap()),
            "[cache]".to_owned(),
        ),
    ];
    filters.extend(crate::contract::filters(&fixture));
    snapshot_with("doctor_quick", filters, &run.stdout);
    let codex = read(&fixture, ".codex/config.toml")
        .replace(env!("CARGO_BIN_EXE_discern"), "/gone/discern");
    fixture.repo.write(".codex/config.toml", &codex);
    let json = fixture.run(&["doctor", "--quick", "--json"]).json();
    assert_eq!(json["error"], "precondition_failed", "{json}");
    let check = |name: &str| {
        json["data"]["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["check"] == name)
            .unwrap_or_else(|| panic!("no {name}: {json}"))
            .clone()
    };
    assert_eq!(check("client claude")["status"], "ok");
    let broken = check("client codex");
    assert_eq!(broken["status"], "fail", "{broken}");
    assert!(
        broken["fix"]
            .as_str()
            .unwrap()
            .contains("discern agents --client codex")
    );
    let full = fixture.run(&["doctor", "--json"]).json();
    assert_eq!(full["error"], "precondition_failed", "{full}");
    assert_eq!(
        full["data"]["passed"], true,
        "the gate itself passes: {full}"
    );
}

#[test]
fn check_and_remove_together_are_refused() {
    let fixture = Fixture::new(Config::landing());
    let run = agents(&fixture, &["--check", "--remove", "--json"]);
    assert_eq!(run.code, 2);
    assert_eq!(run.json()["error"], "invalid_arguments");
}

fn which(program: &str) -> PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{program} on PATH"))
}

fn snapshot(name: &str, fixture: &Fixture, output: &str) {
    snapshot_with(name, crate::contract::filters(fixture), output);
}

fn snapshot_with(name: &str, mut filters: Vec<(String, String)>, output: &str) {
    filters.push((
        regex::escape(env!("CARGO_BIN_EXE_discern")),
        "[discern]".to_owned(),
    ));
    let filters: Vec<(&str, &str)> = filters
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    insta::with_settings!({ filters => filters }, {
        insta::assert_snapshot!(name, output);
    });
}
