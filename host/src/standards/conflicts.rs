//! Flags of `discern standards` that do not combine, refused the same on both surfaces (clap's
//! `conflicts_with` holds only on the CLI): a flag a mode does not use is refused, never dropped.

use super::MeasureRequest;
use crate::result::{Action, ErrorSlug, Hint, HintId, Refused};

/// The refusal for the first pair of `request`'s flags that do not combine, if any.
pub(super) fn refusal(request: &MeasureRequest) -> Option<Refused> {
    if request.pin && request.force {
        return Some(invalid(
            "--pin and --force contradict each other: a pin commits limits measured on the committed HEAD, and --force measures the work tree, which is never recorded or pinned.",
            Hint::next_step(
                HintId::SeeHelp,
                "Commit your work and pin without --force, or measure with --force alone.",
            ),
        ));
    }
    if request.pin && request.fresh {
        return Some(invalid(
            "--pin and --fresh do not combine: a pin commits the readings a measurement recorded for this HEAD.",
            Hint::next_step(
                HintId::SeeHelp,
                "Measure afresh first, then pin what it recorded",
            )
            .with_action(Action::new("standards").flag("fresh")),
        ));
    }
    if request.pin
        && let Some(flag) = unused_by_pin(request)
    {
        return Some(invalid(
            format!(
                "--pin does not take {flag}: a pin judges the branch against its trunk as `done` does and commits the gains it finds, so {flag} would be ignored."
            ),
            Hint::next_step(
                HintId::SeeHelp,
                format!("Measure with {flag} first (without --pin), then pin."),
            ),
        ));
    }
    if !request.pin
        && let Some((mode, flag, why)) = unused_by_mode(request)
    {
        return Some(invalid(
            format!("{mode} does not take {flag}: {why}, so {flag} would be ignored."),
            Hint::next_step(
                HintId::SeeHelp,
                format!("Call with {mode} alone, or with {flag} alone."),
            ),
        ));
    }
    if request.explain.is_some() && !request.names.is_empty() {
        return Some(invalid(
            "--explain names the one Standard it lists; it does not take other names.",
            Hint::next_step(
                HintId::SeeHelp,
                "Call with `explain` alone, or with names alone.",
            ),
        ));
    }
    None
}

/// The first flag `--pin` would not use.
fn unused_by_pin(request: &MeasureRequest) -> Option<&'static str> {
    [
        (request.baseline.is_some(), "--baseline"),
        (request.require_trunk, "--require-trunk"),
        (request.explain.is_some(), "--explain"),
        (request.no_remote, "--no-remote"),
    ]
    .into_iter()
    .find_map(|(set, flag)| set.then_some(flag))
}

/// The first flag a measurement's mode would not use: a dry run runs nothing (no finding to
/// explain, no evidence to skip or reuse), and `--force` reads and records no evidence.
fn unused_by_mode(request: &MeasureRequest) -> Option<(&'static str, &'static str, &'static str)> {
    const DRY_RUN: &str = "a dry run shows what would run and runs nothing";
    const FORCE: &str = "--force measures the work tree, which is never reused or recorded";
    [
        (
            request.dry_run && request.explain.is_some(),
            "--dry-run",
            "--explain",
            DRY_RUN,
        ),
        (
            request.dry_run && request.fresh,
            "--dry-run",
            "--fresh",
            DRY_RUN,
        ),
        (
            request.dry_run && request.no_remote,
            "--dry-run",
            "--no-remote",
            DRY_RUN,
        ),
        (request.force && request.fresh, "--force", "--fresh", FORCE),
        (
            request.force && request.no_remote,
            "--force",
            "--no-remote",
            FORCE,
        ),
    ]
    .into_iter()
    .find_map(|(set, mode, flag, why)| set.then_some((mode, flag, why)))
}

fn invalid(message: impl Into<String>, hint: Hint) -> Refused {
    Refused::new(ErrorSlug::InvalidArguments, message, hint)
}
