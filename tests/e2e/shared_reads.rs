//! One read per blob per batch (`planner/shared.rs`, `snapshot/shared.rs`): a pattern and a
//! line-count Standard over the same files, measured together (each blob inflated once and
//! handed to both), read exactly what each reads alone, and what `git grep -c` and `wc -l` say.

use std::process::Command;

use serde_json::Value;

use crate::support::{Fixture, standard};

const CONFIG: &str = r#"
[standards.todo]
direction = "down"
limit = 1000000
producer = "builtin:pattern"
config = { pattern = "TODO", paths = ["**"] }
metric = "matches"

[standards.todo_files]
direction = "down"
limit = 1000000
producer = "builtin:pattern"
config = { pattern = "TODO", paths = ["**"] }
metric = "files"

[standards.lines]
direction = "up"
limit = 0
producer = "builtin:extent"
config = { paths = ["**"] }
metric = "lines"

[standards.src_fns]
direction = "up"
limit = 0
producer = "builtin:pattern"
config = { pattern = "\\bfn\\b", paths = ["src/**"] }
metric = "matches"
"#;

/// `i`'s file: some lines, TODOs in most, files that share their content, one empty.
fn file(i: usize) -> String {
    if i == 17 {
        return String::new();
    }
    let mut text = format!("pub fn f{}() {{}}\n", i % 40);
    for t in 0..(i % 5) {
        text.push_str(&format!("// TODO {t}: step {}\n", i % 40));
    }
    text.push_str(&"let x = 1;\n".repeat(i % 60));
    text
}

/// A run's values of `names`, and how many producers it ran.
fn measured(fixture: &Fixture, args: &[&str], names: &[&str]) -> (Vec<f64>, u64) {
    let run = fixture.run(args);
    let json = run.json();
    assert_eq!(json["ok"], true, "{}\n{}", run.stdout, run.stderr);
    let values = names
        .iter()
        .map(|name| {
            standard(&json, name)["value"]
                .as_f64()
                .unwrap_or_else(|| panic!("{name} not measured: {json}"))
        })
        .collect();
    let executions = json["data"]["producer_executions"].as_object().unwrap();
    (values, executions.values().filter_map(Value::as_u64).sum())
}

fn sh(fixture: &Fixture, script: &str) -> f64 {
    let out = Command::new("sh")
        .args(["-c", script])
        .current_dir(fixture.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{script}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.rsplit(':').next()?.trim().parse::<f64>().ok())
        .sum()
}

#[test]
fn standards_measured_together_read_what_each_reads_alone_and_what_git_reads() {
    let fixture = Fixture::new(CONFIG);
    for i in 0..700 {
        fixture
            .repo
            .write(&format!("src/m{:02}/f{i:04}.rs", i % 13), file(i));
    }
    for i in 0..60 {
        fixture.repo.write(
            &format!("docs/n{i:03}.md"),
            format!("# note {i}\nTODO {i}\n"),
        );
    }
    // Binary (a NUL, no newline): skipped by both, as by `git grep -I` and `wc -l`.
    fixture.repo.write("assets/logo.bin", b"\x89PNG\0\0TODO");
    fixture.repo.commit("many files");

    let names = ["todo", "todo_files", "lines", "src_fns"];
    let (together, runs) = measured(&fixture, &["standards", "--fresh", "--json"], &names);
    // Three executions ran together: the two TODO Standards are one.
    assert_eq!(runs, 3);
    for (name, value) in names.iter().zip(&together) {
        let (alone, runs) = measured(&fixture, &["standards", name, "--fresh", "--json"], &[name]);
        assert_eq!(
            (runs, alone[0]),
            (1, *value),
            "{name} measured together and alone"
        );
    }

    let grep = sh(&fixture, "git grep -I -c TODO HEAD");
    let grep_files = sh(&fixture, "git grep -I -l TODO HEAD | wc -l");
    let wc = sh(&fixture, "git ls-files -z | xargs -0 cat | wc -l");
    let fns = sh(&fixture, "git grep -I -c -P '\\bfn\\b' HEAD -- src");
    assert_eq!(together, [grep, grep_files, wc, fns]);
    assert!(grep > 500.0 && wc > 10_000.0, "{together:?}");
}
