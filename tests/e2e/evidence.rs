//! Evidence reuse: a reading stays valid while everything its producer read is unchanged.

use serde_json::Value;

use crate::support::config::{Config, Standard};
use crate::support::{Fixture, standard};

fn config() -> Config {
    let lines = Standard::extent("lines", "", &["src/**"]).without("metric");
    Config::new()
        .standard(Standard::todo(10))
        .standard(lines.up().limit(1))
}

fn measure(fixture: &Fixture) -> Value {
    let run = fixture.run(&["standards", "--json"]);
    let json = run.json();
    assert_eq!(json["ok"], true, "{}", run.stdout);
    json
}

fn runs(json: &Value) -> u64 {
    json["data"]["producer_executions"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum()
}

#[test]
fn unrelated_commits_reuse_and_input_changes_measure_again() {
    let fixture = Fixture::new(config());
    let first = measure(&fixture);
    assert_eq!(runs(&first), 2);
    let measured_on = fixture.repo.head();

    // An unrelated commit: everything is reused, nothing runs.
    fixture.repo.write("README.md", "# changed\n");
    fixture.repo.commit("docs only");
    let json = measure(&fixture);
    assert_eq!(runs(&json), 0);
    for name in ["todo", "lines"] {
        assert_eq!(standard(&json, name)["measurement"], "reused");
        assert_eq!(standard(&json, name)["reused_from"], measured_on.as_str());
    }
    assert_eq!(standard(&json, "todo")["value"], 2.0);

    // An input file changes: both producers read it, both run again.
    fixture
        .repo
        .write("src/lib.rs", "// TODO: one\npub fn a() {}\n");
    fixture.repo.commit("edit an input");
    let json = measure(&fixture);
    assert_eq!(runs(&json), 2);
    assert_eq!(standard(&json, "todo")["value"], 1.0);
    assert_eq!(standard(&json, "todo")["measurement"], "measured");

    // A file matching a listed glob is added, then removed: each is a miss.
    fixture.repo.write("src/empty.rs", "");
    fixture.repo.commit("add a matching file");
    assert_eq!(
        runs(&measure(&fixture)),
        2,
        "an added file changes the listing"
    );
    fixture.repo.remove("src/empty.rs");
    fixture.repo.commit("remove it again");
    let json = measure(&fixture);
    assert_eq!(
        runs(&json),
        0,
        "the listing is the one recorded two commits ago: reuse"
    );

    // A config change is a different identity (a new Standard: redefining one on the trunk
    // is the owner's change, refused here).
    fixture.repo.write(
        "discern.toml",
        config()
            .standard(Standard::pattern("markers", "TODO|FIXME", &["src/**"]).limit(9))
            .to_string(),
    );
    fixture.repo.commit("config");
    let json = measure(&fixture);
    assert_eq!(
        json["data"]["producer_executions"]
            .as_object()
            .unwrap()
            .values()
            .filter(|v| *v == 1)
            .count(),
        1,
        "only the changed identity runs"
    );
}

#[test]
fn a_changed_component_and_a_corrupt_store_are_misses() {
    let fixture = Fixture::new("");
    fixture
        .repo
        .write("tools/p.wasm", discern_tests::HOSTILE_WASM);
    fixture.repo.write("discern.toml", "[standards.ok]\ndirection = \"up\"\nlimit = 1\nproducer = \"tools/p.wasm\"\nconfig = { mode = \"ok\" }\n");
    fixture.repo.commit("a path producer");
    assert_eq!(runs(&measure(&fixture)), 1);
    assert_eq!(runs(&measure(&fixture)), 0, "the same commit: reused");
    // This producer reads nothing: its reading says nothing about another commit.
    fixture.repo.write("NOTES.md", "x\n");
    fixture.repo.commit("unrelated");
    assert_eq!(runs(&measure(&fixture)), 1, "a reading that read nothing");
    assert_eq!(runs(&measure(&fixture)), 0);

    // The same producer with a custom section appended: a new digest, a new identity.
    let mut changed = discern_tests::HOSTILE_WASM.to_vec();
    changed.extend_from_slice(&[0x00, 0x05, 0x04, b'n', b'o', b't', b'e']);
    fixture.repo.write("tools/p.wasm", changed);
    // On a branch: on the trunk a component swap without the owner's approval is refused.
    fixture.repo.git(&["checkout", "-q", "-b", "agent/rebuild"]);
    fixture.repo.commit("rebuild the producer");
    assert_eq!(runs(&measure(&fixture)), 1);

    // Corrupt every stored entry: a miss, never an error.
    let store = fixture.path().join(".git/discern/evidence");
    for dir in std::fs::read_dir(&store).unwrap() {
        for file in std::fs::read_dir(dir.unwrap().path()).unwrap() {
            std::fs::write(file.unwrap().path(), "{ not json").unwrap();
        }
    }
    fixture.repo.write("NOTES.md", "y\n");
    fixture.repo.commit("unrelated again");
    assert_eq!(runs(&measure(&fixture)), 1);
}

#[test]
fn reading_outside_declared_inputs_is_an_error() {
    let fixture = Fixture::new(
        "[standards.todo]\ndirection = \"down\"\nlimit = 10\nproducer = \"builtin:pattern\"\nconfig = { pattern = \"TODO\", paths = [\"src/**\", \"README.md\"] }\nmetric = \"matches\"\ninputs = [\"src/**\"]\n",
    );
    let json = fixture.run(&["standards", "--json"]).json();
    assert_eq!(json["error"], "producer_failed");
    let note = standard(&json, "todo")["note"].as_str().unwrap().to_owned();
    assert!(
        note.contains("read outside the Standard's declared inputs (src/**): README.md"),
        "{note}"
    );
}

#[test]
fn job_backed_readings_are_reused_only_on_the_exact_commit() {
    let fixture = Fixture::new(
        "[standards.speed]\ndirection = \"down\"\nlimit = 10\nrun = \"echo DISCERN_METRIC speed 3\"\n",
    );
    assert_eq!(runs(&measure(&fixture)), 1);
    assert_eq!(runs(&measure(&fixture)), 0, "same commit: reused");
    fixture.repo.write("NOTES.md", "x\n");
    fixture.repo.commit("unrelated");
    assert_eq!(
        runs(&measure(&fixture)),
        1,
        "another commit: the job and the producer run again"
    );
}

#[test]
fn concurrent_writers_lose_nothing() {
    let fixture = Fixture::new(config());
    let json = fixture.run(&["start", "--name", "twin", "--json"]).json();
    let twin = std::path::PathBuf::from(json["data"]["path"].as_str().unwrap());
    // The twin adds a Standard of its own and commits: a third identity, a second commit.
    let fns = Standard::pattern("fns", "fn", &["src/**"]).up().limit(0);
    let extra = config().standard(fns).to_string();
    std::fs::write(twin.join("discern.toml"), extra).unwrap();
    let git = |args: &[&str]| {
        let mut cmd = std::process::Command::new("git");
        cmd.args(args).current_dir(&twin);
        discern_tests::hermetic(&mut cmd, fixture.repo.home());
        assert!(cmd.status().unwrap().success());
    };
    git(&["commit", "-qam", "another Standard"]);
    let twin_head = String::from_utf8(
        std::process::Command::new("git")
            .args(["rev-parse", "HEAD"])
            .current_dir(&twin)
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap()
    .trim()
    .to_owned();
    let spawn = |dir: &std::path::Path| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_discern"));
        cmd.args(["standards", "--json"])
            .current_dir(dir)
            .stdout(std::process::Stdio::piped());
        discern_tests::hermetic(&mut cmd, fixture.repo.home());
        cmd.env("DISCERN_CACHE_DIR", crate::support::cache_dir());
        cmd.spawn().unwrap()
    };
    let main = fixture.repo.head();
    let children = [
        (spawn(fixture.path()), main.clone()),
        (spawn(&twin), twin_head.clone()),
        (spawn(fixture.path()), main.clone()),
        (spawn(&twin), twin_head.clone()),
    ];
    // What each process ran (rather than reused): (identity label, commit).
    let mut ran = std::collections::BTreeSet::new();
    for (child, commit) in children {
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success());
        let json: Value = serde_json::from_slice(&output.stdout).unwrap();
        for (label, runs) in json["data"]["producer_executions"].as_object().unwrap() {
            if runs.as_u64() == Some(1) {
                let (_, short) = label.split_once('#').unwrap();
                ran.insert((short.to_owned(), commit.clone()));
            }
        }
    }
    let store = fixture.path().join(".git/discern/evidence");
    let dirs: Vec<_> = std::fs::read_dir(&store)
        .unwrap()
        .map(|d| d.unwrap().path())
        .collect();
    assert_eq!(dirs.len(), 3, "three identities");
    // Every entry is whole; every execution that ran left its entry, whichever process wrote
    // first. (A process may instead reuse the other's entry where their inputs agree, in
    // either direction, so which ones ran depends on timing; that none is lost does not.)
    let mut stored = std::collections::BTreeSet::new();
    for dir in dirs {
        for file in std::fs::read_dir(dir).unwrap() {
            let path = file.unwrap().path();
            // `<entry>.findings` files hold an entry's findings beside it.
            if path.extension().is_none_or(|x| x != "json") {
                continue;
            }
            let entry: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
            let identity = entry["identity"].as_str().unwrap();
            // Execution labels end in the first 8 hex of the identity's sha256.
            let short = &discern::testing::digest::Digest::of(identity.as_bytes()).hex()[..8];
            stored.insert((
                short.to_owned(),
                entry["commit"].as_str().unwrap().to_owned(),
            ));
        }
    }
    assert!(
        ran.len() >= 3,
        "the twin's own Standard ran at least: {ran:?}"
    );
    assert!(ran.is_subset(&stored), "ran {ran:?}, stored {stored:?}");
}

#[test]
fn evidence_whose_commit_is_gone_is_a_miss_not_an_error() {
    let fixture = Fixture::new(config());
    fixture.repo.git(&["checkout", "-q", "-b", "scratch"]);
    fixture.repo.write("NOTES.md", "scratch work\n");
    fixture.repo.commit("measured, then thrown away");
    assert_eq!(runs(&measure(&fixture)), 2);
    // Drop the measured commit from the repository entirely.
    fixture.repo.git(&["checkout", "-q", "main"]);
    fixture.repo.git(&["branch", "-D", "scratch"]);
    fixture
        .repo
        .git(&["reflog", "expire", "--expire=now", "--all"]);
    fixture.repo.git(&["gc", "-q", "--prune=now"]);
    fixture.repo.write("README.md", "# later\n");
    fixture.repo.commit("unrelated, on main");
    // The entries name a commit the tree diff cannot read: measure again.
    assert_eq!(runs(&measure(&fixture)), 2);
    fixture.repo.write("README.md", "# later still\n");
    fixture.repo.commit("unrelated again");
    assert_eq!(runs(&measure(&fixture)), 0, "the new entries are reused");
}

/// Readings with findings of every kind: counted and passing, counted and failing (read by
/// the same execution), cut by `max_findings` (with its `files` metric), and illustrating a
/// value (the largest file).
fn findings() -> Config {
    let words = |name: &str| Standard::pattern(name, r"TODO \w+", &["src/**"]);
    let capped = |name: &str, metric: &str| {
        Standard::new(name, "builtin:pattern")
            .config(r#"{ pattern = "TODO", paths = ["src/**"], max_findings = 7 }"#)
            .metric(metric)
            .limit(100000)
    };
    let largest = Standard::file_size("largest", "max_bytes", &["src/**"]);
    Config::new()
        .standard(words("todo").limit(100000))
        .standard(words("todo_tight").limit(3))
        .standard(capped("todo_capped", "matches"))
        .standard(capped("todo_files", "files"))
        .standard(largest.limit(100000))
}

/// The Standards as `args` report them (with every finding, for `--explain`), with what says
/// how they were obtained left out, and how they were (`reused`, `measured`: each once).
fn readings(fixture: &Fixture, args: &[&str]) -> (Value, Vec<Value>) {
    let run = fixture.run(args);
    let json = run.json();
    let mut standards = match &json["data"]["standard"] {
        Value::Null => json["data"]["standards"].clone(),
        one => Value::Array(vec![one.clone()]),
    };
    let Some(list) = standards.as_array_mut() else {
        panic!("no standards in {json}\n{}", run.stderr);
    };
    let mut how = Vec::new();
    for standard in list {
        let object = standard.as_object_mut().unwrap();
        how.extend(object.remove("measurement"));
        for key in ["reused_from", "reused_evidence"] {
            object.remove(key);
        }
    }
    how.sort_by_key(Value::to_string);
    how.dedup();
    // `--explain`: every finding too.
    if let Some(all) = json["data"].get("all") {
        standards = Value::Array(vec![standards, all.clone()]);
    }
    (standards, how)
}

/// A run that reuses everything (its baseline reads HEAD's reused readings) reads what a
/// `--fresh` run of the same commit reads, with and without `--explain`.
fn assert_reused_as_fresh(fixture: &Fixture, step: &str) {
    for explain in [None, Some("todo"), Some("todo_capped"), Some("largest")] {
        let mut args = vec!["standards", "--json"];
        args.extend(
            explain
                .map(|name| ["--explain", name])
                .into_iter()
                .flatten(),
        );
        let (reused, how) = readings(fixture, &args);
        assert_eq!(how, ["reused"], "{step}, --explain {explain:?}");
        args.push("--fresh");
        let (fresh, how) = readings(fixture, &args);
        assert_eq!(how, ["measured"], "{step}, --explain {explain:?}");
        assert_eq!(reused, fresh, "{step}, --explain {explain:?}");
    }
}

#[test]
fn a_fully_reused_run_compares_findings_as_a_fresh_run_does() {
    let fixture = Fixture::new(findings());
    for i in 0..40 {
        let mut text = format!("pub fn f{i}() {{}}\n");
        for k in 0..i % 4 {
            text.push_str(&format!("// TODO item{k}\n// TODO same\n"));
        }
        text.push_str(&"// TODO same\n".repeat(i % 3));
        fixture
            .repo
            .write(&format!("src/d{}/f{i:02}.rs", i % 5), text);
    }
    fixture.repo.commit("many files");
    let (_, how) = readings(&fixture, &["standards", "--json"]);
    assert_eq!(how, ["measured"]);

    // On the trunk, after a commit no producer read: HEAD's readings are the baseline's.
    fixture.repo.write("README.md", "# changed\n");
    fixture.repo.commit("docs only");
    let (json, _) = readings(&fixture, &["standards", "--json"]);
    let todo = json
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "todo");
    let findings = &todo.unwrap()["findings"];
    assert_eq!(
        (&findings["new_total"], &findings["swap_check"]),
        (&Value::from(0), &Value::from("passed")),
        "{findings}"
    );
    assert_reused_as_fresh(&fixture, "the trunk");

    // On a branch, where the tight ceiling's breach is inherited from the merge base.
    fixture.repo.git(&["checkout", "-q", "-b", "agent/work"]);
    fixture.repo.write("README.md", "# changed on a branch\n");
    fixture.repo.commit("docs on a branch");
    assert_reused_as_fresh(&fixture, "a branch");
    let (json, _) = readings(&fixture, &["standards", "--json"]);
    let tight = json
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "todo_tight");
    assert_eq!(tight.unwrap()["verdict"], "inherited", "{json}");
}
