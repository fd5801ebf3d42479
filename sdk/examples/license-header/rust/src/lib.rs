//! Example producer: how many files lack a license header. The same behaviour is implemented
//! in Python, JavaScript and C beside this folder; `../README.md` specifies it.

use discern_sdk::{Config, Error, Finding, Info, Metric, Producer, Snapshot};

const METRICS: &[&str] = &["files_without_header", "license_header_share"];
const HEAD_BYTES: u64 = 8192;
const MAX_LINES: f64 = 1_000_000.0;
const SCHEMA: &str = concat!(
    r#"{"type":"object","required":["paths"],"additionalProperties":false,"#,
    r#""properties":{"paths":{"type":"array","items":{"type":"string"}},"#,
    r#""marker":{"type":"string","minLength":1},"#,
    r#""lines":{"type":"integer","minimum":1,"maximum":1000000}}}"#
);

struct Settings {
    paths: Vec<String>,
    marker: String,
    lines: usize,
}

fn settings(config: &Config) -> Result<Settings, Error> {
    config.allow_only(&["paths", "marker", "lines"])?;
    let paths = match config.get("paths") {
        Some(serde_json::Value::Array(items)) if !items.is_empty() => items
            .iter()
            .map(|item| item.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>(),
        _ => None,
    }
    .ok_or_else(|| Error::new("config `paths` must be a non-empty list of globs"))?;
    let marker = match config.get("marker") {
        None => "SPDX-License-Identifier:".to_owned(),
        Some(serde_json::Value::String(m)) if !m.is_empty() => m.clone(),
        Some(_) => return Err(Error::new("config `marker` must be a non-empty string")),
    };
    let lines = match config.get("lines") {
        None => 5,
        Some(value) => match value.as_f64() {
            Some(n) if n.fract() == 0.0 && (1.0..=MAX_LINES).contains(&n) => n as usize,
            _ => {
                return Err(Error::new(
                    "config `lines` must be a whole number from 1 to 1000000",
                ));
            }
        },
    };
    Ok(Settings {
        paths,
        marker,
        lines,
    })
}

/// The bytes before the `lines`-th newline.
fn head(data: &[u8], lines: usize) -> &[u8] {
    let mut newlines = data
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .map(|(at, _)| at);
    match newlines.nth(lines - 1) {
        Some(end) => &data[..end],
        None => data,
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The producer (public so that native builds and tests can call it directly).
pub struct LicenseHeader;

impl Producer for LicenseHeader {
    fn describe() -> Info {
        Info::new("license-header", env!("CARGO_PKG_VERSION"), METRICS).with_config_schema(SCHEMA)
    }

    fn run(snapshot: &dyn Snapshot, config: &Config) -> Result<Vec<Metric>, Error> {
        let Settings {
            paths,
            marker,
            lines,
        } = settings(config)?;
        let mut total = 0usize;
        let mut findings = Vec::new();
        for entry in snapshot.files(&paths) {
            total += 1;
            let bytes = snapshot
                .read_range(&entry.path, 0, HEAD_BYTES)
                .map_err(Error::new)?;
            if !contains(head(&bytes, lines), marker.as_bytes()) {
                findings.push(Finding {
                    fingerprint: entry.path.clone(),
                    message: format!("{}: no `{marker}` in the first {lines} lines", entry.path),
                    path: Some(entry.path),
                    // The header belongs at the top of the file.
                    line: Some(1),
                    column: None,
                    severity: None,
                });
            }
        }
        let missing = findings.len();
        let share = if total == 0 {
            1.0
        } else {
            (total - missing) as f64 / total as f64
        };
        Ok(vec![
            Metric::new("files_without_header", missing as f64).counting(findings),
            Metric::new("license_header_share", share),
        ])
    }
}

discern_sdk::export_producer!(LicenseHeader);

#[cfg(test)]
mod tests {
    use super::*;
    use discern_sdk::testing::MemorySnapshot;

    fn run(snapshot: &MemorySnapshot, config: &str) -> Result<Vec<Metric>, Error> {
        LicenseHeader::run(snapshot, &Config::parse(config).expect("valid JSON"))
    }

    fn fixture() -> MemorySnapshot {
        MemorySnapshot::new()
            .file("src/a.rs", "// SPDX-License-Identifier: MIT\nfn a() {}\n")
            .file("src/b.rs", "fn b() {}\n")
            .file("src/c.rs", "\n\n\n\n// SPDX-License-Identifier: MIT\n")
            .file("src/d.rs", "\n\n\n\n\n// SPDX-License-Identifier: MIT\n")
            .file("README.md", "no header\n")
    }

    #[test]
    fn counts_files_without_the_marker_in_their_first_lines() {
        let metrics = run(&fixture(), r#"{"paths":["src/**/*.rs"]}"#).expect("runs");
        assert_eq!(metrics[0].value, 2.0);
        let paths: Vec<_> = metrics[0]
            .findings
            .iter()
            .map(|f| f.path.as_deref())
            .collect();
        assert_eq!(paths, [Some("src/b.rs"), Some("src/d.rs")]);
        assert_eq!(
            metrics[0].findings[1].message,
            "src/d.rs: no `SPDX-License-Identifier:` in the first 5 lines"
        );
        assert_eq!(metrics[1].value, 0.5);

        let six = run(&fixture(), r#"{"paths":["src/**/*.rs"],"lines":6}"#).expect("runs");
        assert_eq!((six[0].value, six[1].value), (1.0, 0.75));
    }

    #[test]
    fn no_matching_files_is_full_share() {
        let metrics = run(&fixture(), r#"{"paths":["none/**"]}"#).expect("runs");
        assert_eq!((metrics[0].value, metrics[1].value), (0.0, 1.0));
    }

    #[test]
    fn refuses_bad_config_naming_the_key() {
        for (config, key) in [
            (r#"{}"#, "`paths`"),
            (r#"{"paths":[]}"#, "`paths`"),
            (r#"{"paths":["*"],"marker":""}"#, "`marker`"),
            (r#"{"paths":["*"],"lines":0}"#, "`lines`"),
            (r#"{"paths":["*"],"lines":1.5}"#, "`lines`"),
            (r#"{"paths":["*"],"colour":1}"#, "colour"),
        ] {
            let err = run(&fixture(), config).expect_err(config).to_string();
            assert!(err.contains(key), "{config}: {err}");
        }
    }
}
