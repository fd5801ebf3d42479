//! The verbs' contract on both surfaces: dry runs never write, on every writing verb; flag
//! combinations that make no sense are refused; one slug per refusal kind; a checkout whose
//! cleanliness cannot be told is refused, never read as clean.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::mcp::{call, connect};
use crate::support::Fixture;

const CONFIG: &str = r#"
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

fn git_in(fixture: &Fixture, dir: &Path, args: &[&str]) {
    let mut cmd = std::process::Command::new("git");
    cmd.args(args).current_dir(dir);
    discern_tests::hermetic(&mut cmd, fixture.repo.home());
    assert!(cmd.status().unwrap().success(), "git {args:?}");
}

/// A fixture with a proven effort `e1` one commit ahead, and the trunk moved since (so
/// `update` has something to merge and `accept` something to refuse or land).
fn proven_effort(fixture: &Fixture) -> PathBuf {
    let run = fixture.run(&["start", "--name", "e1", "--json"]);
    assert_eq!(run.json()["ok"], true, "{}", run.stdout);
    let effort = fixture.repo.parent().join("repo.worktrees/e1");
    std::fs::write(effort.join("src/new.rs"), "pub fn n() {}\n").unwrap();
    git_in(fixture, &effort, &["add", "-A"]);
    git_in(fixture, &effort, &["commit", "-q", "-m", "work"]);
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
        assert_eq!(json["error"], "precondition_failed", "{args:?}: {json}");
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
