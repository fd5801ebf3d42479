//! Refusals, the same on both surfaces: a checkout whose cleanliness cannot be told is refused,
//! never read as clean; every verb refuses exactly the checkouts its declared cleanliness rules
//! out; an unknown Standard is `unknown_standard` everywhere; another action's keys are refused
//! only when they ask for something.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::mcp::{call, connect};
use crate::support::Fixture;
use crate::surfaces::{config, proven_effort};

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
    let fixture = Fixture::new(config());
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
    let fixture = Fixture::new(config());
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
        let fixture = Fixture::new(config());
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
    let fixture = Fixture::new(config());
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
