//! What each effort is doing now: a journalled verb (`done`, `test`, `standards`, `accept`,
//! `await`…) still running in its worktree, read from the operation journal.

use super::observation::{FleetRow, Running};
use crate::git::Repo;

/// Set each row's running verb from the operation journal (`now` in unix seconds).
pub(super) fn mark(repo: &Repo, fleet: &mut [FleetRow], now: u64) {
    let running = crate::operations::running(repo);
    if running.is_empty() {
        return;
    }
    // Each running operation's folder resolved once, not once a row.
    let resolved: Vec<_> = running
        .iter()
        .map(|op| (op, std::fs::canonicalize(&op.path).ok()))
        .collect();
    for row in fleet.iter_mut() {
        let here = std::fs::canonicalize(&row.path).ok();
        let found = resolved
            .iter()
            .filter(|(op, theirs)| op.path == row.path || (here.is_some() && *theirs == here))
            .map(|(op, _)| *op)
            .max_by(|a, b| a.started_at.total_cmp(&b.started_at));
        row.running = found.map(|op| Running {
            verb: op.verb.clone(),
            phase: op.phase.clone(),
            seconds: now.saturating_sub(op.started_at as u64),
        });
    }
}

/// What a fleet row's report line says of a verb running in it: `; running done for 12s`.
pub(super) fn note(row: &FleetRow) -> String {
    row.running.as_ref().map_or_else(String::new, |r| {
        format!("; running {} ({}) for {}s", r.verb, r.phase, r.seconds)
    })
}
