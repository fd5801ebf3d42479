//! Gains stick: `done` pins the gains beyond each margin (the trunk's margin) before it proves,
//! the next effort cannot spend them, and `update` keeps the tighter of two pinned limits.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::Fixture;

const CONFIG: &str = r#"
[standards.todo]
direction = "down"
limit = 5
producer = "builtin:pattern"
config = { pattern = "TODO", paths = ["src/**"] }
metric = "matches"
"#;

/// The fixture's `src/lib.rs` with `todos` TODO markers.
fn lib_with(todos: usize) -> String {
    (0..todos)
        .map(|i| format!("// TODO: {i}\npub fn f{i}() {{}}\n"))
        .collect::<String>()
        + "pub fn a() {}\npub fn b() {}\n"
}

fn start(fixture: &Fixture, name: &str) -> PathBuf {
    let run = fixture.run(&["start", "--name", name, "--title", "Gains", "--json"]);
    let json = run.json();
    assert_eq!(json["ok"], true, "{}", run.stdout);
    PathBuf::from(json["data"]["path"].as_str().unwrap())
}

fn commit_in(fixture: &Fixture, dir: &Path, file: &str, content: &str, message: &str) {
    std::fs::write(dir.join(file), content).unwrap();
    fixture.git_in(dir, &["add", "-A"]);
    fixture.git_in(dir, &["commit", "-q", "-m", message]);
}

fn done(fixture: &Fixture, dir: &Path) -> Value {
    fixture.run_in(dir, &["done", "--json"], &[]).json()
}

fn limit_in(dir: &Path) -> String {
    let text = std::fs::read_to_string(dir.join("discern.toml")).unwrap();
    text.lines()
        .find(|l| l.starts_with("limit"))
        .unwrap()
        .to_owned()
}

#[test]
fn done_pins_gains_and_the_next_effort_cannot_spend_them() {
    let fixture = Fixture::new(CONFIG);
    let effort = start(&fixture, "fewer");
    commit_in(&fixture, &effort, "src/lib.rs", &lib_with(1), "drop a TODO");
    let work = fixture.git_out(&effort, &["rev-parse", "HEAD"]);
    let json = done(&fixture, &effort);
    assert_eq!(json["ok"], true, "{json}");
    assert_eq!(json["steps"][0]["label"], "pin", "{json}");
    assert!(
        json["steps"][0]["note"]
            .as_str()
            .unwrap()
            .contains("todo 5 → 1"),
        "{json}"
    );
    let head = fixture.git_out(&effort, &["rev-parse", "HEAD"]);
    assert_eq!(
        json["data"]["proof"]["commit"],
        head.trim(),
        "the pin commit is proven"
    );
    let changed = fixture.git_out(&effort, &["diff", "--name-only", work.trim(), "HEAD"]);
    assert_eq!(changed.trim(), "discern.toml", "one config-only commit");
    let json = fixture
        .run_in(&effort, &["accept", "--confirmed", "--json"], &[])
        .json();
    assert_eq!(json["ok"], true, "{json}");
    assert_eq!(limit_in(fixture.path()), "limit = 1");

    // The next effort adds a TODO back: the gain was kept, so it fails.
    let next = start(&fixture, "more");
    commit_in(
        &fixture,
        &next,
        "src/lib.rs",
        &lib_with(2),
        "add a TODO back",
    );
    let json = done(&fixture, &next);
    assert_eq!(json["ok"], false, "{json}");
    assert_eq!(json["data"]["failed_stage"], "standards", "{json}");
}

#[test]
fn the_trunks_margin_decides_and_pin_on_done_false_opts_out() {
    let fixture = Fixture::new(CONFIG);
    let effort = start(&fixture, "margin");
    let wide = CONFIG.replace("metric = \"matches\"", "metric = \"matches\"\nmargin = 10");
    commit_in(
        &fixture,
        &effort,
        "discern.toml",
        &wide,
        "a generous margin",
    );
    let json = done(&fixture, &effort);
    assert_eq!(json["ok"], true, "{json}");
    assert!(
        json["steps"][0]["note"]
            .as_str()
            .unwrap_or_default()
            .contains("todo 5 → 2"),
        "the branch's own margin does not stop the pin: {json}"
    );
    // `--pin` too pins by the trunk's margin, whatever the branch's says.
    let effort = start(&fixture, "margin-pin");
    commit_in(
        &fixture,
        &effort,
        "discern.toml",
        &wide,
        "a generous margin",
    );
    let pinned = fixture
        .run_in(&effort, &["standards", "--pin", "--json"], &[])
        .json();
    assert_eq!(pinned["ok"], true, "{pinned}");
    assert!(
        pinned.to_string().contains("\"to\":2"),
        "pinned to the measured value with the trunk's margin 0: {pinned}"
    );

    let off = Fixture::new(&format!("[repository]\npin_on_done = false\n{CONFIG}"));
    let effort = start(&off, "off");
    commit_in(&off, &effort, "README.md", "# other\n", "docs");
    let before = off.git_out(&effort, &["rev-parse", "HEAD"]);
    let json = done(&off, &effort);
    assert_eq!(json["ok"], true, "{json}");
    assert_ne!(json["steps"][0]["label"], "pin", "{json}");
    assert_eq!(off.git_out(&effort, &["rev-parse", "HEAD"]), before);
}

#[test]
fn update_keeps_the_tighter_of_two_pinned_limits() {
    let fixture = Fixture::new(CONFIG);
    let first = start(&fixture, "first");
    let second = start(&fixture, "second");
    commit_in(&fixture, &first, "src/lib.rs", &lib_with(1), "drop a TODO");
    assert_eq!(done(&fixture, &first)["ok"], true);
    commit_in(&fixture, &second, "README.md", "# docs\n", "docs");
    let json = done(&fixture, &second);
    assert_eq!(json["ok"], true, "{json}");
    assert_eq!(limit_in(&second), "limit = 2");
    let json = fixture
        .run_in(&first, &["accept", "--confirmed", "--json"], &[])
        .json();
    assert_eq!(json["ok"], true, "{json}");
    let json = fixture.run_in(&second, &["update", "--json"], &[]).json();
    assert_eq!(json["ok"], true, "both pinned the same limit: {json}");
    assert!(
        json["advisories"][0]
            .as_str()
            .unwrap_or_default()
            .contains("took the tighter value"),
        "{json}"
    );
    assert_eq!(limit_in(&second), "limit = 1");
    assert_eq!(fixture.git_out(&second, &["status", "--porcelain"]), "");

    // A proposal (a loosening) that meets the trunk's tightening of the same limit is not
    // dropped under a false "both tightened": update aborts with the way through.
    let fifth = start(&fixture, "fifth");
    let sixth = start(&fixture, "sixth");
    commit_in(
        &fixture,
        &fifth,
        "src/lib.rs",
        &lib_with(0),
        "drop every TODO",
    );
    assert_eq!(done(&fixture, &fifth)["ok"], true);
    let json = fixture
        .run_in(&fifth, &["accept", "--confirmed", "--json"], &[])
        .json();
    assert_eq!(json["ok"], true, "{json}");
    commit_in(
        &fixture,
        &sixth,
        "src/more.rs",
        "// TODO a\n// TODO b\n",
        "two more",
    );
    let proposed = fixture
        .run_in(
            &sixth,
            &[
                "standards",
                "propose",
                "todo",
                "--reason",
                "Two planned hooks are marked.",
                "--json",
            ],
            &[],
        )
        .json();
    assert_eq!(proposed["ok"], true, "{proposed}");
    let head = fixture.git_out(&sixth, &["rev-parse", "HEAD"]);
    let json = fixture.run_in(&sixth, &["update", "--json"], &[]).json();
    assert_eq!(json["ok"], false, "{json}");
    let message = json["message"].as_str().unwrap_or_default();
    assert!(message.contains("loosens its ceiling"), "{json}");
    assert!(
        json.to_string().contains("discern standards withdraw"),
        "{json}"
    );
    assert_eq!(
        fixture.git_out(&sixth, &["rev-parse", "HEAD"]),
        head,
        "nothing changed"
    );
    assert_eq!(fixture.git_out(&sixth, &["status", "--porcelain"]), "");

    // A conflict that is not only limits is still aborted, leaving nothing.
    let third = start(&fixture, "third");
    let fourth = start(&fixture, "fourth");
    let config = std::fs::read_to_string(fixture.path().join("discern.toml")).unwrap();
    let redefine = |to: &str| config.replace("TODO\", paths", &format!("{to}\", paths"));
    commit_in(
        &fixture,
        &third,
        "discern.toml",
        &redefine("TODO|FIXME"),
        "x",
    );
    commit_in(
        &fixture,
        &fourth,
        "discern.toml",
        &redefine("TODO|XXX"),
        "y",
    );
    fixture.git_in(fixture.path(), &["merge", "-q", "--ff-only", "agent/third"]);
    let json = fixture.run_in(&fourth, &["update", "--json"], &[]).json();
    assert_eq!(json["ok"], false, "{json}");
    assert_eq!(fixture.git_out(&fourth, &["status", "--porcelain"]), "");
}
