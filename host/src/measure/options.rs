//! How a batch is measured: the choices that change behaviour.

use super::limits;
use crate::config::Config;
use crate::workspace::Workspace;

/// How a batch is measured: the choices that change behaviour (gitoxide's `Options`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The trunk to judge against instead of the effective one (the gate passes its own, so
    /// `DISCERN_TRUNK` never changes what Proof trusts).
    pub trunk: Option<String>,
    /// `--baseline REV`: judge the limits of every commit since `REV`.
    pub baseline: Option<String>,
    /// `--require-trunk`: a trunk or history that cannot be read fails the run.
    pub require_trunk: bool,
    /// Measure the work tree as it is (`--force`): never recorded, never reused.
    pub worktree: bool,
    /// Measure the committed HEAD even when the work tree has uncommitted changes (they are
    /// named in an advisory); Proof, pins and proposals need a clean tree and leave it false.
    pub tolerate_dirty: bool,
    /// Measure Standards the never-loosen check blocks too (a stale proposal's renewal must
    /// see the value its loosened limit was set to).
    pub measure_blocked: bool,
    /// What evidence may do: be reused and recorded, only be reused, or neither (a proposal
    /// measures fresh).
    pub evidence: EvidenceUse,
    /// Whether this is a dry run: no job runs, no evidence or reading is recorded, nothing is
    /// written anywhere.
    pub dry_run: bool,
    /// `--explain NAME`: the one Standard whose every finding is kept in its result (the others
    /// keep the first few a failing row shows).
    pub explain: Option<String>,
    /// `--no-remote`: reuse only evidence this clone measured, none another clone published.
    pub no_remote: bool,
    /// Let the readings recorded for this clean HEAD stand for the batch when every selected
    /// Standard has one under its current definition (a pin of what was just measured).
    pub reuse_recorded: bool,
}

impl Options {
    /// What HEAD's limits are compared with, as these options and the settings say.
    pub fn against(&self, ws: &Workspace, config: &Config, head: gix::ObjectId) -> limits::Against {
        let mut against = limits::Against::new(ws, config, head);
        if let Some(trunk) = &self.trunk {
            against.trunk = trunk.clone();
        }
        against.baseline = self.baseline.clone();
        against.require_trunk |= self.require_trunk;
        against
    }
}

/// What a measurement may do with the evidence store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvidenceUse {
    ReuseAndRecord,
    ReuseOnly,
    /// Measure afresh and record nothing (a proposal).
    Fresh,
    /// Measure afresh and record the new readings (`standards --fresh`).
    Refresh,
    /// The gate's Proof and a landing: trust nothing an agent with a shell can write — no
    /// evidence read (for HEAD or the baseline), user components compiled in this process (no
    /// compile-cache entry loaded) — and record the new readings for later runs.
    Proof,
}

impl EvidenceUse {
    /// Whether a user component may be loaded from the per-user compile cache.
    pub fn trusts_compile_cache(self) -> bool {
        !matches!(self, EvidenceUse::Proof | EvidenceUse::Fresh)
    }
}

impl Default for Options {
    fn default() -> Self {
        Self {
            trunk: None,
            baseline: None,
            require_trunk: false,
            worktree: false,
            tolerate_dirty: false,
            measure_blocked: false,
            evidence: EvidenceUse::ReuseAndRecord,
            dry_run: false,
            explain: None,
            no_remote: false,
            reuse_recorded: false,
        }
    }
}
