//! The table itself: one row per verb, in the MCP tool order ADR 0405 fixes (the eight-tool
//! lifecycle prefix status … map, then progress, test and the one `discern_standards` tool),
//! followed by `setup` and the verbs only the CLI has (`cli_only.rs`).

use super::{
    Answer, Context, DESTRUCTIVE, Entry, Info, READ_ONLY, Surface, Verb, WRITES, WRITES_IDEMPOTENT,
};
use crate::agents;
use crate::lifecycle::{
    self, accept::AcceptRequest, approve::ApproveRequest, done::DoneRequest,
    stage_verbs::StageRequest, start::StartRequest, update::UpdateRequest, wait::AwaitRequest,
};
use crate::map::{self, MapRequest};
use crate::operations::{self, ProgressRequest};
use crate::preflight::{Cleanliness, Preflight, Prepared};
use crate::result::Refused;
use crate::status::StatusRequest;

/// The default `await` budget for MCP clients, which may drop long calls.
const MCP_AWAIT_TIMEOUT_S: f64 = 45.0;

/// Every verb, in order.
pub static TABLE: &[&dyn Entry] = &[
    &Status,
    &Start,
    &Prepare,
    &Done,
    &Update,
    &Await,
    &Approve,
    &Accept,
    &Map,
    &Progress,
    &Test,
    &super::standards::Standards,
    &Setup,
    &super::cli_only::Init,
    &super::cli_only::Agents,
    &super::cli_only::Doctor,
    &super::cli_only::Abandon,
    &super::cli_only::Sync,
    &super::cli_only::Resolve,
    &super::cli_only::MergeDriver,
    &super::producers::Producers,
];

/// The MCP tool names, in order.
pub fn tool_names() -> Vec<&'static str> {
    TABLE.iter().filter_map(|e| e.info().tool).collect()
}

struct Status;
impl Verb for Status {
    type Request = StatusRequest;
    fn info(&self) -> &'static Info {
        &Info {
            name: crate::status::VERB,
            tool: Some("discern_status"),
            summary: "Where you are: this checkout, its Proof, Standards, proposals, and the fleet of efforts",
            tool_description: "Read first in every session: where you are, your Proof, the Standards, and the other efforts (bounded; verbose for everything). Changes nothing.",
            annotations: READ_ONLY,
            cleanliness: Cleanliness::Any,
            writes: false,
            journal: false,
        }
    }
    fn validate(&self, request: &StatusRequest) -> Result<(), Refused> {
        request.validate()
    }
    fn run(
        &self,
        _ctx: &Context,
        prepared: &Prepared,
        request: StatusRequest,
    ) -> Result<Answer, Refused> {
        let stale = agents::stale_guidance(prepared.ws.repo.root(), &super::guide());
        let answer = match crate::status::status(&prepared.ws, &request) {
            Err(refused) if !request.brief => return Err(refused),
            replied => Answer::from(replied),
        };
        let mut answer = match request.brief {
            // A session-start hook's output: it never fails the session.
            true => answer.with_exit_code(0),
            false => answer,
        };
        answer.advise(stale);
        Ok(answer)
    }
}

struct Start;
impl Verb for Start {
    type Request = StartRequest;
    fn info(&self) -> &'static Info {
        &Info {
            name: lifecycle::start::VERB,
            tool: Some("discern_start"),
            summary: "Start an effort: a new worktree on a new branch forked from the trunk (main checkout only)",
            tool_description: "Start a new effort (a worktree on its own branch) for a new task; the server then works in it. Never start a second effort for work that already has one: continue at its path.",
            annotations: WRITES,
            cleanliness: Cleanliness::Any,
            writes: true,
            journal: false,
        }
    }
    fn preflight(&self, request: &StartRequest) -> Preflight {
        Verb::info(self)
            .preflight()
            .config()
            .dry_run(request.dry_run)
    }
    fn run(
        &self,
        ctx: &Context,
        prepared: &Prepared,
        request: StartRequest,
    ) -> Result<Answer, Refused> {
        let (ws, config) = (&prepared.ws, prepared.config());
        let started = lifecycle::start::start(ws, config, &request, ctx.progress)?;
        Ok(Answer::from(started))
    }
}

struct Prepare;
impl Verb for Prepare {
    type Request = StageRequest;
    fn info(&self) -> &'static Info {
        &Info {
            name: "prepare",
            tool: Some("discern_prepare"),
            summary: "Run the fix then check jobs on the work tree as it is (no Proof)",
            tool_description: "Run the fix and check jobs (format, lint, typecheck) on your uncommitted work before committing. Issues no Proof.",
            annotations: WRITES_IDEMPOTENT,
            cleanliness: Cleanliness::Any,
            writes: true,
            journal: false,
        }
    }
    fn preflight(&self, _request: &StageRequest) -> Preflight {
        Verb::info(self).preflight().config()
    }
    fn run(
        &self,
        ctx: &Context,
        prepared: &Prepared,
        _request: StageRequest,
    ) -> Result<Answer, Refused> {
        let (ws, config) = (&prepared.ws, prepared.config());
        lifecycle::stage_verbs::prepare(ws, config, ctx.progress).map(Answer::from)
    }
}

struct Done;
impl Verb for Done {
    type Request = DoneRequest;
    fn info(&self) -> &'static Info {
        &Info {
            name: lifecycle::done::VERB,
            tool: Some("discern_done"),
            summary: "The gate: prove the exact clean commit (merge, limits, jobs, every Standard) and record Proof",
            tool_description: "Prove the committed work: the gate (merge, limits, jobs, every Standard) on the exact clean commit; on success relay the Proof line to the owner.",
            annotations: WRITES_IDEMPOTENT,
            cleanliness: lifecycle::done::CLEANLINESS,
            writes: true,
            journal: true,
        }
    }
    fn preflight(&self, request: &DoneRequest) -> Preflight {
        Verb::info(self)
            .preflight()
            .config()
            .dry_run(request.dry_run)
    }
    fn run(
        &self,
        ctx: &Context,
        prepared: &Prepared,
        request: DoneRequest,
    ) -> Result<Answer, Refused> {
        let runtime = ctx.runtime()?;
        let stale = agents::stale_guidance(prepared.ws.repo.root(), &super::guide());
        let mut done = lifecycle::done::done(prepared, &runtime, &request, ctx.progress).map_err(
            |mut refused| {
                refused.advisories.extend(stale.clone());
                refused
            },
        )?;
        done.advisories.extend(stale);
        Ok(done.into())
    }
}

struct Update;
impl Verb for Update {
    type Request = UpdateRequest;
    fn info(&self) -> &'static Info {
        &Info {
            name: lifecycle::update::VERB,
            tool: Some("discern_update"),
            summary: "Merge the trunk (or --from REF) into this effort; a conflict aborts cleanly",
            tool_description: "Merge the trunk into this effort when it is behind; a conflict aborts and changes nothing.",
            annotations: WRITES_IDEMPOTENT,
            cleanliness: lifecycle::update::CLEANLINESS,
            writes: true,
            journal: false,
        }
    }
    fn preflight(&self, request: &UpdateRequest) -> Preflight {
        Verb::info(self)
            .preflight()
            .config()
            .dry_run(request.dry_run)
    }
    fn run(
        &self,
        ctx: &Context,
        prepared: &Prepared,
        request: UpdateRequest,
    ) -> Result<Answer, Refused> {
        let runtime = ctx.runtime()?;
        lifecycle::update::update(prepared, &runtime, &request, ctx.progress).map(Answer::from)
    }
}

struct Await;
impl Verb for Await {
    type Request = AwaitRequest;
    fn info(&self) -> &'static Info {
        &Info {
            name: lifecycle::wait::VERB,
            tool: Some("discern_await"),
            summary: "Wait for another effort to be green or landed, or for the trunk to move",
            tool_description: "Wait for another effort to be green or landed, or for the trunk to move; when not met, call again with the resume handle.",
            annotations: READ_ONLY,
            cleanliness: Cleanliness::Any,
            writes: false,
            journal: true,
        }
    }
    fn validate(&self, request: &AwaitRequest) -> Result<(), Refused> {
        request.validate()
    }
    fn preflight(&self, _request: &AwaitRequest) -> Preflight {
        Verb::info(self).preflight().config()
    }
    fn run(
        &self,
        ctx: &Context,
        prepared: &Prepared,
        request: AwaitRequest,
    ) -> Result<Answer, Refused> {
        let default_timeout = match ctx.surface {
            Surface::Cli => lifecycle::wait::DEFAULT_TIMEOUT_S,
            Surface::Mcp => MCP_AWAIT_TIMEOUT_S,
        };
        let (ws, config) = (&prepared.ws, prepared.config());
        let awaited = lifecycle::wait::await_condition(ws, config, &request, default_timeout)?;
        let answer = Answer::from(awaited.reply);
        // Not met is a success with a distinct exit code, so scripts can loop on it.
        Ok(match awaited.met {
            false => answer.with_exit_code(124),
            true => answer,
        })
    }
}

struct Accept;
impl Verb for Accept {
    type Request = AcceptRequest;
    fn info(&self) -> &'static Info {
        &Info {
            name: lifecycle::accept::VERB,
            tool: Some("discern_accept"),
            summary: "Land this effort (or the branch a plain checkout has out) on the trunk with the owner's consent",
            tool_description: "Land the proven effort on the trunk, only with the owner's consent given in this conversation (confirmed). Loosened limits and changes to the gate's definition also need the owner's own approval (they run `discern approve`); no argument gives it.",
            annotations: DESTRUCTIVE,
            cleanliness: lifecycle::accept::CLEANLINESS,
            writes: true,
            journal: true,
        }
    }
    fn preflight(&self, request: &AcceptRequest) -> Preflight {
        lifecycle::accept::preflight(request)
    }
    fn run(
        &self,
        ctx: &Context,
        prepared: &Prepared,
        request: AcceptRequest,
    ) -> Result<Answer, Refused> {
        let runtime = ctx.runtime()?;
        let accepted = lifecycle::accept::accept(prepared, &runtime, &request, ctx.progress)?;
        Ok(Answer::from(accepted))
    }
}

struct Approve;
impl Verb for Approve {
    type Request = ApproveRequest;
    fn info(&self) -> &'static Info {
        &Info {
            name: lifecycle::approve::VERB,
            // The owner's verb: no MCP tool can approve.
            tool: None,
            summary: "The owner approves a branch's or an effort's loosenings and protected changes, from any checkout: signed with their SSH key, or at this terminal",
            tool_description: "",
            annotations: WRITES_IDEMPOTENT,
            cleanliness: Cleanliness::Any,
            writes: true,
            journal: false,
        }
    }
    fn validate(&self, request: &ApproveRequest) -> Result<(), Refused> {
        request.validate()
    }
    fn preflight(&self, request: &ApproveRequest) -> Preflight {
        Verb::info(self).preflight().dry_run(request.dry_run)
    }
    fn run(
        &self,
        _ctx: &Context,
        prepared: &Prepared,
        request: ApproveRequest,
    ) -> Result<Answer, Refused> {
        lifecycle::approve::approve(&prepared.ws, &request).map(Answer::from)
    }
}

struct Map;
impl Verb for Map {
    type Request = MapRequest;
    fn info(&self) -> &'static Info {
        &Info {
            name: map::VERB,
            tool: Some("discern_map"),
            summary: "The project map: index, one page, or search",
            tool_description: "Look up the project map: the index, one page, or a search for where something lives.",
            annotations: READ_ONLY,
            cleanliness: Cleanliness::Any,
            writes: false,
            journal: false,
        }
    }
    fn preflight(&self, _request: &MapRequest) -> Preflight {
        Verb::info(self).preflight().config()
    }
    fn run(
        &self,
        _ctx: &Context,
        prepared: &Prepared,
        request: MapRequest,
    ) -> Result<Answer, Refused> {
        let (target, search) = (request.target.as_deref(), request.search.as_deref());
        map::map(&prepared.ws, prepared.config(), target, search).map(Answer::from)
    }
}

struct Progress;
impl Verb for Progress {
    type Request = ProgressRequest;
    fn info(&self) -> &'static Info {
        &Info {
            name: operations::PROGRESS_VERB,
            tool: Some("discern_progress"),
            summary: "Read a long operation (done, test, standards, accept, await) back",
            tool_description: "Read back a long operation (done, test, standards, accept, await) by its handle, e.g. after a lost call. Changes nothing.",
            annotations: READ_ONLY,
            cleanliness: Cleanliness::Any,
            writes: false,
            journal: false,
        }
    }
    fn run(
        &self,
        _ctx: &Context,
        prepared: &Prepared,
        request: ProgressRequest,
    ) -> Result<Answer, Refused> {
        operations::progress(&prepared.ws, request.handle.as_deref()).map(Answer::from)
    }
}

struct Test;
impl Verb for Test {
    type Request = StageRequest;
    fn info(&self) -> &'static Info {
        &Info {
            name: "test",
            tool: Some("discern_test"),
            summary: "Run the test-stage jobs on the work tree as it is (no Proof)",
            tool_description: "Run only the test jobs on the work tree as it is; done already includes them, so use this only for a quick check.",
            annotations: WRITES_IDEMPOTENT,
            cleanliness: Cleanliness::Any,
            writes: true,
            journal: true,
        }
    }
    fn preflight(&self, _request: &StageRequest) -> Preflight {
        Verb::info(self).preflight().config()
    }
    fn run(
        &self,
        ctx: &Context,
        prepared: &Prepared,
        _request: StageRequest,
    ) -> Result<Answer, Refused> {
        let (ws, config) = (&prepared.ws, prepared.config());
        lifecycle::stage_verbs::test(ws, config, ctx.progress).map(Answer::from)
    }
}

struct Setup;
impl Verb for Setup {
    type Request = lifecycle::setup::SetupRequest;
    fn info(&self) -> &'static Info {
        &Info {
            name: lifecycle::setup::VERB,
            tool: Some("discern_setup"),
            summary: "Provision this effort's worktree again: missing env files, the [worktree] setup steps, then ensure",
            tool_description: "Run this effort's [worktree] setup again once a step that failed at start is fixed.",
            annotations: WRITES_IDEMPOTENT,
            cleanliness: Cleanliness::Any,
            writes: true,
            journal: true,
        }
    }
    fn preflight(&self, _request: &lifecycle::setup::SetupRequest) -> Preflight {
        Verb::info(self).preflight().config()
    }
    fn run(
        &self,
        ctx: &Context,
        prepared: &Prepared,
        _request: lifecycle::setup::SetupRequest,
    ) -> Result<Answer, Refused> {
        lifecycle::setup::setup(&prepared.ws, prepared.config(), ctx.progress).map(Answer::from)
    }
}
