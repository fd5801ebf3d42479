//! Races between real `discern` processes: concurrent pins make exactly one commit (never an
//! empty one), concurrent landings land one and tell the others the trunk moved. Rounds scale
//! with `DISCERN_RACE_ROUNDS` (default 2, what CI runs).

use std::path::PathBuf;

use serde_json::Value;

use crate::support::Fixture;

use crate::support::config::Config;

fn rounds() -> usize {
    std::env::var("DISCERN_RACE_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2)
}

/// Run `args` in every `dirs` at once; each result's JSON.
fn race(fixture: &Fixture, dirs: &[PathBuf], args: &[&str]) -> Vec<Value> {
    std::thread::scope(|scope| {
        let runs: Vec<_> = dirs
            .iter()
            .map(|dir| scope.spawn(move || fixture.run_in(dir, args, &[]).json()))
            .collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    })
}

#[test]
fn concurrent_pins_make_exactly_one_commit_and_never_an_empty_one() {
    for round in 0..rounds() {
        let fixture = Fixture::new(Config::landing());
        fixture.repo.git(&["checkout", "-q", "-b", "agent/x"]);
        let before = fixture.repo.head();
        let dirs = vec![fixture.path().to_owned(); 4];
        let results = race(&fixture, &dirs, &["standards", "--pin", "--json"]);
        let log = fixture.git_out(fixture.path(), &["rev-list", &format!("{before}..HEAD")]);
        assert_eq!(
            log.lines().count(),
            1,
            "round {round}: exactly one commit: {results:#?}"
        );
        let changed = fixture.git_out(fixture.path(), &["diff", "--name-only", "HEAD~1", "HEAD"]);
        assert_eq!(
            changed, "discern.toml",
            "round {round}: never an empty commit"
        );
        let pinned: Vec<&Value> = results
            .iter()
            .filter(|r| {
                r["ok"] == true
                    && r["data"]["pinned"]
                        .as_array()
                        .is_some_and(|p| !p.is_empty())
            })
            .collect();
        assert_eq!(pinned.len(), 1, "round {round}: one winner: {results:#?}");
        for other in results
            .iter()
            .filter(|r| r["data"]["pinned"].as_array().is_none_or(|p| p.is_empty()))
        {
            let fine = other["ok"] == true || other["error"] == "pin_failed";
            assert!(
                fine,
                "round {round}: a loser is unchanged or refused as moved: {other}"
            );
        }
        fixture.assert_settled(&format!("round {round}"));
    }
}

#[test]
fn concurrent_landings_land_one_and_tell_the_others_the_trunk_moved() {
    for round in 0..rounds() {
        let fixture = Fixture::new(Config::landing());
        let efforts: Vec<PathBuf> = ["one", "two", "three"]
            .iter()
            .map(|n| fixture.proven_effort(n).0)
            .collect();
        let results = race(&fixture, &efforts, &["accept", "--confirmed", "--json"]);
        let landed: Vec<&Value> = results.iter().filter(|r| r["ok"] == true).collect();
        assert_eq!(landed.len(), 1, "round {round}: {results:#?}");
        for lost in results.iter().filter(|r| r["ok"] != true) {
            assert_eq!(
                lost["hints"][0]["action"]["verb"], "update",
                "round {round}: the loser is told to bring the trunk in: {lost}"
            );
        }
        let trunk = fixture.git_out(fixture.path(), &["rev-parse", "main"]);
        assert_eq!(landed[0]["data"]["landed"], trunk.as_str(), "round {round}");
        assert_eq!(
            fixture.git_out(fixture.path(), &["status", "--porcelain"]),
            ""
        );
        assert_eq!(
            fixture.git_out(fixture.path(), &["rev-parse", "HEAD"]),
            trunk
        );
    }
}

#[test]
fn concurrent_starts_of_one_name_make_one_effort_and_never_unwind_the_winners() {
    for round in 0..rounds() {
        let fixture = Fixture::new(Config::landing());
        let dirs = vec![fixture.path().to_owned(); 3];
        let results = race(&fixture, &dirs, &["start", "--name", "same", "--json"]);
        let won: Vec<&Value> = results.iter().filter(|r| r["ok"] == true).collect();
        assert_eq!(won.len(), 1, "round {round}: one effort: {results:#?}");
        let path = PathBuf::from(won[0]["data"]["path"].as_str().unwrap());
        assert!(
            path.join("src/lib.rs").exists(),
            "round {round}: the winner's worktree stays"
        );
        assert_eq!(
            fixture.git_out(&path, &["rev-parse", "--abbrev-ref", "HEAD"]),
            "agent/same",
            "round {round}"
        );
        for lost in results.iter().filter(|r| r["ok"] != true) {
            assert!(
                lost["message"].as_str().unwrap().contains("already exists"),
                "round {round}: {lost}"
            );
        }
    }
}

/// A writing call that reads a live landing's journal and then waits for the writer lock does
/// not "recover" that landing after it finished (found by the soak test: `cannot remove the
/// landing journal: No such file or directory`).
#[test]
fn a_call_waiting_for_a_landing_does_not_recover_it_after_it_finished() {
    let fixture = Fixture::new(Config::landing());
    let (effort, head) = fixture.proven_effort("live");
    let out = fixture.repo.parent().join("bystander.json");
    // While the landing holds the lock with its journal written, a start from the main
    // checkout reads the journal and waits for the lock.
    let bystander = format!(
        "cd '{}' && '{}' start --name bystander --json > '{}' 2>&1 & sleep 1",
        fixture.path().display(),
        env!("CARGO_BIN_EXE_discern"),
        out.display()
    );
    let step = discern::testing::commit::landing::step::JOURNAL_WRITTEN;
    let json = fixture
        .run_in(
            &effort,
            &["accept", "--confirmed", "--json"],
            &[("DISCERN_FAULT_EXEC", &format!("{step}:{bystander}"))],
        )
        .json();
    assert_eq!(json["ok"], true, "{json}");
    assert_eq!(
        fixture.git_out(fixture.path(), &["rev-parse", "main"]),
        head
    );
    let started = std::time::Instant::now();
    let bystander: Value = loop {
        if let Ok(v) = serde_json::from_str(&std::fs::read_to_string(&out).unwrap_or_default()) {
            break v;
        }
        assert!(
            started.elapsed().as_secs() < 60,
            "the bystander never answered"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!(bystander["ok"], true, "{bystander}");
    assert_eq!(bystander["data"]["id"], "bystander", "{bystander}");
}
