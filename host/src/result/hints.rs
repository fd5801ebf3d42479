//! Hints: advisory lines in a result, each a registry entry with a stable id and a category.

use serde::Serialize;
use serde::ser::SerializeMap;
use serde_json::{Map, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// What the caller should do next.
    NextStep,
    /// A boundary the caller must not cross.
    Guardrail,
    /// Something worth knowing; no action implied.
    Notice,
    /// A judgment only the owner makes (sibling efforts, landings, limit approvals).
    OwnerAttention,
}

/// Declares [`HintId`] and [`HintId::ALL`] from one list, so the registry cannot drift.
macro_rules! hint_ids {
    ($($id:ident),* $(,)?) => {
        /// The registry: every hint discern can emit has a stable id here, and one category.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
        #[serde(rename_all = "kebab-case")]
        pub enum HintId {
            $($id),*
        }

        impl HintId {
            /// Every registered hint id, in declaration order.
            pub const ALL: &'static [HintId] = &[$(HintId::$id),*];
        }
    };
}

hint_ids! {
    SeeHelp,
    BuildCustomProducer,
    ReportBug,
    CheckRepository,
    FixConfig,
    RunFromRepository,
    CommitFirst,
    CommitOrStash,
    ListStandards,
    StandardsNoneConfigured,
    StandardsPinnableSlack,
    StandardsLimitsUnverified,
    StandardsMoveMetricBack,
    StandardsNeverMoveLimit,
    StandardsRestoreDefinition,
    StandardsGateChangedOnTrunk,
    StandardsFixProducer,
    StandardsForceNotRecorded,
    StandardsHeadMoved,
    StandardsMeasure,
    StandardsPinNoSlack,
    StandardsPinNeedsDone,
    StandardsPropose,
    ProposalAwaitsOwner,
    InitExists,
    InitCommit,
    InitSignedApproval,
    StartFromMain,
    WorkInEffort,
    MainCheckoutDirty,
    UpdateFromTrunk,
    FixGate,
    Prepare,
    Accept,
    AskOwner,
    AwaitCondition,
    ProgressHandle,
    MapIndex,
    ConfigureJobs,
    StartEffort,
    ContinueEffort,
    CommitChanges,
    RunDone,
    FleetOwnership,
    StatusFullDetail,
    FleetDirty,
    FleetReady,
    FleetStale,
    FleetAwaitsApproval,
    FleetCollides,
    FleetBroken,
    FleetUnreadable,
    UnlandedBranches,
    SyncRefs,
    MainCheckoutBehind,
    RetrySetup,
    WireAgents,
}

impl HintId {
    pub fn category(self) -> Category {
        use HintId::*;
        match self {
            StandardsNeverMoveLimit | StandardsForceNotRecorded => Category::Guardrail,
            StandardsHeadMoved | StandardsPinNoSlack | InitSignedApproval => Category::Notice,
            ProposalAwaitsOwner | FleetDirty | FleetReady | FleetStale | FleetAwaitsApproval
            | FleetCollides | FleetBroken | FleetUnreadable | UnlandedBranches
            | MainCheckoutBehind => Category::OwnerAttention,
            MainCheckoutDirty | StatusFullDetail => Category::Notice,
            FleetOwnership => Category::Guardrail,
            SeeHelp
            | BuildCustomProducer
            | ReportBug
            | CheckRepository
            | FixConfig
            | RunFromRepository
            | CommitFirst
            | CommitOrStash
            | ListStandards
            | StandardsNoneConfigured
            | StandardsPinnableSlack
            | StandardsLimitsUnverified
            | StandardsMoveMetricBack
            | StandardsRestoreDefinition
            | StandardsGateChangedOnTrunk
            | StandardsFixProducer
            | StandardsMeasure
            | StandardsPinNeedsDone
            | StandardsPropose
            | InitExists
            | InitCommit
            | StartFromMain
            | WorkInEffort
            | UpdateFromTrunk
            | FixGate
            | Prepare
            | Accept
            | AskOwner
            | AwaitCondition
            | ProgressHandle
            | MapIndex
            | ConfigureJobs
            | StartEffort
            | ContinueEffort
            | CommitChanges
            | RunDone
            | SyncRefs
            | RetrySetup
            | WireAgents => Category::NextStep,
        }
    }
}

impl HintId {
    /// The owner-attention entries and their templates (`{total}`, `{names}`, `{detail}` are
    /// filled in). Owner decisions are stated as facts for the owner: never a command for the
    /// caller to run.
    pub const OWNER_ATTENTION: &'static [(HintId, &'static str)] = &[
        (
            HintId::ProposalAwaitsOwner,
            "{total} limit proposal(s) await the owner's exact approval of value and reason: {names}.",
        ),
        (
            HintId::MainCheckoutBehind,
            "The trunk landed, but the main checkout {detail} could not follow it and shows the landing reversed; committing what it shows would undo the landing. Bringing it up to date is the owner's step (the advisory names it).",
        ),
        (
            HintId::FleetDirty,
            "{total} other effort(s) have uncommitted changes: {names}. They belong to whoever started them.",
        ),
        (
            HintId::FleetReady,
            "{total} other effort(s) are proven and ready for the owner's review: {names}.",
        ),
        (
            HintId::FleetAwaitsApproval,
            "{total} other effort(s) have loosenings or protected changes awaiting the owner's exact approval: {names}.",
        ),
        (
            HintId::FleetStale,
            "{total} other effort(s) have been idle for a week with unlanded work: {names}. Whether to resume or discard them is the owner's decision.",
        ),
        (
            HintId::FleetCollides,
            "{total} other effort(s) change the same files as another effort: {names}. Which lands first is the owner's decision; the other then brings the trunk in.",
        ),
        (
            HintId::FleetBroken,
            "{total} registered worktree(s) are missing their folder: {names}. Pruning them is the owner's decision.",
        ),
        (
            HintId::FleetUnreadable,
            "{total} worktree(s) cannot be read, so their state is unknown (never assumed clean): {names}.",
        ),
        (
            HintId::UnlandedBranches,
            "{total} effort branch(es) have no worktree and are not on the trunk: {names}. Landing or deleting them is the owner's decision.",
        ),
    ];
}

/// Why an owner-attention hint was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HintError {
    #[error(
        "{0:?} is classified as {1:?}, not owner-attention: owner decisions never become the caller's next step"
    )]
    NotOwnerAttention(HintId, Category),
    #[error("{0:?} has no owner-attention template")]
    NoTemplate(HintId),
    #[error("owner-attention text must not tell the caller to run a command: {0:?}")]
    CallerCommand(String),
}

/// Whether `text` tells its reader to run a command.
fn tells_to_run(text: &str) -> bool {
    let lower = text.to_lowercase();
    [
        "`discern",
        "discern_",
        "`git",
        "`cargo",
        "run `",
        "run the command",
        "execute ",
    ]
    .iter()
    .any(|marker| lower.contains(marker))
}

/// A step as data: a verb of the verb table and its arguments, named as the verb's request
/// type names them (the MCP tool's argument names). Each frontend renders it its own way: the
/// CLI as a command line, MCP as a tool call. A hint's text never spells the command itself.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Action {
    /// The CLI verb (`accept`, `standards propose`).
    pub verb: String,
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub arguments: Map<String, Value>,
}

impl Action {
    pub fn new(verb: &str) -> Self {
        Self {
            verb: verb.to_owned(),
            arguments: Map::new(),
        }
    }

    /// A boolean argument set to true (`--confirmed`, `confirmed: true`).
    pub fn flag(self, name: &str) -> Self {
        self.arg(name, true)
    }

    pub fn arg(mut self, name: &str, value: impl Into<Value>) -> Self {
        self.arguments.insert(name.to_owned(), value.into());
        self
    }
}

/// An advisory line of a result. Owner-attention hints are their own variant, so they cannot
/// carry a step for the caller at all (ADR 0306): an owner decision never becomes the
/// caller's next action.
#[derive(Debug, Clone, PartialEq)]
pub enum Hint {
    /// Advice to the caller (next step, guardrail, notice), optionally with the step to take.
    Advice {
        id: HintId,
        text: String,
        action: Option<Action>,
    },
    /// A judgment for the owner: a statement, never a verb or arguments.
    OwnerAttention { id: HintId, text: String },
}

impl Serialize for Hint {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("id", &self.id())?;
        map.serialize_entry("category", &self.category())?;
        map.serialize_entry("text", self.text())?;
        if let Some(action) = self.action() {
            map.serialize_entry("action", action)?;
        }
        map.end()
    }
}

impl Hint {
    pub fn id(&self) -> HintId {
        match self {
            Hint::Advice { id, .. } | Hint::OwnerAttention { id, .. } => *id,
        }
    }

    pub fn category(&self) -> Category {
        match self {
            Hint::Advice { id, .. } => id.category(),
            Hint::OwnerAttention { .. } => Category::OwnerAttention,
        }
    }

    pub fn text(&self) -> &str {
        match self {
            Hint::Advice { text, .. } | Hint::OwnerAttention { text, .. } => text,
        }
    }

    /// The step this hint advises, if it names one.
    pub fn action(&self) -> Option<&Action> {
        match self {
            Hint::Advice { action, .. } => action.as_ref(),
            Hint::OwnerAttention { .. } => None,
        }
    }

    /// A next-step hint; `id` must be registered as one.
    pub fn next_step(id: HintId, text: impl Into<String>) -> Self {
        debug_assert_eq!(
            id.category(),
            Category::NextStep,
            "{id:?} is not a next-step hint"
        );
        Self::new(id, text)
    }

    /// The same advice with the step to take. An owner-attention hint takes none: it stays a
    /// statement for the owner.
    pub fn with_action(self, action: Action) -> Self {
        match self {
            Hint::Advice { id, text, .. } => Hint::Advice {
                id,
                text,
                action: Some(action),
            },
            owner @ Hint::OwnerAttention { .. } => owner,
        }
    }

    /// The only way to emit a cross-effort judgment: `id` must be an owner-attention entry, and
    /// the text (its template with `params` filled in) must not tell the caller to run anything.
    pub fn owner_attention(id: HintId, params: &[(&str, &str)]) -> Result<Self, HintError> {
        if id.category() != Category::OwnerAttention {
            return Err(HintError::NotOwnerAttention(id, id.category()));
        }
        let template = HintId::OWNER_ATTENTION
            .iter()
            .find(|(entry, _)| *entry == id)
            .map(|(_, t)| *t)
            .ok_or(HintError::NoTemplate(id))?;
        let mut text = template.to_owned();
        for (key, value) in params {
            text = text.replace(&format!("{{{key}}}"), value);
        }
        if tells_to_run(&text) {
            return Err(HintError::CallerCommand(text));
        }
        Ok(Hint::OwnerAttention { id, text })
    }

    /// A hint of whatever category `id` is registered with.
    pub fn new(id: HintId, text: impl Into<String>) -> Self {
        let text = text.into();
        match id.category() {
            Category::OwnerAttention => Hint::OwnerAttention { id, text },
            _ => Hint::Advice {
                id,
                text,
                action: None,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_owner_attention_entry_passes_its_own_check() {
        for id in HintId::ALL
            .iter()
            .filter(|id| id.category() == Category::OwnerAttention)
        {
            let hint =
                Hint::owner_attention(*id, &[("total", "2"), ("names", "a, b"), ("detail", "x")])
                    .unwrap_or_else(|e| panic!("{id:?}: {e}"));
            assert_eq!(hint.category(), Category::OwnerAttention);
            assert!(
                !hint.text().contains('{'),
                "{id:?} left a placeholder: {}",
                hint.text()
            );
        }
        assert_eq!(
            HintId::ALL
                .iter()
                .filter(|id| id.category() == Category::OwnerAttention)
                .count(),
            HintId::OWNER_ATTENTION.len(),
            "every owner-attention entry has a template"
        );
    }

    #[test]
    fn the_seam_refuses_next_steps_and_commands() {
        assert!(matches!(
            Hint::owner_attention(HintId::RunDone, &[]),
            Err(HintError::NotOwnerAttention(
                HintId::RunDone,
                Category::NextStep
            ))
        ));
        let err = Hint::owner_attention(HintId::FleetDirty, &[("names", "`discern accept` them")])
            .unwrap_err();
        assert!(matches!(err, HintError::CallerCommand(_)));
    }

    #[test]
    fn all_lists_every_id_once() {
        let mut seen = std::collections::HashSet::new();
        assert!(HintId::ALL.iter().all(|id| seen.insert(*id)));
    }
}
