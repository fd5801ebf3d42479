//! `builtin:extent`: how big a set of files is — files, lines, words and bytes over pathspecs.
//!
//! Config: `paths` (required, pathspec globs). Lines and words count text files only; a
//! binary file (NUL in its first 8,000 bytes) counts toward `files` and `bytes`. `lines` are
//! `wc -l`'s newlines plus a final line without one; `words` split as `wc -w` under
//! `LC_ALL=C.UTF-8` (see `discern_sdk::is_word_separator` for the separator set: the ASCII
//! space, `\t`, `\n`, `\v`, `\f`, `\r` and the Unicode spaces glibc's `iswspace` and
//! coreutils' no-break spaces name); `bytes` are the committed blobs' sizes, as `wc -c`.
//! The longest text file is also reported as a finding on `max_lines` (the first by path
//! among equally long ones), so a reading over its limit names the file behind it. Its
//! identity is the file and its line count: a longest file that grows is a new finding.
#![cfg_attr(not(test), deny(clippy::unwrap_used))]

use discern_sdk::{
    Config, Error, Finding, Info, Metric, Producer, Snapshot, TextCounter, is_binary,
};

/// Files larger than this are streamed through ranged reads.
const CHUNK: u64 = 8 << 20;

pub struct Extent;

impl Producer for Extent {
    fn describe() -> Info {
        Info::new(
            "extent",
            env!("CARGO_PKG_VERSION"),
            &["files", "lines", "words", "bytes", "max_lines"],
        )
        .with_config_schema(include_str!("../config.schema.json"))
    }

    fn run(snapshot: &dyn Snapshot, config: &Config) -> Result<Vec<Metric>, Error> {
        config.allow_only(&["paths"])?;
        let globs = config.globs("paths")?;
        let (mut files, mut lines, mut words, mut bytes) = (0u64, 0, 0, 0);
        // The longest text file so far: listed by path, a later one only when it is longer.
        let mut longest: Option<(String, u64)> = None;
        for entry in snapshot.files(&globs) {
            files += 1;
            bytes += entry.size;
            let mut counter = TextCounter::default();
            let mut binary = false;
            let mut first = true;
            snapshot.read_chunked(&entry, CHUNK, |chunk| {
                if first {
                    binary = is_binary(chunk);
                    first = false;
                }
                if !binary {
                    counter.feed(chunk);
                }
            })?;
            if !binary {
                let stats = counter.finish();
                lines += stats.lines;
                words += stats.words;
                if longest.as_ref().is_none_or(|(_, most)| stats.lines > *most) {
                    longest = Some((entry.path.clone(), stats.lines));
                }
            }
        }
        let mut max_lines = Metric::new("max_lines", longest.as_ref().map_or(0, |l| l.1) as f64);
        if let Some((path, n)) = longest {
            max_lines = max_lines.with_findings(vec![Finding::new(
                "longest-file",
                &path,
                &n.to_string(),
                0,
                format!("{path}: {n} lines"),
            )]);
        }
        Ok(vec![
            Metric::new("files", files as f64),
            Metric::new("lines", lines as f64),
            Metric::new("words", words as f64),
            Metric::new("bytes", bytes as f64),
            max_lines,
        ])
    }
}

discern_sdk::export_producer!(Extent);

#[cfg(test)]
mod tests {
    use super::*;
    use discern_sdk::testing::MemorySnapshot;

    fn value(metrics: &[Metric], name: &str) -> f64 {
        metrics.iter().find(|m| m.name == name).unwrap().value
    }

    #[test]
    fn counts_text_and_skips_binary_lines() {
        let snapshot = MemorySnapshot::new()
            .file("src/a.rs", "fn main() {\n    println!(\"hi\");\n}\n")
            .file("src/b.rs", "one line without newline")
            .file("src/logo.png", b"\x89PNG\0\0\nbinary\n".to_vec())
            .file("docs/x.md", "not counted\n");
        let config = Config::parse(r#"{"paths": ["src/**"]}"#).unwrap();
        let m = Extent::run(&snapshot, &config).unwrap();
        assert_eq!(value(&m, "files"), 3.0);
        assert_eq!(value(&m, "lines"), 4.0);
        assert_eq!(value(&m, "words"), 9.0);
        assert_eq!(value(&m, "max_lines"), 3.0);
        let max = m.iter().find(|m| m.name == "max_lines").unwrap();
        assert_eq!(max.findings.len(), 1);
        assert_eq!(max.findings[0].path.as_deref(), Some("src/a.rs"));
        assert_eq!(max.findings[0].message, "src/a.rs: 3 lines");
        assert_eq!(value(&m, "bytes"), 34.0 + 24.0 + 14.0);
    }

    #[test]
    fn the_longest_file_is_named_once_the_first_by_path_on_a_tie() {
        let snapshot = MemorySnapshot::new()
            .file("a/short.rs", "1\n")
            .file("b/tie.rs", "1\n2\n")
            .file("c/tie.rs", "1\n2\n");
        let config = Config::parse(r#"{"paths": ["**"]}"#).unwrap();
        let m = Extent::run(&snapshot, &config).unwrap();
        let findings: Vec<_> = m.iter().flat_map(|m| &m.findings).collect();
        assert_eq!(findings.len(), 1, "one finding, on max_lines only");
        assert_eq!(findings[0].path.as_deref(), Some("b/tie.rs"));
    }

    #[test]
    fn empty_selection_is_zero_not_an_error() {
        let config = Config::parse(r#"{"paths": ["nothing/**"]}"#).unwrap();
        let m = Extent::run(&MemorySnapshot::new(), &config).unwrap();
        assert!(m.iter().all(|m| m.value == 0.0));
    }

    #[test]
    fn config_is_strict() {
        let err = Extent::run(&MemorySnapshot::new(), &Config::parse("{}").unwrap()).unwrap_err();
        assert!(err.to_string().contains("config.paths is required"));
        let err = Extent::run(
            &MemorySnapshot::new(),
            &Config::parse(r#"{"paths": ["a"], "path": "b"}"#).unwrap(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("config.path is not a known key"));
    }
}
