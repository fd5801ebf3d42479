//! The contract: every verb's `--json` result, snapshotted through one scripted session, so a
//! change to any wire value shows up as a diff in review.

use std::path::Path;

use crate::support::Fixture;
use crate::support::config::{Config, Standard};

fn config() -> Config {
    Config::new()
        .repository("pin_on_done", "false")
        .job("lint", "test -f src/lib.rs")
        .job("test", "true")
        .standard(Standard::todo(5).margin(0))
}

/// Values that differ between runs by nature, written as placeholders.
pub(crate) fn filters(fixture: &Fixture) -> Vec<(String, String)> {
    [
        (
            regex::escape(fixture.repo.parent().to_str().unwrap()),
            "[tmp]",
        ),
        (r"[0-9a-f]{64}".to_owned(), "[sha256]"),
        (r"[0-9a-f]{40}".to_owned(), "[commit]"),
        (r"\b[0-9a-f]{12}\b".to_owned(), "[short]"),
        (r"#[0-9a-f]{8}".to_owned(), "#[identity]"),
        (r"R1-[0-9A-F-]{12}".to_owned(), "[handle]"),
        (r"C1-[0-9A-F]{4}-[0-9A-F]{4}".to_owned(), "[resume]"),
        (
            r#""duration_s": [0-9.]+"#.to_owned(),
            r#""duration_s": "[s]""#,
        ),
        (
            r#""elapsed_ms": [0-9]+"#.to_owned(),
            r#""elapsed_ms": "[ms]""#,
        ),
        (
            r#""(started|finished)_at": [0-9.]+"#.to_owned(),
            r#""$1_at": "[epoch]""#,
        ),
        (r#""pid": [0-9]+"#.to_owned(), r#""pid": "[pid]""#),
        (r"in [0-9.]+ s\b".to_owned(), "in [s] s"),
        (r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ".to_owned(), "[time]"),
        (
            r#""version": "[0-9.]+""#.to_owned(),
            r#""version": "[version]""#,
        ),
    ]
    .into_iter()
    .map(|(a, b)| (a, b.to_owned()))
    .collect()
}

#[test]
fn every_verb_json_is_snapshotted() {
    let fixture = Fixture::new(config());
    let main = fixture.path().to_owned();
    let effort = fixture.repo.parent().join("repo.worktrees/e1");
    let reason = "The new parser needs its TODO markers until the grammar settles.";
    let mut outputs: Vec<(&str, String)> = Vec::new();
    let mut json = |name: &'static str, dir: &Path, args: &[&str]| {
        let mut full = args.to_vec();
        full.push("--json");
        outputs.push((name, fixture.run_in(dir, &full, &[]).stdout));
    };
    json("status_main", &main, &["status"]);
    json("producers", &main, &["producers"]);
    json("standards", &main, &["standards"]);
    json("standards_dry_run", &main, &["standards", "--dry-run"]);
    json(
        "standards_pin_dry_run",
        &main,
        &["standards", "--pin", "--dry-run"],
    );
    json("map", &main, &["map"]);
    json(
        "start_dry_run",
        &main,
        &["start", "--name", "e1", "--dry-run"],
    );
    json(
        "start",
        &main,
        &["start", "--name", "e1", "--title", "A task"],
    );
    std::fs::write(effort.join("src/new.rs"), "pub fn n() {}\n").unwrap();
    json("prepare", &effort, &["prepare"]);
    json("test", &effort, &["test"]);
    fixture.git_in(&effort, &["add", "-A"]);
    fixture.git_in(&effort, &["commit", "-q", "-m", "work"]);
    json("status_effort", &effort, &["status"]);
    json("done_dry_run", &effort, &["done", "--dry-run"]);
    json("done", &effort, &["done"]);
    json("done_current", &effort, &["done"]);
    json("progress", &effort, &["progress"]);
    json("update", &effort, &["update"]);
    json(
        "await_not_met",
        &effort,
        &["await", "--trunk-moved", "--timeout", "0"],
    );
    json(
        "propose_dry_run",
        &effort,
        &[
            "standards",
            "propose",
            "todo",
            "--reason",
            reason,
            "--dry-run",
        ],
    );
    json("approve_dry_run", &effort, &["approve", "--dry-run"]);
    json("accept_awaiting_consent", &effort, &["accept"]);
    json(
        "accept_dry_run",
        &effort,
        &["accept", "--confirmed", "--dry-run"],
    );
    json("accept", &effort, &["accept", "--confirmed"]);
    json("standards_pin", &main, &["standards", "--pin"]);
    // `done` with gains to pin (the default): the pin step, then Proof of the pin commit.
    let pinning = Fixture::new(config().unset("repository", "pin_on_done"));
    let started = pinning.run(&["start", "--name", "e2", "--json"]).json();
    let second = std::path::PathBuf::from(started["data"]["path"].as_str().unwrap());
    std::fs::write(second.join("src/new.rs"), "pub fn n() {}\n").unwrap();
    // A gain the branch made (one TODO fewer): done pins it, leaving the trunk's headroom.
    std::fs::write(
        second.join("src/lib.rs"),
        "// TODO: one\npub fn a() {}\npub fn b() {}\n",
    )
    .unwrap();
    pinning.git_in(&second, &["add", "-A"]);
    pinning.git_in(&second, &["commit", "-q", "-m", "work"]);
    let done_pinned = pinning.run_in(&second, &["done", "--json"], &[]).stdout;
    let fresh = discern_tests::TestRepo::new();
    fresh.write("src/lib.rs", "// TODO: one\n").commit("fresh");
    let init = fixture
        .run_in(fresh.path(), &["init", "--json"], &[])
        .stdout;
    let filters = filters(&fixture);
    let fresh_root = regex::escape(fresh.parent().to_str().unwrap());
    let mut all: Vec<(&str, &str)> = filters
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    all.push((fresh_root.as_str(), "[fresh]"));
    let pinning_root = regex::escape(pinning.repo.parent().to_str().unwrap());
    all.push((pinning_root.as_str(), "[tmp]"));
    insta::with_settings!({ filters => all, snapshot_suffix => "" }, {
        for (name, output) in &outputs {
            insta::assert_snapshot!(format!("json_{name}"), output);
        }
        insta::assert_snapshot!("json_init", init);
        insta::assert_snapshot!("json_done_pinned", done_pinned);
    });
}
