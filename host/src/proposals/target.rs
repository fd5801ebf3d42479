//! What a proposal batch is checked against before anything is measured or written: valid
//! requests, configured Standards, a clean effort branch, and the trunk's limit of each.

use std::collections::{BTreeMap, BTreeSet};

use super::why::{NotProposed, refusal};
use super::{ProposalRequest, VERB, reason};
use crate::commit;
use crate::config::{Config, FILE};
use crate::git::Repo;
use crate::preflight::Prepared;
use crate::result::Refused;

/// Where the batch lands: the effort branch, the trunk it is measured against, and the
/// trunk's limit of every requested Standard.
pub(super) struct Target {
    pub branch: String,
    pub trunk: String,
    pub trunk_commit: gix::ObjectId,
    pub trunk_limits: BTreeMap<String, f64>,
}

/// Every request is valid before any effect: a non-empty batch, each Standard once, each
/// reason a technical justification.
pub(super) fn validate(requests: &[ProposalRequest]) -> Result<(), Refused> {
    if requests.is_empty() {
        return Err(refusal(&NotProposed::EmptyBatch));
    }
    let mut seen = BTreeSet::new();
    let duplicates: Vec<String> = requests
        .iter()
        .filter(|r| !seen.insert(r.name.as_str()))
        .map(|r| r.name.clone())
        .collect();
    if !duplicates.is_empty() {
        return Err(refusal(&NotProposed::Duplicates(duplicates)));
    }
    let bad_reasons: Vec<(String, String)> = requests
        .iter()
        .flat_map(|r| {
            reason::problems(&r.reason)
                .into_iter()
                .map(move |p| (r.name.clone(), p))
        })
        .collect();
    if !bad_reasons.is_empty() {
        return Err(refusal(&NotProposed::InvalidReasons(bad_reasons)));
    }
    Ok(())
}

/// The config, with every requested Standard in it.
pub(super) fn configured(
    prepared: &Prepared,
    requests: &[ProposalRequest],
) -> Result<Config, Refused> {
    let Some(config) = prepared.config().cloned() else {
        return Err(refusal(&NotProposed::NoConfig));
    };
    let unknown: Vec<String> = requests
        .iter()
        .filter(|r| config.standard(&r.name).is_none())
        .map(|r| r.name.clone())
        .collect();
    if !unknown.is_empty() {
        let configured = config.standards.iter().map(|s| s.name.clone()).collect();
        return Err(refusal(&NotProposed::UnknownStandards {
            unknown,
            configured,
        }));
    }
    Ok(config)
}

/// A clean effort branch (not the trunk), a readable trunk with a config, and every
/// requested Standard on it.
pub(super) fn target(
    prepared: &Prepared,
    config: &Config,
    requests: &[ProposalRequest],
) -> Result<Target, Refused> {
    let (ws, repo) = (&prepared.ws, &prepared.ws.repo);
    let trunk = config
        .trunk(ws.settings.trunk_override.as_deref())
        .to_owned();
    // A branch of a release line proposes against the line's limits.
    let trunk = crate::measure::limits::landing_line(ws, trunk, repo.head().ok().flatten());
    let branch = commit::preflight(repo).map_err(|e| refusal(&NotProposed::NotCommittable(e)))?;
    if branch == trunk {
        return Err(refusal(&NotProposed::OnTrunk { branch }));
    }
    prepared.require_clean(VERB)?;
    let trunk_commit = match repo.trunk_commit(&trunk) {
        Ok(Some(commit)) => commit,
        Err(e) if let Some(diverged) = crate::git::DivergedTrunk::of(&e) => {
            return Err(refusal(&NotProposed::TrunkDiverged(diverged)));
        }
        _ => return Err(refusal(&NotProposed::TrunkUnreadable { trunk })),
    };
    // A branch is judged on what it changed: the limit it loosens is its merge base's.
    let Some(base) = repo
        .head()
        .ok()
        .flatten()
        .and_then(|head| repo.merge_base(trunk_commit, head))
    else {
        return Err(refusal(&NotProposed::NoMergeBase { trunk }));
    };
    let trunk_limits = trunk_limits(repo, &trunk, base, requests)?;
    Ok(Target {
        branch,
        trunk,
        trunk_commit,
        trunk_limits,
    })
}

/// The trunk's limit of every requested Standard, from the config at the branch's merge base
/// with the trunk.
fn trunk_limits(
    repo: &Repo,
    trunk: &str,
    trunk_commit: gix::ObjectId,
    requests: &[ProposalRequest],
) -> Result<BTreeMap<String, f64>, Refused> {
    let trunk_config = repo
        .file_at(trunk_commit, FILE)
        .ok()
        .flatten()
        .and_then(|b| String::from_utf8(b).ok())
        .map(|t| Config::parse_tolerant(&t));
    let Some(Ok(trunk_config)) = trunk_config else {
        let trunk = trunk.to_owned();
        return Err(refusal(&NotProposed::NoTrunkConfig { trunk }));
    };
    let mut limits = BTreeMap::new();
    for request in requests {
        let Some(standard) = trunk_config.standard(&request.name) else {
            let (name, trunk) = (request.name.clone(), trunk.to_owned());
            return Err(refusal(&NotProposed::NewStandard { name, trunk }));
        };
        limits.insert(request.name.clone(), standard.limit);
    }
    Ok(limits)
}
