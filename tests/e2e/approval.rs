//! The owner's approval is the owner's. Every loosening and every change to the gate's own
//! definition is derived from the trunk's config against HEAD's and lands only with an
//! approval the agent cannot produce by passing an argument: a signature by a key in the
//! trunk's allowed-signers file, or (without one) an answer on an interactive terminal. Each
//! attack below is refused with a clear message and lands nothing.

use std::path::PathBuf;

use serde_json::Value;

use crate::support::Fixture;
use crate::support::config::{Config, SIGNERS};
use crate::support::forge::Keys;

pub(crate) const REASON: &str = "The new module lists four planned extension points.";

fn signed_config() -> String {
    Config::landing().signed().to_string()
}

/// A trunk that requires signed approvals, with the owner's key listed.
pub(crate) fn signed_fixture() -> (Fixture, Keys) {
    let fixture = Fixture::new(signed_config());
    let keys = Keys::new(fixture.repo.parent());
    fixture.repo.write(SIGNERS, keys.owner_line());
    // Beside the config that names it, in the first commit: the gate's start (added later, it
    // would be a change of the signers no approval anchors).
    fixture.repo.git(&["add", "-A"]);
    fixture.repo.git(&["commit", "-q", "--amend", "--no-edit"]);
    (fixture, keys)
}

/// An effort `name` with `files` committed; its worktree.
pub(crate) fn effort(fixture: &Fixture, name: &str, files: &[(&str, &str)]) -> PathBuf {
    let json = fixture
        .run(&["start", "--name", name, "--title", "Attack", "--json"])
        .json();
    assert_eq!(json["ok"], true, "{json}");
    let path = PathBuf::from(json["data"]["path"].as_str().unwrap());
    for (file, content) in files {
        let full = path.join(file);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, content).unwrap();
    }
    fixture.git_in(&path, &["add", "-A"]);
    fixture.git_in(&path, &["commit", "-q", "-m", &format!("work on {name}")]);
    path
}

/// An effort whose work breaches `todo` (2 → 6 against a limit of 5), proposed and proven.
pub(crate) fn proposed_effort(fixture: &Fixture, name: &str) -> (PathBuf, String) {
    let path = effort(
        fixture,
        name,
        &[(
            "src/more.rs",
            "// TODO 1\n// TODO 2\n// TODO 3\n// TODO 4\n",
        )],
    );
    let json = fixture
        .run_in(
            &path,
            &["standards", "propose", "todo", "--reason", REASON, "--json"],
            &[],
        )
        .json();
    assert_eq!(json["ok"], true, "{json}");
    let done = fixture.run_in(&path, &["done", "--json"], &[]).json();
    assert_eq!(done["ok"], true, "{done}");
    (
        path,
        discern::testing::proposals::approval_token("todo", 6.0, REASON),
    )
}

/// The `key` of each protected change in `list`.
pub(crate) fn keys_of(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|p| p["key"].as_str().unwrap())
        .collect()
}

pub(crate) fn trunk(fixture: &Fixture) -> String {
    fixture.git_out(fixture.path(), &["rev-parse", "main"])
}

fn note(fixture: &Fixture, notes: &str, commit: &str) -> Option<Value> {
    let text = fixture.git_out(fixture.path(), &["notes", "--ref", notes, "show", commit]);
    serde_json::from_str(&text).ok()
}

#[test]
fn a_signed_approval_is_the_only_way_a_loosening_lands_and_the_trunk_check_verifies_it() {
    let (fixture, keys) = signed_fixture();
    let (path, token) = proposed_effort(&fixture, "breach");
    let before = trunk(&fixture);

    // The agent passes the token it was shown: an argument never approves.
    for args in [
        vec!["accept", "--confirmed", "--json"],
        vec![
            "accept",
            "--confirmed",
            "--approve-standard",
            &token,
            "--json",
        ],
    ] {
        let json = fixture.run_in(&path, &args, &[]).json();
        assert_eq!(json["error"], "awaiting_standard_approval", "{json}");
        assert_eq!(json["data"]["approval"], "signed");
        assert_eq!(
            json["data"]["standard_approvals_required"][0]["token"],
            token.as_str()
        );
        let hint = json["hints"][0]["text"].as_str().unwrap();
        assert!(hint.contains("discern approve --effort breach"), "{json}");
    }
    let json = fixture
        .run_in(
            &path,
            &[
                "accept",
                "--confirmed",
                "--approve-standard",
                &token,
                "--json",
            ],
            &[],
        )
        .json();
    assert!(
        json["message"].as_str().unwrap().contains("never approve"),
        "{json}"
    );
    // Answering at a terminal is no approval where the trunk requires signatures.
    let run = fixture.on_terminal(&path, &["accept", "--confirmed"], "yes\nyes\n");
    assert_ne!(run.code, 0, "{}", run.stdout);
    assert_eq!(trunk(&fixture), before);

    // A key the trunk does not list signs nothing that counts.
    let stranger = keys.attacker.to_str().unwrap();
    let reviewed = fixture.git_out(&path, &["rev-parse", "HEAD"]);
    let json = fixture
        .run(&[
            "approve", "--effort", "breach", "--head", &reviewed, "--key", stranger, "--json",
        ])
        .json();
    assert_eq!(json["ok"], false, "{json}");
    assert!(
        json["message"]
            .as_str()
            .unwrap()
            .contains("allowed signers"),
        "{json}"
    );

    // The owner's route, from the main checkout: list, sign, land.
    let json = fixture
        .run(&["approve", "--effort", "breach", "--dry-run", "--json"])
        .json();
    assert_eq!(json["ok"], true, "{json}");
    assert_eq!(
        json["data"]["required"]["proposals"][0]["token"],
        token.as_str()
    );
    let owner = keys.owner.to_str().unwrap();
    let json = fixture
        .run(&[
            "approve",
            "--effort",
            "breach",
            "--key",
            owner,
            "--token",
            &token[..8],
            "--json",
        ])
        .json();
    assert_eq!(json["ok"], true, "{json}");
    assert_eq!(json["data"]["channel"]["channel"], "signed");
    assert_eq!(json["data"]["channel"]["principal"], "owner@example.com");
    let head = fixture.git_out(&path, &["rev-parse", "HEAD"]);
    let before_landing = trunk(&fixture);
    let json = fixture
        .run(&["accept", "--effort", "breach", "--confirmed", "--json"])
        .json();
    assert_eq!(json["ok"], true, "{json}");
    assert_eq!(json["data"]["approval_channel"], "signed");
    assert_eq!(trunk(&fixture), head);
    let proof = note(&fixture, "refs/notes/discern", &head).expect("a Proof note");
    assert_eq!(proof["approval"]["channel"], "signed");
    assert!(
        proof["approval"]["fingerprint"]
            .as_str()
            .unwrap()
            .starts_with("SHA256:")
    );
    assert_eq!(proof["approved_proposals"][0]["token"], token.as_str());

    // The trunk's check from the trunk before the landing verifies the signature the approval
    // in the tree carries.
    let run = fixture.run(&["standards", "--baseline", &before_landing, "--json"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let json = run.json();
    assert_eq!(json["data"]["limits"]["status"], "approved", "{json}");
    assert!(
        json["data"]["limits"]["reason"]
            .as_str()
            .unwrap()
            .contains("owner@example.com"),
        "{json}"
    );
}

#[test]
fn forged_notes_approve_nothing_on_a_signed_trunk() {
    let (fixture, _keys) = signed_fixture();
    let config = signed_config().replace("limit = 5", "limit = 9");
    fixture.repo.write("discern.toml", &config);
    fixture.repo.commit("relax todo on main");
    let head = trunk(&fixture);
    let parent = fixture.git_out(fixture.path(), &["rev-parse", "main~1"]);
    let payload = format!("discern-approval-v1\ntrunk main\ntrunk-commit {parent}\nhead {head}\n");
    // A Proof note as a landing writes it, with an "approval" that carries no signature.
    let forged = serde_json::json!({
        "version": 1,
        "approved_proposals": [{ "standard": "todo", "trunk_limit": 5.0, "proposed_limit": 9.0, "token": "t" }],
        "approval": { "version": 1, "payload": payload, "channel": "terminal" },
    });
    fixture.git_in(
        fixture.path(),
        &[
            "notes",
            "--ref",
            "refs/notes/discern",
            "add",
            "-m",
            &forged.to_string(),
            &head,
        ],
    );
    let run = fixture.run(&["standards", "--json"]);
    assert_ne!(run.code, 0, "{}", run.stdout);
    assert_eq!(
        run.json()["data"]["limits"]["status"],
        "loosened",
        "{}",
        run.stdout
    );
}

#[test]
fn a_hand_written_approval_note_is_refused_where_signatures_are_required() {
    let (fixture, _keys) = signed_fixture();
    let (path, token) = proposed_effort(&fixture, "forge");
    let head = fixture.git_out(&path, &["rev-parse", "HEAD"]);
    let payload = format!(
        "discern-approval-v1\ntrunk main\ntrunk-commit {}\nhead {head}\ntoken {token}\n",
        trunk(&fixture)
    );
    for channel in [
        serde_json::json!({ "channel": "terminal" }),
        serde_json::json!({ "channel": "signed", "principal": "owner@example.com", "fingerprint": "SHA256:x", "signature": "-----BEGIN SSH SIGNATURE-----\nAAAA\n-----END SSH SIGNATURE-----\n" }),
    ] {
        let mut forged = serde_json::json!({ "version": 1, "payload": payload });
        forged
            .as_object_mut()
            .unwrap()
            .extend(channel.as_object().unwrap().clone());
        fixture.git_in(
            &path,
            &[
                "notes",
                "--ref",
                "refs/notes/discern-approvals",
                "add",
                "-f",
                "-m",
                &forged.to_string(),
                &head,
            ],
        );
        let json = fixture
            .run_in(&path, &["accept", "--confirmed", "--json"], &[])
            .json();
        assert_eq!(json["error"], "awaiting_standard_approval", "{json}");
        assert_ne!(trunk(&fixture), head);
    }
}

#[test]
fn interactive_approval_is_answered_on_a_terminal_and_recorded_with_its_channel() {
    let fixture = Fixture::new(Config::landing());
    // The branch drops the test job: its Proof says no test ran, and the change is protected.
    let config = Config::landing().unset("jobs", "test").to_string();
    let path = effort(&fixture, "tests-gone", &[("discern.toml", &config)]);
    let done = fixture.run_in(&path, &["done", "--json"], &[]).json();
    assert_eq!(done["ok"], true, "{done}");
    let line = done["data"]["proof_line"].as_str().unwrap();
    assert!(line.contains("no test job ran"), "{line}");
    assert!(
        line.contains("awaiting exact owner approval: jobs.test"),
        "{line}"
    );
    let head = fixture.git_out(&path, &["rev-parse", "HEAD"]);
    let refused = fixture.run_in(&path, &["accept", "--confirmed"], &[]);
    assert_ne!(refused.code, 0);
    insta::with_settings!({ filters => vec![(r"\b[0-9a-f]{12,64}\b", "[hex]")] }, {
        insta::assert_snapshot!("accept_awaiting_approval", refused.stdout);
    });

    // "no" (or no answer at all) approves nothing.
    for answers in ["no\n", "", "maybe\n"] {
        let run = fixture.on_terminal(
            fixture.path(),
            &["approve", "--effort", "tests-gone"],
            answers,
        );
        assert_ne!(run.code, 0, "{answers:?}: {}", run.stdout);
        assert!(note(&fixture, "refs/notes/discern-approvals", &head).is_none());
    }
    let run = fixture.on_terminal(
        fixture.path(),
        &["approve", "--effort", "tests-gone"],
        "yes\n",
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(
        note(&fixture, "refs/notes/discern-approvals", &head).unwrap()["channel"],
        "terminal"
    );
    let json = fixture
        .run_in(&path, &["accept", "--confirmed", "--json"], &[])
        .json();
    assert_eq!(json["ok"], true, "{json}");
    let proof = note(&fixture, "refs/notes/discern", &head).unwrap();
    assert_eq!(proof["approval"]["channel"], "terminal");
    assert_eq!(proof["approved_changes"][0]["key"], "jobs.test");
}

/// A proposal gone stale (a commit after it) is caught by `approve`, before the owner signs
/// anything: it would authorize nothing at `accept`.
#[test]
fn approve_refuses_a_stale_proposal_before_anything_is_signed() {
    let (fixture, keys) = signed_fixture();
    let (path, _) = proposed_effort(&fixture, "stale");
    std::fs::write(path.join("src/later.rs"), "pub fn later() {}\n").unwrap();
    fixture.git_in(&path, &["add", "-A"]);
    fixture.git_in(&path, &["commit", "-q", "-m", "later work"]);
    let head = fixture.git_out(&path, &["rev-parse", "HEAD"]);
    let owner = keys.owner.to_str().unwrap();
    let json = fixture
        .run(&["approve", "--effort", "stale", "--key", owner, "--json"])
        .json();
    assert_eq!(json["error"], "proposal_stale", "{json}");
    assert_eq!(
        fixture.git_out(&path, &["rev-parse", "HEAD"]),
        head,
        "nothing committed"
    );
}

/// `done` names a stale proposal as stale, with the step that renews it, before `approve` or
/// `accept` would.
#[test]
fn done_names_a_stale_proposal_as_stale() {
    let (fixture, _keys) = signed_fixture();
    let (path, _) = proposed_effort(&fixture, "stale-done");
    std::fs::write(path.join("src/later.rs"), "pub fn later() {}\n").unwrap();
    fixture.git_in(&path, &["add", "-A"]);
    fixture.git_in(&path, &["commit", "-q", "-m", "later work"]);
    let json = fixture.run_in(&path, &["done", "--json"], &[]).json();
    assert_eq!(json["ok"], false, "{json}");
    let message = json["diagnostics"][0]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(
        message.contains("proposal to loosen its ceiling 5 -> 6 is stale (HEAD is")
            && message.contains(&format!(
                "discern standards propose todo --reason '{REASON}'"
            )),
        "{json}"
    );
    // The renewal it names is the way past it.
    let renewed = fixture
        .run_in(
            &path,
            &["standards", "propose", "todo", "--reason", REASON, "--json"],
            &[],
        )
        .json();
    assert_eq!(renewed["ok"], true, "{renewed}");
    let json = fixture.run_in(&path, &["done", "--json"], &[]).json();
    assert_eq!(json["ok"], true, "{json}");
}

/// The owner's route from the main checkout: `status` shows what awaits approval in each
/// effort, `accept` there lists the efforts ready to land with their exact commands, and once
/// approved, the listing, `status` and the landed Proof line say who approved it.
#[test]
fn the_owners_route_from_the_main_checkout_names_each_effort_and_who_approved() {
    let (fixture, keys) = signed_fixture();
    let (path, _) = proposed_effort(&fixture, "route");
    let json = fixture.run(&["status", "--json"]).json();
    let text = json.to_string();
    assert!(
        text.contains("awaiting the owner") || text.contains("awaiting_approval"),
        "{json}"
    );
    let row = json["data"]["fleet"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["id"] == "route"))
        .unwrap_or_else(|| panic!("no fleet row for route: {json}"));
    assert!(
        row["awaiting_approval"][0]
            .as_str()
            .is_some_and(|l| l.starts_with("limit todo")),
        "{row}"
    );
    assert!(
        text.contains("awaiting the owner's exact approval: route"),
        "{json}"
    );

    let refused = fixture.run(&["accept", "--json"]).json();
    assert_eq!(refused["ok"], false, "{refused}");
    assert_eq!(refused["data"]["ready_to_land"][0], "route", "{refused}");
    assert!(
        refused["message"]
            .as_str()
            .is_some_and(|m| m.contains("`discern accept --effort route --confirmed`")),
        "{refused}"
    );

    let owner = keys.owner.to_str().unwrap();
    let reviewed = fixture.git_out(&path, &["rev-parse", "HEAD"]);
    let approved = fixture.run(&[
        "approve", "--effort", "route", "--head", &reviewed, "--key", owner,
    ]);
    assert_eq!(approved.code, 0, "{}", approved.stdout);
    assert!(
        approved.stdout.contains("Approved by owner@example.com"),
        "{}",
        approved.stdout
    );
    assert!(
        approved
            .stdout
            .contains("discern accept --effort route --confirmed"),
        "{}",
        approved.stdout
    );
    let json = fixture.run(&["status", "--json"]).json();
    let row = json["data"]["fleet"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["id"] == "route"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(row["approved_by"], "owner@example.com", "{json}");

    let landed = fixture
        .run(&["accept", "--effort", "route", "--confirmed", "--json"])
        .json();
    assert_eq!(landed["ok"], true, "{landed}");
    let line = landed["data"]["proof_line"].as_str().unwrap_or_default();
    assert!(
        line.contains("approved by owner@example.com") && !line.contains("awaiting"),
        "{landed}"
    );
    assert!(!path.exists(), "the effort's worktree is removed");
}

/// `update` never loops: a proposal the trunk's merge left stale is renewed on the merged
/// commit (the same value and reason), so `done` passes and `status` agrees.
#[test]
fn update_renews_a_proposal_that_survived_the_merge() {
    let fixture = Fixture::new(Config::landing());
    let (path, _) = proposed_effort(&fixture, "survives");
    fixture.repo.write("docs/later.md", "# later\n");
    fixture.repo.git(&["add", "-A"]);
    fixture
        .repo
        .git(&["commit", "-q", "-m", "the trunk moves on"]);
    let json = fixture.run_in(&path, &["update", "--json"], &[]).json();
    assert_eq!(json["ok"], true, "{json}");
    assert_eq!(json["data"]["merged"], true, "{json}");
    assert!(
        json.to_string()
            .contains("were renewed on the merged commit"),
        "{json}"
    );
    let done = fixture.run_in(&path, &["done", "--json"], &[]).json();
    assert_eq!(done["ok"], true, "{done}");
    let status = fixture.run_in(&path, &["status", "--json"], &[]).json();
    assert_eq!(status["data"]["proposals"][0]["stale"], false, "{status}");
    let next: Vec<&str> = status["hints"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["category"] == "next-step")
        .filter_map(|h| h["id"].as_str())
        .collect();
    assert_eq!(next, ["accept"], "one next step, the landing: {status}");
}
