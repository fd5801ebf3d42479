//! Gains stick: `done` pins the branch's own gains beyond each margin (the trunk's margin)
//! before it proves — its improvement over the merge base taken off the limit, so the owner's
//! headroom stays —, the next effort cannot spend them, and `update` keeps the tighter of two
//! pinned limits.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::Fixture;
use crate::support::config::{Config, Standard};

fn config() -> Config {
    Config::new().standard(Standard::todo(5))
}

/// [`config`] with the limit at the fixture's reading (2): no headroom, so a gain is an exact pin.
fn exact() -> String {
    config().standard(Standard::todo(2)).to_string()
}

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
    let fixture = Fixture::new(exact());
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
            .contains("todo 2 → 1"),
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
    let fixture = Fixture::new(exact());
    let effort = start(&fixture, "margin");
    let wide = exact().replace("metric = \"matches\"", "metric = \"matches\"\nmargin = 10");
    commit_in(
        &fixture,
        &effort,
        "discern.toml",
        &wide,
        "a generous margin",
    );
    commit_in(&fixture, &effort, "src/lib.rs", &lib_with(1), "drop a TODO");
    let json = done(&fixture, &effort);
    assert_eq!(json["ok"], true, "{json}");
    assert!(
        json["steps"][0]["note"]
            .as_str()
            .unwrap_or_default()
            .contains("todo 2 → 1"),
        "the branch's own margin does not stop the pin: {json}"
    );
    // `--pin` is the explicit act: the measured value and the margin, headroom and all.
    let fixture = Fixture::new(config());
    let wide = config().standard(Standard::todo(5).margin(10));
    // `--pin` too pins by the trunk's margin, whatever the branch's says.
    let effort = start(&fixture, "margin-pin");
    commit_in(
        &fixture,
        &effort,
        "discern.toml",
        &wide.to_string(),
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

    let off = Fixture::new(config().repository("pin_on_done", "false"));
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
    // 4 TODOs under a limit of 5: one of headroom, which each effort's gain leaves alone.
    let fixture = Fixture::new(config());
    fixture
        .repo
        .write("src/extra.rs", "// TODO: x\n// TODO: y\n");
    fixture.repo.commit("two more TODOs");
    let first = start(&fixture, "first");
    let second = start(&fixture, "second");
    commit_in(&fixture, &first, "src/lib.rs", &lib_with(1), "drop a TODO");
    let json = done(&fixture, &first);
    assert_eq!(json["ok"], true, "{json}");
    assert_eq!(
        limit_in(&first),
        "limit = 4",
        "5 less its gain of 1: {json}"
    );
    commit_in(
        &fixture,
        &second,
        "src/extra.rs",
        "// none\n",
        "drop two TODOs",
    );
    let json = done(&fixture, &second);
    assert_eq!(json["ok"], true, "{json}");
    assert_eq!(
        limit_in(&second),
        "limit = 3",
        "5 less its gain of 2: {json}"
    );
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
    assert_eq!(limit_in(&second), "limit = 3");
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

/// Two efforts forked from one trunk whose limit has headroom (`lines ≤ 200`, measured at 2)
/// each add one line, prove, and race `accept`: exactly one lands; the other brings the trunk
/// in, proves again and lands too. Neither's `done` ate the owner's headroom, and no limit
/// ever loosened. Ten rounds (`DISCERN_RACE_ROUNDS` for more).
#[test]
fn parallel_efforts_both_land_without_eating_the_headroom() {
    const LINES: &str = r#"
[repository]
trunk = "main"

[jobs]
test = "true"

[standards.lines]
direction = "down"
limit = 200
producer = "builtin:extent"
config = { paths = ["notes/**"] }
metric = "lines"
"#;
    let rounds: usize = std::env::var("DISCERN_RACE_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    for round in 0..rounds {
        let fixture = Fixture::new(LINES);
        fixture.repo.write("notes/base.txt", "one\ntwo\n");
        fixture.repo.commit("two lines");
        let efforts: Vec<PathBuf> = ["a", "b"]
            .iter()
            .map(|name| {
                let path = start(&fixture, name);
                commit_in(
                    &fixture,
                    &path,
                    &format!("notes/{name}.txt"),
                    "more\n",
                    "a line",
                );
                let json = done(&fixture, &path);
                assert_eq!(json["ok"], true, "round {round}: {json}");
                assert_eq!(
                    limit_in(&path),
                    "limit = 200",
                    "round {round}: no headroom eaten"
                );
                path
            })
            .collect();
        let landed: Vec<bool> = std::thread::scope(|scope| {
            let runs: Vec<_> = efforts
                .iter()
                .map(|path| {
                    let fixture = &fixture;
                    scope.spawn(move || {
                        fixture
                            .run_in(path, &["accept", "--confirmed", "--json"], &[])
                            .json()["ok"]
                            == true
                    })
                })
                .collect();
            runs.into_iter().map(|r| r.join().unwrap()).collect()
        });
        assert_eq!(
            landed.iter().filter(|l| **l).count(),
            1,
            "round {round}: exactly one lands"
        );
        let loser = &efforts[landed.iter().position(|l| !l).unwrap()];
        for verb in ["update", "done", "accept"] {
            let args: &[&str] = match verb {
                "accept" => &["accept", "--confirmed", "--json"],
                other => &[other, "--json"][..],
            };
            let json = fixture.run_in(loser, args, &[]).json();
            assert_eq!(json["ok"], true, "round {round}: {verb}: {json}");
        }
        assert_eq!(
            limit_in(fixture.path()),
            "limit = 200",
            "round {round}: no limit moved"
        );
        let tree = fixture.git_out(
            fixture.path(),
            &["ls-tree", "--name-only", "main", "notes/"],
        );
        assert_eq!(
            tree, "notes/a.txt\nnotes/b.txt\nnotes/base.txt",
            "round {round}: both landed"
        );
    }
}

/// A branch that pinned its gain meets the trunk's landed loosening of the same limit: `update`
/// takes the trunk's limit (never looser than the trunk), says so, and the branch's `done` pins
/// its gain again from there — no `git checkout --theirs` and no new pin by hand.
#[test]
fn update_takes_the_trunks_loosening_over_the_branchs_pin_and_done_pins_again() {
    let fixture = Fixture::new(config());
    fixture
        .repo
        .write("src/extra.rs", "// TODO: x\n// TODO: y\n");
    fixture.repo.commit("two more TODOs");
    let pinned = start(&fixture, "pinned");
    commit_in(&fixture, &pinned, "src/lib.rs", &lib_with(1), "drop a TODO");
    let json = done(&fixture, &pinned);
    assert_eq!(json["ok"], true, "{json}");
    assert_eq!(limit_in(&pinned), "limit = 4", "{json}");

    // The trunk lands a loosening 5 -> 8 with three more TODOs (the owner's, on the trunk).
    let config = std::fs::read_to_string(fixture.path().join("discern.toml")).unwrap();
    fixture
        .repo
        .write("discern.toml", config.replace("limit = 5", "limit = 8"));
    fixture
        .repo
        .write("src/more.rs", "// TODO: a\n// TODO: b\n// TODO: c\n");
    fixture
        .repo
        .commit("the owner loosens todo for planned work");

    let json = fixture.run_in(&pinned, &["update", "--json"], &[]).json();
    assert_eq!(json["ok"], true, "{json}");
    assert!(
        json.to_string().contains("the trunk loosened"),
        "the advisory says what happened: {json}"
    );
    assert_eq!(limit_in(&pinned), "limit = 8");
    assert_eq!(fixture.git_out(&pinned, &["status", "--porcelain"]), "");
    // 6 TODOs under the trunk's 8, one fewer than the trunk's 7: done pins that gain again.
    let json = done(&fixture, &pinned);
    assert_eq!(json["ok"], true, "{json}");
    assert_eq!(
        limit_in(&pinned),
        "limit = 7",
        "8 less its gain of 1: {json}"
    );
}

/// A pin keeps the trunk's margins; where the trunk's `discern.toml` at the merge base cannot be
/// read, the branch's own (wider) margins are not used in its place: `--pin` is refused, naming
/// the file, and nothing is committed.
#[test]
fn a_baseline_config_that_cannot_be_read_lends_no_margin() {
    let fixture = Fixture::new(config());
    let root = fixture.path().to_owned();
    commit_in(
        &fixture,
        &root,
        "discern.toml",
        "[standards.todo\n",
        "a trunk config that does not parse",
    );
    fixture.git_in(&root, &["checkout", "-q", "-b", "wide"]);
    let wide = config().standard(Standard::todo(5).margin(10));
    commit_in(
        &fixture,
        &root,
        "discern.toml",
        &wide.to_string(),
        "repair, with a wide margin",
    );
    let before = fixture.git_out(&root, &["rev-parse", "HEAD"]);
    let pinned = fixture
        .run_in(&root, &["standards", "--pin", "--json"], &[])
        .json();
    assert_eq!(pinned["ok"], false, "{pinned}");
    let message = pinned["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("Nothing was pinned") && message.contains("discern.toml"),
        "{pinned}"
    );
    let after = fixture.git_out(&root, &["rev-parse", "HEAD"]);
    assert_eq!(before, after, "nothing was committed: {pinned}");
}
