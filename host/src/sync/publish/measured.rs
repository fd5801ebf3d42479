//! What the publish step publishes: HEAD measured here, afresh. The snapshot is HEAD's tree
//! read from the object database; no evidence store is read (nothing another process of this
//! clone wrote stands for a reading); no job runs (a job is repository code, and the key is in
//! this process), so a Standard that needs one is named as not published; the commit, its
//! trees and every blob read are hashed against their ids (a mismatch is a refusal); a repository
//! component is compiled here, never loaded from the per-user cache. Each execution that ran
//! becomes an entry in memory, never written to the store.

use gix::ObjectId;

use super::super::SyncError;
use crate::config::Config;
use crate::evidence::{Entry, findings};
use crate::measure::{ComponentOrigin, Components, component_configs};
use crate::planner::Plan;
use crate::workspace::Workspace;

/// One execution measured here: its identity, its entry's JSON and its findings file.
pub(super) struct Measured {
    pub identity: String,
    pub entry: Vec<u8>,
    pub findings: Option<Vec<u8>>,
}

/// What this run measured, and the Standards it did not measure (each with why).
pub(super) struct Batch {
    pub entries: Vec<Measured>,
    pub not_measured: Vec<String>,
}

/// Measure every Standard of `config` that needs no job on `head`.
pub(super) fn measure(ws: &Workspace, config: &Config, head: ObjectId) -> Result<Batch, SyncError> {
    let repo = &ws.repo;
    let cannot = |what: String| SyncError::Publish(format!("HEAD cannot be measured: {what}"));
    // The object store may have been written by whatever ran in this clone before: the
    // listing is checked against the commit's trees, and every blob as it is read.
    let snapshot = repo
        .snapshot(head)
        .map_err(|e| cannot(e.to_string()))?
        .verifying();
    snapshot
        .verify_listing()
        .map_err(|e| cannot(e.to_string()))?;
    let (measurable, jobs): (Vec<_>, Vec<_>) = config
        .standards
        .iter()
        .partition(|s| s.needs.is_empty() && s.run.is_none());
    let mut not_measured: Vec<String> = jobs
        .iter()
        .map(|s| {
            format!(
                "{} (it needs a job, and the publish step runs no repository code)",
                s.name
            )
        })
        .collect();
    if measurable.is_empty() {
        return Ok(Batch {
            entries: Vec::new(),
            not_measured,
        });
    }
    let runtime = ws
        .settings
        .runtime()
        .map_err(|refusal| cannot(refusal.message.clone()))?;
    let components = Components {
        repo,
        snapshot: Some(&snapshot),
        settings: &ws.settings,
        origin: ComponentOrigin::CommitCompiledHere,
    };
    let plan = Plan::build(config, &measurable, &components);
    component_configs(config, &plan, &runtime).map_err(|e| cannot(e.to_string()))?;
    let outcomes =
        crate::planner::execute(&plan, &runtime, &snapshot, repo.root(), None, None, &|_| {});
    let commit = head.to_string();
    let mut entries = Vec::new();
    for (execution, outcome) in plan.executions.iter().zip(outcomes.executions) {
        let output = match (&outcome.result, outcome.reused_from.is_some()) {
            (Ok(output), false) => Ok(output.read_set.clone()),
            (Ok(_), true) => Err("it was not measured here".to_owned()),
            (Err(why), _) => Err(why.clone()),
        };
        let read_set = match output {
            Ok(read_set) => read_set,
            Err(why) => {
                not_measured.extend(
                    execution
                        .dependents
                        .iter()
                        .map(|d| format!("{d} (its producer failed: {why})")),
                );
                continue;
            }
        };
        let metrics = outcome.into_metrics().map_err(cannot)?;
        let kept = findings::encode(&metrics).map_err(|e| cannot(e.to_string()))?;
        let entry = Entry::measured(
            &execution.identity,
            &commit,
            &metrics,
            &read_set,
            kept.is_some(),
        );
        entries.push(Measured {
            identity: execution.identity.clone(),
            entry: serde_json::to_vec(&entry).map_err(|e| cannot(e.to_string()))?,
            findings: kept,
        });
    }
    Ok(Batch {
        entries,
        not_measured,
    })
}
