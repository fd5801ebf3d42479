//! A branch that redefines a Standard is judged by the trunk's definition too: each
//! Standard the branch redefined or deleted is measured on the proven commit exactly as the
//! trunk defines it, against the trunk's limit, and the verdicts travel in the Proof for the
//! owner who approves the redefinition (a weakened definition that hides a breach shows it).

use super::Subject;
use crate::config::Config;
use crate::measure::{self, EvidenceUse, Measurement};
use crate::proof::TrunkVerdict;
use crate::runtime::Runtime;
use crate::workspace::Workspace;

/// The trunk's verdict on each Standard the branch redefined or deleted.
pub(super) fn judged(
    ws: &Workspace,
    runtime: &Runtime,
    subject: &Subject,
    progress: &(dyn Fn(&str) + Sync),
) -> Vec<TrunkVerdict> {
    let Ok(trunk) = Config::at_or_absent(&ws.repo, subject.trunk_commit) else {
        return Vec::new();
    };
    let changed = redefined(&trunk, subject.config.as_ref());
    if changed.is_empty() {
        return Vec::new();
    }
    let (jobless, needs): (Vec<_>, Vec<_>) = changed.into_iter().partition(|s| s.needs.is_empty());
    let mut judged: Vec<TrunkVerdict> = needs
        .iter()
        .map(|s| {
            unjudged(
                s.name.clone(),
                s.limit,
                "not judged: the trunk's definition needs a job",
            )
        })
        .collect();
    let options = measure::Options {
        trunk: Some(subject.trunk.clone()),
        evidence: EvidenceUse::Proof,
        ..measure::Options::default()
    };
    let ctx = measure::Context {
        ws,
        runtime,
        config: &trunk,
        selected: &jobless,
        claims: &[],
        progress,
    };
    match measure::measure(&ctx, &options) {
        Ok(measured) => judged.extend(measured.standards.iter().map(|s| {
            match (s.measurement, s.value, s.verdict) {
                (Measurement::Measured | Measurement::Reused, Some(value), Some(verdict)) => {
                    TrunkVerdict {
                        name: s.name.clone(),
                        value: Some(value),
                        limit: s.limit,
                        verdict: verdict.as_str().to_owned(),
                    }
                }
                _ => unjudged(
                    s.name.clone(),
                    s.limit,
                    "not measured by the trunk's definition",
                ),
            }
        })),
        Err(_) => judged.extend(jobless.iter().map(|s| {
            unjudged(
                s.name.clone(),
                s.limit,
                "not measured by the trunk's definition",
            )
        })),
    }
    judged
}

/// The trunk's Standards whose definition HEAD changed or dropped.
fn redefined<'a>(trunk: &'a Config, head: Option<&Config>) -> Vec<&'a crate::config::StandardDef> {
    trunk
        .standards
        .iter()
        .filter(|s| {
            head.and_then(|h| h.standard(&s.name))
                .is_none_or(|h| h.definition() != s.definition())
        })
        .collect()
}

fn unjudged(name: String, limit: f64, why: &str) -> TrunkVerdict {
    TrunkVerdict {
        name,
        value: None,
        limit,
        verdict: why.to_owned(),
    }
}
