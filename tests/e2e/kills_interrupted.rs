//! A pin interrupted between its steps: every writing verb (update, accept, a commit on top)
//! settles it first, never wedging the worktree.

use std::path::Path;

use crate::support::Fixture;
use crate::support::config::Config;

/// A pin interrupted after its branch moved, then `update`: the update finishes the pin first
/// (as every writing verb does) and merges on top of it. It used to refuse the tree as dirty
/// with discern's own half-written discern.toml, and an agent that followed its hint ("commit
/// your changes") reverted the pin and wedged the worktree: every later writing call was
/// refused with "neither its tip nor its parent" (found by the soak test).
#[test]
fn an_update_after_an_interrupted_pin_finishes_the_pin_first() {
    let fixture = Fixture::new(Config::landing());
    let (effort, before) = interrupted_pin(&fixture, "p");
    let pin = fixture.git_out(&effort, &["rev-parse", "HEAD"]);
    assert_ne!(pin, before, "the branch moved to the pin");
    fixture.repo.write("NEWS.md", "trunk moves on\n");
    let trunk = fixture.repo.commit("trunk work");

    let json = fixture.run_in(&effort, &["update", "--json"], &[]).json();
    assert_eq!(json["ok"], true, "{json}");
    let parents = fixture.git_out(&effort, &["rev-list", "--parents", "-n", "1", "HEAD"]);
    assert!(parents.ends_with(&format!("{pin} {trunk}")), "{parents}");
    assert_settled(&fixture, &effort);
    assert_eq!(fixture.git_out(&effort, &["status", "--porcelain"]), "");
    assert_eq!(
        fixture.git_out(&effort, &["diff", "--name-only", &before, &pin]),
        "discern.toml"
    );
    let json = fixture.run_in(&effort, &["done", "--json"], &[]).json();
    assert_eq!(json["ok"], true, "{json}");
}

/// A pin interrupted after its branch moved, then `accept`: accept settles the pin first, so
/// its refusal (the Proof is for the commit before the pin) names the gate, never "commit your
/// changes" of discern's own half-written discern.toml (found by the soak test).
#[test]
fn an_accept_after_an_interrupted_pin_finishes_the_pin_first() {
    let fixture = Fixture::new(Config::landing());
    let (effort, _) = interrupted_pin(&fixture, "q");
    let json = fixture
        .run_in(&effort, &["accept", "--confirmed", "--json"], &[])
        .json();
    assert_ne!(json["error"], "dirty_worktree", "{json}");
    assert_eq!(fixture.git_out(&effort, &["status", "--porcelain"]), "");
    assert_settled(&fixture, &effort);
    for args in [
        &["done", "--json"][..],
        &["accept", "--confirmed", "--json"],
    ] {
        let json = fixture.run_in(&effort, args, &[]).json();
        assert_eq!(json["ok"], true, "{args:?}: {json}");
    }
}

/// A pin interrupted after its branch moved, then a plain `git commit -a` before any discern
/// call (committing what the half-synced tree shows): the pin's commit is in the branch's
/// history, so the next writing call finishes it instead of wedging the worktree.
#[test]
fn a_commit_on_top_of_an_interrupted_pin_does_not_wedge_the_worktree() {
    let fixture = Fixture::new(Config::landing());
    let (effort, _) = interrupted_pin(&fixture, "q");
    fixture.git_in(&effort, &["commit", "-q", "-am", "what the tree showed"]);
    let json = fixture.run_in(&effort, &["done", "--json"], &[]).json();
    assert_eq!(json["ok"], true, "{json}");
    assert_settled(&fixture, &effort);
}

/// Every writing verb settles a transaction a crash interrupted before it acts (the table's
/// preflight, one for all), whatever it goes on to do or refuse. `accept` recovers itself (its
/// own landing finished is its result; tested beside landings), and `resolve` and the merge
/// driver run inside git's merge, where recovering would write under it.
#[test]
fn every_writing_verb_settles_an_interrupted_transaction_first() {
    let runs: &[(&str, &[&str])] = &[
        ("start", &["start", "--name", "other"]),
        ("prepare", &["prepare"]),
        ("done", &["done"]),
        ("update", &["update"]),
        ("approve", &["approve"]),
        ("test", &["test"]),
        ("standards", &["standards"]),
        ("init", &["init"]),
        ("abandon", &["abandon", "nobody"]),
        ("sync", &["sync"]),
        ("setup", &["setup"]),
        ("doctor", &["doctor"]),
        ("agents", &["agents", "--client", "claude"]),
    ];
    let exempt = ["accept", "resolve", "merge-driver"];
    let writing: std::collections::BTreeSet<&str> = discern::verbs::TABLE
        .iter()
        .map(|e| e.info())
        .filter(|i| i.writes && !exempt.contains(&i.name))
        .map(|i| i.name)
        .collect();
    let walked: std::collections::BTreeSet<&str> = runs.iter().map(|(verb, _)| *verb).collect();
    assert_eq!(writing, walked, "every writing verb is walked");
    for (verb, args) in runs {
        let fixture = Fixture::new(Config::landing());
        let (effort, _) = interrupted_pin(&fixture, "q");
        let mut args = args.to_vec();
        args.push("--json");
        let run = fixture.run_in(&effort, &args, &[]);
        assert!(!run.stdout.is_empty(), "{verb}: {}", run.stderr);
        assert_settled(&fixture, &effort);
    }
}

/// An effort `name` with one commit, whose `--pin` was killed once its branch moved; the
/// effort's path and its commit before the pin.
fn interrupted_pin(fixture: &Fixture, name: &str) -> (std::path::PathBuf, String) {
    let json = fixture.run(&["start", "--name", name, "--json"]).json();
    let effort = std::path::PathBuf::from(json["data"]["path"].as_str().unwrap());
    std::fs::write(effort.join("src/effort.rs"), "pub fn e() {}\n").unwrap();
    fixture.git_in(&effort, &["add", "-A"]);
    fixture.git_in(&effort, &["commit", "-q", "-m", "effort work"]);
    let before = fixture.git_out(&effort, &["rev-parse", "HEAD"]);
    let run = fixture.run_in(
        &effort,
        &["standards", "--pin", "--json"],
        &[("DISCERN_FAULT", discern::testing::commit::step::REF_MOVED)],
    );
    assert_ne!(run.code, 0, "the fault hook stops it");
    (effort, before)
}

/// The effort's config transaction journal is gone: the interrupted pin is settled.
fn assert_settled(fixture: &Fixture, effort: &Path) {
    let git_dir = fixture.git_out(effort, &["rev-parse", "--absolute-git-dir"]);
    assert!(
        !Path::new(&git_dir)
            .join("discern/config-transaction.json")
            .exists(),
        "the pin's journal is settled"
    );
}
