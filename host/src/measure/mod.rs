//! The measuring engine, below every verb that measures: HEAD pinned and proven clean (or the
//! work tree), the never-loosen check, the plan executed once per producer identity, every
//! Standard judged and its findings compared with the baseline's, and the readings recorded
//! when they describe the commit.
//!
//! One entry, [`measure`], for `standards`, pins, proposals, the gate and landings. It reports
//! as nobody: its failures are a typed [`MeasureError`] each verb refuses with under its own
//! name.

pub(crate) mod at;
mod components;
mod derived;
mod diagnostic;
mod engine;
mod error;
mod hidden;
mod judge;
pub(crate) mod limits;
mod options;
pub(crate) mod reading;
pub(crate) mod record;
mod recorded;
mod result;
mod swaps;
mod unmatched;

use crate::config::{Config, StandardDef};
use crate::runtime::Runtime;
use crate::workspace::Workspace;

pub(crate) use components::{ComponentOrigin, Components, component_configs};
pub(crate) use diagnostic::{WHY_SHOWN, display, locate};
pub(crate) use engine::begin;
pub(crate) use error::MeasureError;
pub(crate) use judge::{assess, skipped};
pub(crate) use limits::{
    LimitsCheck, LimitsStatus, LimitsSummary, ProposalClaim, UnapprovedChange,
};
pub use options::{EvidenceUse, Options};
pub(crate) use reading::{EPSILON, Verdict, pin_eligible, pin_target};
pub use result::Measured;
pub(crate) use result::data;
pub(crate) use result::{Measurement, StandardResult};

/// What a batch is measured in: the checkout, the runtime, the config read, the Standards
/// selected, the active proposals' claims, and where progress goes.
#[derive(Clone, Copy)]
pub struct Context<'a> {
    pub ws: &'a Workspace,
    pub runtime: &'a Runtime,
    pub config: &'a Config,
    pub selected: &'a [&'a StandardDef],
    pub claims: &'a [ProposalClaim],
    pub progress: &'a (dyn Fn(&str) + Sync),
}

/// Measure the batch `ctx` names as `options` say (or, with `options.reuse_recorded`, answer
/// it from the readings recorded for this clean HEAD when they cover it).
pub fn measure(ctx: &Context, options: &Options) -> Result<Measured, MeasureError> {
    if options.reuse_recorded
        && let Some(measured) = recorded::reuse(ctx, options)
    {
        return Ok(measured);
    }
    engine::measure(ctx, options)
}
