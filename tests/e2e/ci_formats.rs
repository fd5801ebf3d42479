//! The CI formats (`--output-format github|sarif|junit|gitlab`, `DISCERN_OUTPUT_FORMAT`) of a
//! real run on a real repository: a branch that swaps a TODO, adds an `unwrap()` past its
//! ceiling, grows the file count past its ceiling (no findings) and holds one Standard.
//! Snapshotted, the SARIF checked against the official 2.1.0 schema, exit codes unchanged.

use serde_json::Value;

use crate::support::Fixture;
use crate::support::config::{Config, Standard};

fn config() -> Config {
    let todo = Standard::pattern("todo", r"TODO: \w+", &["src/**"]).limit(2);
    let unwraps = Standard::pattern("unwraps", r"\.unwrap\(\)", &["src/**"]);
    let files = Standard::extent("files", "", &["src/**"]).without("metric");
    let readme = Standard::extent("readme", "lines", &["README.md"]).up();
    Config::new()
        .standard(todo)
        .standard(unwraps)
        .standard(files.limit(2))
        .standard(readme.limit(1))
}

/// The official SARIF 2.1.0 schema (OASIS, `sarif-2.1/schema/sarif-schema-2.1.0.json` of the
/// sarif-spec repository), vendored so the test is hermetic.
const SARIF_SCHEMA: &str = include_str!("sarif-schema-2.1.0.json");

/// A branch with a swapped, two regressed (one without findings) and a held Standard.
fn failing() -> Fixture {
    let fixture = Fixture::new(config());
    fixture.repo.git(&["checkout", "-q", "-b", "agent/work"]);
    fixture
        .repo
        .write(
            "src/lib.rs",
            "// TODO: one\npub fn a() {}\npub fn b() {}\n\n// TODO: three\n",
        )
        .write(
            "src/extra.rs",
            "pub fn c(x: Option<u8>) -> u8 {\n    x.unwrap()\n}\n",
        );
    fixture.repo.commit("work");
    fixture
}

fn run(fixture: &Fixture, format: &str) -> crate::support::Run {
    fixture.run(&["standards", "--output-format", format])
}

macro_rules! assert_ci_snapshot {
    ($name:expr, $text:expr, $fixture:expr) => {
        let root = $fixture.path().display().to_string();
        insta::with_settings!({filters => vec![
            (root.as_str(), "[repo]"),
            (r"[0-9a-f]{40}", "[commit]"),
            (r"\b[0-9a-f]{12}\b", "[short]"),
            (r"::stop-commands::[0-9a-f]{32}", "::stop-commands::[token]"),
            (r"(?m)^::[0-9a-f]{32}::$", "::[token]::"),
        ]}, {
            insta::assert_snapshot!($name, $text);
        });
    };
}

#[test]
fn github_annotates_new_findings_and_failing_standards_and_writes_the_job_summary() {
    let fixture = failing();
    let summary = fixture.repo.parent().join("step-summary.md");
    std::fs::write(&summary, "# earlier step\n").unwrap();
    let summary_var = summary.display().to_string();
    let run = fixture.run_with(
        &["standards", "--output-format", "github"],
        &[("GITHUB_STEP_SUMMARY", summary_var.as_str())],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    let errors: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("::error "))
        .collect();
    assert_eq!(errors.len(), 3, "{}", run.stdout);
    assert!(
        errors.iter().any(|l| l.starts_with(
            "::error file=src/lib.rs,line=5,col=4,title=discern%3A new finding of todo%3A swapped"
        ) && l.ends_with("::TODO: three")),
        "{errors:?}"
    );
    assert!(
        errors
            .iter()
            .any(|l| l.starts_with("::error file=discern.toml,line=") && l.contains("files")),
        "a failing Standard without findings points at its table: {errors:?}"
    );
    assert_ci_snapshot!("github", run.stdout.as_str(), fixture);
    let written = std::fs::read_to_string(&summary).unwrap();
    assert!(
        written.starts_with("# earlier step\n# discern standards"),
        "appended: {written}"
    );
    assert!(
        written.contains("| todo |") || written.contains("todo"),
        "{written}"
    );
    // The same through the environment variable, and the exit code of every format is the
    // verb's.
    let by_env = fixture.run_with(&["standards"], &[("DISCERN_OUTPUT_FORMAT", "github")]);
    assert_eq!(by_env.code, 1);
    assert!(by_env.stdout.starts_with("::error "), "{}", by_env.stdout);
    for format in ["sarif", "junit", "gitlab", "human", "json", "markdown"] {
        assert_eq!(run_code(&fixture, format), 1, "{format}");
    }
}

fn run_code(fixture: &Fixture, format: &str) -> i32 {
    run(fixture, format).code
}

#[test]
fn github_caps_annotations_at_ten_with_a_summary_line() {
    let fixture = Fixture::new(config());
    fixture.repo.git(&["checkout", "-q", "-b", "agent/work"]);
    let many: String = (0..14)
        .map(|i| format!("pub fn f{i}(x: Option<u8>) -> u8 {{ x.unwrap() }}\n"))
        .collect();
    fixture.repo.write("src/many.rs", many);
    fixture.repo.commit("many unwraps");
    let run = run(&fixture, "github");
    let errors: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("::error "))
        .collect();
    assert_eq!(errors.len(), 10, "{}", run.stdout);
    // 14 findings + the file count: 9 shown, the 10th counts the 6 others.
    assert!(
        errors[9].contains("::6 more errors not shown"),
        "{}",
        errors[9]
    );
}

#[test]
fn sarif_is_valid_against_the_official_schema_with_fingerprints_and_locations() {
    let fixture = failing();
    let run = run(&fixture, "sarif");
    assert_eq!(run.code, 1, "{}", run.stderr);
    let log: Value = serde_json::from_str(&run.stdout).expect("SARIF is JSON");
    let schema: Value = serde_json::from_str(SARIF_SCHEMA).expect("the schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let problems: Vec<String> = validator
        .iter_errors(&log)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(problems.is_empty(), "{problems:#?}");
    let run0 = &log["runs"][0];
    assert_eq!(run0["tool"]["driver"]["name"], "discern");
    assert_eq!(run0["tool"]["driver"]["version"], env!("CARGO_PKG_VERSION"));
    let rules: Vec<&str> = run0["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(rules, ["todo", "unwraps", "files", "readme"]);
    let results = run0["results"].as_array().unwrap();
    let todo = results
        .iter()
        .find(|r| r["ruleId"] == "todo")
        .expect("the swapped Standard's new finding");
    assert_eq!(todo["level"], "error");
    assert_eq!(
        todo["locations"][0]["physicalLocation"]["region"]["startLine"],
        5
    );
    let json = fixture.run(&["standards", "--json"]).json();
    let new = &crate::support::standard(&json, "todo")["findings"]["new"][0];
    assert_eq!(
        todo["partialFingerprints"]["discernFinding/v2"],
        new["fingerprint"]
    );
    assert_ci_snapshot!("sarif", run.stdout.as_str(), fixture);
}

#[test]
fn junit_has_one_case_per_standard_and_gitlab_unique_fingerprints() {
    let fixture = failing();
    let junit = run(&fixture, "junit");
    assert_eq!(junit.code, 1);
    assert!(
        junit
            .stdout
            .contains("<testsuite name=\"discern standards\" tests=\"4\" failures=\"3\""),
        "{}",
        junit.stdout
    );
    assert_ci_snapshot!("junit", junit.stdout.as_str(), fixture);
    let gitlab = run(&fixture, "gitlab");
    let report: Value = serde_json::from_str(&gitlab.stdout).expect("JSON");
    let issues = report.as_array().unwrap();
    let mut fingerprints: Vec<&str> = issues
        .iter()
        .map(|i| i["fingerprint"].as_str().unwrap())
        .collect();
    fingerprints.sort_unstable();
    fingerprints.dedup();
    assert_eq!(fingerprints.len(), issues.len(), "unique: {report}");
    for issue in issues {
        for key in ["description", "check_name", "severity"] {
            assert!(issue[key].is_string(), "{issue}");
        }
        assert!(issue["location"]["lines"]["begin"].is_u64(), "{issue}");
    }
    assert_ci_snapshot!("gitlab", gitlab.stdout.as_str(), fixture);
}

#[test]
fn a_refusal_renders_in_every_format_and_a_green_run_is_quiet() {
    let fixture = Fixture::new(config());
    let refused = fixture.run(&["standards", "nosuch", "--output-format", "github"]);
    assert_eq!(refused.code, 1);
    assert!(
        refused
            .stdout
            .starts_with("::error title=discern standards%3A unknown_standard::"),
        "{}",
        refused.stdout
    );
    let junit = fixture.run(&["standards", "nosuch", "--output-format", "junit"]);
    assert!(
        junit.stdout.contains("<failure message="),
        "{}",
        junit.stdout
    );
    let sarif = fixture.run(&["standards", "nosuch", "--output-format", "sarif"]);
    let log: Value = serde_json::from_str(&sarif.stdout).unwrap();
    assert_eq!(
        log["runs"][0]["invocations"][0]["executionSuccessful"],
        false
    );
    // On the trunk every Standard holds and nothing is new since its parent: no annotation, an
    // empty Code Quality report (on a first commit every finding would be new).
    fixture.repo.write("README.md", "# fixture\n\nMore.\n");
    fixture.repo.commit("docs");
    let green = fixture.run(&["standards", "--output-format", "gitlab"]);
    assert_eq!(green.code, 0, "{}", green.stdout);
    assert_eq!(green.stdout, "[]\n");
    let github = fixture.run(&["standards", "--output-format", "github"]);
    assert!(!github.stdout.contains("::error"), "{}", github.stdout);
    // A bad format name is a usage error.
    assert_eq!(
        fixture
            .run_with(&["standards"], &[("DISCERN_OUTPUT_FORMAT", "yaml")])
            .code,
        2
    );
    assert_eq!(run_code(&fixture, "yaml"), 2);
}

/// A CI run whose limits cannot be verified (the trunk not in the clone) is no clean run in
/// code scanning: `executionSuccessful: false`, with the reason as a notification.
#[test]
fn sarif_marks_an_unverified_run_unsuccessful_with_its_reason() {
    let fixture = Fixture::new(Config::landing());
    fixture.repo.git(&["checkout", "-q", "-b", "agent/x"]);
    fixture.repo.git(&["branch", "-q", "-D", "main"]);
    let run = fixture.run_with(
        &["standards", "--output-format", "sarif"],
        &[("CI", "true")],
    );
    assert_eq!(run.code, 1, "{}", run.stdout);
    let log: Value = serde_json::from_str(&run.stdout).unwrap();
    let invocation = &log["runs"][0]["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false, "{log}");
    let notes = invocation["toolExecutionNotifications"].to_string();
    assert!(notes.contains("cannot be verified"), "{log}");
}

/// A required trunk check without `--baseline`: the failure names its reason and the one fix,
/// asks for no second fetch and never tells the trunk to restore (revert) its limits.
#[test]
fn an_unverified_trunk_check_names_its_reason_and_one_fix_and_never_a_revert() {
    let fixture = Fixture::new(Config::landing());
    let run = fixture.run_with(&["standards"], &[("CI", "true")]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let text = format!("{}{}", run.stdout, run.stderr);
    assert!(
        text.contains("limits unverified versus main (on the trunk, a required check"),
        "{text}"
    );
    assert!(text.contains("--baseline <before>"), "{text}");
    for wrong in ["Restore the trunk", "--deepen", "): ."] {
        assert!(!text.contains(wrong), "{wrong:?} in {text}");
    }
    let json = fixture
        .run_with(&["standards", "--json"], &[("CI", "true")])
        .json();
    let ids: Vec<&str> = json["hints"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|h| h["id"].as_str())
        .collect();
    assert_eq!(ids, ["standards-limits-unverified"], "{json}");
}
