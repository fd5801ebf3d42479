//! What `discern standards` refuses or fails alone: a Standard with nothing to divide by or a
//! producer that fails (its dependents only), a timeout out of range (at its line), an artifact
//! outside the checkout, and a config another checkout holds that cannot be read.

use crate::support::config::{Config, Standard};
use crate::support::{Fixture, standard};

#[test]
fn a_zero_denominator_fails_only_its_standard() {
    let fixture = Fixture::new(
        Config::new()
            .standard(
                Standard::pattern("density", "TODO", &["src/**"])
                    .limit(10)
                    .set("per", r#"{ lines = ["docs/**"] }"#)
                    .set("scale", "1000"),
            )
            .standard(Standard::todo(2)),
    );
    let json = fixture.run(&["standards", "--json"]).json();
    assert_eq!(json["error"], "producer_failed");
    let density = standard(&json, "density");
    assert_eq!(density["measurement"], "failed");
    assert!(
        density["note"]
            .as_str()
            .unwrap()
            .contains("nothing to divide by"),
        "{density}"
    );
    assert_eq!(standard(&json, "todo")["verdict"], "held");
    // Both Standards read one pattern execution.
    assert_eq!(
        json["data"]["producer_executions"]
            .as_object()
            .unwrap()
            .len(),
        2
    );
}

/// `builtin:lcov` reading `README.md` (no coverage report at all) for `metric`, at least 1.
fn lcov_of_readme(name: &str, metric: &str) -> Standard {
    let lcov = Standard::new(name, "builtin:lcov").up().limit(1);
    lcov.config(r#"{ path = "README.md" }"#).metric(metric)
}

#[test]
fn a_failing_producer_fails_only_its_dependents() {
    let fixture = Fixture::new(
        Config::new()
            .standard(lcov_of_readme("broken", "line_percent"))
            .standard(lcov_of_readme("broken_files", "lines_found"))
            .standard(Standard::extent("missing_metric", "sentences", &["src/**"]).limit(1))
            .standard(Standard::todo(2)),
    );
    let json = fixture.run(&["standards", "--json"]).json();
    assert_eq!(json["error"], "producer_failed");
    for name in ["broken", "broken_files"] {
        let s = standard(&json, name);
        assert_eq!(s["measurement"], "failed");
        assert!(
            s["note"]
                .as_str()
                .unwrap()
                .contains("not an lcov tracefile"),
            "{s}"
        );
    }
    let missing = standard(&json, "missing_metric");
    assert!(missing["note"].as_str().unwrap().contains(
        "emitted no metric \"sentences\" (it emitted: files, lines, words, bytes, max_lines)"
    ));
    assert_eq!(standard(&json, "todo")["verdict"], "held");
}

#[test]
fn a_timeout_out_of_range_is_refused_with_its_line_never_a_panic() {
    for timeout in ["1e20", "3601", "-1"] {
        let config = Config::new().standard(Standard::todo(2).set("timeout", timeout));
        let fixture = Fixture::new(&config);
        let run = fixture.run(&["standards", "--json"]);
        assert_eq!(run.code, 1, "{timeout}: {}{}", run.stdout, run.stderr);
        let json = run.json();
        assert_eq!(json["error"], "invalid_config", "{timeout}: {json}");
        let line = config
            .to_string()
            .lines()
            .position(|l| l.starts_with("timeout"));
        let line = line.expect("the timeout's line") + 1;
        assert_eq!(json["diagnostics"][0]["line"], line, "{timeout}: {json}");
    }
}

#[test]
fn an_artifact_symlink_that_leaves_the_checkout_is_refused_never_followed() {
    for target in ["../../outside.info", "/etc/hostname"] {
        let config = format!(
            r#"
[jobs.cov]
stage = "test"
run = "mkdir -p target && ln -sf {target} target/out.info"
artifacts = ["target/out.info"]

[standards.cov]
direction = "up"
limit = 0
producer = "builtin:lcov"
needs = ["jobs.cov"]
artifact = "target/out.info"
metric = "line_percent"
"#
        );
        let fixture = Fixture::new(&config);
        std::fs::write(
            fixture.repo.parent().join("outside.info"),
            "SF:a.rs\nDA:1,1\nend_of_record\n",
        )
        .unwrap();
        let run = fixture.run(&["standards", "--json"]);
        assert_eq!(run.code, 1, "{target}: {}", run.stdout);
        let json = run.json();
        let cov = standard(&json, "cov");
        assert_eq!(cov["measurement"], "failed", "{target}: {json}");
        assert!(
            cov["note"]
                .as_str()
                .unwrap_or_default()
                .contains("cannot be read inside the checkout"),
            "{target}: {cov}"
        );
    }
}

/// A config read on another checkout's behalf is refused when it cannot be read, never taken
/// as "no config" (the default trunk and prefix): abandoning an effort reads the main
/// checkout's `discern.toml`, approving one reads the effort's.
#[test]
fn a_config_another_checkout_holds_is_refused_when_invalid_never_read_as_none() {
    let fixture = Fixture::new(Config::landing());
    let run = fixture.run(&["start", "--name", "e", "--title", "Invalid", "--json"]);
    let effort = std::path::PathBuf::from(run.json()["data"]["path"].as_str().unwrap());
    let main_config = fixture.path().join("discern.toml");
    let good = std::fs::read_to_string(&main_config).unwrap();
    std::fs::write(&main_config, "[repository\n").unwrap();
    let json = fixture
        .run_in(&effort, &["abandon", "--force", "--json"], &[])
        .json();
    assert_eq!(json["error"], "invalid_config", "{json}");
    assert!(effort.exists(), "nothing was abandoned");

    std::fs::write(&main_config, good).unwrap();
    std::fs::write(effort.join("discern.toml"), "[repository\n").unwrap();
    let json = fixture
        .run(&["approve", "--effort", "e", "--dry-run", "--json"])
        .json();
    assert_eq!(json["error"], "invalid_config", "{json}");
}
