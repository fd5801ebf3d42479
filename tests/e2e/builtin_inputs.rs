//! The binary's side of the built-ins' inputs (the configs whose line numbers a test reads are
//! written out as text): a built-in's `config` and every pathspec refused
//! before anything runs (with the line and what to write), names that are not UTF-8 skipped with
//! an advisory, and a pathspec list that matches nothing named instead of reading 0 in silence.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use crate::support::config::{Config, Standard};
use crate::support::{Fixture, standard};

fn messages(json: &serde_json::Value) -> Vec<String> {
    json["diagnostics"]
        .as_array()
        .unwrap_or(&Vec::new())
        .iter()
        .map(|d| d["message"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn bad_builtin_config_is_refused_with_its_line_and_the_allowed_values() {
    let fixture = Fixture::new(concat!(
        "[standards.todo]\n",
        "direction = \"down\"\n",
        "limit = 2\n",
        "producer = \"builtin:pattern\"\n",
        "metric = \"matches\"\n",
        "[standards.todo.config]\n",
        "pattern = \"TODO\"\n",
        "paths = [\"src/*.{rs,toml}\"]\n",
        "max_findings = -1\n",
        "\n",
        "[standards.size]\n",
        "direction = \"down\"\n",
        "limit = 2\n",
        "producer = \"builtin:extent\"\n",
        "metric = \"files\"\n",
        "config = { paths = [\"src\"], path = \"x\" }\n",
        "per = { files = [\"../outside\"] }\n",
        "inputs = [\":(attr:generated)src\"]\n",
    ));
    let run = fixture.run(&["standards", "--json"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let json = run.json();
    assert_eq!(json["error"], "invalid_config");
    let messages = messages(&json);
    let has = |prefix: &str, part: &str| {
        assert!(
            messages
                .iter()
                .any(|m| m.starts_with(prefix) && m.contains(part)),
            "{prefix} … {part}: {messages:#?}"
        );
    };
    has(
        "discern.toml:9: [standards.todo] config.max_findings:",
        "a non-negative integer",
    );
    has(
        "discern.toml:16: [standards.size] config.path:",
        "is not a config key of builtin:extent (allowed: paths)",
    );
    has(
        "discern.toml:17: [standards.size] per:",
        "outside the repository",
    );
    has(
        "discern.toml:18: [standards.size] inputs:",
        "\"attr:generated\" is not supported",
    );
}

#[test]
fn braces_in_paths_are_refused_with_the_patterns_to_write() {
    let fixture = Fixture::new(
        "[standards.todo]\ndirection = \"down\"\nlimit = 2\nproducer = \"builtin:pattern\"\nmetric = \"matches\"\nconfig = { pattern = \"TODO\", paths = [\"src/*.{rs,toml}\"] }\n",
    );
    let json = fixture.run(&["standards", "--json"]).json();
    let messages = messages(&json);
    assert!(
        messages.iter().any(
            |m| m.starts_with("discern.toml:6: [standards.todo] config.paths:")
                && m.contains("\"src/*.rs\", \"src/*.toml\"")
        ),
        "{messages:#?}"
    );
}

#[test]
fn a_name_that_is_not_utf8_is_skipped_with_an_advisory_not_an_internal_error() {
    let fixture = Fixture::new(Config::new().standard(Standard::todo(2)));
    std::fs::write(
        fixture.path().join(OsStr::from_bytes(b"caf\xe9 menu.txt")),
        "TODO\n",
    )
    .unwrap();
    fixture.repo.commit("a latin-1 name");
    let run = fixture.run(&["standards", "--json"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let json = run.json();
    assert_eq!(standard(&json, "todo")["value"], 2.0);
    let advisories = json["advisories"].to_string();
    assert!(advisories.contains("caf\\\\xe9 menu.txt"), "{advisories}");
    assert!(advisories.contains("not valid UTF-8"), "{advisories}");
}

#[test]
fn pathspecs_that_match_nothing_are_named_not_read_as_zero_in_silence() {
    let todo = Standard::pattern("todo", "TODO", &["source/**"]).limit(2);
    let todo = todo.set("per", r#"{ lines = ["lib/**"] }"#);
    let fixture = Fixture::new(Config::new().standard(todo));
    let json = fixture.run(&["standards", "--json"]).json();
    let advisories = json["advisories"].to_string();
    assert!(
        advisories
            .contains("standards.todo: config.paths [\\\"source/**\\\"] match no tracked file"),
        "{advisories}"
    );
    assert!(
        advisories.contains("standards.todo: per.lines [\\\"lib/**\\\"] match no tracked file"),
        "{advisories}"
    );
}

#[test]
fn a_pattern_that_is_not_a_regex_is_refused_at_its_line_before_anything_runs() {
    let fixture = Fixture::new(
        "[standards.todo]\ndirection = \"down\"\nlimit = 2\nproducer = \"builtin:pattern\"\nmetric = \"matches\"\n\n[standards.todo.config]\npaths = [\"src\"]\npattern = \"(TODO\"\n",
    );
    let run = fixture.run(&["standards", "--json"]);
    assert_eq!(run.code, 1);
    let messages = messages(&run.json());
    assert!(
        messages.iter().any(|m| m
            .starts_with("discern.toml:9: [standards.todo] config.pattern: is not a valid regex")),
        "{messages:#?}"
    );
}
