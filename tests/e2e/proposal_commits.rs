//! Proposals travel with their commit: a CI clone recognises a recorded proposal, a reset
//! never wedges a branch, and `standards withdraw` is the way out of existing proposal state.

use serde_json::Value;

use crate::support::Fixture;
use crate::support::config::{Config, Standard};

fn config() -> Config {
    let readme = Standard::pattern("readme_todo", "TODO", &["README.md"]).limit(5);
    let fixme = Standard::pattern("fixme", "FIXME", &["src/**"]).limit(0);
    Config::new()
        .standard(readme)
        .standard(Standard::todo(2))
        .standard(fixme)
}

const TODO_REASON: &str = "The new module lists three planned extension points.";
const FIXME_REASON: &str = "The parser keeps one known gap until the grammar settles.";

/// A branch `agent/x` whose work breaches both Standards (todo 2 → 5, fixme 0 → 1).
fn breaching() -> Fixture {
    let fixture = Fixture::new(config());
    fixture.repo.git(&["checkout", "-q", "-b", "agent/x"]);
    fixture.repo.write(
        "src/more.rs",
        "// TODO 1\n// TODO 2\n// TODO 3\n// FIXME one gap\n",
    );
    fixture.repo.commit("work that breaches");
    fixture
}

fn propose(fixture: &Fixture, name: &str, reason: &str) -> Value {
    fixture
        .run(&["standards", "propose", name, "--reason", reason, "--json"])
        .json()
}

fn batch(fixture: &Fixture, items: &[(&str, &str)]) -> Value {
    let file = fixture.repo.parent().join("batch.json");
    let list: Vec<Value> = items
        .iter()
        .map(|(name, reason)| serde_json::json!({ "name": name, "reason": reason }))
        .collect();
    std::fs::write(&file, serde_json::to_string(&list).unwrap()).unwrap();
    fixture
        .run(&[
            "standards",
            "propose",
            "--batch",
            file.to_str().unwrap(),
            "--json",
        ])
        .json()
}

#[test]
fn a_proposal_commit_carries_its_records_and_a_ci_clone_recognises_it() {
    let fixture = breaching();
    let json = batch(&fixture, &[("todo", TODO_REASON), ("fixme", FIXME_REASON)]);
    assert_eq!(json["ok"], true, "{json}");
    let message = fixture.repo.git(&["log", "-1", "--format=%B"]);
    let trailers: Vec<Value> = message
        .lines()
        .filter_map(|l| l.strip_prefix("Discern-Proposal: "))
        .map(|j| serde_json::from_str(j).unwrap())
        .collect();
    assert_eq!(trailers.len(), 2, "{message}");
    let todo = trailers.iter().find(|t| t["standard"] == "todo").unwrap();
    assert_eq!(todo["trunk_limit"], 2.0);
    assert_eq!(todo["proposed_limit"], 5.0);
    assert_eq!(todo["reason"], TODO_REASON);
    assert_eq!(
        todo["token"],
        discern::testing::proposals::approval_token("todo", 5.0, TODO_REASON).as_str()
    );
    // git itself reads them as trailers.
    let parsed = fixture.repo.git(&[
        "log",
        "-1",
        "--format=%(trailers:key=Discern-Proposal,valueonly)",
    ]);
    assert_eq!(
        parsed.lines().filter(|l| !l.is_empty()).count(),
        2,
        "{parsed}"
    );

    // A fresh clone has no local records, only the commits.
    let clone = fixture.repo.parent().join("ci");
    fixture.git_in(
        fixture.repo.parent(),
        &[
            "clone",
            "-q",
            "--branch",
            "agent/x",
            fixture.path().to_str().unwrap(),
            clone.to_str().unwrap(),
        ],
    );
    fixture.git_in(&clone, &["checkout", "-q", "--detach"]);
    let local = fixture.run_in(&clone, &["standards", "--json"], &[]);
    assert_eq!(local.code, 0, "{}", local.stdout);
    assert_eq!(local.json()["data"]["limits"]["status"], "proposed");
    let ci = fixture.run_in(&clone, &["standards", "--json"], &[("CI", "true")]);
    assert_eq!(ci.code, 1, "{}", ci.stdout);
    let json = ci.json();
    assert_eq!(json["error"], "awaiting_standard_approval", "{json}");
    assert_eq!(json["data"]["limits"]["status"], "proposed");

    // A clone whose branch changed a proposed limit afterwards is a loosening again.
    fixture.git_in(&clone, &["checkout", "-q", "agent/x"]);
    let config = std::fs::read_to_string(clone.join("discern.toml")).unwrap();
    std::fs::write(
        clone.join("discern.toml"),
        config.replace("limit = 5", "limit = 6"),
    )
    .unwrap();
    fixture.git_in(&clone, &["commit", "-q", "-am", "more room"]);
    let json = fixture.run_in(&clone, &["standards", "--json"], &[]).json();
    assert_eq!(json["data"]["limits"]["status"], "loosened", "{json}");
}

#[test]
fn deleting_the_local_records_never_drops_what_accept_must_approve() {
    let fixture = Fixture::new(config());
    let started = fixture.run(&["start", "--name", "breach", "--title", "Breach", "--json"]);
    let json = started.json();
    assert_eq!(json["ok"], true, "{}", started.stdout);
    let effort = std::path::PathBuf::from(json["data"]["path"].as_str().unwrap());
    std::fs::write(
        effort.join("src/more.rs"),
        "// TODO 1\n// TODO 2\n// TODO 3\n",
    )
    .unwrap();
    fixture.git_in(&effort, &["add", "-A"]);
    fixture.git_in(&effort, &["commit", "-q", "-m", "work that breaches"]);
    let run = |args: &[&str]| fixture.run_in(&effort, args, &[]).json();
    let json = run(&[
        "standards",
        "propose",
        "todo",
        "--reason",
        TODO_REASON,
        "--json",
    ]);
    assert_eq!(json["ok"], true, "{json}");
    let done = run(&["done", "--json"]);
    assert_eq!(done["ok"], true, "{done}");
    assert!(
        done["steps"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["label"] != "pin"),
        "no pin is stacked on live proposals: {done}"
    );

    // The agent deletes its worktree's records: the commit still says what was proposed.
    let git_dir = fixture.repo.git(&[
        "-C",
        effort.to_str().unwrap(),
        "rev-parse",
        "--absolute-git-dir",
    ]);
    std::fs::remove_file(
        std::path::Path::new(git_dir.trim()).join("discern/standard-limit-proposals.json"),
    )
    .unwrap();
    let status = run(&["status", "--json"]);
    assert!(
        status.to_string().contains("\"proposed_limit\":5.0"),
        "{status}"
    );
    assert_eq!(
        run(&["standards", "--json"])["data"]["limits"]["status"],
        "proposed"
    );
    let json = run(&["accept", "--confirmed", "--json"]);
    assert_eq!(json["error"], "awaiting_standard_approval", "{json}");
    assert_eq!(
        json["data"]["standard_approvals_required"][0]["token"],
        discern::testing::proposals::approval_token("todo", 5.0, TODO_REASON).as_str()
    );
}

#[test]
fn a_reset_proposal_is_orphaned_and_cleared_by_the_next_batch() {
    let fixture = breaching();
    assert_eq!(propose(&fixture, "todo", TODO_REASON)["ok"], true);
    fixture.repo.git(&["reset", "-q", "--hard", "HEAD~1"]);
    let json = batch(&fixture, &[("todo", TODO_REASON), ("fixme", FIXME_REASON)]);
    assert_eq!(
        json["ok"], true,
        "the orphan does not wedge the branch: {json}"
    );
    assert_eq!(json["data"]["proposal_batch"]["status"], "recorded");
    assert!(
        json["steps"][0]["note"]
            .as_str()
            .unwrap_or_default()
            .starts_with("Cleared orphaned proposal(s) todo"),
        "{json}"
    );
}

#[test]
fn withdraw_reverts_every_proposed_limit_then_one_batch_proposes_them_together() {
    let fixture = breaching();
    assert_eq!(propose(&fixture, "todo", TODO_REASON)["ok"], true);
    let refused = batch(&fixture, &[("todo", TODO_REASON), ("fixme", FIXME_REASON)]);
    assert_eq!(refused["error"], "proposal_stale", "{refused}");
    assert_eq!(
        refused["hints"][0]["action"]["verb"], "standards withdraw",
        "the refusal names the way out: {refused}"
    );

    let dry = fixture
        .run(&["standards", "withdraw", "--dry-run", "--json"])
        .json();
    assert_eq!(dry["dry_run"], true, "{dry}");
    let before = fixture.repo.head();
    assert_eq!(fixture.repo.head(), before, "a dry run writes nothing");

    let json = fixture.run(&["standards", "withdraw", "--json"]).json();
    assert_eq!(json["ok"], true, "{json}");
    assert_eq!(json["data"]["withdrawn"], serde_json::json!(["todo"]));
    assert_eq!(json["data"]["reverted"][0]["to"], 2.0);
    let changed = fixture.repo.git(&["diff", "--name-only", "HEAD~1", "HEAD"]);
    assert_eq!(changed.trim(), "discern.toml", "one config-only commit");
    let message = fixture.repo.git(&["log", "-1", "--format=%B"]);
    assert!(message.contains("Discern-Withdrawn: todo"), "{message}");
    assert!(
        !fixture
            .path()
            .join(".git/discern/standard-limit-proposals.json")
            .exists()
    );

    let json = batch(&fixture, &[("todo", TODO_REASON), ("fixme", FIXME_REASON)]);
    assert_eq!(json["ok"], true, "{json}");
    assert_eq!(json["data"]["proposal_batch"]["status"], "recorded");
    assert_eq!(
        json["data"]["proposal_batch"]["proposals"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

/// Work that moved a proposed metric again cannot renew the proposal; the refusal names the
/// way out (withdraw), and a new proposal at the new value goes through (found by the soak test).
#[test]
fn a_proposal_whose_metric_moved_again_names_withdraw_as_the_way_out() {
    let fixture = breaching();
    assert_eq!(propose(&fixture, "todo", TODO_REASON)["ok"], true);
    fixture.repo.write("src/again.rs", "// TODO 4\n");
    fixture.repo.commit("one more");
    let refused = propose(&fixture, "todo", TODO_REASON);
    assert_eq!(refused["error"], "proposal_stale", "{refused}");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("not the recorded"),
        "{refused}"
    );
    assert_eq!(
        refused["hints"][0]["action"]["verb"], "standards withdraw",
        "the refusal names the way out: {refused}"
    );
    let json = fixture.run(&["standards", "withdraw", "--json"]).json();
    assert_eq!(json["ok"], true, "{json}");
    let json = propose(&fixture, "todo", TODO_REASON);
    assert_eq!(json["ok"], true, "{json}");
    assert_eq!(json["data"]["proposal_batch"]["status"], "recorded");
}

/// `withdraw` restores the limit the branch is judged against today — the trunk's at its merge
/// base — not the one the proposal remembers: after the trunk tightened (2 → 1) and the branch
/// merged it, restoring the remembered 2 would be a loosening nobody approved.
#[test]
fn withdraw_restores_the_trunks_limit_at_todays_merge_base() {
    let fixture = breaching();
    assert_eq!(propose(&fixture, "todo", TODO_REASON)["ok"], true);
    fixture.repo.git(&["checkout", "-q", "main"]);
    let tightened = std::fs::read_to_string(fixture.path().join("discern.toml"))
        .unwrap()
        .replace("limit = 2\n", "limit = 1\n");
    fixture.repo.write("discern.toml", tightened);
    fixture.repo.commit("tighten todo");
    fixture.repo.git(&["checkout", "-q", "agent/x"]);
    // The branch takes the trunk in, keeping its own proposed limit.
    fixture
        .repo
        .git(&["merge", "-q", "--no-edit", "-s", "ours", "main"]);
    let json = fixture.run(&["standards", "withdraw", "--json"]).json();
    assert_eq!(json["ok"], true, "{json}");
    assert_eq!(json["data"]["reverted"][0]["from"], 5.0, "{json}");
    assert_eq!(json["data"]["reverted"][0]["to"], 1.0, "{json}");
    let message = fixture.repo.git(&["log", "-1", "--format=%B"]);
    assert!(message.contains("todo: 5 -> 1 (the trunk's)"), "{message}");
}
