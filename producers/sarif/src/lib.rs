//! `builtin:sarif`: the results of a SARIF 2.1.0 log (what ruff, ESLint's SARIF formatter,
//! clippy-sarif, semgrep and CodeQL write), with one finding per result.
//!
//! Config: `artifact` (default `"artifact"`, the Standard's declared artifact) or `path` (a log
//! committed in the snapshot); `rule`, `level` and `paths` select the results that count.
//! Metrics: `results` (the selected results, counting their findings), `level:error`,
//! `level:warning`, `level:note`, `level:none`, `rule:<id>` for each rule with a result,
//! `suppressed` (selected results with an accepted suppression: not counted in `results`) and
//! `outside_checkout` (results located outside the checkout: not counted). Results whose
//! `kind` is `pass`, `notApplicable` or `informational` are no problems and count nowhere.
#![cfg_attr(not(test), deny(clippy::unwrap_used))]

mod item;
mod location;
mod model;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use discern_pathspec::Pathspec;
use discern_sdk::{Config, Error, Finding, Info, Metric, Producer, Snapshot};

use crate::item::{Context, Item};
use crate::location::{Locator, Place};

pub struct Sarif;

const LEVELS: [&str; 4] = ["error", "warning", "note", "none"];

impl Producer for Sarif {
    fn describe() -> Info {
        Info::new(
            "sarif",
            env!("CARGO_PKG_VERSION"),
            &[
                "results",
                "level:error",
                "level:warning",
                "level:note",
                "level:none",
                "suppressed",
                "outside_checkout",
            ],
        )
        .with_config_schema(include_str!("../config.schema.json"))
    }

    fn run(snapshot: &dyn Snapshot, config: &Config) -> Result<Vec<Metric>, Error> {
        config.allow_only(&["artifact", "path", "rule", "level", "paths"])?;
        let selection = Selection::from_config(config)?;
        let text = match (config.opt_str("path")?, config.opt_str("artifact")?) {
            (Some(_), Some(_)) => {
                return Err(Error::new("config takes `path` or `artifact`, not both"));
            }
            (Some(path), None) => snapshot.read_text(path)?,
            (None, artifact) => snapshot.artifact_text(artifact.unwrap_or("artifact"))?,
        };
        let items = items(&text, snapshot)?;
        Ok(Tally::of(&items, &selection).metrics())
    }
}

/// Every result of every run of the log `text`.
pub fn items(text: &str, snapshot: &dyn Snapshot) -> Result<Vec<Item>, Error> {
    let log: model::Log = serde_json::from_str(text)
        .map_err(|e| Error::new(format!("the artifact is not a SARIF log: {e}")))?;
    if let Some(version) = log.version.as_deref().filter(|v| !v.starts_with("2.1")) {
        return Err(Error::new(format!(
            "the log is SARIF {version}; builtin:sarif reads SARIF 2.1.0"
        )));
    }
    let mut context = Context::default();
    let mut out = Vec::new();
    for run in &log.runs {
        let locator = Locator::new(run, snapshot)?;
        for result in run.results.iter().flatten() {
            out.extend(context.item(run, result, &locator, snapshot));
        }
    }
    Ok(out)
}

/// Which results count: `rule`, `level`, `paths`.
#[derive(Debug, Default)]
pub struct Selection {
    rules: Option<Vec<String>>,
    levels: Option<Vec<String>>,
    paths: Option<Pathspec>,
}

impl Selection {
    pub fn from_config(config: &Config) -> Result<Self, Error> {
        let levels = config.opt_globs("level")?;
        if let Some(bad) = levels
            .iter()
            .flatten()
            .find(|l| !LEVELS.contains(&l.as_str()))
        {
            return Err(Error::new(format!(
                "config.level {bad:?} is no SARIF level (error, warning, note, none)"
            )));
        }
        let paths = config
            .opt_globs("paths")?
            .map(|specs| Pathspec::parse(&specs, None))
            .transpose()
            .map_err(|e| Error::new(format!("config.paths: {e}")))?;
        Ok(Self {
            rules: config.opt_globs("rule")?,
            levels,
            paths,
        })
    }

    fn rule(&self, rule: &str) -> bool {
        self.rules.as_ref().is_none_or(|rules| {
            rules.iter().any(|r| match r.strip_suffix('*') {
                Some(prefix) => rule.starts_with(prefix),
                None => r == rule,
            })
        })
    }

    fn level(&self, level: &str) -> bool {
        self.levels
            .as_ref()
            .is_none_or(|levels| levels.iter().any(|l| l == level))
    }

    fn place(&self, place: &Place) -> bool {
        match (&self.paths, place) {
            (None, _) => true,
            (Some(paths), Place::Inside(path)) => paths.matches(path),
            (Some(_), _) => false,
        }
    }
}

/// The counts of the selected results.
#[derive(Debug, Default)]
struct Tally {
    findings: Vec<Finding>,
    levels: BTreeMap<&'static str, u64>,
    rules: BTreeMap<String, u64>,
    suppressed: u64,
    outside: Vec<Finding>,
}

impl Tally {
    fn of(items: &[Item], selection: &Selection) -> Self {
        let mut tally = Tally::default();
        let chosen = items.iter().filter(|i| {
            selection.rule(&i.rule) && selection.level(i.level) && selection.place(&i.place)
        });
        for item in chosen {
            if let Place::Outside(uri) = &item.place {
                let mut finding = item.finding.clone();
                finding.message = format!("{uri}: outside the checkout, not counted");
                tally.outside.push(finding);
            } else if item.suppressed {
                tally.suppressed += 1;
            } else {
                tally.findings.push(item.finding.clone());
                *tally.levels.entry(item.level).or_insert(0) += 1;
                *tally.rules.entry(item.rule.clone()).or_insert(0) += 1;
            }
        }
        tally
    }

    fn metrics(self) -> Vec<Metric> {
        let mut out =
            vec![Metric::new("results", self.findings.len() as f64).counting(self.findings)];
        for level in LEVELS {
            let count = self.levels.get(level).copied().unwrap_or(0);
            out.push(Metric::new(&format!("level:{level}"), count as f64));
        }
        out.push(Metric::new("suppressed", self.suppressed as f64));
        out.push(
            Metric::new("outside_checkout", self.outside.len() as f64).with_findings(self.outside),
        );
        for (rule, count) in self.rules {
            let name = format!("rule:{rule}");
            if name.len() <= 128 && !name.chars().any(char::is_control) {
                out.push(Metric::new(&name, count as f64));
            }
        }
        out
    }
}

discern_sdk::export_producer!(Sarif);
