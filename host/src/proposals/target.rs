//! What a proposal batch is checked against before anything is measured or written: valid
//! requests, configured Standards, a clean effort branch, and the trunk's limit of each.

use std::collections::{BTreeMap, BTreeSet};

use super::{ProposalRequest, VERB, reason, refusal};
use crate::commit;
use crate::config::{Config, FILE};
use crate::git::Repo;
use crate::preflight;
use crate::result::{Action, Envelope, ErrorSlug, WithNext};
use crate::standards;
use crate::workspace::Workspace;

/// Where the batch lands: the effort branch, the trunk it is measured against, and the
/// trunk's limit of every requested Standard.
pub(super) struct Target {
    pub branch: String,
    pub trunk: String,
    pub trunk_commit: gix::ObjectId,
    pub trunk_limits: BTreeMap<String, f64>,
}

pub(super) fn fail(slug: ErrorSlug, message: impl Into<String>, hint: &str) -> Box<Envelope> {
    Box::new(refusal(slug, message, hint))
}

/// Every request is valid before any effect: a non-empty batch, each Standard once, each
/// reason a technical justification.
pub(super) fn validate(requests: &[ProposalRequest]) -> Result<(), Box<Envelope>> {
    if requests.is_empty() {
        return Err(fail(
            ErrorSlug::InvalidValue,
            "The batch is empty; name at least one Standard with a reason.",
            "Pass [{\"name\": \"...\", \"reason\": \"...\"}].",
        ));
    }
    let mut seen = BTreeSet::new();
    let duplicates: Vec<&str> = requests
        .iter()
        .filter(|r| !seen.insert(r.name.as_str()))
        .map(|r| r.name.as_str())
        .collect();
    if !duplicates.is_empty() {
        return Err(fail(
            ErrorSlug::InvalidValue,
            format!("The batch names {} more than once.", duplicates.join(", ")),
            "Name each Standard once.",
        ));
    }
    let bad_reasons: Vec<String> = requests
        .iter()
        .flat_map(|r| {
            reason::problems(&r.reason)
                .into_iter()
                .map(move |p| format!("{}: {p}", r.name))
        })
        .collect();
    if !bad_reasons.is_empty() {
        return Err(fail(
            ErrorSlug::InvalidValue,
            format!("Invalid reason: {}.", bad_reasons.join("; ")),
            "Give each proposal a one-paragraph technical reason (at most 500 characters, no secrets, no claim of approval).",
        ));
    }
    Ok(())
}

/// The config, with every requested Standard in it.
pub(super) fn configured(
    ws: &Workspace,
    requests: &[ProposalRequest],
) -> Result<Config, Box<Envelope>> {
    let Some(config) = preflight::load_config(ws, VERB)? else {
        return Err(fail(
            ErrorSlug::UnknownStandard,
            "There is no discern.toml, so there is nothing to propose.",
            "Configure Standards first",
        )
        .with_next(Action::new("init")));
    };
    let unknown: Vec<&str> = requests
        .iter()
        .filter(|r| config.standard(&r.name).is_none())
        .map(|r| r.name.as_str())
        .collect();
    if !unknown.is_empty() {
        let configured: Vec<&str> = config.standards.iter().map(|s| s.name.as_str()).collect();
        return Err(fail(
            ErrorSlug::UnknownStandard,
            format!(
                "No Standard named {}; the configured Standards are: {}.",
                unknown.join(", "),
                configured.join(", ")
            ),
            "Name configured Standards.",
        ));
    }
    Ok(config)
}

/// A clean effort branch (not the trunk), a readable trunk with a config, and every
/// requested Standard on it.
pub(super) fn target(
    ws: &Workspace,
    config: &Config,
    requests: &[ProposalRequest],
) -> Result<Target, Box<Envelope>> {
    let repo = &ws.repo;
    let trunk = config
        .trunk(ws.settings.trunk_override.as_deref())
        .to_owned();
    let clean = preflight::observe_clean(VERB, repo, standards::CLEANLINESS)?;
    let branch = commit::preflight(repo).map_err(|e| {
        fail(
            ErrorSlug::PreconditionFailed,
            format!("Cannot propose: {e}."),
            "Propose from an effort branch with a clean tree.",
        )
    })?;
    if branch == trunk {
        return Err(fail(
            ErrorSlug::PreconditionFailed,
            format!(
                "{branch} is the trunk; limits are proposed on an effort branch, never on the trunk."
            ),
            "Start an effort or check out your work branch, then propose there",
        ).with_next(Action::new("start")));
    }
    clean.map_err(|e| Box::new(preflight::clean_refusal(VERB, repo, &e)))?;
    let Some(trunk_commit) = repo.trunk_commit(&trunk).ok().flatten() else {
        return Err(fail(
            ErrorSlug::PreconditionFailed,
            format!("The trunk {trunk} cannot be read, so no trunk limit can be verified."),
            "Fetch the trunk or set DISCERN_TRUNK, then propose again.",
        ));
    };
    // A branch is judged on what it changed: the limit it loosens is its merge base's.
    let base = repo
        .head()
        .ok()
        .flatten()
        .and_then(|head| repo.merge_base(trunk_commit, head))
        .ok_or_else(|| {
            fail(
                ErrorSlug::PreconditionFailed,
                format!("The merge base of HEAD and the trunk {trunk} cannot be read, so no trunk limit can be verified."),
                "Fetch the trunk's history (`discern standards` names the command for this clone), then propose again.",
            )
        })?;
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
) -> Result<BTreeMap<String, f64>, Box<Envelope>> {
    let trunk_config = repo
        .file_at(trunk_commit, FILE)
        .ok()
        .flatten()
        .and_then(|b| String::from_utf8(b).ok())
        .map(|t| Config::parse_tolerant(&t));
    let Some(Ok(trunk_config)) = trunk_config else {
        return Err(fail(
            ErrorSlug::PreconditionFailed,
            format!(
                "The trunk {trunk} has no readable discern.toml, so there is no trunk limit to propose against."
            ),
            "Land the Standards on the trunk first.",
        ));
    };
    let mut limits = BTreeMap::new();
    for request in requests {
        let Some(standard) = trunk_config.standard(&request.name) else {
            return Err(fail(
                ErrorSlug::PreconditionFailed,
                format!(
                    "Standard {} is not on the trunk {trunk}: a new Standard has no trunk limit to breach.",
                    request.name
                ),
                "Set the new Standard's limit to its measured value instead.",
            ));
        };
        limits.insert(request.name.clone(), standard.limit);
    }
    Ok(limits)
}
