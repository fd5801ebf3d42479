//! Each built-in producer on a fixture commit. The work tree is then edited without
//! committing; the readings must describe the commit, never the work tree.

use std::sync::Arc;

use discern::testing::runtime::{Artifacts, Limits};
use discern::testing::snapshot::Snapshot;
use discern_tests::TestRepo;
use serde_json::json;

use crate::support::{RUNTIME, builtin, run, value};

const LCOV: &str = "SF:src/lib.rs\nDA:1,1\nDA:2,0\nDA:3,4\nDA:4,1\nend_of_record\n";

/// A committed fixture plus uncommitted noise: edits, a deletion, an untracked file.
fn fixture() -> (TestRepo, Snapshot) {
    let repo = TestRepo::new();
    repo.write("src/lib.rs", "pub fn a() {}\n// TODO: one\n// TODO: two\n")
        .write("src/main.rs", "fn main() {\n    x.unwrap();\n}\n")
        .write("docs/guide.md", "# Guide\n\nSome words here.\n")
        .write("assets/big.bin", vec![7u8; 5000])
        .write("coverage/lcov.info", LCOV);
    repo.commit("fixture");
    repo.write("src/lib.rs", "// TODO a\n// TODO b\n// TODO c\n// TODO d\n")
        .write("src/untracked.rs", "// TODO untracked\nx.unwrap();\n")
        .write("assets/big.bin", vec![7u8; 90_000])
        .remove("docs/guide.md");
    let snapshot = Snapshot::open(repo.path(), "HEAD").unwrap();
    (repo, snapshot)
}

#[test]
fn extent_counts_the_commit() {
    let (_repo, snapshot) = fixture();
    let out = run(
        &builtin("extent"),
        json!({"paths": ["src/**/*.rs", "docs"]}),
        &snapshot,
        &Limits::default(),
    )
    .unwrap();
    assert_eq!(value(&out, "files"), 3.0);
    assert_eq!(value(&out, "lines"), 3.0 + 3.0 + 3.0);
    assert_eq!(value(&out, "bytes"), (40 + 30 + 26) as f64);
    assert_eq!(value(&out, "max_lines"), 3.0);
}

#[test]
fn pattern_counts_the_commit_with_findings() {
    let (_repo, snapshot) = fixture();
    let out = run(
        &builtin("pattern"),
        json!({"pattern": "TODO", "paths": ["src/**"]}),
        &snapshot,
        &Limits::default(),
    )
    .unwrap();
    assert_eq!(value(&out, "matches"), 2.0);
    assert_eq!(value(&out, "files"), 1.0);
    let findings = &out.metrics[0].findings;
    assert_eq!(findings.len(), 2);
    assert_eq!(findings[0].path.as_deref(), Some("src/lib.rs"));
    assert_eq!(findings[1].message, "TODO");
    assert_eq!((findings[1].line, findings[1].column), (Some(3), Some(4)));
    assert!(out.metrics[0].counted, "matches counts its findings");
}

#[test]
fn file_size_reads_committed_sizes() {
    let (_repo, snapshot) = fixture();
    let out = run(
        &builtin("file-size"),
        json!({"paths": ["**"]}),
        &snapshot,
        &Limits::default(),
    )
    .unwrap();
    assert_eq!(value(&out, "max_bytes"), 5000.0);
    assert_eq!(value(&out, "files"), 5.0);
    let one = run(
        &builtin("file-size"),
        json!({"path": "assets/big.bin"}),
        &snapshot,
        &Limits::default(),
    )
    .unwrap();
    assert_eq!(value(&one, "bytes"), 5000.0);
}

#[test]
fn lcov_reads_a_committed_tracefile_and_an_artifact() {
    let (_repo, snapshot) = fixture();
    let committed = run(
        &builtin("lcov"),
        json!({"path": "coverage/lcov.info"}),
        &snapshot,
        &Limits::default(),
    )
    .unwrap();
    assert_eq!(value(&committed, "line_percent"), 75.0);

    let mut artifacts = Artifacts::new();
    artifacts.insert(
        "artifact",
        "SF:a\nDA:1,1\nDA:2,0\nend_of_record\n".as_bytes(),
    );
    let from_job = RUNTIME
        .run(
            &builtin("lcov"),
            "{}",
            &snapshot,
            Arc::new(artifacts),
            &Limits::default(),
        )
        .unwrap();
    assert_eq!(value(&from_job, "line_percent"), 50.0);
    assert_eq!(from_job.read_set.artifacts.len(), 1);
}

#[test]
fn discern_metric_reads_job_stdout() {
    let (_repo, snapshot) = fixture();
    let mut artifacts = Artifacts::new();
    artifacts.insert(
        "stdout",
        "running\nDISCERN_METRIC speed 10\nDISCERN_METRIC speed 12.5\n".as_bytes(),
    );
    let out = RUNTIME
        .run(
            &builtin("discern-metric"),
            "{}",
            &snapshot,
            Arc::new(artifacts),
            &Limits::default(),
        )
        .unwrap();
    assert_eq!(value(&out, "speed"), 12.5);

    let err = RUNTIME
        .run(
            &builtin("discern-metric"),
            "{}",
            &snapshot,
            Arc::new(Artifacts::new()),
            &Limits::default(),
        )
        .unwrap_err();
    let message = err.to_string();
    assert!(
        message.starts_with("producer builtin:discern-metric reported an error"),
        "{message}"
    );
    assert!(
        message.contains("this Standard declares no artifacts"),
        "{message}"
    );
}

#[test]
fn a_bad_config_is_the_producers_clear_error() {
    let (_repo, snapshot) = fixture();
    let err = run(
        &builtin("pattern"),
        json!({"pattern": "(", "paths": ["**"]}),
        &snapshot,
        &Limits::default(),
    )
    .unwrap_err();
    assert!(
        err.to_string().starts_with(
            "producer builtin:pattern reported an error: config.pattern is not a valid regex"
        ),
        "{err}"
    );
}

#[test]
fn describe_declares_metrics() {
    let info = RUNTIME.describe(&builtin("extent")).unwrap();
    assert_eq!(info.name, "extent");
    assert_eq!(
        info.metrics,
        ["files", "lines", "words", "bytes", "max_lines"]
    );
    assert!(info.config_schema.is_some());
}

#[test]
fn the_read_set_records_listings_and_reads_with_blob_ids() {
    let (repo, snapshot) = fixture();
    let out = run(
        &builtin("pattern"),
        json!({"pattern": "TODO", "paths": ["src/**"]}),
        &snapshot,
        &Limits::default(),
    )
    .unwrap();
    let read_set = &out.read_set;
    assert_eq!(read_set.listings.len(), 1);
    assert_eq!(read_set.listings[0].globs, ["src/**"]);
    let blob = repo
        .git(&["rev-parse", "HEAD:src/lib.rs"])
        .trim()
        .to_owned();
    let lib = ("src/lib.rs".to_owned(), blob);
    let named = |e: &discern::testing::snapshot::Entry| (e.path().to_string(), e.id.to_string());
    let listed: Vec<_> = read_set
        .entries_listed(&read_set.listings[0])
        .map(named)
        .collect();
    assert!(listed.contains(&lib), "{listed:?}");
    let read: Vec<_> = read_set.entries_read().map(named).collect();
    assert!(read.contains(&lib), "{read:?}");
    assert_eq!(
        read_set.paths().collect::<std::collections::BTreeSet<_>>(),
        ["src/lib.rs", "src/main.rs"].into_iter().collect()
    );
}
