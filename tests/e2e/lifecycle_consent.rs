//! Consent on landing: `accept` needs the owner's consent, the proof and the current trunk; a
//! pre-authorized scope lands without a conversation, a branch that widens its own grant or moves
//! a file out of a granted folder still needs consent, and a live proposal lands only with the
//! owner's approval.

use serde_json::{Value, json};

use crate::lifecycle::{config, effort, git_in};
use crate::support::Fixture;
use crate::support::config::strings;

#[test]
fn accept_needs_consent_proof_and_the_current_trunk() {
    let fixture = Fixture::new(config());
    let path = effort(&fixture, "consent", &[("src/x.rs", "x\n")]);
    let json = fixture.run_in(&path, &["accept", "--json"], &[]).json();
    assert_eq!(json["error"], "precondition_failed", "no Proof yet");
    fixture.run_in(&path, &["done"], &[]);
    let json = fixture.run_in(&path, &["accept", "--json"], &[]).json();
    assert_eq!(json["error"], "awaiting_consent");
    assert_eq!(json["data"]["changed_paths"], json!(["src/x.rs"]));

    // The trunk moves: the Proof no longer lands.
    fixture.repo.write("README.md", "# moved\n");
    fixture.repo.commit("trunk moves");
    let json = fixture
        .run_in(&path, &["accept", "--confirmed", "--json"], &[])
        .json();
    assert_eq!(json["error"], "precondition_failed");
    assert!(
        json["message"]
            .as_str()
            .unwrap()
            .contains("main moved since the Proof")
    );
    // update merges the trunk; done again; then it lands.
    let json = fixture.run_in(&path, &["update", "--json"], &[]).json();
    assert_eq!(json["data"]["merged"], true, "{json}");
    let json = fixture.run_in(&path, &["update", "--json"], &[]).json();
    assert_eq!(json["data"]["merged"], false, "idempotent");
    assert_eq!(
        fixture.run_in(&path, &["done", "--json"], &[]).json()["ok"],
        true
    );
    assert_eq!(
        fixture
            .run_in(&path, &["accept", "--confirmed", "--json"], &[])
            .json()["ok"],
        true
    );
}

#[test]
fn a_pre_authorized_scope_lands_without_conversation_consent() {
    let fixture = Fixture::new(config());
    let path = effort(&fixture, "docs", &[("docs/guide.md", "# Guide\n")]);
    fixture.run_in(&path, &["done"], &[]);
    let json = fixture.run_in(&path, &["accept", "--json"], &[]).json();
    assert_eq!(json["ok"], true, "{json}");
    assert_eq!(
        json["data"]["consent"],
        json!({"source": "pre_authorized", "scopes": ["docs/**"]})
    );
}

#[test]
fn a_branch_that_widens_its_own_grant_still_needs_consent() {
    let fixture = Fixture::new(config());
    let widened = config()
        .acceptance("pre_authorized", strings(&["**"]))
        .to_string();
    let path = effort(
        &fixture,
        "widen",
        &[
            ("discern.toml", widened.as_str()),
            ("src/more.rs", "pub fn m() {}\n"),
        ],
    );
    let done = fixture.run_in(&path, &["done", "--json"], &[]).json();
    assert_eq!(done["ok"], true, "{done}");
    let json = fixture.run_in(&path, &["accept", "--json"], &[]).json();
    assert_eq!(
        json["error"], "awaiting_consent",
        "the trunk's grant decides: {json}"
    );
    assert_eq!(json["data"]["pre_authorized"], json!(["docs/**"]));
}

#[test]
fn a_live_proposal_lands_only_with_the_owners_approval_never_a_token() {
    let fixture = Fixture::new(config());
    let path = effort(
        &fixture,
        "breach",
        &[("src/more.rs", "// TODO 1\n// TODO 2\n// TODO 3\n")],
    );
    let reason = "The new module lists three planned extension points.";
    let run = fixture.run_in(
        &path,
        &["standards", "propose", "todo", "--reason", reason, "--json"],
        &[],
    );
    let json = run.json();
    assert_eq!(json["ok"], true, "{}", run.stdout);
    let token = discern::testing::proposals::approval_token("todo", 5.0, reason);
    let json = fixture.run_in(&path, &["done", "--json"], &[]).json();
    assert_eq!(json["ok"], true, "{json}");
    let line = json["data"]["proof_line"].as_str().unwrap();
    assert!(
        line.ends_with("; proposal awaiting exact owner approval: todo 2 → 5."),
        "{line}"
    );

    let accept = |tokens: &[&str]| {
        let mut args = vec!["accept", "--confirmed", "--json"];
        for t in tokens {
            args.extend(["--approve-standard", t]);
        }
        fixture.run_in(&path, &args, &[]).json()
    };
    // The caller's arguments never approve: not even exactly the right token.
    for tokens in [vec![], vec![token.as_str()]] {
        let json = accept(&tokens);
        assert_eq!(json["error"], "awaiting_standard_approval", "{json}");
        assert_eq!(
            json["data"]["standard_approvals_required"][0]["token"],
            token.as_str()
        );
        assert_eq!(
            json["data"]["standard_approvals_required"][0]["responsible_paths"],
            json!(["src/more.rs"])
        );
    }
    assert!(
        accept(&[&token])["message"]
            .as_str()
            .unwrap()
            .contains("tokens passed as arguments never approve")
    );
    // A standing grant never covers a proposal.
    let json = fixture
        .run_in(
            &path,
            &["accept", "--approve-standard", &token, "--json"],
            &[],
        )
        .json();
    assert_eq!(json["error"], "awaiting_consent");
    // The owner answers on their terminal (no signers file: the interactive channel).
    let run = fixture.on_terminal(fixture.path(), &["approve", "--effort", "breach"], "yes\n");
    assert_eq!(run.code, 0, "{}", run.stdout);

    let head = git_in(&fixture, &path, &["rev-parse", "HEAD"])
        .trim()
        .to_owned();
    let before = fixture.repo.git(&["rev-parse", "main"]).trim().to_owned();
    let json = accept(&[]);
    assert_eq!(json["ok"], true, "{json}");
    // A clone without the Proof notes cannot see the terminal approval: it says which fetch
    // brings it, and with the notes fetched the landing passes.
    let clone = fixture.repo.parent().join("notes-less");
    let url = fixture.path().display().to_string();
    fixture.git_in(
        fixture.repo.parent(),
        &["clone", "-q", &url, clone.to_str().unwrap()],
    );
    let check = ["standards", "--baseline", before.as_str(), "--json"];
    let json = fixture.run_in(&clone, &check, &[]).json();
    assert_eq!(json["ok"], false, "{json}");
    assert!(
        json.to_string()
            .contains("fetch them (`git fetch origin refs/notes/discern:refs/notes/discern`)"),
        "{json}"
    );
    fixture.git_in(
        &clone,
        &[
            "fetch",
            "-q",
            "origin",
            "refs/notes/discern:refs/notes/discern",
        ],
    );
    let json = fixture.run_in(&clone, &check, &[]).json();
    assert_eq!(json["ok"], true, "{json}");
    let note: Value = serde_json::from_str(&fixture.repo.git(&[
        "notes",
        "--ref=refs/notes/discern",
        "show",
        &head,
    ]))
    .unwrap();
    assert_eq!(note["approved_proposals"][0]["standard"], "todo");
    assert_eq!(note["approved_proposals"][0]["token"], token.as_str());
    assert_eq!(note["approved_proposals"][0]["proposed_limit"], 5.0);

    // On the trunk, the landed loosening is covered by the approval its Proof note recorded.
    let run = fixture.run(&["standards", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(run.json()["data"]["limits"]["status"], "verified");
    // A loosening committed on the trunk after the landing is judged since that landing.
    let config = std::fs::read_to_string(fixture.path().join("discern.toml")).unwrap();
    fixture
        .repo
        .write("discern.toml", config.replace("limit = 5", "limit = 7"));
    fixture.repo.commit("relax todo on main");
    let json = fixture.run(&["standards", "--json"]).json();
    assert_eq!(json["data"]["limits"]["status"], "loosened", "{json}");
    assert_eq!(json["data"]["limits"]["baseline"], head.as_str());
    assert_eq!(json["data"]["limits"]["baseline_kind"], "landing");
}

#[test]
fn moving_a_file_into_a_granted_folder_still_needs_consent_for_the_path_it_left() {
    let fixture = Fixture::new(config());
    let path = effort(&fixture, "move", &[("docs/note.md", "# Note\n")]);
    git_in(&fixture, &path, &["mv", "src/main.rs", "docs/main.rs"]);
    git_in(
        &fixture,
        &path,
        &["commit", "-q", "-m", "move main into docs"],
    );
    let done = fixture.run_in(&path, &["done", "--json"], &[]).json();
    assert_eq!(done["ok"], true, "{done}");
    // git's rename detection would list only docs/main.rs, which the grant covers; the path it
    // left (src/main.rs) is outside it, so landing needs the owner's consent.
    let json = fixture.run_in(&path, &["accept", "--json"], &[]).json();
    assert_eq!(json["error"], "awaiting_consent", "{json}");
    let changed = json["data"]["changed_paths"].as_array().unwrap();
    assert!(changed.contains(&json!("src/main.rs")), "{changed:?}");
}
