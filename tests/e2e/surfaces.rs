//! The verbs' contract on both surfaces: dry runs never write, on every writing verb; flag
//! combinations that make no sense are refused; one slug per refusal kind; a checkout whose
//! cleanliness cannot be told is refused, never read as clean.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::mcp::{call, connect};
use crate::support::Fixture;

const CONFIG: &str = r#"
[repository]
pin_on_done = false

[jobs]
test = "true"

[standards.todo]
direction = "down"
limit = 5
producer = "builtin:pattern"
config = { pattern = "TODO", paths = ["src/**"] }
metric = "matches"
margin = 0
"#;

/// Every byte a verb could change: each file of the repository's folder and its worktrees'
/// folders (work trees, `.git` with its refs, index, logs and `discern/` state).
fn state(roots: &[&Path]) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    for root in roots {
        let mut stack = vec![root.to_path_buf()];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let file_type = entry.file_type().unwrap();
                if file_type.is_dir() {
                    stack.push(path);
                } else if file_type.is_file() {
                    files.insert(path.clone(), std::fs::read(&path).unwrap());
                }
            }
        }
    }
    files
}

fn assert_unchanged(
    before: &BTreeMap<PathBuf, Vec<u8>>,
    after: &BTreeMap<PathBuf, Vec<u8>>,
    what: &str,
) {
    let changed: Vec<&PathBuf> = before
        .keys()
        .chain(after.keys())
        .filter(|p| before.get(*p) != after.get(*p))
        .collect();
    assert!(changed.is_empty(), "{what} wrote: {changed:?}");
}

/// A fixture with a proven effort `e1` one commit ahead, and the trunk moved since (so
/// `update` has something to merge and `accept` something to refuse or land).
fn proven_effort(fixture: &Fixture) -> PathBuf {
    let run = fixture.run(&["start", "--name", "e1", "--json"]);
    assert_eq!(run.json()["ok"], true, "{}", run.stdout);
    let effort = fixture.repo.parent().join("repo.worktrees/e1");
    std::fs::write(effort.join("src/new.rs"), "pub fn n() {}\n").unwrap();
    fixture.git_in(&effort, &["add", "-A"]);
    fixture.git_in(&effort, &["commit", "-q", "-m", "work"]);
    let done = fixture.run_in(&effort, &["done", "--json"], &[]);
    assert_eq!(done.json()["ok"], true, "{}", done.stdout);
    fixture.repo.write("docs/trunk.md", "moved\n");
    fixture.repo.commit("the trunk moves");
    effort
}

#[test]
fn dry_runs_write_nothing_on_the_cli() {
    let fixture = Fixture::new(CONFIG);
    let effort = proven_effort(&fixture);
    let roots = [fixture.repo.parent()];
    let main = fixture.path().to_owned();
    let cases: &[(&Path, &[&str])] = &[
        (&main, &["start", "--name", "e2", "--dry-run"]),
        (&main, &["standards", "--dry-run"]),
        (&main, &["standards", "--pin", "--dry-run"]),
        (&effort, &["done", "--rerun", "--dry-run"]),
        (&effort, &["update", "--dry-run"]),
        (&effort, &["accept", "--confirmed", "--dry-run"]),
        (
            &effort,
            &[
                "standards",
                "propose",
                "todo",
                "--reason",
                "The new parser needs its TODO markers until the grammar settles.",
                "--dry-run",
            ],
        ),
    ];
    for (dir, args) in cases {
        let before = state(&roots);
        let mut full = args.to_vec();
        full.push("--json");
        let run = fixture.run_in(dir, &full, &[]);
        assert_unchanged(
            &before,
            &state(&roots),
            &format!("discern {}", args.join(" ")),
        );
        let json = run.json();
        // Every preview succeeds but accept's, which the moved trunk stops (below, it succeeds).
        let expected = args[0] != "accept";
        assert_eq!(json["ok"], expected, "{args:?}: {}", run.stdout);
        if expected {
            assert_eq!(json["dry_run"], true, "{args:?}: {}", run.stdout);
        }
    }
    for args in [&["update", "--json"][..], &["done", "--json"]] {
        assert_eq!(
            fixture.run_in(&effort, args, &[]).json()["ok"],
            true,
            "{args:?}"
        );
    }
    let before = state(&roots);
    let accept = fixture.run_in(
        &effort,
        &["accept", "--confirmed", "--dry-run", "--json"],
        &[],
    );
    assert_unchanged(
        &before,
        &state(&roots),
        "discern accept --confirmed --dry-run",
    );
    assert_eq!(accept.json()["dry_run"], true, "{}", accept.stdout);
    // The pin preview names what a real pin then commits, exactly.
    let preview = fixture
        .run(&["standards", "--pin", "--dry-run", "--json"])
        .json();
    assert_eq!(preview["plan"]["pin"][0]["name"], "todo", "{preview}");
    assert_eq!(preview["plan"]["pin"][0]["to"], 2.0, "{preview}");
    let pinned = fixture.run(&["standards", "--pin", "--json"]).json();
    assert_eq!(pinned["data"]["pinned"], preview["plan"]["pin"], "{pinned}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dry_runs_write_nothing_over_mcp() {
    let fixture = Fixture::new(CONFIG);
    let effort = proven_effort(&fixture);
    let roots = [fixture.repo.parent()];
    let client = connect(&fixture, fixture.path()).await;
    let effort_path = effort.display().to_string();
    let cases = [
        ("discern_start", json!({ "name": "e2", "dry_run": true })),
        (
            "discern_standards",
            json!({ "action": "measure", "dry_run": true }),
        ),
        (
            "discern_standards",
            json!({ "action": "measure", "pin": true, "dry_run": true }),
        ),
        (
            "discern_done",
            json!({ "rerun": true, "dry_run": true, "path": effort_path }),
        ),
        (
            "discern_update",
            json!({ "dry_run": true, "path": effort_path }),
        ),
        (
            "discern_accept",
            json!({ "confirmed": true, "dry_run": true, "path": effort_path }),
        ),
        (
            "discern_standards",
            json!({ "action": "propose", "dry_run": true, "path": effort_path, "proposals": [{ "name": "todo", "reason": "The new parser needs its TODO markers until the grammar settles." }] }),
        ),
    ];
    // Every verb the table says writes, and that has a dry run, is walked here.
    let walked: std::collections::BTreeSet<&str> = cases.iter().map(|(tool, _)| *tool).collect();
    let with_dry_run: std::collections::BTreeSet<&str> = discern::verbs::TABLE
        .iter()
        .filter(|e| e.info().writes && e.input_schema()["properties"].get("dry_run").is_some())
        .filter_map(|e| e.info().tool)
        .collect();
    assert_eq!(
        walked, with_dry_run,
        "every writing verb's dry run is walked"
    );
    for (tool, arguments) in cases {
        let before = state(&roots);
        let (is_error, envelope, _) = call(&client, tool, arguments.clone()).await;
        assert_unchanged(&before, &state(&roots), &format!("{tool} {arguments}"));
        // Every preview succeeds but accept's, which the moved trunk stops.
        assert_eq!(
            is_error,
            tool == "discern_accept",
            "{tool} {arguments}: {envelope}"
        );
        if !is_error {
            assert_eq!(envelope["dry_run"], true, "{tool} {arguments}: {envelope}");
        }
    }
    let (_, preview, _) = call(
        &client,
        "discern_standards",
        json!({ "action": "measure", "pin": true, "dry_run": true }),
    )
    .await;
    assert_eq!(preview["plan"]["pin"][0]["to"], 2.0, "{preview}");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pin_with_force_is_refused_on_both_surfaces() {
    let fixture = Fixture::new(CONFIG);
    let roots = [fixture.repo.parent()];
    let before = state(&roots);
    let run = fixture.run(&["standards", "--pin", "--force", "--json"]);
    assert_eq!(run.code, 2, "{}", run.stdout);
    let json = run.json();
    assert_eq!(json["error"], "invalid_arguments");
    assert!(
        json["message"].as_str().unwrap().contains("--force"),
        "{json}"
    );
    let client = connect(&fixture, fixture.path()).await;
    let (is_error, envelope, _) = call(
        &client,
        "discern_standards",
        json!({ "action": "measure", "pin": true, "force": true }),
    )
    .await;
    assert!(is_error);
    assert_eq!(envelope["error"], "invalid_arguments");
    client.cancel().await.unwrap();
    assert_unchanged(&before, &state(&roots), "a refused pin");
}

/// A flag `--pin` does not use is refused on both surfaces, never dropped; so are names beside
/// `explain` over MCP, where clap's conflicts do not hold.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flags_a_mode_does_not_use_are_refused_on_both_surfaces_never_dropped() {
    let fixture = Fixture::new(CONFIG);
    let roots = [fixture.repo.parent()];
    let before = state(&roots);
    for (flags, named) in [
        (&["--baseline", "HEAD"][..], "--baseline"),
        (&["--require-trunk"], "--require-trunk"),
        (&["--no-remote"], "--no-remote"),
    ] {
        let mut args = vec!["standards", "--pin", "--json"];
        args.extend(flags);
        let run = fixture.run(&args);
        assert_eq!(run.code, 2, "{}", run.stdout);
        let json = run.json();
        assert_eq!(json["error"], "invalid_arguments", "{json}");
        let message = json["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("--pin does not take {named}")),
            "{json}"
        );
    }
    // A dry run runs nothing and --force records nothing: the flags that need a real,
    // recorded measurement are refused beside them.
    for (flags, named) in [
        (
            &["--dry-run", "--explain", "todo"][..],
            "--dry-run does not take --explain",
        ),
        (&["--dry-run", "--fresh"], "--dry-run does not take --fresh"),
        (
            &["--dry-run", "--no-remote"],
            "--dry-run does not take --no-remote",
        ),
        (&["--force", "--fresh"], "--force does not take --fresh"),
        (
            &["--force", "--no-remote"],
            "--force does not take --no-remote",
        ),
    ] {
        let mut args = vec!["standards", "--json"];
        args.extend(flags);
        let json = fixture.run(&args).json();
        assert_eq!(json["error"], "invalid_arguments", "{flags:?}: {json}");
        assert!(json["message"].as_str().unwrap().contains(named), "{json}");
    }
    let client = connect(&fixture, fixture.path()).await;
    for arguments in [
        json!({ "action": "measure", "pin": true, "baseline": "HEAD" }),
        json!({ "action": "measure", "pin": true, "explain": "todo" }),
        json!({ "action": "measure", "explain": "todo", "names": ["todo"] }),
        json!({ "action": "measure", "dry_run": true, "fresh": true }),
        json!({ "action": "measure", "force": true, "no_remote": true }),
    ] {
        let (is_error, envelope, _) = call(&client, "discern_standards", arguments.clone()).await;
        assert!(is_error, "{arguments}: {envelope}");
        assert_eq!(
            envelope["error"], "invalid_arguments",
            "{arguments}: {envelope}"
        );
    }
    client.cancel().await.unwrap();
    assert_unchanged(&before, &state(&roots), "refused flags");
}

/// Every verb's own check (`Verb::validate`) runs before anything else, on both surfaces:
/// `status --all --local`, an `await` with a condition and a resume handle, and `approve`'s
/// flags its mode would ignore (CLI only: no tool approves) are refused, never dropped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_verbs_own_check_refuses_on_both_surfaces() {
    let fixture = Fixture::new(CONFIG);
    let effort = proven_effort(&fixture);
    let roots = [fixture.repo.parent()];
    let before = state(&roots);
    for (args, named) in [
        (&["status", "--all", "--local"][..], "--all and --local"),
        (
            &["approve", "--dry-run", "--token", "abc"],
            "--token is not used with --dry-run",
        ),
        (
            &["approve", "--dry-run", "--key", "k.pub"],
            "--key is not used with --dry-run",
        ),
        (
            &["approve", "--branch", "pr-7"],
            "--branch is not used without a named target",
        ),
        (
            &["approve", "feature", "--effort", "e"],
            "Name what to approve once",
        ),
    ] {
        let mut args = args.to_vec();
        args.push("--json");
        let run = fixture.run_in(&effort, &args, &[]);
        let json = run.json();
        assert_eq!(json["error"], "invalid_arguments", "{args:?}: {json}");
        assert!(
            json["message"].as_str().unwrap().contains(named),
            "{args:?}: {json}"
        );
    }
    let client = connect(&fixture, &effort).await;
    for (tool, arguments) in [
        ("discern_status", json!({ "all": true, "local": true })),
        (
            "discern_await",
            json!({ "trunk_moved": true, "resume": "aaaa" }),
        ),
        ("discern_await", json!({ "green": "e", "landed": "e" })),
        ("discern_await", json!({})),
    ] {
        let (is_error, envelope, _) = call(&client, tool, arguments.clone()).await;
        assert!(is_error, "{tool} {arguments}: {envelope}");
        assert_eq!(
            envelope["error"], "invalid_arguments",
            "{tool} {arguments}: {envelope}"
        );
    }
    client.cancel().await.unwrap();
    assert_unchanged(&before, &state(&roots), "refused requests");
}

/// Make every `git status` in `dir` fail, as a corrupt index does.
fn corrupt_index(dir: &Path) {
    let git_dir = std::process::Command::new("git")
        .args(["rev-parse", "--absolute-git-dir"])
        .current_dir(dir)
        .output()
        .unwrap();
    let git_dir = PathBuf::from(String::from_utf8(git_dir.stdout).unwrap().trim());
    std::fs::write(git_dir.join("index"), b"this is not an index").unwrap();
}

#[test]
fn a_checkout_whose_cleanliness_cannot_be_told_is_refused_never_read_as_clean() {
    let fixture = Fixture::new(CONFIG);
    let effort = proven_effort(&fixture);
    let refs = |f: &Fixture| {
        f.repo
            .git(&["for-each-ref", "--format=%(refname) %(objectname)"])
    };
    // The main checkout's index is unreadable: accept cannot tell whether landing would
    // clobber uncommitted work there, so it refuses before anything moves.
    fixture.repo.git(&["checkout", "-q", "main"]);
    let trunk_before = refs(&fixture);
    corrupt_index(fixture.path());
    let update = fixture.run_in(&effort, &["update", "--json"], &[]);
    assert_eq!(update.json()["ok"], true, "{}", update.stdout);
    let done = fixture.run_in(&effort, &["done", "--json"], &[]);
    assert_eq!(done.json()["ok"], true, "{}", done.stdout);
    let trunk_before_accept = refs(&fixture);
    let accept = fixture.run_in(&effort, &["accept", "--confirmed", "--json"], &[]);
    let json = accept.json();
    assert_eq!(json["ok"], false, "{}", accept.stdout);
    assert_eq!(json["error"], "precondition_failed", "{json}");
    let message = json["message"].as_str().unwrap();
    assert!(message.contains("cannot be told"), "{message}");
    assert_eq!(refs(&fixture), trunk_before_accept, "nothing moved");
    assert_ne!(trunk_before, trunk_before_accept, "update and done ran");

    // The effort's own index is unreadable: neither a pin nor the gate reads that as clean.
    corrupt_index(&effort);
    for args in [
        &["standards", "--pin", "--json"][..],
        &["done", "--rerun", "--json"],
    ] {
        let run = fixture.run_in(&effort, args, &[]);
        let json: Value = run.json();
        assert_eq!(json["ok"], false, "{args:?}: {}", run.stdout);
        assert_eq!(json["error"], "cannot_tell", "{args:?}: {json}");
        assert!(
            json["message"].as_str().unwrap().contains("cannot tell"),
            "{args:?}: {json}"
        );
        assert!(
            json["hints"][0]["text"]
                .as_str()
                .unwrap()
                .contains("git status"),
            "{args:?}: {json}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_standard_is_unknown_standard_on_every_verb_and_surface() {
    let fixture = Fixture::new(CONFIG);
    fixture.repo.git(&["checkout", "-q", "-b", "agent/work"]);
    for args in [
        &["standards", "nope", "--json"][..],
        &["standards", "nope", "--dry-run", "--json"],
        &["standards", "--pin", "nope", "--json"],
        &[
            "standards",
            "propose",
            "nope",
            "--reason",
            "The parser needs it.",
            "--json",
        ],
    ] {
        let run = fixture.run(args);
        assert_eq!(
            run.json()["error"],
            "unknown_standard",
            "{args:?}: {}",
            run.stdout
        );
        assert_eq!(run.code, 1, "{args:?}");
    }
    let client = connect(&fixture, fixture.path()).await;
    for arguments in [
        json!({ "action": "measure", "names": ["nope"] }),
        json!({ "action": "measure", "names": ["nope"], "pin": true }),
        json!({ "action": "propose", "proposals": [{ "name": "nope", "reason": "The parser needs it." }] }),
    ] {
        let (is_error, envelope, _) = call(&client, "discern_standards", arguments.clone()).await;
        assert!(is_error, "{arguments}");
        assert_eq!(
            envelope["error"], "unknown_standard",
            "{arguments}: {envelope}"
        );
    }
    client.cancel().await.unwrap();
}

/// Keys whose values differ between two runs by nature (handles, times, process ids).
const VOLATILE: &[&str] = &[
    "operation",
    "handle",
    "resume",
    "started_at",
    "finished_at",
    "pid",
    "elapsed_s",
    "elapsed_ms",
    "duration_s",
    "waited_s",
    "last_activity",
    "age_s",
];

/// `text` with every resume or operation handle (`C1-XXXX-XXXX`, `R1-XXXX-XXXX-XX`) and every
/// time in seconds masked.
fn masked_handles(text: &str) -> String {
    static HANDLE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"\b(C1-[0-9A-F]{4}-[0-9A-F]{4}|R1-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{2})\b",
        )
        .expect("a valid pattern")
    });
    // A step's time in a note ("passed in 0.1 s"), which differs between two runs by nature.
    static SECONDS: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"\b\d+\.\d+ s\b").expect("a valid pattern"));
    let text = HANDLE.replace_all(text, "<handle>");
    SECONDS.replace_all(&text, "<seconds> s").into_owned()
}

/// `value` with `root` written as `<TMP>` and volatile values masked.
fn normalized(value: &Value, root: &str) -> Value {
    match value {
        Value::String(s) => Value::String(masked_handles(&s.replace(root, "<TMP>"))),
        Value::Array(items) => Value::Array(items.iter().map(|v| normalized(v, root)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| match VOLATILE.contains(&k.as_str()) {
                    true => (k.clone(), Value::String("<volatile>".to_owned())),
                    false => (k.clone(), normalized(v, root)),
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Every verb with a tool gives the same envelope on both surfaces: the same request on two
/// identical repositories, once through the CLI and once through MCP.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_answers_exactly_as_its_cli_verb() {
    let (cli, mcp) = (Fixture::new(CONFIG), Fixture::new(CONFIG));
    let (cli_effort, mcp_effort) = (proven_effort(&cli), proven_effort(&mcp));
    let client = connect(&mcp, mcp.path()).await;
    let reason = "The new parser needs its TODO markers until the grammar settles.";
    // (where, CLI arguments, tool, tool arguments); `true` = in the effort.
    let cases: Vec<(bool, Vec<&str>, &str, Value)> = vec![
        (false, vec!["status"], "discern_status", json!({})),
        (
            false,
            vec!["status", "--verbose"],
            "discern_status",
            json!({ "verbose": true }),
        ),
        (
            false,
            vec!["start", "--name", "e2", "--dry-run"],
            "discern_start",
            json!({ "name": "e2", "dry_run": true }),
        ),
        (true, vec!["prepare"], "discern_prepare", json!({})),
        (true, vec!["setup"], "discern_setup", json!({})),
        (true, vec!["done"], "discern_done", json!({})),
        (
            true,
            vec!["done", "--rerun", "--dry-run"],
            "discern_done",
            json!({ "rerun": true, "dry_run": true }),
        ),
        (
            true,
            vec!["update", "--dry-run"],
            "discern_update",
            json!({ "dry_run": true }),
        ),
        (
            true,
            vec!["await", "--trunk-moved", "--timeout", "0"],
            "discern_await",
            json!({ "trunk_moved": true, "timeout": 0 }),
        ),
        (
            true,
            vec!["accept", "--dry-run"],
            "discern_accept",
            json!({ "dry_run": true }),
        ),
        (false, vec!["map"], "discern_map", json!({})),
        (true, vec!["test"], "discern_test", json!({})),
        (true, vec!["progress"], "discern_progress", json!({})),
        (
            false,
            vec!["standards"],
            "discern_standards",
            json!({ "action": "measure" }),
        ),
        (
            false,
            vec!["standards", "todo", "--dry-run"],
            "discern_standards",
            json!({ "action": "measure", "names": ["todo"], "dry_run": true }),
        ),
        (
            false,
            vec!["standards", "--pin", "--dry-run"],
            "discern_standards",
            json!({ "action": "measure", "pin": true, "dry_run": true }),
        ),
        (
            true,
            vec![
                "standards",
                "propose",
                "todo",
                "--reason",
                reason,
                "--dry-run",
            ],
            "discern_standards",
            json!({ "action": "propose", "dry_run": true, "proposals": [{ "name": "todo", "reason": reason }] }),
        ),
    ];
    let mut tools = std::collections::BTreeSet::new();
    for (in_effort, args, tool, arguments) in &cases {
        let dir = if *in_effort {
            &cli_effort
        } else {
            &cli.path().to_owned()
        };
        let mut full = args.clone();
        full.push("--json");
        let by_cli = fixture_json(&cli, dir, &full);
        let mut arguments = arguments.clone();
        if *in_effort {
            arguments["path"] = json!(mcp_effort.display().to_string());
        }
        let (_, by_mcp, _) = call(&client, tool, arguments).await;
        let root_cli = cli.repo.parent().display().to_string();
        let root_mcp = mcp.repo.parent().display().to_string();
        assert_eq!(
            normalized(&by_cli, &root_cli),
            normalized(&by_mcp, &root_mcp),
            "{args:?} and {tool} disagree"
        );
        tools.insert(*tool);
    }
    client.cancel().await.unwrap();
    // Every tool of the table was compared.
    let all: std::collections::BTreeSet<&str> = discern::verbs::tool_names().into_iter().collect();
    assert_eq!(tools, all);
}

fn fixture_json(fixture: &Fixture, dir: &Path, args: &[&str]) -> Value {
    let run = fixture.run_in(dir, args, &[]);
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {}", run.stdout))
}

/// Every verb the table declares a cleanliness for refuses a checkout that breaks it, and
/// only such a checkout: `full` refuses an untracked file that is not ignored, `tracked-files`
/// takes it and refuses a changed tracked file. A plain `standards` measures the committed
/// HEAD whatever the tree holds (its pin and propose forms are what the `full` is for).
#[test]
fn every_verb_refuses_exactly_the_checkouts_its_declared_cleanliness_rules_out() {
    use discern::testing::preflight::Cleanliness;
    let reason = "The new parser needs its TODO markers until the grammar settles.";
    let runs: Vec<(&str, Vec<&str>)> = vec![
        ("done", vec!["done", "--rerun"]),
        ("accept", vec!["accept", "--confirmed"]),
        ("standards", vec!["standards"]),
        ("standards", vec!["standards", "--pin"]),
        (
            "standards",
            vec!["standards", "propose", "todo", "--reason", reason],
        ),
        ("update", vec!["update"]),
    ];
    // A row's own and its modes' (`standards propose` and `withdraw` need the clean tree a
    // plain measurement does not).
    let declared: std::collections::BTreeSet<&str> = discern::verbs::TABLE
        .iter()
        .flat_map(|e| std::iter::once(e.info()).chain(e.modes().iter().copied()))
        .filter(|i| i.cleanliness != Cleanliness::Any)
        .filter_map(|i| i.name.split(' ').next())
        .collect();
    let covered: std::collections::BTreeSet<&str> = runs.iter().map(|(v, _)| *v).collect();
    assert_eq!(
        declared, covered,
        "every verb with a declared cleanliness is exercised"
    );
    for (verb, args) in &runs {
        let row = discern::verbs::by_name(verb).unwrap();
        let cleanliness = match args[..] {
            // A pin commits limits: its request asks for the clean tree a proposal's mode has.
            ["standards", "--pin"] | ["standards", "propose", ..] => {
                let propose = row.modes().iter().find(|m| m.name == "standards propose");
                propose.unwrap().cleanliness
            }
            _ => row.info().cleanliness,
        };
        let fixture = Fixture::new(CONFIG);
        let effort = proven_effort(&fixture);
        let mut full = args.clone();
        full.push("--json");
        std::fs::write(effort.join("notes.txt"), "untracked\n").unwrap();
        let untracked = fixture.run_in(&effort, &full, &[]).json();
        match cleanliness {
            Cleanliness::Full => {
                assert_eq!(
                    untracked["error"], "dirty_worktree",
                    "{args:?}: {untracked}"
                )
            }
            _ => assert_ne!(
                untracked["error"], "dirty_worktree",
                "{args:?}: {untracked}"
            ),
        }
        std::fs::write(effort.join("src/lib.rs"), "// changed\n").unwrap();
        let changed = fixture.run_in(&effort, &full, &[]).json();
        if cleanliness == Cleanliness::Any {
            assert_eq!(changed["ok"], true, "{args:?}: {changed}");
            assert!(
                changed["advisories"][0]
                    .as_str()
                    .unwrap()
                    .contains("src/lib.rs")
            );
            continue;
        }
        assert_eq!(changed["error"], "dirty_worktree", "{args:?}: {changed}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_other_actions_keys_are_refused_only_when_they_ask_for_something() {
    let fixture = Fixture::new(CONFIG);
    let effort = proven_effort(&fixture);
    let client = connect(&fixture, fixture.path()).await;
    let reason = "The new parser needs its TODO markers until the grammar settles.";
    for arguments in [
        json!({ "action": "measure", "proposals": null, "dry_run": true }),
        json!({ "action": "propose", "pin": false, "force": false, "names": [], "dry_run": true,
                "path": effort.display().to_string(), "proposals": [{ "name": "todo", "reason": reason }] }),
    ] {
        let (is_error, envelope, _) = call(&client, "discern_standards", arguments.clone()).await;
        assert!(!is_error, "{arguments}: {envelope}");
    }
    client.cancel().await.unwrap();
}

#[test]
fn a_dry_run_pin_leaves_out_what_needs_a_job_and_previews_the_rest() {
    let config = format!(
        "{CONFIG}\n[standards.speed]\ndirection = \"down\"\nlimit = 10\nrun = \"echo DISCERN_METRIC speed 3\"\n"
    );
    let fixture = Fixture::new(&config);
    let roots = [fixture.repo.parent()];
    let before = state(&roots);
    let json = fixture
        .run(&["standards", "--pin", "--dry-run", "--json"])
        .json();
    assert_unchanged(
        &before,
        &state(&roots),
        "a dry-run pin with a job-backed Standard",
    );
    assert_eq!(json["ok"], true, "{json}");
    assert_eq!(json["plan"]["pin"][0]["name"], "todo", "{json}");
    let advisories = json["advisories"].to_string();
    assert!(advisories.contains("speed need a job"), "{json}");
}
