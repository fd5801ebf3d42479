//! `builtin:lcov`: line, function and branch coverage from an lcov tracefile.
//!
//! Config: `artifact` (default `"artifact"`, the Standard's declared artifact) or `path` (a
//! tracefile committed in the snapshot). A record counts once closed by `end_of_record` (a
//! final record without it is dropped, as lcov drops it); function records are read in the
//! 1.x, 2.0 (`FN:<start>,<end>,<name>`) and 2.2 (`FNL`/`FNA`) forms. Records for the same source file (several test
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
        .with_config_schema(include_str!("../config.schema.json"))
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
    /// Read a tracefile. Only records closed by `end_of_record` count: a final record without
    /// one is dropped, as lcov drops it. Function records are read in every form lcov writes:
    /// `FN:<line>,<name>` (1.x), `FN:<start>,<end>,<name>` (2.0, coverage.py 7) and
    /// `FNL:`/`FNA:<index>,<hits>,<name>` (2.2).
    pub fn parse(text: &str) -> Result<Self, Error> {
        let mut coverage = Coverage::default();
        let mut record: Option<Record> = None;
        let mut records = 0;
        for (number, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line == "end_of_record" {
                if let Some(record) = record.take() {
                    coverage.add(record);
                    records += 1;
                }
                continue;
            }
            let Some((tag, value)) = line.split_once(':') else {
                continue;
            };
            if tag == "SF" {
                if let Some(previous) = record.replace(Record::new(value)) {
                    coverage.add(previous);
                    records += 1;
                }
                continue;
            }
            if let Some(record) = record.as_mut() {
                record.read(tag, value).ok_or_else(|| {
                    Error::new(format!(
                        "lcov line {}: malformed record {line:?}",
                        number + 1
                    ))
                })?;
            }
        }
        if records == 0 {
            return Err(Error::new(
                "not an lcov tracefile: no `SF:` … `end_of_record` records",
            ));
        }
        Ok(coverage)
    }

    fn add(&mut self, record: Record) {
        let file = record.file;
        for (line, hit) in record.lines {
            *self.lines.entry((file.clone(), line)).or_default() |= hit;
        }
        for (name, hit) in record.functions {
            *self.functions.entry((file.clone(), name)).or_default() |= hit;
        }
        for (key, taken) in record.branches {
            *self.branches.entry((file.clone(), key)).or_default() |= taken;
        }
        let summary = self.summaries.entry(file).or_default();
        let s = record.summary;
        for (total, new) in [
            (&mut summary.lf, s.lf),
            (&mut summary.lh, s.lh),
            (&mut summary.fnf, s.fnf),
            (&mut summary.fnh, s.fnh),
            (&mut summary.brf, s.brf),
            (&mut summary.brh, s.brh),
        ] {
            *total = (*total).max(new);
        }
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

/// One `SF:` … `end_of_record` record.
#[derive(Debug, Default)]
struct Record {
    file: String,
    lines: BTreeMap<u64, bool>,
    functions: BTreeMap<String, bool>,
    branches: BTreeMap<String, bool>,
    summary: Summary,
}

impl Record {
    fn new(file: &str) -> Self {
        Self {
            file: file.to_owned(),
            ..Self::default()
        }
    }

    /// Read one record line; `None` when it is malformed.
    fn read(&mut self, tag: &str, value: &str) -> Option<()> {
        let number = |s: &str| s.trim().parse::<u64>().ok();
        let s = &mut self.summary;
        match tag {
            "DA" => {
                let mut parts = value.split(',');
                let line = number(parts.next()?)?;
                let hits = parse_count(parts.next()?)?;
                *self.lines.entry(line).or_default() |= hits > 0;
            }
            "FN" => {
                let name = function_name(value)?;
                self.functions.entry(name.to_owned()).or_default();
            }
            "FNDA" => {
                let (hits, name) = value.split_once(',')?;
                *self.functions.entry(name.to_owned()).or_default() |= parse_count(hits)? > 0;
            }
            "FNA" => {
                let mut parts = value.splitn(3, ',');
                let (_index, hits, name) = (parts.next()?, parts.next()?, parts.next()?);
                *self.functions.entry(name.to_owned()).or_default() |= parse_count(hits)? > 0;
            }
            "BRDA" => {
                let parts: Vec<&str> = value.split(',').collect();
                if parts.len() != 4 {
                    return None;
                }
                let taken = parts[3] != "-" && parse_count(parts[3])? > 0;
                *self.branches.entry(parts[..3].join(",")).or_default() |= taken;
            }
            "LF" => s.lf = number(value)?,
            "LH" => s.lh = number(value)?,
            "FNF" => s.fnf = number(value)?,
            "FNH" => s.fnh = number(value)?,
            "BRF" => s.brf = number(value)?,
            "BRH" => s.brh = number(value)?,
            _ => {}
        }
        Some(())
    }
}

/// The name in `FN:<line>,<name>` or lcov 2.0's `FN:<start>,<end>,<name>`.
fn function_name(value: &str) -> Option<&str> {
    let (start, rest) = value.split_once(',')?;
    start.trim().parse::<u64>().ok()?;
    match rest.split_once(',') {
        Some((end, name)) if !end.is_empty() && end.trim().parse::<u64>().is_ok() => Some(name),
        _ => Some(rest),
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
    fn lcov_2_function_records_count_each_function_once() {
        let trace = "SF:a.py\nFN:1,3,main\nFN:5,9,helper\nFNDA:1,main\nFNDA:0,helper\n\
            FNF:2\nFNH:1\nDA:1,1\nend_of_record\n";
        let coverage = Coverage::parse(trace).unwrap();
        assert_eq!(coverage.functions(), (2, 1));
        // lcov 1.x with a comma in the name; lcov 2.2 FNL/FNA.
        let old = Coverage::parse("SF:a\nFN:1,f<a,b>\nFNDA:2,f<a,b>\nend_of_record\n").unwrap();
        assert_eq!(old.functions(), (1, 1));
        let new = Coverage::parse("SF:a\nFNL:0,1,3\nFNA:0,0,main\nend_of_record\n").unwrap();
        assert_eq!(new.functions(), (1, 0));
    }

    #[test]
    fn a_final_record_without_end_of_record_is_dropped() {
        let coverage =
            Coverage::parse("SF:a\nDA:1,1\nend_of_record\nSF:b\nDA:1,0\nDA:2,0\n").unwrap();
        assert_eq!(coverage.lines(), (1, 1));
        assert!(Coverage::parse("SF:a\nDA:1,1\n").is_err());
    }

    #[test]
    fn garbage_is_refused_with_the_line() {
        let err = Coverage::parse("SF:a\nDA:x,1\nend_of_record\n").unwrap_err();
        assert!(err.to_string().contains("lcov line 2"), "{err}");
        assert!(Coverage::parse("hello\n").is_err());
    }
}
