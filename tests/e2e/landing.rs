//! Landing survives kill -9: `accept` is one journaled transaction (note, trunk, main
//! checkout, worktree, branch); the real binary is killed at every step and the next writing
//! call — from the main checkout too — finishes or unwinds it. A touched file in the main
//! checkout never turns into a staged revert.

use std::path::Path;

use crate::support::Fixture;

use crate::support::config::Config;

fn trunk(fixture: &Fixture) -> String {
    fixture.git_out(fixture.path(), &["rev-parse", "refs/heads/main"])
}

#[test]
fn a_touched_file_in_the_main_checkout_never_becomes_a_staged_revert() {
    let fixture = Fixture::new(Config::landing());
    let (effort, _) = fixture.proven_effort("touched");
    // The effort also changes a file the main checkout has; commit and prove again.
    std::fs::write(effort.join("src/lib.rs"), "pub fn a() {}\npub fn b() {}\n").unwrap();
    fixture.git_in(&effort, &["commit", "-q", "-am", "drop the TODOs"]);
    let done = fixture.run_in(&effort, &["done", "--json"], &[]).json();
    assert_eq!(done["ok"], true, "{done}");
    let head = fixture.git_out(&effort, &["rev-parse", "HEAD"]);
    // Right after the trunk moves, something touches that file in the main checkout: content
    // unchanged, stat changed (an editor, a build tool).
    let lib = fixture.path().join("src/lib.rs");
    let touch = format!("sleep 0.02; touch {}", lib.display());
    let json = fixture
        .run_in(
            &effort,
            &["accept", "--confirmed", "--json"],
            &[(
                "DISCERN_FAULT_EXEC",
                &format!("landing-trunk-moved:{touch}"),
            )],
        )
        .json();
    assert_eq!(json["ok"], true, "{json}");
    assert_eq!(
        json["data"]["landing"]["main_checkout_updated"], true,
        "{json}"
    );
    assert_eq!(
        fixture.git_out(fixture.path(), &["status", "--porcelain"]),
        ""
    );
    assert_eq!(
        fixture.git_out(fixture.path(), &["rev-parse", "HEAD"]),
        head
    );
    assert_eq!(
        std::fs::read_to_string(&lib).unwrap(),
        "pub fn a() {}\npub fn b() {}\n"
    );
}

#[test]
fn a_landing_killed_at_any_step_is_finished_or_unwound_by_the_next_writing_call() {
    for step in discern::testing::commit::landing::step::ALL {
        let fixture = Fixture::new(Config::landing());
        let before = trunk(&fixture);
        let (effort, head) = fixture.proven_effort("crash");
        let run = fixture.run_in(
            &effort,
            &["accept", "--confirmed", "--json"],
            &[("DISCERN_FAULT", step)],
        );
        assert_ne!(run.code, 0, "{step}: the fault stops the process");
        let journals = fixture.path().join(".git/discern/landings");
        let pending = std::fs::read_dir(&journals).map_or(0, |d| d.count());
        assert_eq!(pending, 1, "{step}: the landing journal is left");

        // A read-only call reports it and writes nothing.
        let status = fixture.run(&["status", "--json"]).json();
        assert!(
            status["advisories"]
                .as_array()
                .unwrap()
                .iter()
                .any(|a| a.as_str().unwrap().contains("interrupted landing")),
            "{step}: {status}"
        );
        assert_eq!(std::fs::read_dir(&journals).unwrap().count(), 1, "{step}");

        // The next writing call, from the main checkout, finishes or unwinds it.
        let next = fixture.run(&["start", "--name", "next", "--json"]).json();
        assert_eq!(next["ok"], true, "{step}: {next}");
        assert_eq!(std::fs::read_dir(&journals).unwrap().count(), 0, "{step}");
        assert_eq!(
            fixture.git_out(fixture.path(), &["status", "--porcelain"]),
            "",
            "{step}: the main checkout is clean"
        );
        let moved = trunk(&fixture) == head;
        let before_move = [
            discern::testing::commit::landing::step::JOURNAL_WRITTEN,
            discern::testing::commit::landing::step::NOTE_WRITTEN,
        ];
        if before_move.contains(step) {
            assert_eq!(
                trunk(&fixture),
                before,
                "{step}: unwound, the trunk never moved"
            );
            assert!(effort.exists(), "{step}: the effort is untouched");
            let json = fixture
                .run_in(&effort, &["accept", "--confirmed", "--json"], &[])
                .json();
            assert_eq!(json["ok"], true, "{step}: it lands afterwards: {json}");
            assert_eq!(trunk(&fixture), head);
            continue;
        }
        assert!(moved, "{step}: rolled forward");
        assert_eq!(
            fixture.git_out(fixture.path(), &["rev-parse", "HEAD"]),
            head,
            "{step}"
        );
        assert!(fixture.path().join("src/crash.rs").exists(), "{step}");
        assert!(!effort.exists(), "{step}: the worktree is removed");
        assert_eq!(
            fixture.git_out(fixture.path(), &["branch", "--list", "agent/crash"]),
            "",
            "{step}: the branch is deleted"
        );
        let note = fixture.git_out(
            fixture.path(),
            &["notes", "--ref=refs/notes/discern", "show", &head],
        );
        assert!(note.contains("\"approved_proposals\""), "{step}: {note}");
    }
}

#[test]
fn discern_trunk_never_changes_what_the_gate_and_the_landing_trust() {
    let fixture = Fixture::new(Config::landing());
    let old = trunk(&fixture);
    fixture.repo.git(&["branch", "decoy", &old]);
    fixture.repo.write("NEWS.md", "trunk moves on\n");
    fixture.repo.commit("news");
    let run = fixture.run(&["start", "--name", "env", "--title", "Env", "--json"]);
    let effort = std::path::PathBuf::from(run.json()["data"]["path"].as_str().unwrap());
    std::fs::write(effort.join("src/env.rs"), "pub fn x() {}\n").unwrap();
    fixture.git_in(&effort, &["add", "-A"]);
    fixture.git_in(&effort, &["commit", "-q", "-m", "env"]);
    let env = [("DISCERN_TRUNK", "decoy")];
    let done = fixture.run_in(&effort, &["done", "--json"], &env).json();
    assert_eq!(done["ok"], true, "{done}");
    assert_eq!(done["data"]["proof"]["trunk"], "main", "{done}");
    let json = fixture
        .run_in(&effort, &["accept", "--confirmed", "--json"], &env)
        .json();
    assert_eq!(json["ok"], true, "{json}");
    assert_eq!(json["data"]["trunk"], "main");
    assert_eq!(
        fixture.git_out(fixture.path(), &["rev-parse", "decoy"]),
        old,
        "the decoy never moved"
    );
}

#[test]
fn a_proof_for_another_trunk_lands_nothing() {
    let fixture = Fixture::new(Config::landing());
    let (effort, _) = fixture.proven_effort("forged");
    let git_dir = fixture.git_out(&effort, &["rev-parse", "--absolute-git-dir"]);
    let proof_path = Path::new(&git_dir).join("discern/gate-proof");
    let mut proof: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&proof_path).unwrap()).unwrap();
    proof["trunk_commit"] = serde_json::json!("0".repeat(40));
    std::fs::write(&proof_path, proof.to_string()).unwrap();
    let before = trunk(&fixture);
    let json = fixture
        .run_in(&effort, &["accept", "--confirmed", "--json"], &[])
        .json();
    assert_eq!(json["ok"], false, "{json}");
    assert!(
        json["message"]
            .as_str()
            .unwrap()
            .contains("The Proof was made against"),
        "{json}"
    );
    assert_eq!(trunk(&fixture), before);
}

/// A landing that finished leaves nothing behind, from the effort's worktree (which it removes)
/// as from the main checkout: no journal, and `status` warns of no pending landing.
#[test]
fn a_finished_landing_from_the_worktree_leaves_no_journal() {
    let fixture = Fixture::new(Config::landing());
    let (path, head) = fixture.proven_effort("inside");
    let json = fixture
        .run_in(&path, &["accept", "--confirmed", "--json"], &[])
        .json();
    assert_eq!(json["ok"], true, "{json}");
    assert_eq!(
        fixture.git_out(fixture.path(), &["rev-parse", "main"]),
        head
    );
    let landings = fixture.path().join(".git/discern/landings");
    let left: Vec<_> = std::fs::read_dir(&landings)
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "journals left behind: {left:?}");
    let status = fixture.run(&["status", "--json"]).json();
    assert!(
        !status.to_string().contains("interrupted landing"),
        "{status}"
    );
}

/// A second `accept` of an effort that landed says where it landed, from the main checkout.
#[test]
fn a_second_accept_says_the_effort_already_landed_and_where() {
    let fixture = Fixture::new(Config::landing());
    let (path, head) = fixture.proven_effort("twice");
    let json = fixture
        .run_in(&path, &["accept", "--confirmed", "--json"], &[])
        .json();
    assert_eq!(json["ok"], true, "{json}");
    let json = fixture
        .run(&["accept", "--effort", "twice", "--confirmed", "--json"])
        .json();
    assert_eq!(json["ok"], true, "{json}");
    assert_eq!(json["data"]["already_landed"], head.as_str(), "{json}");
    let human = fixture.run(&["accept", "--effort", "twice", "--confirmed"]);
    assert!(
        human.stdout.contains(&format!(
            "agent/twice already landed on main at {}",
            &head[..12]
        )),
        "{}",
        human.stdout
    );
}

/// A wait begun after the effort landed (its branch and worktree gone) is met at once, found by
/// its Proof note, instead of "No effort" — also once a later effort that brought the trunk in
/// landed on top, so the landing is its merge's second parent, off the trunk's first parents
/// (found by the soak test).
#[test]
fn await_on_an_effort_that_already_landed_is_met() {
    let fixture = Fixture::new(Config::landing());
    let (later, _) = fixture.proven_effort("later");
    let (path, head) = fixture.proven_effort("gone");
    let json = fixture
        .run_in(&path, &["accept", "--confirmed", "--json"], &[])
        .json();
    assert_eq!(json["ok"], true, "{json}");
    let waits = |when: &str| {
        for condition in ["--landed", "--green"] {
            let run = fixture.run(&["await", condition, "gone", "--timeout", "0", "--json"]);
            let json = run.json();
            assert_eq!(run.code, 0, "{when} {condition}: {json}");
            assert_eq!(json["data"]["met"], true, "{when} {condition}: {json}");
            assert_eq!(json["data"]["observed"]["tip"], head.as_str(), "{json}");
        }
        let json = fixture
            .run(&["accept", "--effort", "gone", "--confirmed", "--json"])
            .json();
        assert_eq!(
            json["data"]["already_landed"],
            head.as_str(),
            "{when}: {json}"
        );
    };
    waits("landed");
    for args in [
        &["update", "--json"][..],
        &["done", "--json"],
        &["accept", "--confirmed", "--json"],
    ] {
        let json = fixture.run_in(&later, args, &[]).json();
        assert_eq!(json["ok"], true, "{args:?}: {json}");
    }
    let first_parents = fixture.git_out(fixture.path(), &["rev-list", "--first-parent", "main"]);
    assert!(
        !first_parents.contains(&head),
        "the landing is off the first parents now"
    );
    waits("after a later landing");
    let json = fixture
        .run(&[
            "await",
            "--landed",
            "never-started",
            "--timeout",
            "0",
            "--json",
        ])
        .json();
    assert_eq!(json["error"], "not_found", "{json}");
}
