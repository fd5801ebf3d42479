//! `builtin:extent`: how big a set of files is — files, lines, words and bytes over pathspecs.
//!
//! Config: `paths` (required, pathspec globs). Lines and words count text files only; a
//! binary file (NUL in its first 8,000 bytes) counts toward `files` and `bytes`. `lines` are
//! `wc -l`'s newlines plus a final line without one; `words` split as `wc -w` under
//! `LC_ALL=C.UTF-8` (see `discern_sdk::is_word_separator` for the separator set: the ASCII
//! space, `\t`, `\n`, `\v`, `\f`, `\r` and the Unicode spaces glibc's `iswspace` and
//! coreutils' no-break spaces name); `bytes` are the committed blobs' sizes, as `wc -c`.
#![cfg_attr(not(test), deny(clippy::unwrap_used))]

use discern_sdk::{Config, Error, Info, Metric, Producer, Snapshot, TextCounter, is_binary};

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
        let (mut files, mut lines, mut words, mut bytes, mut max_lines) = (0u64, 0, 0, 0, 0);
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
                max_lines = max_lines.max(stats.lines);
            }
        }
        Ok(vec![
            Metric::new("files", files as f64),
            Metric::new("lines", lines as f64),
            Metric::new("words", words as f64),
            Metric::new("bytes", bytes as f64),
            Metric::new("max_lines", max_lines as f64),
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
        assert_eq!(value(&m, "bytes"), 34.0 + 24.0 + 14.0);
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
