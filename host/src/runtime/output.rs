//! The host never trusts guest values: every metric, finding and description is checked.

use super::bindings::wit_measure;
use super::error::ProducerErrorKind;

pub(super) use super::finding::Finding;

pub(super) const MAX_METRICS: usize = 10_000;
pub(crate) const MAX_NAME_BYTES: usize = 128;
const MAX_SCHEMA_BYTES: usize = 64 * 1024;

/// One validated metric.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Metric {
    pub name: String,
    pub value: f64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
    /// Findings past the cap, counted but not kept.
    #[serde(skip_serializing_if = "is_zero")]
    pub findings_dropped: usize,
    /// Whether the value is the number of findings the producer found (WIT `counted`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub counted: bool,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// What a producer says it is, validated.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Info {
    pub name: String,
    pub version: String,
    pub metrics: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config_schema: Option<String>,
}

fn invalid(message: String) -> ProducerErrorKind {
    ProducerErrorKind::InvalidOutput(message)
}

fn check_name(what: &str, name: &str) -> Result<(), ProducerErrorKind> {
    if name.is_empty() {
        return Err(invalid(format!("{what} is empty")));
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(invalid(format!(
            "{what} {:?}… is {} bytes (limit: {MAX_NAME_BYTES})",
            name.chars().take(32).collect::<String>(),
            name.len()
        )));
    }
    if name.chars().any(char::is_control) {
        return Err(invalid(format!(
            "{what} {name:?} contains control characters"
        )));
    }
    Ok(())
}

pub(super) fn metrics(raw: Vec<wit_measure::Metric>) -> Result<Vec<Metric>, ProducerErrorKind> {
    if raw.len() > MAX_METRICS {
        return Err(invalid(format!(
            "{} metrics (limit: {MAX_METRICS})",
            raw.len()
        )));
    }
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(raw.len());
    for metric in raw {
        check_name("a metric name", &metric.name)?;
        if !metric.value.is_finite() {
            return Err(invalid(format!(
                "metric {} is {} (values must be finite numbers)",
                metric.name, metric.value
            )));
        }
        if !seen.insert(metric.name.clone()) {
            return Err(invalid(format!("metric {} is emitted twice", metric.name)));
        }
        let findings = super::finding::check(&metric.name, metric.findings)?;
        let listed = findings.kept.len() + findings.dropped;
        if metric.counted && listed as f64 > metric.value {
            return Err(invalid(format!(
                "metric {} says it counts its findings, but lists {listed} for a value of {}",
                metric.name, metric.value
            )));
        }
        out.push(Metric {
            name: metric.name,
            value: metric.value,
            findings: findings.kept,
            findings_dropped: findings.dropped,
            counted: metric.counted,
        });
    }
    Ok(out)
}

pub(super) fn info(raw: wit_measure::Info) -> Result<Info, ProducerErrorKind> {
    check_name("the producer name", &raw.name)?;
    check_name("the producer version", &raw.version)?;
    if raw.metrics.len() > MAX_METRICS {
        return Err(invalid(format!(
            "describe() declares {} metrics (limit: {MAX_METRICS})",
            raw.metrics.len()
        )));
    }
    for metric in &raw.metrics {
        check_name("a declared metric name", metric)?;
    }
    if let Some(schema) = &raw.config_schema {
        if schema.len() > MAX_SCHEMA_BYTES {
            return Err(invalid(format!(
                "the config schema is {} bytes (limit: {MAX_SCHEMA_BYTES})",
                schema.len()
            )));
        }
        serde_json::from_str::<serde_json::Value>(schema)
            .map_err(|e| invalid(format!("the config schema is not JSON: {e}")))?;
    }
    Ok(Info {
        name: raw.name,
        version: raw.version,
        metrics: raw.metrics,
        config_schema: raw.config_schema,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(name: &str, value: f64) -> wit_measure::Metric {
        wit_measure::Metric {
            name: name.into(),
            value,
            findings: vec![],
            counted: false,
        }
    }

    #[test]
    fn refuses_what_the_contract_forbids() {
        let err = |raw| metrics(raw).unwrap_err().to_string();
        assert!(err(vec![m("", 1.0)]).contains("empty"));
        assert!(err(vec![m(&"x".repeat(129), 1.0)]).contains("limit: 128"));
        assert!(err(vec![m("a", f64::NAN)]).contains("NaN"));
        assert!(err(vec![m("a", f64::INFINITY)]).contains("finite"));
        assert!(err(vec![m("a", 1.0), m("a", 2.0)]).contains("twice"));
        assert!(err(vec![m("a\n", 1.0)]).contains("control"));
        let many: Vec<_> = (0..10_001).map(|i| m(&format!("m{i}"), 1.0)).collect();
        assert!(err(many).contains("10001 metrics (limit: 10000)"));
        assert_eq!(
            metrics(vec![m(&"x".repeat(128), 0.5)]).expect("test fixture")[0].value,
            0.5
        );
    }

    use proptest::prelude::*;

    fn raw_metric() -> impl Strategy<Value = wit_measure::Metric> {
        let value = prop_oneof![
            any::<f64>(),
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(-0.0),
            Just(f64::MAX)
        ];
        let finding = (
            ".{0,300}",
            proptest::option::of(".{0,40}"),
            proptest::option::of(0u32..5),
            ".{0,50}",
        )
            .prop_map(|(fingerprint, path, line, message)| wit_measure::Finding {
                fingerprint,
                path,
                line,
                column: None,
                severity: None,
                message,
            });
        (
            "\\PC{0,140}",
            value,
            proptest::collection::vec(finding, 0..4),
        )
            .prop_map(|(name, value, findings)| wit_measure::Metric {
                name,
                value,
                findings,
                counted: value > 0.0,
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::props::cases()))]

        /// Whatever a guest returns, decoding never panics, and what it accepts holds the
        /// contract: finite values, unique bounded names, bounded findings.
        #[test]
        fn guest_output_decoding_never_panics(raw in proptest::collection::vec(raw_metric(), 0..6)) {
            if let Ok(decoded) = metrics(raw) {
                let mut names = std::collections::HashSet::new();
                for metric in &decoded {
                    prop_assert!(metric.value.is_finite());
                    prop_assert!(!metric.name.is_empty() && metric.name.len() <= MAX_NAME_BYTES);
                    prop_assert!(names.insert(metric.name.clone()));
                    for finding in &metric.findings {
                        prop_assert!(!finding.fingerprint.is_empty() && finding.fingerprint.len() <= 256);
                    }
                }
            }
        }
    }
}
