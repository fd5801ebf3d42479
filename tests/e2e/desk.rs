//! The owner's desk (issue 53) as a person uses it: driven in a real terminal (tmux:
//! `send-keys`, `capture-pane`) over a fleet of four efforts in the four groups — inspect one,
//! approve one with a test key, land one, abandon one — and the repository afterwards what
//! the CLI verbs leave. Where it cannot be interactive it refuses, naming `discern status`,
//! and no MCP tool reaches it. And `status` names the efforts that change the same files.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::approval::{effort, proposed_effort, signed_fixture};
use crate::support::Fixture;
use crate::support::config::Config;

#[test]
fn the_desk_refuses_where_it_cannot_be_interactive_naming_status_and_writing_nothing() {
    let fixture = Fixture::new(Config::landing());
    let before = fixture.git_out(fixture.path(), &["for-each-ref"]);
    // Piped stdout (as every run of the fixture is), then --json, then CI on top.
    let piped = fixture.run(&["desk"]);
    assert_eq!(piped.code, 1, "{}{}", piped.stdout, piped.stderr);
    assert!(piped.stdout.contains("discern status"), "{}", piped.stdout);
    assert!(piped.stdout.contains("not a terminal"), "{}", piped.stdout);
    for (args, env) in [
        (&["desk", "--json"][..], &[][..]),
        (&["desk", "--json"][..], &[("CI", "true")][..]),
    ] {
        let run = fixture.run_with(args, env);
        let json = run.json();
        assert_eq!(json["ok"], false, "{json}");
        assert_eq!(json["verb"], "desk", "{json}");
        assert_eq!(json["error"], "not_interactive", "{json}");
        let message = json["message"].as_str().unwrap_or_default();
        assert!(message.contains("`discern status`"), "{json}");
        assert_eq!(json["hints"][0]["action"]["verb"], "status", "{json}");
        assert_eq!(run.code, 1);
    }
    // Bare `discern` off a terminal is the help, as before.
    let bare = fixture.run(&[]);
    assert_eq!(bare.code, 2, "{}", bare.stdout);
    assert_eq!(fixture.git_out(fixture.path(), &["for-each-ref"]), before);
    assert_eq!(
        fixture.git_out(fixture.path(), &["status", "--porcelain"]),
        ""
    );
    assert!(
        !fixture.path().join(".git/discern").exists(),
        "nothing written"
    );
}

#[test]
fn no_mcp_tool_reaches_the_desk() {
    let tools = discern::verbs::tool_names();
    assert!(tools.iter().all(|t| !t.contains("desk")), "{tools:?}");
    assert!(discern::verbs::by_tool("discern_desk").is_none());
    assert!(
        discern::verbs::by_name("desk").is_none(),
        "the desk is no verb of the table"
    );
}

#[test]
fn two_efforts_changing_one_file_each_name_the_other_in_status() {
    let fixture = Fixture::new(Config::landing());
    effort(
        &fixture,
        "left",
        &[("src/shared.rs", "pub fn l() {}\n"), ("src/l.rs", "\n")],
    );
    effort(&fixture, "right", &[("src/shared.rs", "pub fn r() {}\n")]);
    effort(&fixture, "apart", &[("src/apart.rs", "pub fn a() {}\n")]);
    let json = fixture.run(&["status", "--json"]).json();
    let row = |json: &serde_json::Value, id: &str| {
        json["data"]["fleet"]
            .as_array()
            .and_then(|rows| rows.iter().find(|r| r["id"] == id).cloned())
            .unwrap_or_else(|| panic!("no row {id}: {json}"))
    };
    assert_eq!(
        row(&json, "left")["collisions"],
        serde_json::json!([{ "effort": "right", "files": 1 }])
    );
    assert_eq!(
        row(&json, "right")["collisions"],
        serde_json::json!([{ "effort": "left", "files": 1 }])
    );
    assert!(row(&json, "apart").get("collisions").is_none(), "{json}");
    let owner = json["hints"].to_string();
    assert!(
        owner.contains("change the same files as another effort: "),
        "{owner}"
    );
    let full = fixture.run(&["status", "--verbose", "--json"]).json();
    assert_eq!(
        row(&full, "left")["collisions"],
        serde_json::json!([{ "effort": "right", "files": 1, "paths": ["src/shared.rs"] }])
    );
    let human = fixture.run(&["status"]).stdout;
    assert!(
        human.contains("changes the same files as right (1 file(s))"),
        "{human}"
    );
    let verbose = fixture.run(&["status", "--verbose"]).stdout;
    assert!(
        verbose.contains("changes the same files as left: src/shared.rs"),
        "{verbose}"
    );
}

/// A tmux server of its own (its socket beside the repository), running the desk in a
/// 100×30 terminal with the fixture's hermetic environment.
struct Screen {
    socket: PathBuf,
    home: PathBuf,
}

impl Screen {
    /// The desk as `discern desk`.
    fn open(fixture: &Fixture) -> Self {
        Self::running(fixture, "desk")
    }

    /// `discern ARGS` in the terminal.
    fn running(fixture: &Fixture, args: &str) -> Self {
        discern_tests::ensure_debian_tool("tmux", "tmux");
        let screen = Self {
            socket: fixture.repo.parent().join("tmux.sock"),
            home: fixture.repo.home().to_owned(),
        };
        let bin = env!("CARGO_BIN_EXE_discern");
        let cache = crate::support::cache_dir();
        let desk = format!("DISCERN_CACHE_DIR='{}' '{bin}' {args}", cache.display());
        let dir = fixture.path().to_str().unwrap();
        screen.tmux(&[
            "new-session",
            "-d",
            "-x",
            "100",
            "-y",
            "30",
            "-c",
            dir,
            &desk,
        ]);
        // An escape key is sent at once, never held back to be read as Alt with the next key.
        screen.tmux(&["set-option", "-s", "escape-time", "0"]);
        screen
    }

    fn tmux(&self, args: &[&str]) -> String {
        let mut cmd = Command::new("tmux");
        cmd.arg("-S").arg(&self.socket).args(args);
        discern_tests::hermetic(&mut cmd, &self.home);
        cmd.env("TERM", "xterm-256color");
        let out = cmd.output().expect("tmux runs");
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Whether the desk still runs (its session ends with it).
    /// `q`, and the desk ends within 30 s.
    fn quit(&self) {
        self.keys(&["q"]);
        let start = Instant::now();
        while self.alive() {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "q quits the desk"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn alive(&self) -> bool {
        let mut cmd = Command::new("tmux");
        cmd.arg("-S")
            .arg(&self.socket)
            .args(["has-session", "-t", "0"]);
        discern_tests::hermetic(&mut cmd, &self.home);
        cmd.output().is_ok_and(|out| out.status.success())
    }

    fn keys(&self, keys: &[&str]) {
        for key in keys {
            self.tmux(&["send-keys", "-t", "0", key]);
        }
    }

    fn capture(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "0"])
    }

    /// Wait (up to a minute) until the screen shows every one of `texts`; the screen.
    fn expect(&self, texts: &[&str]) -> String {
        let start = Instant::now();
        loop {
            let screen = self.capture();
            if texts.iter().all(|t| screen.contains(t)) {
                return screen;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "waited for {texts:?}; the screen:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The efforts' ids on the list, top to bottom, and the selected one's index.
    fn selected(&self) -> String {
        let screen = self.capture();
        let line = screen
            .lines()
            .find(|l| l.contains(" > "))
            .unwrap_or_default();
        line.split_whitespace()
            .nth(2)
            .unwrap_or_default()
            .to_owned()
    }

    /// Move the selection to `id`.
    fn select(&self, id: &str) {
        for _ in 0..12 {
            if self.selected() == id {
                return;
            }
            self.keys(&["j"]);
            std::thread::sleep(Duration::from_millis(100));
        }
        for _ in 0..12 {
            if self.selected() == id {
                return;
            }
            self.keys(&["k"]);
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("cannot select {id}:\n{}", self.capture());
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}

fn branch_exists(fixture: &Fixture, branch: &str) -> bool {
    !fixture
        .git_out(fixture.path(), &["branch", "--list", branch])
        .is_empty()
}

#[test]
fn in_a_real_terminal_keystrokes_inspect_approve_land_and_abandon() {
    let (fixture, keys) = signed_fixture();
    let owner = keys.owner.to_str().unwrap();
    fixture.git_in(fixture.path(), &["config", "user.signingkey", owner]);
    // Four efforts, one per group: ready to land, awaiting approval, broken, working.
    let (ready, ready_head) = fixture.proven_effort("ready");
    let (gated, _) = proposed_effort(&fixture, "gated");
    let gated_head = fixture.git_out(&gated, &["rev-parse", "HEAD"]);
    let gone = effort(&fixture, "gone", &[("src/gone.rs", "\n")]);
    std::fs::remove_dir_all(&gone).unwrap();
    let fresh = effort(&fixture, "fresh", &[("src/fresh.rs", "pub fn f() {}\n")]);

    let screen = Screen::open(&fixture);
    screen.expect(&[
        "Ready to land (Proof honoured) (1)",
        "Awaiting the owner's approval (1)",
        "Needs attention (1)",
        "Working (1)",
        "> ready",
    ]);

    // Inspect: the commits and diffstat against the trunk, the Standards, the Proof line.
    screen.keys(&["Enter"]);
    screen.expect(&["Inspect ready", "add ready", "src/ready.rs", "standards"]);
    screen.keys(&["Escape"]);
    screen.expect(&["Ready to land"]);

    // Approve: the exact items first, then the owner's key signs them.
    screen.select("gated");
    screen.keys(&["a"]);
    screen.expect(&[
        "Approve gated",
        "todo",
        "It runs: discern approve --effort gated --head",
    ]);
    screen.keys(&["y"]);
    screen.expect(&["Ran: approve", "Approved by owner@example.com"]);
    screen.keys(&["Escape"]);
    screen.expect(&["Ready to land (Proof honoured) (2)"]);

    // Land: the command shown, then the owner's keystroke.
    screen.select("ready");
    screen.keys(&["l"]);
    screen.expect(&["It runs: discern accept --effort ready --confirmed"]);
    screen.keys(&["y"]);
    screen.expect(&["Ran: accept", "$ discern accept --effort ready --confirmed"]);
    screen.keys(&["Escape"]);
    // The trunk moved: the other efforts now lag it.
    screen.expect(&[
        "Efforts",
        "Ready to land (Proof honoured) (0)",
        "Needs attention (3)",
    ]);

    // Abandon: the effort holds a commit the trunk lacks, so its name is typed back.
    screen.select("fresh");
    screen.keys(&["x"]);
    screen.expect(&["Type its name, fresh"]);
    screen.keys(&["f", "r", "e", "s", "h", "Enter"]);
    screen.expect(&["Ran: abandon", "$ discern abandon fresh --force"]);
    screen.keys(&["Escape"]);
    screen.expect(&["Efforts", "Needs attention (2)"]);
    screen.quit();

    // What the CLI verbs leave: the trunk at ready's proven head, its branch and worktree
    // gone; gated's branch one signed approval commit past what the owner reviewed; fresh
    // gone; the broken one untouched.
    assert_eq!(crate::approval::trunk(&fixture), ready_head);
    assert!(!branch_exists(&fixture, "agent/ready") && !ready.exists());
    assert!(!branch_exists(&fixture, "agent/fresh") && !fresh.exists());
    assert!(branch_exists(&fixture, "agent/gone"));
    let approval = fixture.git_out(fixture.path(), &["rev-parse", "agent/gated^"]);
    assert_eq!(
        approval, gated_head,
        "one approval commit on the reviewed head"
    );
    let added = fixture.git_out(
        fixture.path(),
        &["diff", "--name-only", &gated_head, "agent/gated"],
    );
    assert!(added.starts_with(".discern/approvals/"), "{added}");
    let status = fixture.run(&["status", "--json"]).json();
    let row = status["data"]["fleet"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["id"] == "gated").cloned())
        .unwrap_or_default();
    assert_eq!(row["approved_by"], "owner@example.com", "{status}");
}

#[test]
fn status_names_the_verb_running_in_an_effort_and_how_long_it_has_run() {
    // The gate's test job holds `done` until the test removes the file it waits on.
    let hold = tempfile::tempdir().unwrap();
    let gate = hold.path().join("hold");
    std::fs::write(&gate, "").unwrap();
    let config = Config::landing().job(
        "test",
        &format!("while [ -e '{}' ]; do sleep 0.1; done", gate.display()),
    );
    let fixture = Fixture::new(&config);
    let path = effort(&fixture, "busy", &[("src/busy.rs", "pub fn b() {}\n")]);
    let mut done = Command::new(env!("CARGO_BIN_EXE_discern"));
    done.args(["done", "--json"]).current_dir(&path);
    discern_tests::hermetic(&mut done, fixture.repo.home());
    done.env("DISCERN_CACHE_DIR", crate::support::cache_dir());
    let quiet = || std::process::Stdio::null();
    let mut child = done.stdout(quiet()).stderr(quiet()).spawn().unwrap();
    let start = Instant::now();
    let row = loop {
        let json = fixture.run(&["status", "--json"]).json();
        let row = json["data"]["fleet"]
            .as_array()
            .and_then(|rows| rows.iter().find(|r| r["id"] == "busy").cloned())
            .unwrap_or_default();
        if row.get("running").is_some() {
            break row;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "never running: {json}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(row["running"]["verb"], "done", "{row}");
    assert!(row["running"]["seconds"].as_u64().is_some(), "{row}");
    let human = fixture.run(&["status"]).stdout;
    assert!(human.contains("running done ("), "{human}");
    std::fs::remove_file(&gate).unwrap();
    assert!(child.wait().unwrap().success());
    let json = fixture.run(&["status", "--json"]).json();
    let after = json["data"]["fleet"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["id"] == "busy").cloned())
        .unwrap_or_default();
    assert!(after.get("running").is_none(), "finished: {after}");
}

#[test]
fn bare_discern_on_a_terminal_opens_the_desk_with_a_shell_in_an_effort_and_q_quits() {
    let fixture = Fixture::new(Config::landing());
    effort(&fixture, "one", &[("src/one.rs", "\n")]);
    let screen = Screen::running(&fixture, "");
    screen.expect(&["discern desk · trunk main · 1 effort(s)", "> one", "? help"]);
    screen.keys(&["?"]);
    screen.expect(&["The owner's desk: every effort, grouped for deciding."]);
    screen.keys(&["Escape"]);
    screen.expect(&["Working (1)"]);
    // A shell in the effort's worktree, on the terminal given back; exit returns to the desk.
    screen.keys(&["s"]);
    screen.expect(&["exit the shell to return to the desk"]);
    screen.keys(&["echo \"in $(basename \"$PWD\")\"", "Enter"]);
    screen.expect(&["in one"]);
    screen.keys(&["exit", "Enter"]);
    screen.expect(&["discern desk · trunk main · 1 effort(s)", "> one"]);
    screen.quit();
}
