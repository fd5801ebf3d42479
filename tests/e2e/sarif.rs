//! `builtin:sarif` on SARIF a real linter wrote: ruff, installed from PyPI at a pinned version
//! into a cached folder under `target/`, run as a discern job on a tiny Python repository. The
//! counts must agree with ruff's own (`--statistics`), and every finding must carry the line
//! and byte column ruff reports (`--output-format json`, columns in characters).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

use crate::support::{Fixture, standard};

const RUFF_VERSION: &str = "0.17.5";

/// The pinned ruff, installed from PyPI once into a folder under `target/`.
fn ruff() -> PathBuf {
    discern_tests::pip_tool(
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")),
        "ruff",
        RUFF_VERSION,
        "ruff",
    )
}

const PYTHON: [(&str, &str); 3] = [
    ("app.py", "import os\nimport sys\n\nprint(sys.argv)\n"),
    (
        "lib/tools.py",
        "from typing import List\nx = 1\n\n\ndef f():\n    y = 2\n",
    ),
    ("lib/text.py", "import json, re\ns = \"é\"; import os\n"),
];

fn config(ruff: &std::path::Path) -> String {
    format!(
        r#"
[jobs.lint]
stage = "check"
run = "{ruff} check --no-cache --output-format sarif -o ruff.sarif . || true"
artifacts = ["ruff.sarif"]

[standards.lint]
direction = "down"
limit = 100
producer = "builtin:sarif"
needs = ["jobs.lint"]
artifact = "ruff.sarif"
metric = "results"

[standards.unused_imports]
direction = "down"
limit = 100
producer = "builtin:sarif"
needs = ["jobs.lint"]
artifact = "ruff.sarif"
metric = "rule:F401"

[standards.lint_errors]
direction = "down"
limit = 100
producer = "builtin:sarif"
needs = ["jobs.lint"]
artifact = "ruff.sarif"
metric = "level:error"

[standards.lib_only]
direction = "down"
limit = 100
producer = "builtin:sarif"
needs = ["jobs.lint"]
artifact = "ruff.sarif"
metric = "results"
config = {{ paths = ["lib/**"] }}
"#,
        ruff = ruff.display()
    )
}

/// `ruff check --statistics` in `dir`: rule → count.
fn statistics(ruff: &std::path::Path, dir: &std::path::Path) -> BTreeMap<String, u64> {
    let out = Command::new(ruff)
        .args(["check", "--no-cache", "--statistics", "."])
        .current_dir(dir)
        .output()
        .expect("ruff runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let mut parts = line.split_whitespace();
            let count = parts.next()?.parse().ok()?;
            Some((parts.next()?.to_owned(), count))
        })
        .collect()
}

/// `ruff check --output-format json` in `dir`: (path, line, byte column, rule), sorted.
fn located(ruff: &std::path::Path, dir: &std::path::Path) -> Vec<(String, u64, u64, String)> {
    let out = Command::new(ruff)
        .args(["check", "--no-cache", "--output-format", "json", "."])
        .current_dir(dir)
        .output()
        .expect("ruff runs");
    let root = format!("{}/", dir.canonicalize().unwrap().display());
    let list: Vec<Value> = serde_json::from_slice(&out.stdout).expect("ruff's JSON");
    let mut out: Vec<_> = list
        .iter()
        .map(|d| {
            let path = d["filename"].as_str().unwrap().trim_start_matches(&root);
            let line = d["location"]["row"].as_u64().unwrap();
            let chars = d["location"]["column"].as_u64().unwrap() as usize;
            let text = std::fs::read_to_string(dir.join(path)).unwrap();
            let row = text.lines().nth(line as usize - 1).unwrap();
            let byte = row
                .char_indices()
                .nth(chars - 1)
                .map_or(row.len(), |(at, _)| at)
                + 1;
            (
                path.to_owned(),
                line,
                byte as u64,
                d["code"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn ruff_sarif_counts_agree_with_ruff_and_findings_carry_lines() {
    let ruff = &ruff();
    let fixture = Fixture::new(config(ruff));
    fixture.repo.write(".gitignore", "target/\nruff.sarif\n");
    for (path, text) in PYTHON {
        fixture.repo.write(path, text);
    }
    fixture.repo.commit("python");
    let stats = statistics(ruff, fixture.path());
    let total: u64 = stats.values().sum();
    assert!(total >= 5 && stats.get("F401") >= Some(&3), "{stats:?}");

    let run = fixture.run(&["standards", "--json"]);
    let json = run.json();
    assert_eq!(json["ok"], true, "{json}");
    let value = |name: &str| standard(&json, name)["value"].as_f64().unwrap() as u64;
    assert_eq!(value("lint"), total, "{json}");
    assert_eq!(value("unused_imports"), stats["F401"]);
    assert_eq!(
        value("lint_errors"),
        total,
        "ruff writes every result as an error"
    );
    let lib = located(ruff, fixture.path());
    let in_lib = lib.iter().filter(|(p, ..)| p.starts_with("lib/")).count() as u64;
    assert_eq!(value("lib_only"), in_lib);

    let explained = fixture
        .run(&["standards", "--explain", "lint", "--json"])
        .json();
    let mut findings: Vec<(String, u64, u64, String)> = explained["data"]["all"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let message = f["message"].as_str().unwrap();
            (
                f["path"].as_str().unwrap().to_owned(),
                f["line"].as_u64().unwrap(),
                f["column"].as_u64().unwrap(),
                message.split(':').next().unwrap().to_owned(),
            )
        })
        .collect();
    findings.sort();
    eprintln!(
        "ruff {RUFF_VERSION}: {total} results {stats:?}; builtin:sarif: {} findings, {in_lib} under lib/",
        findings.len()
    );
    assert_eq!(
        findings, lib,
        "paths, lines and byte columns as ruff reports them"
    );
    assert!(
        findings
            .iter()
            .any(|(p, l, c, _)| p == "lib/text.py" && *l == 2 && *c == 18),
        "the column after `é` is a byte column: {findings:?}"
    );
}
