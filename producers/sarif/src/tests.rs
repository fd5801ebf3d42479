//! The producer over the shapes tools really write: several runs, results without locations,
//! relative `uriBaseId`s, absolute `file://` URIs, missing fingerprints, levels and
//! suppressions.

use discern_sdk::testing::MemorySnapshot;
use discern_sdk::{Config, Metric, Producer, Severity};
use serde_json::json;

use crate::Sarif;

fn snapshot(log: &serde_json::Value) -> MemorySnapshot {
    MemorySnapshot::new()
        .file("src/a.py", "import os\nx = 'é' + y\n")
        .file("src/b.py", "pass\n")
        .file("lib/c.py", "pass\n")
        .artifact("artifact", log.to_string())
}

fn run_with(log: serde_json::Value, config: serde_json::Value) -> Result<Vec<Metric>, String> {
    let config = Config::parse(&config.to_string()).map_err(|e| e.to_string())?;
    Sarif::run(&snapshot(&log), &config).map_err(|e| e.to_string())
}

fn run(log: serde_json::Value) -> Vec<Metric> {
    run_with(log, json!({})).expect("the log is read")
}

fn metric<'a>(metrics: &'a [Metric], name: &str) -> &'a Metric {
    metrics
        .iter()
        .find(|m| m.name == name)
        .unwrap_or_else(|| panic!("no {name} in {metrics:?}"))
}

fn result(rule: &str, uri: &str, line: i64) -> serde_json::Value {
    json!({"ruleId": rule, "message": {"text": format!("{rule} here")},
           "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri},
                                               "region": {"startLine": line, "startColumn": 1}}}]})
}

fn log(runs: Vec<serde_json::Value>) -> serde_json::Value {
    json!({"version": "2.1.0", "runs": runs})
}

#[test]
fn several_runs_are_added_up_per_level_and_rule() {
    let metrics = run(log(vec![
        json!({"tool": {"driver": {"name": "a", "rules": [{"id": "E1", "defaultConfiguration": {"level": "error"}}]}},
               "results": [result("E1", "src/a.py", 1), result("W2", "src/b.py", 1)]}),
        json!({"tool": {"driver": {"name": "b"}},
               "results": [json!({"ruleId": "N3", "level": "note", "message": {"text": "n"}})]}),
    ]));
    assert_eq!(metric(&metrics, "results").value, 3.0);
    assert!(metric(&metrics, "results").counted);
    assert_eq!(metric(&metrics, "results").findings.len(), 3);
    assert_eq!(
        metric(&metrics, "level:error").value,
        1.0,
        "the rule's default level"
    );
    assert_eq!(
        metric(&metrics, "level:warning").value,
        1.0,
        "SARIF's default"
    );
    assert_eq!(metric(&metrics, "level:note").value, 1.0);
    assert_eq!(metric(&metrics, "level:none").value, 0.0);
    assert_eq!(metric(&metrics, "rule:E1").value, 1.0);
    let severities: Vec<_> = metric(&metrics, "results")
        .findings
        .iter()
        .map(|f| f.severity)
        .collect();
    assert_eq!(
        severities,
        [
            Some(Severity::Error),
            Some(Severity::Warning),
            Some(Severity::Note)
        ]
    );
}

#[test]
fn a_result_without_a_location_counts_without_a_path() {
    let metrics = run(log(vec![json!({"results": [
        {"ruleId": "X", "message": {"text": "somewhere {0}", }, },
        {"ruleId": "Y", "message": {"text": "in {0}", "arguments": ["general"]}},
    ]})]));
    let results = metric(&metrics, "results");
    assert_eq!(results.value, 2.0);
    assert_eq!(results.findings[0].path, None);
    assert_eq!(results.findings[0].line, None);
    assert_eq!(results.findings[1].message, "Y: in general");
    // Filtering by paths leaves out what has no path.
    let paths = run_with(
        log(vec![
            json!({"results": [{"ruleId": "X", "message": {"text": "m"}}]}),
        ]),
        json!({"paths": ["src/**"]}),
    )
    .expect("runs");
    assert_eq!(metric(&paths, "results").value, 0.0);
}

#[test]
fn relative_uri_base_ids_resolve_through_original_uri_base_ids() {
    let metrics = run(log(vec![json!({
        "originalUriBaseIds": {
            "SRC": {"uri": "src/", "uriBaseId": "ROOT"},
            "ROOT": {"uri": "file:///work/repo/"},
            "UNDEFINED_BASE": {}
        },
        "results": [
            {"ruleId": "R", "message": {"text": "m"},
             "locations": [{"physicalLocation": {"artifactLocation": {"uri": "a.py", "uriBaseId": "SRC"}, "region": {"startLine": 2, "startColumn": 7}}}]},
            {"ruleId": "R", "message": {"text": "m"},
             "locations": [{"physicalLocation": {"artifactLocation": {"uri": "lib/c.py", "uriBaseId": "%SRCROOT%"}}}]},
            {"ruleId": "R", "message": {"text": "m"},
             "locations": [{"physicalLocation": {"artifactLocation": {"uri": "file:///elsewhere/d.py"}}}]},
        ]
    })]));
    let results = metric(&metrics, "results");
    let paths: Vec<_> = results.findings.iter().map(|f| f.path.as_deref()).collect();
    assert_eq!(paths, [Some("src/a.py"), Some("lib/c.py")]);
    // Column 7 counts UTF-16 units past `x = 'é'`: the byte column is one more, after é.
    assert_eq!(
        (results.findings[0].line, results.findings[0].column),
        (Some(2), Some(8))
    );
    let outside = metric(&metrics, "outside_checkout");
    assert_eq!(outside.value, 1.0);
    assert!(
        outside.findings[0]
            .message
            .contains("file:///elsewhere/d.py"),
        "{outside:?}"
    );
}

#[test]
fn absolute_file_uris_are_made_relative_to_the_checkout_they_name() {
    let metrics = run(log(vec![json!({"results": [
        result("F401", "file:///tmp/job/checkout/src/a.py", 1),
        result("F401", "file:///tmp/job/checkout/lib/c.py", 1),
        result("F401", "file:///usr/lib/python3/os.py", 1),
    ]})]));
    let paths: Vec<_> = metric(&metrics, "results")
        .findings
        .iter()
        .map(|f| f.path.clone())
        .collect();
    assert_eq!(
        paths,
        [Some("src/a.py".to_owned()), Some("lib/c.py".to_owned())]
    );
    assert_eq!(metric(&metrics, "outside_checkout").value, 1.0);
    // No absolute path names a tracked file: refused, not guessed.
    let refused = run_with(
        log(vec![
            json!({"results": [result("F401", "file:///x/y/z.py", 1)]}),
        ]),
        json!({}),
    )
    .expect_err("refused");
    assert!(refused.contains("cannot be told"), "{refused}");
    // A working directory the run names wins.
    let named = run(log(vec![json!({
        "invocations": [{"executionSuccessful": true, "workingDirectory": {"uri": "file:///w/"}}],
        "results": [result("F401", "file:///w/src/b.py", 1)]})]));
    assert_eq!(
        metric(&named, "results").findings[0].path.as_deref(),
        Some("src/b.py")
    );
}

#[test]
fn fingerprints_come_from_the_tool_else_rule_path_and_content_without_lines() {
    let with = |fingerprints: serde_json::Value, line: i64| {
        let mut r = result("R", "src/a.py", line);
        r["partialFingerprints"] = fingerprints;
        r
    };
    let metrics = run(log(vec![json!({"results": [
        with(json!({"zeta/v1": "z", "alpha/v1": "a"}), 1),
        with(json!({}), 1),
        with(json!({}), 2),
        result("R", "src/b.py", 1),
    ]})]));
    let ids: Vec<String> = metric(&metrics, "results")
        .findings
        .iter()
        .map(|f| f.fingerprint.clone())
        .collect();
    assert!(
        ids[0].starts_with("alpha/v1/"),
        "the first key in order: {ids:?}"
    );
    assert_ne!(
        ids[1], ids[2],
        "two equal results in one file are two findings"
    );
    assert_ne!(ids[1], ids[3], "the path is part of the identity");
    // Moving a result to another line keeps its identity.
    let moved = run(log(vec![json!({"results": [result("R", "src/a.py", 9)]})]));
    let again = run(log(vec![json!({"results": [result("R", "src/a.py", 1)]})]));
    assert_eq!(
        metric(&moved, "results").findings[0].fingerprint,
        metric(&again, "results").findings[0].fingerprint
    );
}

#[test]
fn levels_kinds_suppressions_and_the_selection() {
    let results = json!([
        {"ruleId": "E1", "level": "error", "message": {"text": "e"}},
        {"ruleId": "E2", "level": "error", "message": {"text": "e"}, "suppressions": [{"kind": "inSource"}]},
        {"ruleId": "E3", "level": "error", "message": {"text": "e"}, "suppressions": [{"kind": "external", "status": "rejected"}]},
        {"ruleId": "P1", "kind": "pass", "message": {"text": "fine"}},
        {"ruleId": "R1", "kind": "review", "message": {"text": "look"}},
        result("F401", "src/a.py", 1),
        result("F811", "lib/c.py", 1),
    ]);
    let all = run(log(vec![json!({"results": results})]));
    assert_eq!(metric(&all, "results").value, 5.0, "{all:?}");
    assert_eq!(metric(&all, "suppressed").value, 1.0);
    assert_eq!(metric(&all, "level:none").value, 1.0, "a review result");
    let chosen = |config| {
        let metrics =
            run_with(log(vec![json!({"results": results.clone()})]), config).expect("runs");
        metric(&metrics, "results").value
    };
    assert_eq!(chosen(json!({"level": "error"})), 2.0);
    assert_eq!(chosen(json!({"level": ["error", "none"]})), 3.0);
    assert_eq!(chosen(json!({"rule": "F*"})), 2.0);
    assert_eq!(chosen(json!({"rule": ["F401", "E1"]})), 2.0);
    assert_eq!(chosen(json!({"paths": ["src/**"]})), 1.0);
    assert!(
        run_with(log(vec![]), json!({"level": "fatal"}))
            .expect_err("refused")
            .contains("no SARIF level")
    );
}

#[test]
fn what_is_no_sarif_is_refused_clearly() {
    let err = run_with(json!({"version": "2.0.0", "runs": []}), json!({})).expect_err("old");
    assert!(err.contains("reads SARIF 2.1.0"), "{err}");
    let config = Config::parse("{}").expect("config");
    let snapshot = MemorySnapshot::new().artifact("artifact", "not json");
    let err = Sarif::run(&snapshot, &config).expect_err("refused");
    assert!(err.to_string().contains("not a SARIF log"), "{err}");
    let empty = run(log(vec![json!({"results": null})]));
    assert_eq!(metric(&empty, "results").value, 0.0);
}
