use super::*;
use discern_sdk::testing::MemorySnapshot;

fn all(
    scanned: impl FnOnce(&mut dyn FnMut(usize, usize, &[u8])) -> Counts,
) -> (Counts, Vec<(usize, usize, Vec<u8>)>) {
    let mut seen = Vec::new();
    let counts = scanned(&mut |l, c, t| seen.push((l, c, t.to_vec())));
    (counts, seen)
}

/// The one-pass scan agrees with the per-line model on every pattern and text it takes.
#[test]
fn the_one_pass_scan_agrees_with_the_per_line_model() {
    let texts = [
        "MARK a\nb MARK MARK\n\nMARK\n",
        "x\r\nMARK\r\n",
        "\n\n\n",
        "no final newline MARK",
        "a\n  \n\t\nb",
        "xx\nx x\n",
        "é MARK é\nMARK",
    ];
    let patterns = [
        "MARK", "^$", "^[ \t]*$", "x$", "\\bx", "mark|", "o*", "^", "$", "\\s+", "[^a]+",
        "(?i)mark", "\\AT", "O\\z",
    ];
    for pattern in patterns {
        let scanner = Scanner::new(pattern, false).unwrap();
        for text in texts {
            let fast = all(|f| scanner.scan(text.as_bytes(), f));
            let reference = all(|f| scan(&scanner.per_line, text.as_bytes(), f));
            assert_eq!(fast, reference, "pattern {pattern:?} on {text:?}");
        }
    }
}

fn run(snapshot: &MemorySnapshot, config: &str) -> Result<Vec<Metric>, Error> {
    Pattern::run(snapshot, &Config::parse(config).unwrap())
}

#[test]
fn counts_matches_and_files_with_a_finding_per_match() {
    let s = MemorySnapshot::new()
        .file("a.rs", "x.unwrap();\ny.unwrap();\n")
        .file("b.rs", "fine\n// z.unwrap()\n")
        .file("c.rs", "nothing here\n");
    let m = run(&s, r#"{"pattern": "\\.unwrap\\(\\)", "paths": ["*.rs"]}"#).unwrap();
    assert_eq!(m[0].value, 3.0);
    assert_eq!(m[1].value, 3.0);
    assert_eq!(m[2].value, 2.0);
    let located: Vec<_> = m[0]
        .findings
        .iter()
        .map(|f| (f.path.as_deref(), f.line, f.column, f.message.as_str()))
        .collect();
    assert_eq!(
        located,
        [
            (Some("a.rs"), Some(1), Some(2), ".unwrap()"),
            (Some("a.rs"), Some(2), Some(2), ".unwrap()"),
            (Some("b.rs"), Some(2), Some(5), ".unwrap()")
        ]
    );
    // Equal text in one file: distinct identities by occurrence, stable across line moves.
    assert_ne!(m[0].findings[0].fingerprint, m[0].findings[1].fingerprint);
    let moved = MemorySnapshot::new().file("b.rs", "\n\n\nfine\n// z.unwrap()\n");
    let m2 = run(
        &moved,
        r#"{"pattern": "\\.unwrap\\(\\)", "paths": ["*.rs"]}"#,
    )
    .unwrap();
    assert_eq!(m2[0].findings[0].fingerprint, m[0].findings[2].fingerprint);
}

#[test]
fn findings_are_capped_but_counts_stay_exact() {
    let s = MemorySnapshot::new().file("a.txt", "TODO\n".repeat(50));
    let m = run(
        &s,
        r#"{"pattern": "todo", "paths": ["*"], "case_insensitive": true, "max_findings": 10}"#,
    )
    .unwrap();
    assert_eq!(m[0].value, 50.0);
    assert_eq!(m[0].findings.len(), 10);
}

#[test]
fn bad_regex_is_a_clear_error() {
    let err = run(
        &MemorySnapshot::new(),
        r#"{"pattern": "(", "paths": ["*"]}"#,
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("config.pattern is not a valid regex")
    );
}

fn counts(pattern: &str, content: &str) -> (f64, f64) {
    let s = MemorySnapshot::new().file("a.txt", content);
    let config = serde_json::json!({"pattern": pattern, "paths": ["*"]}).to_string();
    let m = run(&s, &config).unwrap();
    (m[0].value, m[1].value)
}

#[test]
fn the_line_model_is_git_greps() {
    // No phantom empty line after the final newline; an empty file has no line.
    assert_eq!(counts("^$", "a\n\nb\n"), (0.0, 1.0));
    assert_eq!(counts("^[ \t]*$", "a\n  \n\n"), (1.0, 2.0));
    assert_eq!(counts("^$", ""), (0.0, 0.0));
    assert_eq!(counts("^$", "\n"), (0.0, 1.0));
    // `\s` does not run across a line end.
    assert_eq!(counts("a\\s+b", "a\nb\n"), (0.0, 0.0));
    assert_eq!(counts("a\\s+b", "a \t b\n"), (1.0, 1.0));
    // CRLF: `\r` is part of the line, as in git grep.
    assert_eq!(counts("x$", "x\r\nx\n"), (1.0, 1.0));
    // Empty matches are not counted as occurrences, but their lines match.
    assert_eq!(counts("mark|", "a mark b mark\nnone\n"), (2.0, 2.0));
    assert_eq!(counts("o", "foo\nbar\nno final newline o"), (4.0, 2.0));
}

#[test]
fn a_match_longer_than_a_message_is_truncated_not_a_failure() {
    let long = "x".repeat(10_000);
    let s = MemorySnapshot::new().file("a.txt", format!("{long}\n"));
    let m = run(&s, r#"{"pattern": "x+", "paths": ["*"]}"#).unwrap();
    assert_eq!(m[0].value, 1.0);
    assert!(m[0].findings[0].message.len() <= discern_sdk::MAX_MESSAGE_BYTES);
}

#[test]
fn binary_files_are_skipped() {
    let s = MemorySnapshot::new().file("bin", b"TODO\0TODO".to_vec());
    let m = run(&s, r#"{"pattern": "TODO", "paths": ["*"]}"#).unwrap();
    assert_eq!(m[0].value, 0.0);
}
