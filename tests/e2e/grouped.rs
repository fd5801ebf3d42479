//! Built-ins run by groups of files (`planner/grouped.rs`): after edits, renames, deletions,
//! additions and a damaged memo, a run that reuses the remembered groups reads exactly what a
//! `--fresh` whole run reads: every value, every finding, every comparison.

use serde_json::Value;

use crate::support::Fixture;
use crate::support::config::{Config, Standard};

fn config() -> Config {
    let todo = |name: &str| Standard::pattern(name, "TODO", &["src/**"]).limit(100000);
    let capped = Standard::new("todo_capped", "builtin:pattern")
        .limit(100000)
        .config(r#"{ pattern = "TODO \\w+", paths = ["src/**"], max_findings = 40 }"#)
        .metric("matches");
    let extent = |name: &str, metric: &str| Standard::extent(name, metric, &["src/**"]);
    Config::new()
        .standard(todo("todo"))
        .standard(todo("todo_files").metric("files"))
        .standard(capped)
        .standard(extent("lines", "lines").up().limit(0))
        .standard(extent("longest", "max_lines").limit(100000))
}

/// `i`'s file: a few lines, some with TODOs (none in every fifth file).
fn file(i: usize, extra: &str) -> String {
    let todos = if i.is_multiple_of(5) { 0 } else { i % 4 };
    let mut text = format!("pub fn f{i}() {{}}\n");
    for t in 0..todos {
        text.push_str(&format!("// TODO item{t} of {i}\n"));
    }
    text + extra
}

fn path(i: usize) -> String {
    format!("src/d{:02}/f{i:04}.rs", i % 23)
}

/// The Standards as a run reports them, with what says how they were obtained left out.
fn readings(fixture: &Fixture, args: &[&str]) -> Value {
    let run = fixture.run(args);
    let json = run.json();
    assert_eq!(json["ok"], true, "{}\n{}", run.stdout, run.stderr);
    // `--explain` shows its one Standard as `standard`.
    let mut standards = match &json["data"]["standard"] {
        Value::Null => json["data"]["standards"].clone(),
        one => Value::Array(vec![one.clone()]),
    };
    let Some(list) = standards.as_array_mut() else {
        panic!("no standards in {json}");
    };
    for standard in list {
        let object = standard.as_object_mut().unwrap();
        for key in ["measurement", "reused_from", "reused_evidence"] {
            object.remove(key);
        }
    }
    standards
}

/// The grouped runs first (a fresh run records evidence the next run would reuse; the
/// `--explain` runs reuse what the first grouped run recorded), then the same commit measured
/// whole by `--fresh` runs.
fn assert_same(fixture: &Fixture, step: &str) {
    let variants = [None, Some("todo"), Some("todo_capped"), Some("longest")];
    let args = |explain: Option<&'static str>, fresh: bool| {
        let mut args = vec!["standards", "--json"];
        args.extend(
            explain
                .map(|name| ["--explain", name])
                .into_iter()
                .flatten(),
        );
        args.extend(fresh.then_some("--fresh"));
        args
    };
    let grouped: Vec<Value> = variants
        .iter()
        .map(|&explain| readings(fixture, &args(explain, false)))
        .collect();
    for (explain, grouped) in variants.into_iter().zip(grouped) {
        let whole = readings(fixture, &args(explain, true));
        assert_eq!(grouped, whole, "{step}, --explain {explain:?}");
    }
}

/// Each grouped identity's memo: its parts' folder.
fn memos(fixture: &Fixture) -> Vec<std::path::PathBuf> {
    let store = fixture.path().join(".git/discern/evidence");
    std::fs::read_dir(store)
        .unwrap()
        .filter_map(Result::ok)
        .map(|d| d.path().join("groups"))
        .filter(|p| p.is_dir())
        .collect()
}

/// The part files of every memo.
fn parts(fixture: &Fixture) -> Vec<std::path::PathBuf> {
    memos(fixture)
        .iter()
        .flat_map(|dir| std::fs::read_dir(dir).unwrap().filter_map(Result::ok))
        .map(|entry| entry.path())
        .collect()
}

#[test]
fn a_grouped_run_reads_what_a_whole_run_reads_after_every_kind_of_change() {
    let fixture = Fixture::new(config());
    for i in 0..1200 {
        fixture.repo.write(&path(i), file(i, ""));
    }
    fixture.repo.write("src/empty.rs", "");
    fixture
        .repo
        .write("src/logo.bin", b"\x89PNG\0\0TODO binary\n");
    fixture.repo.commit("many files");
    assert_same(&fixture, "the first run");
    assert_eq!(memos(&fixture).len(), 3, "one memo per grouped identity");

    // Edits: TODOs added and removed, one file made the longest.
    fixture
        .repo
        .write(&path(7), file(7, "// TODO new one\n// TODO and two\n"));
    fixture.repo.write(&path(401), "pub fn g() {}\n");
    let long: String = (0..500).map(|n| format!("// line {n}\n")).collect();
    fixture.repo.write(&path(900), file(900, &long));
    fixture.repo.commit("edits");
    assert_same(&fixture, "edits");

    // Renames, deletions and additions.
    fixture.repo.git(&["mv", &path(13), "src/d05/renamed13.rs"]);
    fixture.repo.git(&["mv", &path(600), "src/d00/moved.rs"]);
    fixture.repo.remove(&path(14));
    fixture.repo.remove(&path(900));
    fixture
        .repo
        .write("src/added/new.rs", "// TODO added file\n");
    fixture.repo.commit("renames, deletions, additions");
    assert_same(&fixture, "renames, deletions and additions");

    // The capped Standard's kept findings move: the first files lose theirs, so findings of
    // groups past the last cut are needed now.
    for i in 0..200 {
        fixture
            .repo
            .write(&path(i), format!("pub fn f{i}() {{}}\n"));
    }
    fixture.repo.commit("the first files fixed");
    assert_same(&fixture, "the cut moved");

    // A damaged part is a miss, never a reading: every other one damaged, the rest cut short.
    let parts = parts(&fixture);
    assert!(parts.len() > 3, "{parts:?}");
    for (i, part) in parts.iter().enumerate() {
        let bytes = std::fs::read(part).unwrap();
        match i % 2 {
            0 => std::fs::write(part, b"{\"version\": 3, \"identity\": \"x\"").unwrap(),
            _ => std::fs::write(part, &bytes[..bytes.len() - 1]).unwrap(),
        }
    }
    fixture
        .repo
        .write(&path(1000), file(1000, "// TODO after damage\n"));
    fixture.repo.commit("after a damaged memo");
    assert_same(&fixture, "a damaged memo");
}
