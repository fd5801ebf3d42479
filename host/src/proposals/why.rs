//! Why `standards propose` refused a batch (validation, target, existing state, measurement,
//! commit, renewal), and the one place each reason becomes its refusal.

use super::LiveError;
use crate::commit::CommitError;
use crate::config::Direction;
use crate::result::{Action, ErrorSlug, Hint, HintId, Refusal, Refused};

/// Why nothing was proposed (a dirty tree, an unreadable config, a pending transaction and a
/// refused measurement are refused by `preflight` and `standards`).
#[derive(Debug, thiserror::Error)]
pub(super) enum NotProposed {
    #[error("The batch is empty; name at least one Standard with a reason.")]
    EmptyBatch,
    #[error("The batch names {} more than once.", .0.join(", "))]
    Duplicates(Vec<String>),
    /// Each Standard with one problem of its reason.
    #[error("Invalid reason: {}.", problems(.0))]
    InvalidReasons(Vec<(String, String)>),
    #[error("There is no discern.toml, so there is nothing to propose.")]
    NoConfig,
    #[error(
        "No Standard named {}; the configured Standards are: {}.",
        .unknown.join(", "),
        .configured.join(", ")
    )]
    UnknownStandards {
        unknown: Vec<String>,
        configured: Vec<String>,
    },
    #[error("Cannot propose: {0}.")]
    NotCommittable(CommitError),
    #[error("{branch} is the trunk; limits are proposed on an effort branch, never on the trunk.")]
    OnTrunk { branch: String },
    #[error("The trunk {trunk} cannot be read, so no trunk limit can be verified.")]
    TrunkUnreadable { trunk: String },
    #[error("No trunk limit can be verified: {0}.")]
    TrunkDiverged(crate::git::DivergedTrunk),
    #[error(
        "The merge base of HEAD and the trunk {trunk} cannot be read, so no trunk limit can be verified."
    )]
    NoMergeBase { trunk: String },
    #[error(
        "The trunk {trunk} has no readable discern.toml, so there is no trunk limit to propose against."
    )]
    NoTrunkConfig { trunk: String },
    #[error(
        "Standard {name} is not on the trunk {trunk}: a new Standard has no trunk limit to breach."
    )]
    NewStandard { name: String, trunk: String },
    #[error("The orphaned proposal records cannot be cleared: {0}")]
    OrphansUncleared(LiveError),
    #[error("{0}")]
    LiveUnreadable(LiveError),
    /// Each existing proposal's Standard with why it is stale (none: active).
    #[error(
        "This branch already has proposals: {}. A new batch must be exactly the existing set; nothing was measured or written.",
        states(.0)
    )]
    OtherProposals(Vec<(String, Vec<String>)>),
    #[error(
        "Standard {name} already moved its limit on this branch ({trunk_limit} → {limit}); a proposal starts from the trunk's limit. Where this branch pinned it tighter itself, putting it back to the trunk's {trunk_limit} (`limit = {trunk_limit}` under [standards.{name}] in discern.toml, committed) is no loosening versus the trunk and needs no proposal."
    )]
    LimitMoved {
        name: String,
        trunk_limit: f64,
        limit: f64,
    },
    #[error("HEAD moved during measurement; nothing was written.")]
    HeadMoved,
    #[error("Cannot read the changes since the trunk: {0}")]
    ChangesUnreadable(String),
    #[error(
        "Standard {name} could not be measured ({}); nothing was written.",
        .note.as_deref().unwrap_or("see diagnostics")
    )]
    Unmeasured { name: String, note: Option<String> },
    #[error(
        "Standard {name} measures {value}, which meets the trunk's {} {trunk_limit}: there is no breach to propose.",
        .direction.bound()
    )]
    NoBreach {
        name: String,
        value: f64,
        direction: Direction,
        trunk_limit: f64,
    },
    #[error(
        "Standard {name}'s breach cannot be attributed to this work: no path changed since the trunk is among what its producer read."
    )]
    Unattributed { name: String },
    #[error("Nothing was proposed: {0}.")]
    Commit(CommitError),
    #[error(
        "Proposal {name} cannot be renewed: its definition or limit changed since it was recorded."
    )]
    DefinitionChanged { name: String },
    #[error("Proposal {name} is stale; renew it with its recorded reason first, then re-word it.")]
    Reworded { name: String },
    /// HEAD moved while a stale set was re-measured to renew it.
    #[error("HEAD moved during measurement; nothing was written.")]
    HeadMovedRenewing,
    #[error(
        "Proposal {name} cannot be renewed: it measures {} now, not the recorded {recorded}; nothing was written.",
        .now.map_or("nothing".to_owned(), |v| v.to_string())
    )]
    Remeasured {
        name: String,
        now: Option<f64>,
        recorded: f64,
    },
    #[error("Cannot write the proposal store: {0}")]
    StoreUnwritten(std::io::Error),
    #[error("{0}")]
    Internal(String),
}

fn problems(problems: &[(String, String)]) -> String {
    let problems: Vec<String> = problems.iter().map(|(n, p)| format!("{n}: {p}")).collect();
    problems.join("; ")
}

fn states(existing: &[(String, Vec<String>)]) -> String {
    let states: Vec<String> = existing
        .iter()
        .map(|(name, stale)| match stale.is_empty() {
            true => format!("{name} (active)"),
            false => format!("{name} (stale: {})", stale.join("; ")),
        })
        .collect();
    states.join(", ")
}

/// The refusal of `standards propose` for each reason nothing was proposed.
pub(super) fn refusal(why: &NotProposed) -> Refused {
    why.refused()
}

impl Refusal for NotProposed {
    fn slug(&self) -> ErrorSlug {
        self.kind()
    }

    fn hint(&self) -> Hint {
        if let NotProposed::TrunkDiverged(diverged) = self {
            let text = diverged.hint("propose again");
            return Hint::next_step(HintId::StandardsPropose, text);
        }
        let hint = Hint::next_step(HintId::StandardsPropose, self.step());
        match self.next() {
            Some(step) => hint.with_action(Action::new(step)),
            None => hint,
        }
    }
}

impl NotProposed {
    fn kind(&self) -> ErrorSlug {
        use NotProposed::*;
        match self {
            EmptyBatch | Duplicates(_) | InvalidReasons(_) => ErrorSlug::InvalidValue,
            NoConfig | UnknownStandards { .. } => ErrorSlug::UnknownStandard,
            OnTrunk { .. } => ErrorSlug::WrongCheckout,
            TrunkUnreadable { .. } | TrunkDiverged(_) | NoMergeBase { .. } => {
                ErrorSlug::TrunkUnreadable
            }
            ChangesUnreadable(_) => ErrorSlug::CannotTell,
            NotCommittable(_)
            | NoTrunkConfig { .. }
            | NewStandard { .. }
            | LimitMoved { .. }
            | Unmeasured { .. }
            | NoBreach { .. }
            | Unattributed { .. } => ErrorSlug::PreconditionFailed,
            LiveUnreadable(_)
            | OtherProposals(_)
            | HeadMoved
            | Commit(CommitError::Moved { .. } | CommitError::ConfigChanged)
            | DefinitionChanged { .. }
            | Reworded { .. }
            | HeadMovedRenewing
            | Remeasured { .. } => ErrorSlug::ProposalStale,
            OrphansUncleared(_) | Commit(_) | StoreUnwritten(_) => ErrorSlug::ProposalFailed,
            Internal(_) => ErrorSlug::Internal,
        }
    }

    fn step(&self) -> &'static str {
        use NotProposed::*;
        match self {
            EmptyBatch => "Pass [{\"name\": \"...\", \"reason\": \"...\"}].",
            Duplicates(_) => "Name each Standard once.",
            InvalidReasons(_) => {
                "Give each proposal a one-paragraph technical reason (at most 500 characters, no secrets, no claim of approval)."
            }
            NoConfig => "Configure Standards first",
            UnknownStandards { .. } => "Name configured Standards.",
            NotCommittable(_) => "Propose from an effort branch with a clean tree.",
            OnTrunk { .. } => "Start an effort or check out your work branch, then propose there",
            TrunkUnreadable { .. } => "Fetch the trunk or set DISCERN_TRUNK, then propose again.",
            TrunkDiverged(_) => {
                "Rebase the local trunk's own commits onto the team's, then propose again."
            }
            NoMergeBase { .. } => {
                "Fetch the trunk's history (`discern standards` names the command for this clone), then propose again."
            }
            NoTrunkConfig { .. } => "Land the Standards on the trunk first.",
            NewStandard { .. } => "Set the new Standard's limit to its measured value instead.",
            OrphansUncleared(_) | StoreUnwritten(_) => {
                "Check the git admin directory's permissions and try again."
            }
            LiveUnreadable(_) => "Fix or remove the proposal store named above.",
            OtherProposals(_) => {
                "Repeat the existing batch to renew or re-word it; or withdraw them (every proposed limit back to the trunk's, in one config-only commit) and propose every Standard together in one batch"
            }
            LimitMoved { .. } => {
                "Put the limit back to the trunk's in discern.toml (the message names it) and commit, then run the gate; propose only what still breaches the trunk's limit"
            }
            HeadMoved => "Propose again on the new HEAD.",
            ChangesUnreadable(_) => "Check the repository, then propose again.",
            Unmeasured { .. } => "Fix the measurement first",
            NoBreach { .. } => {
                "Propose only Standards this work breached; this one holds, so run the gate."
            }
            Unattributed { .. } => {
                "Move the metric back instead; a proposal must come from this work's own changes."
            }
            Commit(_) => {
                "Run the same batch again; a half-finished transaction is finished or unwound first."
            }
            DefinitionChanged { .. } => {
                "Restore the proposal's limit and definition, or have the owner resolve it."
            }
            Reworded { .. } => "Repeat the batch with the recorded reasons.",
            HeadMovedRenewing => "Renew again on the new HEAD.",
            Remeasured { .. } => {
                "Move the metric back to the recorded value, or withdraw the proposal and propose again at the new value."
            }
            Internal(_) => "Report this as a bug in discern.",
        }
    }

    /// The verb the hint names as the step past this refusal, if any.
    fn next(&self) -> Option<&'static str> {
        match self {
            NotProposed::NoConfig => Some("init"),
            NotProposed::OnTrunk { .. } => Some("start"),
            NotProposed::OtherProposals(_) => Some("standards withdraw"),
            NotProposed::Unmeasured { .. } => Some("standards"),
            NotProposed::NoBreach { .. } | NotProposed::LimitMoved { .. } => Some("done"),
            NotProposed::Remeasured { .. } => Some("standards withdraw"),
            _ => None,
        }
    }
}
