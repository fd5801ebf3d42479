//! Status blames only what an effort changed: a fleet whose trunk moved after every fork (a
//! job edited, a limit tightened, code) shows each lagging row what it lags by and how to catch
//! up, and lists as awaiting the owner only the effort's own protected change.

use std::path::PathBuf;

use serde_json::Value;

use crate::support::Fixture;
use crate::support::config::Config;

fn config() -> Config {
    Config::landing()
}

/// Start effort `name` from the main checkout: its worktree.
fn start(fixture: &Fixture, name: &str) -> PathBuf {
    let run = fixture.run(&["start", "--name", name, "--title", name, "--json"]);
    let json = run.json();
    assert_eq!(json["ok"], true, "{}", run.stdout);
    PathBuf::from(json["data"]["path"].as_str().unwrap())
}

/// Commit `content` at `path` in `dir` (a worktree or the main checkout).
fn commit(fixture: &Fixture, dir: &std::path::Path, path: &str, content: &str) {
    std::fs::write(dir.join(path), content).unwrap();
    fixture.git_in(dir, &["add", "-A"]);
    fixture.git_in(dir, &["commit", "-q", "-m", &format!("edit {path}")]);
}

fn row<'a>(json: &'a Value, id: &str) -> &'a Value {
    json["data"]["fleet"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("no row {id} in {json}"))
}

#[test]
fn a_lagging_effort_is_judged_from_where_it_forked() {
    let fixture = Fixture::new(config());
    let main = fixture.path().to_owned();
    // quiet: no commit of its own; the trunk then edits a job.
    let _quiet = start(&fixture, "quiet");
    commit(
        &fixture,
        &main,
        "discern.toml",
        &config().job("test", "true && true").to_string(),
    );
    // own: adds a job of its own; the trunk then tightens a limit.
    let own = start(&fixture, "own");
    let own_config = std::fs::read_to_string(own.join("discern.toml")).unwrap();
    commit(
        &fixture,
        &own,
        "discern.toml",
        &own_config.replace("[jobs]\n", "[jobs]\nlint = \"true\"\n"),
    );
    let tightened = std::fs::read_to_string(main.join("discern.toml"))
        .unwrap()
        .replace("limit = 5", "limit = 4");
    commit(&fixture, &main, "discern.toml", &tightened);
    // code: a plain code change; the trunk then changes code too.
    let code = start(&fixture, "code");
    commit(&fixture, &code, "src/code.rs", "pub fn code() {}\n");
    commit(&fixture, &main, "src/trunk.rs", "pub fn trunk() {}\n");

    let json = fixture.run(&["status", "--verbose", "--json"]).json();
    let behind = |id: &str| row(&json, id)["behind"].as_u64().unwrap();
    assert_eq!(
        (behind("quiet"), behind("own"), behind("code")),
        (3, 2, 1),
        "{json}"
    );
    for quiet in ["quiet", "code"] {
        assert!(
            row(&json, quiet).get("awaiting_approval").is_none(),
            "{quiet} changed nothing protected (an empty list is left out): {json}"
        );
    }
    let awaiting = row(&json, "own")["awaiting_approval"].as_array().unwrap();
    assert_eq!(awaiting.len(), 1, "only its own job: {json}");
    let item = awaiting[0].as_str().unwrap();
    assert!(item.contains("jobs.lint"), "{item}");
    assert!(
        !item.contains("jobs.test") && !item.contains("todo"),
        "{item}"
    );
    let owner: Vec<&Value> = json["hints"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["id"] == "fleet-awaits-approval")
        .collect();
    assert_eq!(owner.len(), 1, "{json}");
    let said = owner[0]["text"].as_str().unwrap();
    assert!(said.ends_with(": own."), "{said}");

    let text = fixture.run(&["status"]).stdout;
    for (id, n) in [("quiet", 3), ("own", 2), ("code", 1)] {
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("agent/{id}:")))
            .unwrap_or_else(|| panic!("no row {id}:\n{text}"));
        assert!(
            line.contains(&format!(
                "lags main by {n} commit(s): `discern update` in its worktree"
            )),
            "{line}"
        );
        assert!(!line.contains("→ (none)"), "{line}");
    }

    // The effort's own status (the fleet surveyed from inside) agrees with the main checkout's.
    let inside = fixture
        .run_in(&own, &["status", "--all", "--verbose", "--json"], &[])
        .json();
    assert_eq!(
        row(&inside, "own")["awaiting_approval"],
        row(&json, "own")["awaiting_approval"]
    );
}
