//! Flags of `discern standards` that do not combine, refused the same on both surfaces (clap's
//! `conflicts_with` holds only on the CLI): a flag a mode does not use is refused, never dropped.

use super::{MeasureRequest, VERB};
use crate::result::{Action, Envelope, ErrorSlug, Hint, HintId};

/// The refusal for the first pair of `request`'s flags that do not combine, if any.
pub(super) fn refusal(request: &MeasureRequest) -> Option<Envelope> {
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

fn invalid(message: impl Into<String>, hint: Hint) -> Envelope {
    Envelope::refusal(VERB, ErrorSlug::InvalidArguments, message, hint)
}
