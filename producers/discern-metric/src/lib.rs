//! `builtin:discern-metric`: reads `DISCERN_METRIC <name> <value>` lines from a job's output
//! (the original system's protocol); the last line for a name wins.
//!
//! Config: `artifact` (default `"stdout"`: the job's captured stdout).
#![cfg_attr(not(test), deny(clippy::unwrap_used))]

use std::collections::BTreeMap;

use discern_sdk::{Config, Error, Info, Metric, Producer, Snapshot};

pub struct DiscernMetric;

impl Producer for DiscernMetric {
    fn describe() -> Info {
        Info::new("discern-metric", env!("CARGO_PKG_VERSION"), &[])
            .with_config_schema(include_str!("../config.schema.json"))
    }

    fn run(snapshot: &dyn Snapshot, config: &Config) -> Result<Vec<Metric>, Error> {
        config.allow_only(&["artifact"])?;
        let name = config.opt_str("artifact")?.unwrap_or("stdout");
        let text = snapshot.artifact_text(name)?;
        let metrics = parse(&text);
        if metrics.is_empty() {
            return Err(Error::new(format!(
                "the job's {name} has no `DISCERN_METRIC <name> <value>` line; make the command print one"
            )));
        }
        Ok(metrics
            .into_iter()
            .map(|(name, value)| Metric::new(name, value))
            .collect())
    }
}

/// Every well-formed `DISCERN_METRIC <name> <finite number>` line; the last one per name wins.
pub fn parse(text: &str) -> BTreeMap<&str, f64> {
    let mut metrics = BTreeMap::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        if words.next() != Some("DISCERN_METRIC") {
            continue;
        }
        if let (Some(name), Some(value), None) = (words.next(), words.next(), words.next())
            && let Ok(value) = value.parse::<f64>()
            && value.is_finite()
        {
            metrics.insert(name, value);
        }
    }
    metrics
}

discern_sdk::export_producer!(DiscernMetric);

#[cfg(test)]
mod tests {
    use super::*;
    use discern_sdk::testing::MemorySnapshot;

    #[test]
    fn last_line_wins_and_noise_is_ignored() {
        let text = "building...\nDISCERN_METRIC coverage 70.5\nDISCERN_METRIC warnings 3\n\
                    DISCERN_METRIC coverage 81.25\nDISCERN_METRIC bad NaN\nDISCERN_METRIC x 1 2\n\
                    prefix DISCERN_METRIC y 4\n";
        let metrics = parse(text);
        assert_eq!(metrics.len(), 2);
        assert_eq!(metrics["coverage"], 81.25);
        assert_eq!(metrics["warnings"], 3.0);
    }

    #[test]
    fn reads_stdout_by_default_and_refuses_silence() {
        let s = MemorySnapshot::new().artifact("stdout", "DISCERN_METRIC speed 12\n");
        let m = DiscernMetric::run(&s, &Config::parse("{}").unwrap()).unwrap();
        assert_eq!((m[0].name.as_str(), m[0].value), ("speed", 12.0));
        let silent = MemorySnapshot::new().artifact("stdout", "ok\n");
        let err = DiscernMetric::run(&silent, &Config::parse("{}").unwrap()).unwrap_err();
        assert!(err.to_string().contains("no `DISCERN_METRIC"));
    }
}
