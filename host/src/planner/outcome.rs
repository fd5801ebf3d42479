//! What happened to one execution: its output (or why it failed), how often it ran, and the
//! evidence or grouped run whose findings it keeps encoded until asked for.

use std::sync::{Arc, OnceLock};

use crate::evidence::findings::Of;
use crate::runtime::{Metric, RunOutput};

/// What happened to one execution.
#[derive(Debug, Clone)]
pub(crate) struct ExecutionOutcome {
    /// The run's output, or the one diagnostic every dependent Standard fails with. A reused
    /// execution's metrics carry no findings: they stay encoded in its `evidence` until asked
    /// for ([`ExecutionOutcome::metrics`], [`ExecutionOutcome::kept`]).
    pub result: Result<RunOutput, String>,
    /// How many times the producer physically ran (0 when a job or the component failed, or
    /// when evidence was reused).
    pub runs: u32,
    /// The commit whose evidence was reused instead of running.
    pub reused_from: Option<String>,
    /// Who published that evidence, when another clone did.
    pub provenance: Option<String>,
    /// The evidence entry reused, with its findings: a baseline it is valid on too shares this
    /// reading instead of reading the entry back (`measure/swaps.rs`).
    pub evidence: Option<Arc<crate::evidence::Entry>>,
    /// The findings of a grouped run (`grouped.rs`), kept encoded as a reused reading's are.
    pub(super) encoded: Option<crate::evidence::findings::Kept>,
    /// The metrics with their findings decoded from `evidence` or `encoded`, once asked for.
    pub(super) decoded: OnceLock<Result<Vec<Metric>, String>>,
}

impl ExecutionOutcome {
    /// An execution that was not reused: it ran `runs` times (0: it failed before running).
    pub(super) fn ran(result: Result<RunOutput, String>, runs: u32) -> Self {
        Self {
            result,
            runs,
            reused_from: None,
            provenance: None,
            evidence: None,
            encoded: None,
            decoded: OnceLock::new(),
        }
    }

    /// A reading derived from another rather than run (`measure/derived.rs`): its metrics'
    /// findings are `encoded`.
    pub(crate) fn derived(
        output: RunOutput,
        encoded: Option<crate::evidence::findings::Kept>,
    ) -> Self {
        Self {
            encoded,
            ..Self::ran(Ok(output), 0)
        }
    }

    /// A grouped run's outcome: its metrics' findings are `encoded`.
    pub(super) fn grouped((output, encoded): super::grouped::Output) -> Self {
        Self {
            encoded,
            ..Self::ran(Ok(output), 1)
        }
    }

    /// The metrics with every finding; a reused execution's are decoded from its evidence
    /// the first time they are asked for. `Err`: the execution failed, or its kept findings
    /// cannot be read.
    pub(crate) fn metrics(&self) -> Result<&[Metric], String> {
        let output = self.result.as_ref().map_err(Clone::clone)?;
        if self.evidence.is_none() && self.encoded.is_none() {
            return Ok(&output.metrics);
        }
        self.decoded
            .get_or_init(|| self.filled(output.metrics.clone()))
            .as_deref()
            .map_err(Clone::clone)
    }

    /// [`ExecutionOutcome::metrics`], owned.
    pub(crate) fn into_metrics(mut self) -> Result<Vec<Metric>, String> {
        if let Some(decoded) = self.decoded.take() {
            return decoded;
        }
        let output = std::mem::replace(&mut self.result, Err(String::new()))?;
        self.filled(output.metrics)
    }

    /// `metrics` given the findings kept apart from them (as evidence, or a grouped run's).
    fn filled(&self, metrics: Vec<Metric>) -> Result<Vec<Metric>, String> {
        match (&self.evidence, &self.encoded) {
            (Some(entry), _) => with_findings(entry, metrics),
            (None, Some(kept)) => fill(kept, metrics)
                .ok_or_else(|| "the findings of the grouped run cannot be read".to_owned()),
            (None, None) => Ok(metrics),
        }
    }

    /// Metric `name`'s findings as a reused execution's evidence or a grouped run keeps them,
    /// not decoded; `None` for an execution whose metrics carry their findings.
    pub(crate) fn kept(&self, name: &str) -> Option<Of<'_>> {
        let kept = match (&self.evidence, &self.encoded) {
            (Some(entry), _) => entry.findings.as_ref(),
            (None, Some(kept)) => Some(kept),
            (None, None) => return None,
        };
        Some(kept.map_or_else(Of::default, |kept| kept.of(name)))
    }

    /// The findings file of a grouped run, as it is written beside its evidence.
    pub(super) fn encoded(&self) -> Option<&crate::evidence::findings::Kept> {
        self.encoded.as_ref()
    }
}

/// `metrics` with the findings `kept` holds; `None` when they cannot be decoded.
fn fill(kept: &crate::evidence::findings::Kept, mut metrics: Vec<Metric>) -> Option<Vec<Metric>> {
    kept.fill(&mut metrics)?;
    Some(metrics)
}

/// `metrics` given the findings `entry` keeps.
fn with_findings(
    entry: &crate::evidence::Entry,
    mut metrics: Vec<Metric>,
) -> Result<Vec<Metric>, String> {
    if let Some(kept) = &entry.findings {
        kept.fill(&mut metrics).ok_or_else(|| {
            format!(
                "the findings kept with the evidence of {} cannot be read",
                crate::git::short(&entry.commit)
            )
        })?;
    }
    Ok(metrics)
}
