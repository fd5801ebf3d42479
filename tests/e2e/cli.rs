//! The `discern` binary itself.

use std::path::Path;

use crate::support::cache_dir;
use crate::support::config::Config;

fn discern(args: &[&str]) -> std::process::Output {
    let home = tempfile::tempdir().unwrap();
    discern_tests::discern(
        Path::new(env!("CARGO_BIN_EXE_discern")),
        home.path(),
        home.path(),
        &cache_dir(),
        args,
    )
}

/// Digests and sizes change whenever a producer's code changes; the contract is their shape.
macro_rules! assert_output_snapshot {
    ($name:literal, $text:expr) => {
        insta::with_settings!({filters => vec![
            (r"[0-9a-f]{64}", "[sha256]"),
            (r"sha256:[0-9a-f]{12}", "sha256:[sha256]"),
            (r#""bytes": \d+"#, r#""bytes": "[size]""#),
        ]}, {
            insta::assert_snapshot!($name, $text);
        });
    };
}

#[test]
fn producers_lists_the_five_builtins() {
    let out = discern(&["producers"]);
    assert!(out.status.success());
    assert_output_snapshot!("producers_human", String::from_utf8(out.stdout).unwrap());
}

#[test]
fn producers_json_has_digests_and_metrics() {
    let out = discern(&["producers", "--json"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let producers = json["data"]["producers"].as_array().unwrap();
    let names: Vec<_> = producers
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "builtin:extent",
            "builtin:pattern",
            "builtin:lcov",
            "builtin:discern-metric",
            "builtin:file-size",
            "builtin:sarif"
        ]
    );
    for p in producers {
        let sha = p["sha256"].as_str().unwrap();
        assert_eq!(sha.len(), 64);
        assert!(sha.chars().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(p["wit_version"], "0.2.0");
    }
    assert_output_snapshot!("producers_json", text);
}

#[test]
fn producers_markdown() {
    let out = discern(&["producers", "--markdown"]);
    assert!(out.status.success());
    assert_output_snapshot!("producers_markdown", String::from_utf8(out.stdout).unwrap());
}

#[test]
fn bad_arguments_exit_2() {
    let out = discern(&["producers", "--bogus"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--bogus"));
}

/// `-C DIR` runs discern as if started in DIR, before or after the verb (as `git -C` does).
#[test]
fn dash_c_runs_in_another_directory() {
    let fixture = crate::support::Fixture::new(Config::landing());
    let elsewhere = tempfile::tempdir().unwrap();
    let repo = fixture.path().to_str().unwrap();
    for args in [
        vec!["-C", repo, "status", "--json"],
        vec!["status", "-C", repo, "--json"],
    ] {
        let run = fixture.run_in(elsewhere.path(), &args, &[]);
        let json = run.json();
        assert_eq!(json["ok"], true, "{args:?}: {json}");
        assert_eq!(json["data"]["git"]["branch"], "main", "{args:?}: {json}");
    }
    let run = fixture.run_in(elsewhere.path(), &["-C", "/no/such/dir", "status"], &[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("-C /no/such/dir"), "{}", run.stderr);
}
