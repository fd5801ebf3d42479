//! `builtin:file-size`: size in bytes of a snapshot file, of a set of files, or of a job
//! artifact (binary size budgets, the largest tracked file).
//!
//! Config: exactly one of `path` (one snapshot file), `paths` (pathspec globs) or `artifact`.
//! Metrics: `bytes` (total), `max_bytes` (largest file), `files`. The largest file is also
//! reported as a finding on `max_bytes` (the first by path among equally large ones); its
//! identity is the file and its size, so a largest file that grows is a new finding.
#![cfg_attr(not(test), deny(clippy::unwrap_used))]

use discern_sdk::{Config, Error, Finding, Info, Metric, Producer, Snapshot};

pub struct FileSize;

impl Producer for FileSize {
    fn describe() -> Info {
        Info::new(
            "file-size",
            env!("CARGO_PKG_VERSION"),
            &["bytes", "max_bytes", "files"],
        )
        .with_config_schema(include_str!("../config.schema.json"))
    }

    fn run(snapshot: &dyn Snapshot, config: &Config) -> Result<Vec<Metric>, Error> {
        config.allow_only(&["path", "paths", "artifact"])?;
        let path = config.opt_str("path")?;
        let paths = config.opt_globs("paths")?;
        let artifact = config.opt_str("artifact")?;
        let sizes: Vec<(String, u64)> = match (path, paths, artifact) {
            (Some(path), None, None) => {
                let entry = snapshot
                    .files(&[format!(":(literal){path}")])
                    .into_iter()
                    .find(|e| e.path == path)
                    .ok_or_else(|| Error::new(format!("{path}: no such file in the snapshot")))?;
                vec![(entry.path, entry.size)]
            }
            (None, Some(globs), None) => snapshot
                .files(&globs)
                .into_iter()
                .map(|e| (e.path, e.size))
                .collect(),
            (None, None, Some(name)) => {
                let bytes = snapshot.artifact(name).map_err(Error::from)?;
                vec![(name.to_owned(), bytes.len() as u64)]
            }
            _ => {
                return Err(Error::new(
                    "config needs exactly one of `path`, `paths` or `artifact`",
                ));
            }
        };
        let total: u64 = sizes.iter().map(|(_, size)| size).sum();
        let largest = sizes
            .iter()
            .max_by_key(|(path, size)| (*size, std::cmp::Reverse(path)));
        let mut max = Metric::new("max_bytes", largest.map_or(0, |(_, s)| *s) as f64);
        if let Some((path, size)) = largest {
            max = max.with_findings(vec![Finding::new(
                "largest-file",
                path,
                &size.to_string(),
                0,
                format!("{path}: {size} bytes"),
            )]);
        }
        Ok(vec![
            Metric::new("bytes", total as f64),
            max,
            Metric::new("files", sizes.len() as f64),
        ])
    }
}

discern_sdk::export_producer!(FileSize);

#[cfg(test)]
mod tests {
    use super::*;
    use discern_sdk::testing::MemorySnapshot;

    fn run(s: &MemorySnapshot, config: &str) -> Result<Vec<Metric>, Error> {
        FileSize::run(s, &Config::parse(config).unwrap())
    }

    #[test]
    fn one_file_many_files_and_an_artifact() {
        let s = MemorySnapshot::new()
            .file("big.bin", vec![0u8; 300])
            .file("src/a.rs", "12345")
            .file("src/b.rs", "123")
            .artifact("target/app", vec![1u8; 42]);
        let one = run(&s, r#"{"path": "big.bin"}"#).unwrap();
        assert_eq!(
            (one[0].value, one[1].value, one[2].value),
            (300.0, 300.0, 1.0)
        );
        let many = run(&s, r#"{"paths": ["**"]}"#).unwrap();
        assert_eq!(
            (many[0].value, many[1].value, many[2].value),
            (308.0, 300.0, 3.0)
        );
        assert_eq!(many[1].findings[0].path.as_deref(), Some("big.bin"));
        let artifact = run(&s, r#"{"artifact": "target/app"}"#).unwrap();
        assert_eq!(artifact[0].value, 42.0);
    }

    #[test]
    fn a_directory_name_is_not_a_file_and_choices_are_exclusive() {
        let s = MemorySnapshot::new().file("src/a.rs", "1");
        assert!(
            run(&s, r#"{"path": "src"}"#)
                .unwrap_err()
                .to_string()
                .contains("no such file")
        );
        let err = run(&s, r#"{"path": "a", "artifact": "b"}"#).unwrap_err();
        assert!(err.to_string().contains("exactly one of"));
    }
}
