//! A batch answered from the readings recorded for this clean HEAD: when every selected
//! Standard has one under its current definition, nothing is measured again (a pin of what was
//! just measured).

use super::result::{Measured, Measurement, StandardResult};
use super::{Context, Options, assess, limits, record, skipped};
use crate::git::short;

/// The recorded readings as a measurement, when they cover the batch; the limits are still
/// checked now.
pub(super) fn reuse(ctx: &Context, options: &Options) -> Option<Measured> {
    let Context {
        ws,
        config,
        selected,
        claims,
        ..
    } = *ctx;
    let head_id = ws.repo.head().ok().flatten()?;
    let head = head_id.to_string();
    let record = record::load(&ws.repo)
        .ok()
        .flatten()
        .filter(|r| r.head == head)?;
    let mut standards = selected
        .iter()
        .map(|standard| {
            let value = record.values.get(&standard.name)?;
            (value.definition == standard.definition_fingerprint()).then(|| {
                let mut result = assess(
                    skipped(standard, ""),
                    standard,
                    value.value,
                    Measurement::Reused,
                    format!("recorded on {}", short(&head)),
                );
                result.reused_from = Some(head.clone());
                result
            })
        })
        .collect::<Option<Vec<StandardResult>>>()?;
    let against = options.against(ws, config, head_id);
    let limits = limits::check(&ws.repo, config, &against, claims);
    for standard in standards.iter_mut() {
        if let Some(why) = limits.blocked.get(&standard.name)
            && let Some(def) = config.standard(&standard.name)
        {
            *standard = skipped(def, why);
        }
    }
    Some(Measured {
        commit: head,
        branch: ws.repo.branch().ok().flatten(),
        standards,
        diagnostics: limits.diagnostics.clone(),
        advisories: limits.advisories.clone(),
        limits,
        counts: Default::default(),
        recorded: true,
        worktree: false,
        read_sets: Default::default(),
    })
}
