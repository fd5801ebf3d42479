//! Hints: advisory lines in a result, each a registry entry with a stable id and a category.

use serde::Serialize;

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

/// The registry: every hint discern can emit has a stable id here, and one category.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HintId {
    SeeHelp,
    BuildCustomProducer,
    ReportBug,
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
    StandardsFixProducer,
    StandardsUseRate,
    StandardsForceNotRecorded,
    StandardsHeadMoved,
    StandardsMeasure,
    StandardsPinNoSlack,
    StandardsPinNeedsDone,
    StandardsPropose,
    ProposalAwaitsOwner,
    InitExists,
    InitCommit,
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
}

impl HintId {
    pub fn category(self) -> Category {
        use HintId::*;
        match self {
            StandardsNeverMoveLimit | StandardsForceNotRecorded => Category::Guardrail,
            StandardsUseRate | StandardsHeadMoved | StandardsPinNoSlack => Category::Notice,
            ProposalAwaitsOwner => Category::OwnerAttention,
            MainCheckoutDirty => Category::Notice,
            SeeHelp
            | BuildCustomProducer
            | ReportBug
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
            | ConfigureJobs => Category::NextStep,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hint {
    pub id: HintId,
    pub category: Category,
    pub text: String,
}

impl Hint {
    /// A next-step hint; `id` must be registered as one.
    pub fn next_step(id: HintId, text: impl Into<String>) -> Self {
        debug_assert_eq!(
            id.category(),
            Category::NextStep,
            "{id:?} is not a next-step hint"
        );
        Self::new(id, text)
    }

    /// A hint of whatever category `id` is registered with.
    pub fn new(id: HintId, text: impl Into<String>) -> Self {
        Self {
            id,
            category: id.category(),
            text: text.into(),
        }
    }
}
