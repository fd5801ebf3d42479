//! What a measurement gives: each Standard's result, the batch's outcome, what each reading
//! read, and the `data` every measuring verb's envelope carries.

use std::collections::BTreeMap;

use serde::Serialize;

use super::limits::{LimitsCheck, LimitsSummary};
use super::reading::Verdict;
use crate::config::Direction;
use crate::result::Diagnostic;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Measurement {
    Measured,
    Reused,
    /// Not measured: blocked by the never-loosen check.
    Skipped,
    Failed,
}

/// One Standard's line in `data.standards[]`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StandardResult {
    pub name: String,
    pub direction: Direction,
    pub limit: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub margin: Option<f64>,
    pub measurement: Measurement,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reused_from: Option<String>,
    /// Who published the reused evidence, when another clone measured it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reused_evidence: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pin_eligible: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pin_target: Option<f64>,
    pub producer: String,
    /// The producer execution this reading came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub execution: Option<String>,
    /// How the value was computed (`12 matches per 10000 lines ×1000`), or why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The findings behind the reading, compared with the baseline's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub findings: Option<crate::findings::FindingsSummary>,
    /// Every finding, marked new or not (`--explain`); not part of the envelope.
    #[serde(skip)]
    pub explained: Vec<crate::findings::Explained>,
}

/// The outcome of measuring, for verbs built on it (`standards`, `--pin`, `done`).
#[derive(Debug, Clone)]
pub struct Measured {
    pub commit: String,
    pub branch: Option<String>,
    pub standards: Vec<StandardResult>,
    pub limits: LimitsCheck,
    pub counts: BTreeMap<String, u32>,
    pub diagnostics: Vec<Diagnostic>,
    pub advisories: Vec<String>,
    /// Whether the readings were recorded for this clean HEAD.
    pub recorded: bool,
    pub worktree: bool,
    /// What each Standard's producer execution read (with its `per` extent's reads).
    pub read_sets: ReadSets,
}

/// What each execution read, and which executions each Standard's reading used. A Standard's
/// read set is merged only when asked for (proposals need it; a plain measurement does not,
/// and merging listings of tens of thousands of paths per Standard is not free). An execution
/// reused from evidence carries its read set only when a dependent declares `inputs`, so a
/// caller that needs read sets must measure without reuse (as proposals do).
#[derive(Debug, Clone, Default)]
pub struct ReadSets {
    pub(super) executions: Vec<Option<crate::runtime::ReadSet>>,
    pub(super) by_standard: BTreeMap<String, Vec<usize>>,
}

impl ReadSets {
    /// What `standard`'s producer execution read, with its `per` extent's reads: a read set a
    /// run.
    pub fn of(&self, standard: &str) -> Vec<&crate::runtime::ReadSet> {
        self.by_standard
            .get(standard)
            .into_iter()
            .flatten()
            .filter_map(|&index| self.executions.get(index)?.as_ref())
            .collect()
    }
}

/// `data` of a measured batch, shared by every verb that measures.
#[derive(Debug, Serialize)]
pub(super) struct MeasuredData<'a> {
    pub commit: &'a str,
    pub branch: &'a Option<String>,
    pub worktree: bool,
    pub recorded: bool,
    pub standards: &'a [StandardResult],
    pub producer_executions: &'a BTreeMap<String, u32>,
    pub limits: &'a LimitsSummary,
}

impl<'a> MeasuredData<'a> {
    pub(super) fn of(measured: &'a Measured) -> Self {
        Self {
            commit: &measured.commit,
            branch: &measured.branch,
            worktree: measured.worktree,
            recorded: measured.recorded,
            standards: &measured.standards,
            producer_executions: &measured.counts,
            limits: &measured.limits.summary,
        }
    }
}

/// `data` of a measured batch, as the envelope carries it.
pub(crate) fn data(measured: &Measured) -> impl Serialize + '_ {
    MeasuredData::of(measured)
}
