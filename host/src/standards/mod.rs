//! `discern standards`: measure every selected Standard through the sandboxed producers, each
//! producer identity once, judge each reading against its limit, and refuse any limit that
//! was loosened, redefined or deleted versus the trunk.

mod conflicts;
mod explain;
pub(crate) mod gains;
pub(crate) mod init;
pub(crate) mod pin;
mod report;
mod rows;

use crate::config::{Config, StandardDef};
use crate::measure::{self, ComponentOrigin, Components, EvidenceUse, ProposalClaim, limits};
use crate::planner::Plan;
use crate::preflight::load_config;
use crate::preflight::{self, Cleanliness, Preflight, Prepared};
use crate::result::{Action, ErrorSlug, Hint, HintId, Refused, Reply};
use crate::runtime::Runtime;
use crate::workspace::Workspace;

/// Where a verb finds the active proposal claims of a checkout (the caller supplies it, so that
/// measuring never calls up into `proposals`).
pub(crate) type ClaimsOf<'a> = &'a dyn Fn(&Workspace, &Config) -> Vec<ProposalClaim>;

pub(crate) const VERB: &str = "standards";
/// Readings describe a commit, and a pin commits limits: a clean tree (`--force` excepted,
/// which measures the work tree and is never recorded).
pub(crate) const CLEANLINESS: Cleanliness = Cleanliness::Full;

/// `discern standards [NAMES] [--pin] [--force] [--dry-run]` (MCP `discern_standards` with
/// `action: "measure"`).
#[derive(Debug, Clone, Default, clap::Args, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MeasureRequest {
    /// The Standards to measure (default: all).
    #[serde(default)]
    pub names: Vec<String>,
    /// Tighten the selected limits to their measured gains (value ∓ margin) in one
    /// config-only commit.
    #[arg(long)]
    #[serde(default)]
    pub pin: bool,
    /// Measure the work tree as it is, uncommitted changes included (for authoring a
    /// Standard); never recorded, never pinned.
    #[arg(long)]
    #[serde(default)]
    pub force: bool,
    /// Measure the committed HEAD afresh: no reading is reused from the evidence store, and
    /// the new readings replace what it held.
    #[arg(long)]
    #[serde(default)]
    pub fresh: bool,
    /// Preview only, writing nothing: the producers that would run for which Standards, or
    /// with pin, the limits that would be pinned.
    #[arg(long)]
    #[serde(default)]
    pub dry_run: bool,
    /// Judge every commit since REV (on the trunk: a CI push job's `before`) instead of the
    /// last landing; every limit loosened since then needs a recorded approval.
    #[arg(long, value_name = "REV")]
    #[serde(default)]
    pub baseline: Option<String>,
    /// Fail when the trunk or the history to compare with cannot be read (the default when
    /// `CI=true`).
    #[arg(long)]
    #[serde(default)]
    pub require_trunk: bool,
    /// List every finding of one Standard, grouped by file, the new ones (versus the merge
    /// base on a branch, the first parent on the trunk) marked.
    #[arg(long, value_name = "STANDARD", conflicts_with_all = ["names", "pin"])]
    #[serde(default)]
    pub explain: Option<String>,
    /// Reuse only evidence this clone measured: none another clone published (fetched by
    /// `discern sync`) or a remote cache holds.
    #[arg(long)]
    #[serde(default)]
    pub no_remote: bool,
}

impl MeasureRequest {
    /// The request's own check, on both surfaces: flags that do not combine are refused.
    pub(crate) fn validate(&self) -> Result<(), Refused> {
        conflicts::refusal(self).map_or(Ok(()), Err)
    }

    /// What runs before it: a limit transaction a crash interrupted is finished (or unwound)
    /// first, never on a dry run; a pin needs the clean tree its commit describes, while a
    /// measurement reads HEAD whatever the tree holds and names what is uncommitted.
    pub(crate) fn preflight(&self) -> Preflight {
        let preflight = match self.pin {
            // A pin commits the work tree's config: loaded first, invalid refused.
            true => Preflight::of(true, CLEANLINESS).config(),
            // A measurement reads HEAD's committed config (`--force`: the work tree's) itself.
            false => Preflight::of(true, Cleanliness::Any).journal(true),
        };
        preflight.dry_run(self.dry_run)
    }
}

/// `discern standards`: measure, or with `pin` tighten limits; flag combinations that make no
/// sense are refused before anything runs.
///
/// `claims` finds the active proposals that explain a loosened limit; it is asked after any
/// interrupted transaction is recovered and the config is read, so it sees what recovery wrote.
pub(crate) fn standards(
    prepared: &Prepared,
    runtime: &Runtime,
    request: &MeasureRequest,
    claims: ClaimsOf,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Reply, Refused> {
    request.validate()?;
    let ws = &prepared.ws;
    if request.pin {
        return pin::pin(
            prepared,
            runtime,
            &request.names,
            request.dry_run,
            claims,
            progress,
        );
    }
    measure(ws, runtime, request, claims, progress)
}

/// `discern standards [NAMES] [--force] [--dry-run]` (journalled for `progress` by the
/// table).
pub(crate) fn measure(
    ws: &Workspace,
    runtime: &Runtime,
    request: &MeasureRequest,
    claims: ClaimsOf,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Reply, Refused> {
    // HEAD is measured whatever the work tree holds, so its committed config is the one read;
    // `--force` measures the work tree, config included.
    let loaded = match request.force {
        true => load_config(ws),
        false => preflight::load_committed_config(ws),
    };
    let config = loaded?.unwrap_or_else(Config::absent);
    let names = match &request.explain {
        Some(name) => std::slice::from_ref(name),
        None => request.names.as_slice(),
    };
    let selected = select(&config, names)?;
    let options = measure::Options {
        worktree: request.force,
        tolerate_dirty: true,
        baseline: request.baseline.clone(),
        require_trunk: request.require_trunk,
        evidence: match request.fresh {
            true => EvidenceUse::Refresh,
            false => EvidenceUse::ReuseAndRecord,
        },
        explain: request.explain.clone(),
        no_remote: request.no_remote,
        ..measure::Options::default()
    };
    let Ok(Some(head)) = ws.repo.head() else {
        return Ok(report::none_configured());
    };
    if request.dry_run {
        return dry_run(
            ws,
            runtime,
            &config,
            &selected,
            &options.against(ws, &config, head),
            claims,
        );
    }
    let claims = claims(ws, &config);
    let ctx = measure::Context {
        ws,
        runtime,
        config: &config,
        selected: &selected,
        claims: &claims,
        progress,
    };
    match measure::measure(&ctx, &options).map_err(|e| e.refused_by(VERB)) {
        // No Standard left where the baseline had some is deletion, never "nothing to do".
        Ok(measured)
            if config.standards.is_empty()
                && !measured.limits.blocking()
                && measured.limits.protected.is_empty() =>
        {
            let mut envelope = report::none_configured();
            envelope.advisories.extend(measured.advisories);
            Ok(envelope)
        }
        Ok(measured) => match &request.explain {
            Some(name) => explain::explain(&measured, name),
            None => report::measured(&config, &measured, request.force),
        },
        Err(refusal) => Err(refusal),
    }
}

/// What a measurement would run, and the limits check it would start with; nothing runs.
fn dry_run(
    ws: &Workspace,
    runtime: &Runtime,
    config: &Config,
    selected: &[&StandardDef],
    against: &limits::Against,
    claims: ClaimsOf,
) -> Result<Reply, Refused> {
    let limits = limits::check(&ws.repo, config, against, &claims(ws, config));
    let measurable: Vec<&StandardDef> = selected
        .iter()
        .copied()
        .filter(|s| !limits.blocked.contains_key(&s.name))
        .collect();
    let plan = Plan::build(
        config,
        &measurable,
        &Components {
            repo: &ws.repo,
            snapshot: None,
            settings: &ws.settings,
            origin: ComponentOrigin::WorkTree,
        },
    );
    if let Err(error) = measure::component_configs(config, &plan, runtime) {
        return Err(preflight::config_refusal(&error));
    }
    let mut envelope = report::dry_run(config, selected, &plan, &limits);
    envelope
        .advisories
        .extend(preflight::pending_transaction(&ws.repo));
    Ok(envelope)
}

/// The configured Standards named in `names` (all when empty), in declaration order.
pub(crate) fn select<'c>(
    config: &'c Config,
    names: &[String],
) -> Result<Vec<&'c StandardDef>, Refused> {
    let unknown: Vec<&String> = names
        .iter()
        .filter(|n| config.standard(n).is_none())
        .collect();
    if !unknown.is_empty() {
        let configured: Vec<&str> = config.standards.iter().map(|s| s.name.as_str()).collect();
        return Err(Refused::new(
            ErrorSlug::UnknownStandard,
            format!(
                "No Standard named {}; the configured Standards are: {}.",
                unknown
                    .iter()
                    .map(|n| format!("{n:?}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                configured.join(", ")
            ),
            Hint::next_step(
                HintId::ListStandards,
                "Name configured Standards, or measure them all",
            )
            .with_action(Action::new("standards")),
        ));
    }
    Ok(config
        .standards
        .iter()
        .filter(|s| names.is_empty() || names.contains(&s.name))
        .collect())
}
