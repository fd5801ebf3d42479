//! `builtin:pattern`: how often a regular expression matches in a set of files, with one
//! finding per match (lint suppressions, `unwrap()`, TODOs…).
//!
//! Config: `pattern` (required, Rust regex syntax), `paths` (required, pathspec globs),
//! `case_insensitive` (default false), `max_findings` (default 1,000; the counts stay exact).
#![cfg_attr(not(test), deny(clippy::unwrap_used))]

use std::collections::HashMap;

use discern_sdk::{Config, Error, Finding, Info, Metric, Producer, Snapshot, is_binary};
use regex::bytes::RegexBuilder;

const DEFAULT_MAX_FINDINGS: u64 = 1_000;

pub struct Pattern;

impl Producer for Pattern {
    fn describe() -> Info {
        Info::new("pattern", env!("CARGO_PKG_VERSION"), &["matches", "files"]).with_config_schema(
            r#"{"type":"object","required":["pattern","paths"],"additionalProperties":false,"properties":{"pattern":{"type":"string"},"paths":{"type":"array","items":{"type":"string"},"minItems":1},"case_insensitive":{"type":"boolean"},"max_findings":{"type":"integer","minimum":0}}}"#,
        )
    }

    fn run(snapshot: &dyn Snapshot, config: &Config) -> Result<Vec<Metric>, Error> {
        config.allow_only(&["pattern", "paths", "case_insensitive", "max_findings"])?;
        let source = config.str("pattern")?;
        let regex = RegexBuilder::new(source)
            .case_insensitive(config.opt_bool("case_insensitive")?.unwrap_or(false))
            .multi_line(true)
            .build()
            .map_err(|e| Error::new(format!("config.pattern is not a valid regex: {e}")))?;
        let max_findings = config
            .opt_u64("max_findings")?
            .unwrap_or(DEFAULT_MAX_FINDINGS);
        let (mut matches, mut files) = (0u64, 0u64);
        let mut findings = Vec::new();
        for entry in snapshot.files(&config.globs("paths")?) {
            let content = snapshot.read(&entry.path).map_err(Error::from)?;
            if is_binary(&content) {
                continue;
            }
            let mut in_file = 0u64;
            let mut seen: HashMap<&[u8], usize> = HashMap::new();
            let mut line = 1;
            let mut counted_to = 0;
            for m in regex.find_iter(&content) {
                in_file += 1;
                if (findings.len() as u64) < max_findings {
                    line += content[counted_to..m.start()]
                        .iter()
                        .filter(|&&b| b == b'\n')
                        .count();
                    counted_to = m.start();
                    let occurrence = seen.entry(m.as_bytes()).or_insert(0);
                    let text = String::from_utf8_lossy(m.as_bytes());
                    findings.push(Finding::new(
                        source,
                        &entry.path,
                        &text,
                        *occurrence,
                        format!("{}:{line}: {}", entry.path, text.trim()),
                    ));
                    *occurrence += 1;
                }
            }
            matches += in_file;
            files += u64::from(in_file > 0);
        }
        Ok(vec![
            Metric::new("matches", matches as f64).with_findings(findings),
            Metric::new("files", files as f64),
        ])
    }
}

discern_sdk::export_producer!(Pattern);

#[cfg(test)]
mod tests {
    use super::*;
    use discern_sdk::testing::MemorySnapshot;

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
        assert_eq!(m[1].value, 2.0);
        let messages: Vec<_> = m[0].findings.iter().map(|f| f.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "a.rs:1: .unwrap()",
                "a.rs:2: .unwrap()",
                "b.rs:2: .unwrap()"
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

    #[test]
    fn binary_files_are_skipped() {
        let s = MemorySnapshot::new().file("bin", b"TODO\0TODO".to_vec());
        let m = run(&s, r#"{"pattern": "TODO", "paths": ["*"]}"#).unwrap();
        assert_eq!(m[0].value, 0.0);
    }
}
