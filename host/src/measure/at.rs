//! The readings of a config's Standards on any commit's snapshot, without the verb around a
//! measurement (no limits check, no record): what `init` sets limits from, and the merge base
//! a branch's gains are counted against.

use std::collections::BTreeMap;

use super::judge::{metric, per_reading};
use super::{ComponentOrigin, Components};
use crate::config::{Config, StandardDef};
use crate::planner::{Outcomes, Plan, Reading, Wave};
use crate::runtime::Runtime;
use crate::snapshot::Snapshot;
use crate::workspace::Workspace;

/// Each of `selected` (Standards of `config`) read on `snapshot`: name → reading. A Standard
/// that cannot be read is left out. `evidence` may reuse and record readings.
pub(crate) fn readings(
    ws: &Workspace,
    runtime: &Runtime,
    config: &Config,
    selected: &[&StandardDef],
    snapshot: &Snapshot,
    evidence: Option<&crate::evidence::Store>,
    progress: &(dyn Fn(&str) + Sync),
) -> BTreeMap<String, f64> {
    let components = Components {
        repo: &ws.repo,
        snapshot: Some(snapshot),
        settings: &ws.settings,
        origin: ComponentOrigin::Commit,
    };
    let plan = Plan::build(config, selected, &components);
    let outcomes = crate::planner::execute(
        &plan,
        runtime,
        snapshot,
        ws.root(),
        Some(&ws.repo.admin_path("jobs")),
        evidence,
        progress,
    );
    if let Some(store) = evidence {
        for wave in [Wave::BeforeJobs, Wave::AfterJobs] {
            crate::planner::save_evidence(&plan, &outcomes, store, snapshot, wave);
        }
    }
    let mut values = BTreeMap::new();
    for reading in &plan.readings {
        let Some(standard) = config.standard(&reading.standard) else {
            continue;
        };
        if let Some(value) = value(standard, reading, &outcomes) {
            values.insert(standard.name.clone(), value);
        }
    }
    values
}

/// What `standard` reads from the executions, by the arithmetic `judge` uses; `None` when it
/// cannot be read.
fn value(standard: &StandardDef, reading: &Reading, outcomes: &Outcomes) -> Option<f64> {
    let output = outcomes.executions[reading.execution]
        .result
        .as_ref()
        .ok()?;
    let raw = metric(output, &reading.metric)?;
    match &reading.per {
        None => Some(raw),
        Some((per_execution, per_metric)) => {
            let per_output = outcomes.executions[*per_execution].result.as_ref().ok()?;
            per_reading(raw, metric(per_output, per_metric)?, standard.scale)
        }
    }
}
