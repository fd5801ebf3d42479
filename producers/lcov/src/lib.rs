//! `builtin:lcov`: line, function and branch coverage from an lcov tracefile.
//!
//! Config: `artifact` (default `"artifact"`, the Standard's declared artifact) or `path` (a
//! tracefile committed in the snapshot). Records for the same source file (several test
//! binaries) are merged: a line counts as hit if any record hit it. A percentage is emitted
//! only when something of its kind was found, so a Standard reading `branch_percent` from a
//! tracefile without branch data fails with a missing metric instead of reading 100.
#![cfg_attr(not(test), deny(clippy::unwrap_used))]

use std::collections::{BTreeMap, BTreeSet};

use discern_sdk::{Config, Error, Info, Metric, Producer, Snapshot};

pub struct Lcov;

impl Producer for Lcov {
    fn describe() -> Info {
        Info::new(
            "lcov",
            env!("CARGO_PKG_VERSION"),
            &[
                "line_percent",
                "lines_found",
                "lines_hit",
                "function_percent",
                "functions_found",
                "functions_hit",
                "branch_percent",
                "branches_found",
                "branches_hit",
            ],
        )
        .with_config_schema(
            r#"{"type":"object","additionalProperties":false,"properties":{"artifact":{"type":"string"},"path":{"type":"string"}}}"#,
        )
    }

    fn run(snapshot: &dyn Snapshot, config: &Config) -> Result<Vec<Metric>, Error> {
        config.allow_only(&["artifact", "path"])?;
        let text = match (config.opt_str("path")?, config.opt_str("artifact")?) {
            (Some(_), Some(_)) => {
                return Err(Error::new("config takes `path` or `artifact`, not both"));
            }
            (Some(path), None) => snapshot.read_text(path)?,
            (None, artifact) => snapshot.artifact_text(artifact.unwrap_or("artifact"))?,
        };
        let coverage = Coverage::parse(&text)?;
        let mut metrics = Vec::new();
        for (kind, plural, (found, hit)) in [
            ("line", "lines", coverage.lines()),
            ("function", "functions", coverage.functions()),
            ("branch", "branches", coverage.branches()),
        ] {
            if found > 0 {
                metrics.push(Metric::new(
                    &format!("{kind}_percent"),
                    100.0 * hit as f64 / found as f64,
                ));
            }
            metrics.push(Metric::new(&format!("{plural}_found"), found as f64));
            metrics.push(Metric::new(&format!("{plural}_hit"), hit as f64));
        }
        Ok(metrics)
    }
}

/// Coverage merged per source file.
#[derive(Debug, Default)]
pub struct Coverage {
    /// (file, line) → hit by any record.
    lines: BTreeMap<(String, u64), bool>,
    functions: BTreeMap<(String, String), bool>,
    branches: BTreeMap<(String, String), bool>,
    /// Summary counts (LF/LH…) per file, used only where no detail records exist.
    summaries: BTreeMap<String, Summary>,
}

#[derive(Debug, Default, Clone, Copy)]
struct Summary {
    lf: u64,
    lh: u64,
    fnf: u64,
    fnh: u64,
    brf: u64,
    brh: u64,
}

impl Coverage {
    pub fn parse(text: &str) -> Result<Self, Error> {
        let mut coverage = Coverage::default();
        let mut file: Option<String> = None;
        let mut records = 0;
        for (number, raw) in text.lines().enumerate() {
            let line = raw.trim();
            let bad = || {
                Error::new(format!(
                    "lcov line {}: malformed record {line:?}",
                    number + 1
                ))
            };
            let Some((tag, value)) = line.split_once(':') else {
                if line == "end_of_record" {
                    file = None;
                    records += 1;
                }
                continue;
            };
            if tag == "SF" {
                file = Some(value.to_owned());
                continue;
            }
            let Some(current) = file.clone() else {
                continue;
            };
            let number = |s: &str| s.trim().parse::<u64>().map_err(|_| bad());
            let summary = coverage.summaries.entry(current.clone()).or_default();
            match tag {
                "DA" => {
                    let mut parts = value.split(',');
                    let line_no = number(parts.next().ok_or_else(bad)?)?;
                    let hits = parse_count(parts.next().ok_or_else(bad)?).ok_or_else(bad)?;
                    *coverage.lines.entry((current, line_no)).or_default() |= hits > 0;
                }
                "FNDA" => {
                    let (hits, name) = value.split_once(',').ok_or_else(bad)?;
                    let hits = parse_count(hits).ok_or_else(bad)?;
                    *coverage
                        .functions
                        .entry((current, name.to_owned()))
                        .or_default() |= hits > 0;
                }
                "FN" => {
                    let (_, name) = value.split_once(',').ok_or_else(bad)?;
                    coverage
                        .functions
                        .entry((current, name.to_owned()))
                        .or_default();
                }
                "BRDA" => {
                    let parts: Vec<&str> = value.split(',').collect();
                    if parts.len() != 4 {
                        return Err(bad());
                    }
                    let taken = parts[3] != "-" && parse_count(parts[3]).ok_or_else(bad)? > 0;
                    let key = (current, parts[..3].join(","));
                    *coverage.branches.entry(key).or_default() |= taken;
                }
                "LF" => summary.lf = summary.lf.max(number(value)?),
                "LH" => summary.lh = summary.lh.max(number(value)?),
                "FNF" => summary.fnf = summary.fnf.max(number(value)?),
                "FNH" => summary.fnh = summary.fnh.max(number(value)?),
                "BRF" => summary.brf = summary.brf.max(number(value)?),
                "BRH" => summary.brh = summary.brh.max(number(value)?),
                _ => {}
            }
        }
        if records == 0 && coverage.summaries.is_empty() {
            return Err(Error::new(
                "not an lcov tracefile: no `SF:` … `end_of_record` records",
            ));
        }
        Ok(coverage)
    }

    pub fn lines(&self) -> (u64, u64) {
        self.count(&self.lines, |s| (s.lf, s.lh))
    }

    pub fn functions(&self) -> (u64, u64) {
        self.count(&self.functions, |s| (s.fnf, s.fnh))
    }

    pub fn branches(&self) -> (u64, u64) {
        self.count(&self.branches, |s| (s.brf, s.brh))
    }

    fn count<K: Ord>(
        &self,
        detail: &BTreeMap<(String, K), bool>,
        summary: impl Fn(&Summary) -> (u64, u64),
    ) -> (u64, u64) {
        let detailed: BTreeSet<&String> = detail.keys().map(|(file, _)| file).collect();
        let found = detail.len() as u64;
        let hit = detail.values().filter(|&&h| h).count() as u64;
        self.summaries
            .iter()
            .filter(|(file, _)| !detailed.contains(file))
            .map(|(_, s)| summary(s))
            .fold((found, hit), |(f, h), (sf, sh)| (f + sf, h + sh))
    }
}

/// Execution counts may be written as floats by some tools ("1.0e3").
fn parse_count(s: &str) -> Option<u64> {
    let s = s.trim();
    s.parse::<u64>().ok().or_else(|| {
        s.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .map(|v| v as u64)
    })
}

discern_sdk::export_producer!(Lcov);

#[cfg(test)]
mod tests {
    use super::*;
    use discern_sdk::testing::MemorySnapshot;

    const TRACE: &str = "TN:\nSF:src/a.rs\nFN:1,main\nFN:5,helper\nFNDA:3,main\nFNDA:0,helper\n\
        DA:1,3\nDA:2,3\nDA:5,0\nDA:6,0\nBRDA:2,0,0,1\nBRDA:2,0,1,-\nLF:4\nLH:2\nend_of_record\n\
        SF:src/a.rs\nDA:5,1\nDA:6,0\nend_of_record\n\
        SF:src/b.rs\nLF:10\nLH:5\nend_of_record\n";

    fn value(metrics: &[Metric], name: &str) -> Option<f64> {
        metrics.iter().find(|m| m.name == name).map(|m| m.value)
    }

    #[test]
    fn merges_records_per_file_and_uses_summaries_without_detail() {
        let s = MemorySnapshot::new().artifact("artifact", TRACE);
        let m = Lcov::run(&s, &Config::parse("{}").unwrap()).unwrap();
        // a.rs: lines 1,2,5 hit (5 by the second record), 6 not; b.rs: 5 of 10.
        assert_eq!(value(&m, "lines_found"), Some(14.0));
        assert_eq!(value(&m, "lines_hit"), Some(8.0));
        assert_eq!(value(&m, "line_percent"), Some(100.0 * 8.0 / 14.0));
        assert_eq!(value(&m, "function_percent"), Some(50.0));
        assert_eq!(value(&m, "branch_percent"), Some(50.0));
    }

    #[test]
    fn no_branch_data_means_no_branch_percent() {
        let s = MemorySnapshot::new().file("cov/lcov.info", "SF:a\nDA:1,1\nend_of_record\n");
        let m = Lcov::run(&s, &Config::parse(r#"{"path": "cov/lcov.info"}"#).unwrap()).unwrap();
        assert_eq!(value(&m, "line_percent"), Some(100.0));
        assert_eq!(value(&m, "branch_percent"), None);
        assert_eq!(value(&m, "branches_found"), Some(0.0));
    }

    #[test]
    fn garbage_is_refused_with_the_line() {
        let err = Coverage::parse("SF:a\nDA:x,1\nend_of_record\n").unwrap_err();
        assert!(err.to_string().contains("lcov line 2"), "{err}");
        assert!(Coverage::parse("hello\n").is_err());
    }
}
