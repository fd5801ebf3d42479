//! `discern abandon`: an effort's worktree and branch removed in one journaled transaction;
//! work that would be lost (uncommitted changes, commits on no remote and not on the trunk)
//! only with `--force`; killed midway, finished by the next writing call.

use std::path::{Path, PathBuf};

use crate::support::Fixture;
use crate::support::config::Config;

fn started(fixture: &Fixture, name: &str) -> PathBuf {
    let json = fixture
        .run(&["start", "--name", name, "--title", "Try", "--json"])
        .json();
    assert_eq!(json["ok"], true, "{json}");
    PathBuf::from(json["data"]["path"].as_str().unwrap())
}

fn branch_exists(fixture: &Fixture, branch: &str) -> bool {
    let out = fixture.git_out(fixture.path(), &["branch", "--list", branch]);
    !out.trim().is_empty()
}

fn journals_left(fixture: &Fixture) -> usize {
    let dir = fixture.path().join(".git/discern/abandons");
    std::fs::read_dir(dir).map_or(0, |d| d.count())
}

fn commit_in(fixture: &Fixture, path: &Path, file: &str) {
    std::fs::create_dir_all(path.join("src")).unwrap();
    std::fs::write(path.join(file), "pub fn tried() {}\n").unwrap();
    fixture.git_in(path, &["add", "-A"]);
    fixture.git_in(path, &["commit", "-q", "-m", "a try"]);
}

#[test]
fn an_effort_with_nothing_to_lose_is_abandoned_whole() {
    let fixture = Fixture::new(Config::landing());
    let path = started(&fixture, "idle");
    let json = fixture.run(&["abandon", "idle", "--json"]).json();
    assert_eq!(json["ok"], true, "{json}");
    assert!(!path.exists(), "the worktree is removed");
    assert!(
        !branch_exists(&fixture, "agent/idle"),
        "the branch is deleted"
    );
    assert_eq!(journals_left(&fixture), 0);
    let status = fixture.run(&["status", "--json"]).json();
    assert!(!status.to_string().contains("agent/idle"), "{status}");
}

#[test]
fn work_that_would_be_lost_is_refused_and_discarded_only_with_force() {
    let fixture = Fixture::new(Config::landing());
    let path = started(&fixture, "tried");
    commit_in(&fixture, &path, "src/tried.rs");
    std::fs::write(path.join("notes.txt"), "uncommitted\n").unwrap();
    let json = fixture.run(&["abandon", "tried", "--json"]).json();
    assert_eq!(json["ok"], false, "{json}");
    let message = json["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("1 uncommitted change(s) (notes.txt)")
            && message.contains("1 commit(s) on no remote and not on the trunk"),
        "{json}"
    );
    assert!(
        json.to_string().contains("discern abandon tried --force"),
        "{json}"
    );
    assert!(path.join("notes.txt").exists() && branch_exists(&fixture, "agent/tried"));

    let dry = fixture
        .run(&["abandon", "tried", "--force", "--dry-run", "--json"])
        .json();
    assert_eq!(dry["ok"], true, "{dry}");
    assert!(path.exists(), "a dry run removes nothing");

    let json = fixture
        .run(&["abandon", "tried", "--force", "--json"])
        .json();
    assert_eq!(json["ok"], true, "{json}");
    assert_eq!(json["data"]["discarded_commits"], 1, "{json}");
    assert!(!path.exists() && !branch_exists(&fixture, "agent/tried"));
}

#[test]
fn pushed_work_is_not_lost_so_it_needs_no_force() {
    let fixture = Fixture::new(Config::landing());
    let path = started(&fixture, "pushed");
    commit_in(&fixture, &path, "src/pushed.rs");
    // A remote-tracking ref holds the commit: nothing is lost by deleting the branch.
    fixture.git_in(
        &path,
        &["update-ref", "refs/remotes/origin/agent/pushed", "HEAD"],
    );
    let json = fixture.run_in(&path, &["abandon", "--json"], &[]).json();
    assert_eq!(json["ok"], true, "{json}");
    assert!(!path.exists());
}

#[test]
fn an_abandon_killed_midway_is_finished_by_the_next_writing_call() {
    let fixture = Fixture::new(Config::landing());
    for step in ["abandon-journal-written", "abandon-worktree-removed"] {
        let name = format!("killed-{}", step.len());
        let path = started(&fixture, &name);
        let killed = fixture.run_with(&["abandon", &name], &[("DISCERN_FAULT", step)]);
        assert_ne!(killed.code, 0, "{step}: the fault kills the run");
        assert_eq!(journals_left(&fixture), 1, "{step}");
        let status = fixture.run(&["status", "--json"]).json();
        assert!(
            status.to_string().contains("interrupted abandon"),
            "{step}: {status}"
        );
        // Any writing verb finishes it first.
        let json = fixture
            .run(&["start", "--name", "next", "--title", "Next", "--json"])
            .json();
        assert_eq!(json["ok"], true, "{step}: {json}");
        assert!(
            json.to_string().contains("interrupted abandon"),
            "{step}: {json}"
        );
        assert!(!path.exists(), "{step}: the worktree is gone");
        assert!(!branch_exists(&fixture, &format!("agent/{name}")), "{step}");
        assert_eq!(journals_left(&fixture), 0, "{step}");
        let json = fixture.run(&["abandon", "next", "--json"]).json();
        assert_eq!(json["ok"], true, "{json}");
    }
}

#[test]
fn the_main_checkout_is_never_abandoned() {
    let fixture = Fixture::new(Config::landing());
    let json = fixture.run(&["abandon", "--json"]).json();
    assert_eq!(json["ok"], false, "{json}");
    assert!(json.to_string().contains("discern abandon ID"), "{json}");
}

#[test]
fn the_effort_is_named_with_effort_as_approve_and_accept_name_it() {
    let fixture = Fixture::new(Config::landing());
    let path = started(&fixture, "flagged");
    let both = fixture.run(&["abandon", "flagged", "--effort", "flagged", "--json"]);
    assert_eq!(both.code, 2, "one name, not two: {}", both.stderr);
    assert!(path.exists());
    let json = fixture
        .run(&["abandon", "--effort", "flagged", "--json"])
        .json();
    assert_eq!(json["ok"], true, "{json}");
    assert!(!path.exists() && !branch_exists(&fixture, "agent/flagged"));
}
