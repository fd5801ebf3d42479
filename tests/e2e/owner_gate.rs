//! The owner's path through the gate's own changes (issue 46): a job edited in a commit
//! straight on the trunk is refused naming the change as a protected change (never a
//! loosening) and the routes past it — an effort the owner approves, a revert, or `--baseline`
//! from that commit on; the revert is judged as no change, never as a second one.

use crate::support::Fixture;
use crate::support::config::{Config, Standard};

fn config() -> Config {
    Config::new()
        .staged_job("check", "test", "true")
        .standard(Standard::todo(5))
}

fn edit(fixture: &Fixture, from: &str, to: &str, message: &str) -> String {
    let path = fixture.path().join("discern.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{from} in {text}");
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
    fixture.repo.commit(message)
}

fn hint_texts(json: &serde_json::Value) -> String {
    json["hints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["text"].as_str().unwrap().to_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_job_edited_on_the_trunk_is_refused_as_a_protected_change_with_every_route_named() {
    let fixture = Fixture::new(config());
    let edited = edit(
        &fixture,
        "run = \"true\"",
        "run = \"exit 0\"",
        "fix the jobs",
    );
    let short = &edited[..12];
    let run = fixture.run(&["standards", "--json"]);
    let json = run.json();
    assert_eq!(json["ok"], false, "{json}");
    assert_eq!(json["error"], "precondition_failed", "{json}");
    let message = json["message"].as_str().unwrap();
    // Not an empty reason ("Standards fail on ebf2 (main): ."): the change, named.
    assert!(!message.ends_with(": ."), "{message}");
    assert!(
        message.contains("jobs.check (a protected change, in"),
        "{message}"
    );
    assert!(message.contains("fix the jobs"), "{message}");
    assert!(!message.contains("loosen"), "{message}");
    assert_eq!(json["data"]["limits"]["status"], "unapproved", "{json}");
    let hints = hint_texts(&json);
    for route in [
        format!("git revert {short}"),
        "discern start".to_owned(),
        "discern accept".to_owned(),
        format!("discern standards --baseline {short}"),
    ] {
        assert!(hints.contains(&route), "{route} missing: {hints}");
    }
    assert_eq!(json["hints"][0]["action"]["arguments"]["baseline"], short);
    let human = fixture.run(&["standards"]);
    assert!(
        human.stderr.contains("limits versus main: unapproved")
            || human.stdout.contains("limits versus main: unapproved"),
        "{}{}",
        human.stdout,
        human.stderr
    );

    // The owner who made it on purpose judges the trunk from that commit on.
    let from_it = fixture
        .run(&["standards", "--baseline", short, "--json"])
        .json();
    assert_eq!(from_it["ok"], true, "{from_it}");

    // Its revert restores exactly what was there: no change, not a second protected change.
    fixture.git_in(fixture.path(), &["revert", "--no-edit", &edited]);
    let reverted = fixture.run(&["standards", "--json"]).json();
    assert_eq!(reverted["ok"], true, "{reverted}");
    assert_eq!(
        reverted["data"]["limits"]["status"], "verified",
        "{reverted}"
    );
    assert_eq!(
        reverted["data"]["limits"]["baseline_kind"], "restored",
        "{reverted}"
    );
    let advisories = reverted["advisories"].to_string();
    assert!(advisories.contains("restores the gate of"), "{advisories}");
    // CI's push check of the revert, from the edit it undoes, agrees.
    let ci = fixture
        .run_with(
            &["standards", "--baseline", &edited, "--json"],
            &[("CI", "true")],
        )
        .json();
    assert_eq!(ci["ok"], true, "{ci}");
    assert_eq!(ci["data"]["limits"]["baseline_kind"], "given", "{ci}");
    assert_eq!(ci["data"]["limits"]["baseline"], edited.as_str(), "{ci}");

    // Applying the edit again restores a gate that never had approval: a change, no revert.
    let reverted_head = fixture.git_out(fixture.path(), &["rev-parse", "HEAD"]);
    fixture.git_in(fixture.path(), &["revert", "--no-edit", &reverted_head]);
    let again = fixture.run(&["standards", "--json"]).json();
    assert_eq!(again["ok"], false, "{again}");
    assert_eq!(again["data"]["limits"]["status"], "unapproved", "{again}");
    assert!(!again.to_string().contains("restores the gate"), "{again}");
}

#[test]
fn a_revert_never_undoes_a_tightening_that_took_effect() {
    let fixture = Fixture::new(config());
    edit(&fixture, "limit = 5", "limit = 3", "tighten todo");
    let edited = edit(
        &fixture,
        "run = \"true\"",
        "run = \"exit 0\"",
        "edit the job",
    );
    // Back to the first commit's gate whole: the job restored, and the tightening undone.
    std::fs::write(fixture.path().join("discern.toml"), config().to_string()).unwrap();
    fixture.repo.commit("back to the start");
    let json = fixture.run(&["standards", "--json"]).json();
    assert_eq!(json["ok"], false, "{json}");
    assert_eq!(json["data"]["limits"]["status"], "loosened", "{json}");
    let message = json["message"].as_str().unwrap();
    assert!(
        message.contains("standards.todo.limit (a loosened limit"),
        "{message}"
    );
    let _ = edited;
}

#[test]
fn a_loosened_limit_on_the_trunk_is_a_loosening_and_its_revert_no_change() {
    let fixture = Fixture::new(config());
    let loosened = edit(&fixture, "limit = 5", "limit = 9", "loosen todo");
    let json = fixture.run(&["standards", "--json"]).json();
    assert_eq!(json["ok"], false, "{json}");
    assert_eq!(json["data"]["limits"]["status"], "loosened", "{json}");
    fixture.git_in(fixture.path(), &["revert", "--no-edit", &loosened]);
    let reverted = fixture.run(&["standards", "--json"]).json();
    assert_eq!(reverted["ok"], true, "{reverted}");
}

/// What the owner approved when it landed is in force: undoing it straight on the trunk is a
/// change of its own, never a free revert.
#[test]
fn undoing_an_approved_change_on_the_trunk_is_a_change_not_a_revert() {
    let fixture = Fixture::new(Config::landing());
    let stronger = Config::landing().job("test", "exit 0").to_string();
    let path = crate::approval::effort(&fixture, "stronger", &[("discern.toml", &stronger)]);
    let done = fixture.run_in(&path, &["done", "--json"], &[]).json();
    assert_eq!(done["ok"], true, "{done}");
    let approved = fixture.on_terminal(
        fixture.path(),
        &["approve", "--effort", "stronger"],
        "yes\n",
    );
    assert_eq!(approved.code, 0, "{}", approved.stdout);
    let landed = fixture
        .run_in(&path, &["accept", "--confirmed", "--json"], &[])
        .json();
    assert_eq!(landed["ok"], true, "{landed}");
    assert_eq!(fixture.run(&["standards", "--json"]).json()["ok"], true);

    let weaker = Config::landing().to_string();
    std::fs::write(fixture.path().join("discern.toml"), weaker).unwrap();
    fixture.repo.commit("back to the weaker job");
    let json = fixture.run(&["standards", "--json"]).json();
    assert_eq!(json["ok"], false, "{json}");
    assert_eq!(json["data"]["limits"]["status"], "unapproved", "{json}");
    assert_eq!(json["data"]["limits"]["baseline_kind"], "landing", "{json}");
    assert!(!json.to_string().contains("restores the gate"), "{json}");
}
