//! `discern standards --pin [NAMES]`: tighten limits to measured gains in one config-only commit.

use serde::Serialize;

use super::{VERB, select};
use crate::commit::{self, CommitError, ConfigCommit};
use crate::config::{Config, Direction};
use crate::git::short;
use crate::measure::{
    self, LimitsSummary, Measured, Measurement, StandardResult, data, pin_eligible,
};
use crate::preflight::{self, Prepared};
use crate::result::{Action, ErrorSlug, Hint, HintId, Refusal, Refused, Reply, Report, Section};
use crate::runtime::Runtime;
use crate::workspace::Workspace;

/// `data` of a pin result: what was pinned (nothing, in a dry run), in which commit, and the
/// readings it rests on.
#[derive(Debug, Serialize)]
struct PinData<'a> {
    pinned: &'a [Pinned],
    #[serde(skip_serializing_if = "Option::is_none")]
    commit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    measured_commit: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    branch: Option<&'a Option<String>>,
    standards: &'a [StandardResult],
    #[serde(skip_serializing_if = "Option::is_none")]
    producer_executions: Option<&'a std::collections::BTreeMap<String, u32>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    limits: Option<&'a LimitsSummary>,
}

impl<'a> PinData<'a> {
    /// Everything the measurement says, nothing pinned yet.
    fn of(measured: &'a Measured) -> Self {
        Self {
            pinned: &[],
            commit: None,
            measured_commit: Some(&measured.commit),
            branch: Some(&measured.branch),
            standards: &measured.standards,
            producer_executions: Some(&measured.counts),
            limits: Some(&measured.limits.summary),
        }
    }
}

/// One limit a pin moves.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Pinned {
    pub name: String,
    pub from: f64,
    pub to: f64,
    pub measured: f64,
}

impl Pinned {
    /// `todo: 5 → 2 (measured 2)`.
    fn line(&self) -> String {
        format!(
            "{}: {} → {} (measured {})",
            self.name, self.from, self.to, self.measured
        )
    }
}

/// `discern standards --pin [NAMES] [--dry-run]`. A dry run measures (reusing evidence, never
/// recording it, running no job) and shows what would be pinned; it writes nothing.
pub(crate) fn pin(
    prepared: &Prepared,
    runtime: &Runtime,
    names: &[String],
    dry_run: bool,
    claims: super::ClaimsOf,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Reply, Refused> {
    let ws = &prepared.ws;
    let pending = preflight::pending_transaction(&ws.repo);
    let Some((config, branch)) = pinnable(prepared, names)? else {
        return Ok(super::report::none_configured());
    };
    let mut measured = {
        let selected = select(&config, names)?;
        let options = measure::Options {
            dry_run,
            reuse_recorded: true,
            ..measure::Options::default()
        };
        let claims = claims(ws, &config);
        let ctx = measure::Context {
            ws,
            runtime,
            config: &config,
            selected: &selected,
            claims: &claims,
            progress,
        };
        measure::measure(&ctx, &options).map_err(|e| e.refused_by(VERB))?
    };
    // A dry run runs no job, so a reading that needs one is not previewed (nor judged red).
    let mut pending = pending;
    if dry_run {
        let needs_jobs = |name: &str| {
            config
                .standard(name)
                .is_some_and(|s| !s.needs.is_empty() || s.run.is_some())
        };
        let (unpreviewed, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut measured.standards)
            .into_iter()
            .partition(|s| s.measurement == Measurement::Failed && needs_jobs(&s.name));
        measured.standards = kept;
        if !unpreviewed.is_empty() {
            let names: Vec<&str> = unpreviewed.iter().map(|s| s.name.as_str()).collect();
            let advisory = format!(
                "{} need a job, which a dry run does not run: their pins are not previewed.",
                names.join(", ")
            );
            pending = Some(match pending {
                Some(p) => format!("{p} {advisory}"),
                None => advisory,
            });
        }
    }
    if let Some(refusal) = not_all_passing(&measured) {
        return Err(refusal);
    }
    let pins = pins(&measured, &baseline_margins(&ws.repo, &measured)?);
    if pins.is_empty() {
        let mut envelope = nothing_to_pin(&measured);
        if dry_run {
            envelope.dry_run = Some(true);
            envelope.advisories.extend(pending);
        }
        return Ok(envelope);
    }
    let content = edit_limits(&config, &pins).map_err(NotPinned::Internal)?;
    if dry_run {
        return Ok(dry_run_result(&measured, &pins, pending));
    }
    let message = pin_message(&config, &pins);
    let new = commit_pins(ws, &branch, &measured, (&config.source, &content), &message)?;
    Ok(pinned(&measured, &pins, &branch, new))
}

/// Configured, on a branch a config-only commit may be made on, clean (the table's preflight
/// recovered the checkout, unless a dry run, and observed it): the config and that branch;
/// `None` where no Standard is configured (nothing to pin).
fn pinnable(prepared: &Prepared, names: &[String]) -> Result<Option<(Config, String)>, Refused> {
    let ws = &prepared.ws;
    let config = match prepared.config() {
        Some(config) if !config.standards.is_empty() => config.clone(),
        _ => return Ok(None),
    };
    select(&config, names)?;
    let branch = commit::preflight(&ws.repo).map_err(NotPinned::Commit)?;
    prepared.require_clean(VERB)?;
    Ok(Some((config, branch)))
}

/// The refusal when a selected Standard does not pass or a limit is blocked versus the trunk.
fn not_all_passing(measured: &Measured) -> Option<Refused> {
    let red: Vec<&str> = measured
        .standards
        .iter()
        .filter(|s| {
            s.measurement == Measurement::Failed
                || s.measurement == Measurement::Skipped
                || s.verdict.is_some_and(|v| !v.passes())
        })
        .map(|s| s.name.as_str())
        .collect();
    if red.is_empty() && !measured.limits.blocking() {
        return None;
    }
    let why = match red.is_empty() {
        true => measured.limits.summary.reason.clone().unwrap_or_default(),
        false => format!("not passing: {}", red.join(", ")),
    };
    let mut envelope = Refused::new(
        ErrorSlug::PinFailed,
        format!(
            "Nothing was pinned: every selected Standard must pass and no limit may be blocked versus {} ({why}).",
            measured.limits.summary.trunk,
        ),
        Hint::next_step(HintId::StandardsMeasure, "See what fails, fix it, then pin")
            .with_action(Action::new("standards")),
    );
    envelope = envelope.with_data(data(measured));
    envelope.diagnostics = measured.diagnostics.clone();
    Some(envelope)
}

/// Every selected Standard with a gain beyond its margin, and its new limit. The margin is the
/// baseline's (the trunk's, as of the merge base), so a branch cannot widen its own: a
/// Standard the baseline does not have keeps its own.
fn pins(measured: &Measured, margins: &std::collections::HashMap<String, f64>) -> Vec<Pinned> {
    measured
        .standards
        .iter()
        .filter_map(|s| {
            let value = s.value?;
            let margin = margins.get(&s.name).copied().or(s.margin).unwrap_or(0.0);
            Some(Pinned {
                name: s.name.clone(),
                from: s.limit,
                to: pin_eligible(s.direction, s.limit, value, margin)?,
                measured: value,
            })
        })
        .collect()
}

/// The margins the limits check's baseline commits, by Standard (none without a baseline, or
/// where it has no `discern.toml`). A baseline whose config cannot be read is refused: its
/// margins would otherwise be this branch's own, which a branch may widen.
fn baseline_margins(
    repo: &crate::git::Repo,
    measured: &Measured,
) -> Result<std::collections::HashMap<String, f64>, Refused> {
    let Some(baseline) = measured.limits.summary.baseline.as_deref() else {
        return Ok(Default::default());
    };
    let config = baseline
        .parse::<gix::ObjectId>()
        .map_err(|e| e.to_string())
        .and_then(|b| Config::at(repo, b).map_err(|e| e.to_string()))
        .map_err(|e| {
            Refused::new(
                ErrorSlug::CannotTell,
                format!(
                    "Nothing was pinned: the baseline {}'s discern.toml, whose margins a pin keeps, cannot be read: {e}.",
                    short(baseline)
                ),
                Hint::next_step(
                    HintId::CheckRepository,
                    format!("Run `git show {}:discern.toml` and fix what it reports on the trunk, then pin again", short(baseline)),
                ),
            )
        })?;
    Ok(config
        .map(|c| {
            c.standards
                .iter()
                .map(|s| (s.name.clone(), s.margin))
                .collect()
        })
        .unwrap_or_default())
}

fn nothing_to_pin(measured: &Measured) -> Reply {
    let mut envelope = Reply::new(
        PinData {
            commit: Some(measured.commit.clone()),
            measured_commit: None,
            branch: None,
            producer_executions: None,
            limits: None,
            ..PinData::of(measured)
        },
        Report {
            state: "Nothing to pin: no selected Standard has a gain beyond its margin.".to_owned(),
            sections: Vec::new(),
        },
    );
    envelope.hints.push(Hint::new(
        HintId::StandardsPinNoSlack,
        "Limits already sit at the measured values (within each Standard's margin).",
    ));
    envelope
}

/// The config-only commit on `branch`, made only if it still points at the measured HEAD.
pub(super) fn commit_pins(
    ws: &Workspace,
    branch: &str,
    measured: &Measured,
    (base, content): (&str, &str),
    message: &str,
) -> Result<gix::ObjectId, NotPinned> {
    let head: gix::ObjectId = measured
        .commit
        .parse()
        .map_err(|_| NotPinned::Internal("the measured commit id is unreadable".to_owned()))?;
    if ws.repo.head().ok().flatten() != Some(head) {
        return Err(NotPinned::HeadMoved);
    }
    // That the limits edited are HEAD's committed ones is checked under the writer lock.
    let content = content.as_bytes();
    let commit = ConfigCommit {
        kind: "pin",
        branch,
        head,
        base: base.as_bytes(),
        content,
        message,
        files: &|_| Ok(Vec::new()),
    };
    Ok(commit::config_only_commit(
        &ws.repo,
        &commit,
        &ws.settings.faults,
    )?)
}

fn pinned(measured: &Measured, pins: &[Pinned], branch: &str, new: gix::ObjectId) -> Reply {
    let lines = pins.iter().map(Pinned::line).collect();
    let mut envelope = Reply::new(
        PinData {
            pinned: pins,
            commit: Some(new.to_string()),
            branch: Some(&Some(branch.to_owned())),
            ..PinData::of(measured)
        },
        Report {
            state: format!(
                "Pinned {} limit{} in commit {} on {branch}.",
                pins.len(),
                if pins.len() == 1 { "" } else { "s" },
                short(&new.to_string())
            ),
            sections: vec![Section {
                table: None,
                title: "Pinned".to_owned(),
                lines,
            }],
        },
    );
    envelope.hints.push(
        Hint::next_step(
            HintId::StandardsPinNeedsDone,
            format!(
                "The pin commit {} has no Proof yet; run the gate again before landing",
                short(&new.to_string())
            ),
        )
        .with_action(Action::new("done")),
    );
    envelope
}

/// `discern.toml` with each pinned Standard's limit set to its new value (every other byte
/// kept).
pub(crate) fn edit_limits(config: &Config, pins: &[Pinned]) -> Result<String, String> {
    let limits: Vec<(&str, f64)> = pins.iter().map(|p| (p.name.as_str(), p.to)).collect();
    config.with_limits(&limits)
}

pub(super) fn pin_message(config: &Config, pins: &[Pinned]) -> String {
    let mut message = format!(
        "discern: pin {} Standard limit{}\n\n",
        pins.len(),
        if pins.len() == 1 { "" } else { "s" }
    );
    for pin in pins {
        let direction = config
            .standard(&pin.name)
            .map_or("", |s| match s.direction {
                Direction::Up => "floor",
                Direction::Down => "ceiling",
            });
        message.push_str(&format!(
            "- {} ({direction}): {} -> {} (measured {})\n",
            pin.name, pin.from, pin.to, pin.measured
        ));
    }
    message
}

/// Why nothing was pinned (a red or blocked Standard is refused with its readings, in
/// `not_all_passing`).
#[derive(Debug, thiserror::Error)]
pub(crate) enum NotPinned {
    #[error("HEAD moved while measuring; nothing was pinned.")]
    HeadMoved,
    #[error("Nothing was committed: {0}.")]
    Commit(#[from] CommitError),
    #[error("{0}")]
    Internal(String),
}

impl Refusal for NotPinned {
    fn slug(&self) -> ErrorSlug {
        self.explained().0
    }

    fn hint(&self) -> Hint {
        self.explained().1
    }
}

impl NotPinned {
    /// Its slug and the way past it.
    fn explained(&self) -> (ErrorSlug, Hint) {
        match self {
            NotPinned::HeadMoved => (
                ErrorSlug::PinFailed,
                Hint::next_step(HintId::StandardsMeasure, "Pin again on the new HEAD")
                    .with_action(Action::new("standards").flag("pin")),
            ),
            NotPinned::Commit(
                CommitError::Detached | CommitError::InProgress(_) | CommitError::Staged(_),
            ) => (
                match self {
                    NotPinned::Commit(CommitError::Detached) => ErrorSlug::WrongCheckout,
                    _ => ErrorSlug::DirtyWorktree,
                },
                Hint::next_step(
                    HintId::CommitOrStash,
                    "Get the checkout onto a named branch with no operation in progress and nothing staged, then try again.",
                ),
            ),
            NotPinned::Commit(
                CommitError::Moved { .. } | CommitError::Unchanged | CommitError::ConfigChanged,
            ) => (
                ErrorSlug::PinFailed,
                Hint::next_step(
                    HintId::StandardsMeasure,
                    "Another writer moved the branch; run the command again on the new HEAD.",
                ),
            ),
            NotPinned::Commit(CommitError::Locked(_)) => (
                ErrorSlug::PinFailed,
                Hint::next_step(
                    HintId::CheckRepository,
                    "A git lock file stops the write; check it as the message says, then pin again.",
                ),
            ),
            NotPinned::Commit(CommitError::Git(_)) => (
                ErrorSlug::PinFailed,
                Hint::next_step(
                    HintId::ReportBug,
                    "Nothing was changed; check the repository (permissions, disk) and try again.",
                ),
            ),
            NotPinned::Internal(_) => (
                ErrorSlug::Internal,
                Hint::next_step(HintId::ReportBug, "Report this as a bug in discern."),
            ),
        }
    }
}

/// `plan` of `--pin --dry-run`: the pins a real run would commit.
#[derive(Serialize)]
struct PinPlan<'a> {
    pin: &'a [Pinned],
}

/// What `--pin --dry-run` shows: the pins a real run would commit, as a plan.
fn dry_run_result(measured: &Measured, pins: &[Pinned], pending: Option<String>) -> Reply {
    let lines = pins.iter().map(Pinned::line).collect();
    let envelope = Reply::new(
        PinData::of(measured),
        Report {
            state: format!(
                "Dry run: {} limit{} would be pinned on {}; nothing was written.",
                pins.len(),
                if pins.len() == 1 { "" } else { "s" },
                short(&measured.commit)
            ),
            sections: vec![Section {
                table: None,
                title: "Would pin".to_owned(),
                lines,
            }],
        },
    );
    let mut envelope = envelope.with_plan(PinPlan { pin: pins });
    envelope.dry_run = Some(true);
    envelope.advisories.extend(pending);
    envelope.hints.push(
        Hint::next_step(HintId::StandardsMeasure, "Commit these limits")
            .with_action(Action::new("standards").flag("pin")),
    );
    envelope
}
