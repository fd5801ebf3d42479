//! Release branches: `[repository].release = ["release/*"]` on the trunk makes each
//! `release/…` branch a protected line of its own. A pull request to `release/1.x` is judged
//! against `release/1.x` (CI fetches the base branch, as the README's workflow does with
//! `GITHUB_BASE_REF`), the owner approves it against that line, `update` brings that line in,
//! push CI on the line judges it since the push's `before`, and a backport (a trunk fix
//! cherry-picked onto the line through a pull request) lands the same way.

use std::path::PathBuf;

use serde_json::Value;

use crate::forge::BREACH;
use crate::support::Fixture;
use crate::support::config::{Config, strings};
use crate::support::forge::{File, Forge, REASON, passes};

const LINE: &str = "release/1.x";

/// The landing config whose trunk declares the release lines `release/*`.
fn released_config() -> Config {
    Config::landing().repository("release", strings(&["release/*"]))
}

/// A forge whose trunk declares release lines, `release/1.x` cut from it, and the trunk moved
/// on after the cut (a fix to `src/main.rs`, to be backported); the fix's commit.
fn released() -> (Forge, String) {
    let forge = Forge::new(released_config().signed(), &[]);
    let o = &forge.owner;
    forge.git(
        o,
        &["push", "-q", "origin", &format!("main:refs/heads/{LINE}")],
    );
    std::fs::write(o.join("src/main.rs"), "fn main() {\n    lib::b();\n}\n").unwrap();
    forge.git(o, &["commit", "-q", "-am", "Fix: main calls b"]);
    forge.git(o, &["push", "-q", "origin", "main"]);
    let fix = forge.out(o, &["rev-parse", "HEAD"]);
    forge.git(o, &["fetch", "-q", "origin"]);
    (forge, fix)
}

/// A CI clone of `rev` as the README's workflow makes it for a pull request to `base` (or a push
/// to it): the trunk and the base branch fetched.
fn ci_for(forge: &Forge, name: &str, rev: &str, base: &str) -> PathBuf {
    let clone = forge.ci_checkout(name, rev);
    let refspec = format!("+refs/heads/{base}:refs/remotes/origin/{base}");
    forge.git(&clone, &["fetch", "-q", "origin", &refspec]);
    clone
}

/// PR CI on `branch`, whose base is the release line.
fn pr_ci(forge: &Forge, branch: &str) -> (i32, Value) {
    let clone = ci_for(forge, "release-pr", &format!("refs/heads/{branch}"), LINE);
    let env = [("CI", "true"), ("GITHUB_BASE_REF", LINE)];
    let run = forge.fixture.run_in(&clone, &["standards", "--json"], &env);
    (run.code, run.json())
}

/// Merge `branch` into the release line by the merge button; push CI on the line after it.
fn land_on_line(forge: &Forge, branch: &str) -> (i32, Value) {
    let bot = forge.bot();
    forge.git(
        &bot,
        &["checkout", "-q", "-B", LINE, &format!("origin/{LINE}")],
    );
    let before = forge.out(&bot, &["rev-parse", "HEAD"]);
    let merge = [
        "merge",
        "-q",
        "--no-ff",
        "-m",
        "Merge",
        &format!("origin/{branch}"),
    ];
    forge.git(&bot, &merge);
    forge.git(&bot, &["push", "-q", "origin", LINE]);
    let clone = ci_for(forge, "release-push", &format!("refs/heads/{LINE}"), LINE);
    let args = ["standards", "--baseline", &before, "--json"];
    let run = forge.fixture.run_in(&clone, &args, &[("CI", "true")]);
    (run.code, run.json())
}

/// The contributor's branch `name` off the release line, `files` committed; pushed.
fn branch_of_line(forge: &Forge, name: &str, files: &[File]) {
    let c = &forge.contributor;
    forge.git(c, &["fetch", "-q", "origin"]);
    forge.git(
        c,
        &["checkout", "-q", "-B", name, &format!("origin/{LINE}")],
    );
    for (file, content) in files {
        std::fs::write(c.join(file), content).unwrap();
    }
    forge.git(c, &["add", "-A"]);
    forge.git(c, &["commit", "-q", "-m", &format!("work on {name}")]);
}

#[test]
fn a_pull_request_to_a_release_line_is_judged_approved_and_landed_against_that_line() {
    let (forge, _) = released();
    branch_of_line(&forge, "rel-more", BREACH);
    let c = &forge.contributor;
    let propose = ["standards", "propose", "todo", "--reason", REASON, "--json"];
    let (code, json) = forge.discern(c, &propose, false);
    assert_eq!(code, 0, "{json}");
    forge.git(c, &["push", "-q", "origin", "rel-more"]);
    let (code, json) = pr_ci(&forge, "rel-more");
    assert_eq!(
        (code, json["error"].clone()),
        (1, "awaiting_standard_approval".into()),
        "{json}"
    );
    assert_eq!(json["data"]["limits"]["trunk"], LINE, "{json}");
    // The owner approves it by its remote-tracking ref, against the line it came from.
    let o = &forge.owner;
    forge.git(o, &["fetch", "-q", "origin"]);
    let head = forge.out(o, &["rev-parse", "origin/rel-more"]);
    let key = forge.keys.owner.to_str().unwrap();
    let approve = [
        "approve",
        "origin/rel-more",
        "--head",
        &head,
        "--key",
        key,
        "--json",
    ];
    let (code, json) = forge.discern(o, &approve, false);
    assert_eq!(code, 0, "{json}");
    forge.git(o, &["push", "-q", "origin", "rel-more"]);
    let (code, json) = pr_ci(&forge, "rel-more");
    assert_eq!(code, 0, "PR CI with the approval: {json}");
    assert_eq!(json["data"]["limits"]["status"], "approved", "{json}");
    let (code, json) = land_on_line(&forge, "rel-more");
    assert_eq!(code, 0, "push CI on the line: {json}");
    assert_eq!(json["data"]["limits"]["status"], "approved", "{json}");
    // `update` on another branch of the line brings in the line, not the trunk.
    branch_of_line(&forge, "rel-other", &[("src/other.rs", b"pub fn o() {}\n")]);
    forge.git(c, &["reset", "-q", "--hard", "HEAD"]);
    let (code, json) = forge.discern(c, &["update", "--json"], false);
    assert_eq!(code, 0, "{json}");
    assert!(c.join("src/more.rs").exists(), "the line's landing came in");
    let main = std::fs::read_to_string(c.join("src/main.rs")).unwrap();
    assert!(
        !main.contains("lib::b"),
        "the trunk's later fix stayed out: {main}"
    );
}

#[test]
fn a_backport_cherry_picked_onto_a_release_line_passes_pr_and_push_ci() {
    let (forge, fix) = released();
    let c = &forge.contributor;
    forge.git(c, &["fetch", "-q", "origin"]);
    forge.git(
        c,
        &[
            "checkout",
            "-q",
            "-B",
            "backport-fix",
            &format!("origin/{LINE}"),
        ],
    );
    forge.git(c, &["cherry-pick", "-x", &fix]);
    forge.git(c, &["push", "-q", "origin", "backport-fix"]);
    let (code, json) = pr_ci(&forge, "backport-fix");
    assert_eq!(code, 0, "PR CI of the backport: {json}");
    assert_eq!(json["data"]["limits"]["trunk"], LINE, "{json}");
    passes("push CI on the line", land_on_line(&forge, "backport-fix"));
}

#[test]
fn an_effort_started_from_a_release_line_is_proven_against_it_and_lands_on_it() {
    let fixture = Fixture::new(released_config());
    fixture.repo.git(&["branch", LINE]);
    fixture
        .repo
        .write("src/main.rs", "fn main() {\n    lib::b();\n}\n");
    let main = fixture.repo.commit("the trunk moves on");
    let start = [
        "start",
        "--name",
        "rel",
        "--title",
        "Release work",
        "--from",
        LINE,
        "--json",
    ];
    let json = fixture.run(&start).json();
    assert_eq!(json["ok"], true, "{json}");
    let effort = PathBuf::from(json["data"]["path"].as_str().unwrap());
    std::fs::write(effort.join("src/rel.rs"), "pub fn r() {}\n").unwrap();
    fixture.git_in(&effort, &["add", "-A"]);
    fixture.git_in(&effort, &["commit", "-q", "-m", "release work"]);
    let head = fixture.git_out(&effort, &["rev-parse", "HEAD"]);
    let done = fixture.run_in(&effort, &["done", "--json"], &[]).json();
    assert_eq!(done["ok"], true, "{done}");
    // The owner's status counts it against its line, which did not move: not behind.
    let status = fixture.run(&["status", "--all", "--json"]).json();
    let row = status["data"]["fleet"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["id"] == "rel"))
        .unwrap_or_else(|| panic!("{status}"));
    assert_eq!(row["line"], LINE, "{row}");
    assert_eq!(row["behind"], 0, "{row}");
    assert_eq!(row["ahead"], 1, "{row}");
    let accept = ["accept", "--confirmed", "--json"];
    let landed = fixture.run_in(&effort, &accept, &[]).json();
    assert_eq!(landed["ok"], true, "{landed}");
    assert_eq!(fixture.repo.git(&["rev-parse", LINE]).trim(), head);
    assert_eq!(fixture.repo.git(&["rev-parse", "main"]).trim(), main);
}

/// A release line just cut, at the trunk's own commit, cannot be told from the trunk by its
/// history: its first push CI is judged against it because the push names it.
#[test]
fn a_release_lines_first_push_is_judged_against_the_line_the_push_names() {
    let forge = Forge::new(released_config().signed(), &[]);
    let o = &forge.owner;
    let line = "release/2.x";
    forge.git(
        o,
        &["push", "-q", "origin", &format!("main:refs/heads/{line}")],
    );
    let clone = ci_for(&forge, "first-push", &format!("refs/heads/{line}"), line);
    let zero = "0".repeat(40);
    let args = ["standards", "--baseline", &zero, "--json"];
    let git_ref = format!("refs/heads/{line}");
    let pushed = [
        ("CI", "true"),
        ("GITHUB_EVENT_NAME", "push"),
        ("GITHUB_REF", git_ref.as_str()),
    ];
    let run = forge.fixture.run_in(&clone, &args, &pushed);
    let json = run.json();
    assert_eq!(run.code, 0, "{json}");
    assert_eq!(json["data"]["limits"]["trunk"], line, "{json}");
    // Without the push's name, the same commit is the trunk's.
    let run = forge.fixture.run_in(&clone, &args, &[("CI", "true")]);
    let json = run.json();
    assert_eq!(run.code, 0, "{json}");
    assert_eq!(json["data"]["limits"]["trunk"], "main", "{json}");
}

/// A branch of a line proposes and withdraws against the line's limit, not the trunk's: the
/// line tightened after it was cut.
#[test]
fn a_branch_of_a_release_line_proposes_and_withdraws_against_the_lines_limit() {
    let (forge, _) = released();
    let o = &forge.owner;
    forge.git(
        o,
        &["checkout", "-q", "-B", LINE, &format!("origin/{LINE}")],
    );
    let config = std::fs::read_to_string(o.join("discern.toml")).unwrap();
    let tightened = config.replacen("limit = 5", "limit = 3", 1);
    assert_ne!(config, tightened);
    std::fs::write(o.join("discern.toml"), tightened).unwrap();
    forge.git(o, &["commit", "-q", "-am", "Tighten todo on the line"]);
    forge.git(o, &["push", "-q", "origin", LINE]);
    branch_of_line(&forge, "rel-loose", BREACH);
    let c = &forge.contributor;
    let propose = ["standards", "propose", "todo", "--reason", REASON, "--json"];
    let (code, json) = forge.discern(c, &propose, false);
    assert_eq!(code, 0, "{json}");
    let text = std::fs::read_to_string(c.join("discern.toml")).unwrap();
    assert!(text.contains("limit = 6"), "{text}");
    let message = forge.out(c, &["log", "-1", "--format=%B"]);
    let trailer = message
        .lines()
        .find_map(|l| l.strip_prefix("Discern-Proposal: "))
        .unwrap_or_else(|| panic!("{message}"));
    let trailer: Value = serde_json::from_str(trailer).unwrap();
    assert_eq!(trailer["trunk_limit"], 3.0, "the line's limit: {message}");
    let (code, json) = forge.discern(c, &["standards", "withdraw", "--json"], false);
    assert_eq!(code, 0, "{json}");
    let text = std::fs::read_to_string(c.join("discern.toml")).unwrap();
    assert!(
        text.contains("limit = 3"),
        "back to the line's limit: {text}"
    );
}
