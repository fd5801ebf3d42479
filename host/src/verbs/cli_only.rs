//! The rows only the CLI has (no MCP tool: the owner's and the repository's upkeep, fixed by
//! ADR 0405): `doctor`, `abandon`, `sync`, `resolve`, git's merge driver, `init`, `agents`.

use super::{Answer, Context, DESTRUCTIVE, Info, Verb, WRITES, WRITES_IDEMPOTENT};
use crate::agents::{self, AgentsRequest};
use crate::lifecycle;
use crate::preflight::{Cleanliness, Preflight, Prepared, Recover};
use crate::result::Refused;
use crate::standards::{self, init::InitRequest};

/// `resolve` and git's merge driver run inside a merge git is making: recovering another
/// transaction there would write under it.
const INSIDE_A_MERGE: Preflight = Preflight {
    recover: Recover::No,
    cleanliness: Cleanliness::Any,
    config: false,
    journal: false,
    dry_run: false,
};

pub(super) struct Doctor;
impl Verb for Doctor {
    type Request = lifecycle::doctor::DoctorRequest;
    fn info(&self) -> &'static Info {
        &Info {
            name: lifecycle::doctor::VERB,
            tool: None,
            summary: "Check what this checkout needs (binary, git, config, agent clients, caches, worktrees), then prove the gate runs in a throwaway worktree (nothing recorded)",
            tool_description: "",
            annotations: WRITES_IDEMPOTENT,
            cleanliness: Cleanliness::Any,
            writes: true,
            journal: true,
        }
    }
    fn run(
        &self,
        ctx: &Context,
        prepared: &Prepared,
        request: lifecycle::doctor::DoctorRequest,
    ) -> Result<Answer, Refused> {
        let runtime = ctx.runtime()?;
        let tools = super::guide();
        lifecycle::doctor::doctor(&prepared.ws, &runtime, &request, &tools, ctx.progress)
            .map(Answer::from)
    }
}

pub(super) struct Abandon;
impl Verb for Abandon {
    type Request = lifecycle::abandon::AbandonRequest;
    fn info(&self) -> &'static Info {
        &Info {
            name: lifecycle::abandon::VERB,
            // Discarding an effort is the owner's decision; the MCP tools are fixed (ADR 0405).
            tool: None,
            summary: "Give an effort up: its worktree and branch removed (work that would be lost only with --force)",
            tool_description: "",
            annotations: DESTRUCTIVE,
            cleanliness: Cleanliness::Any,
            writes: true,
            journal: false,
        }
    }
    fn preflight(&self, request: &lifecycle::abandon::AbandonRequest) -> Preflight {
        Verb::info(self).preflight().dry_run(request.dry_run)
    }
    fn run(
        &self,
        _ctx: &Context,
        prepared: &Prepared,
        request: lifecycle::abandon::AbandonRequest,
    ) -> Result<Answer, Refused> {
        let abandoned = lifecycle::abandon::abandon(&prepared.ws, &request)?;
        Ok(Answer::from(abandoned))
    }
}

pub(super) struct Sync;
impl Verb for Sync {
    type Request = crate::sync::SyncRequest;
    fn info(&self) -> &'static Info {
        &Info {
            name: crate::sync::VERB,
            // Pushing is the team's (and CI's) act; the MCP tools are fixed (ADR 0405).
            tool: None,
            summary: "Share discern's notes and published evidence with a remote: fetch, merge without conflicts, and with --push publish and push atomically",
            tool_description: "",
            annotations: WRITES_IDEMPOTENT,
            cleanliness: Cleanliness::Any,
            writes: true,
            journal: false,
        }
    }
    fn run(
        &self,
        _ctx: &Context,
        prepared: &Prepared,
        request: crate::sync::SyncRequest,
    ) -> Result<Answer, Refused> {
        crate::sync::sync(&prepared.ws, &request).map(Answer::from)
    }
}

pub(super) struct Resolve;
impl Verb for Resolve {
    type Request = lifecycle::resolve::ResolveRequest;
    fn info(&self) -> &'static Info {
        &Info {
            name: lifecycle::resolve::RESOLVE_VERB,
            tool: None,
            summary: "Settle a conflicted discern.toml by meaning (limits both sides tightened take the tighter) and stage it",
            tool_description: "",
            annotations: WRITES_IDEMPOTENT,
            cleanliness: Cleanliness::Any,
            writes: true,
            journal: false,
        }
    }
    fn preflight(&self, _request: &lifecycle::resolve::ResolveRequest) -> Preflight {
        INSIDE_A_MERGE
    }
    fn run(
        &self,
        _ctx: &Context,
        prepared: &Prepared,
        _request: lifecycle::resolve::ResolveRequest,
    ) -> Result<Answer, Refused> {
        lifecycle::resolve::resolve(&prepared.ws.repo).map(Answer::from)
    }
}

pub(super) struct MergeDriver;
impl Verb for MergeDriver {
    type Request = lifecycle::resolve::MergeDriverRequest;
    fn info(&self) -> &'static Info {
        &Info {
            name: lifecycle::resolve::DRIVER_VERB,
            tool: None,
            summary: "git's merge driver for discern.toml (%O %A %B %P): limits merged by meaning, conflicts named (`init --merge-driver` installs it)",
            tool_description: "",
            annotations: WRITES_IDEMPOTENT,
            cleanliness: Cleanliness::Any,
            writes: true,
            journal: false,
        }
    }
    fn preflight(&self, _request: &lifecycle::resolve::MergeDriverRequest) -> Preflight {
        INSIDE_A_MERGE
    }
    fn run(
        &self,
        _ctx: &Context,
        _prepared: &Prepared,
        request: lifecycle::resolve::MergeDriverRequest,
    ) -> Result<Answer, Refused> {
        lifecycle::resolve::merge_driver(&request).map(Answer::from)
    }
}

pub(super) struct Init;
impl Verb for Init {
    type Request = InitRequest;
    fn info(&self) -> &'static Info {
        &Info {
            name: standards::init::VERB,
            tool: None,
            summary: "Write a starter discern.toml: the built-in Standards that fit, limits at today's values",
            tool_description: "",
            annotations: WRITES,
            cleanliness: Cleanliness::Any,
            writes: true,
            journal: false,
        }
    }
    fn validate(&self, request: &InitRequest) -> Result<(), Refused> {
        request.validate()
    }
    fn run(
        &self,
        ctx: &Context,
        prepared: &Prepared,
        request: InitRequest,
    ) -> Result<Answer, Refused> {
        let runtime = ctx.runtime()?;
        standards::init::init(&prepared.ws, &runtime, &request, ctx.progress).map(Answer::from)
    }
}

pub(super) struct Agents;
impl Verb for Agents {
    type Request = AgentsRequest;
    fn info(&self) -> &'static Info {
        &Info {
            name: agents::VERB,
            // The owner's setup: it writes what starts the agent's own server, so no agent
            // rewires itself (and the MCP tools are fixed, ADR 0405).
            tool: None,
            summary: "Wire the agent clients (Claude Code, Codex, Cursor, Gemini, VS Code, Copilot CLI) to discern's MCP server, each in its own project file",
            tool_description: "",
            annotations: WRITES_IDEMPOTENT,
            cleanliness: Cleanliness::Any,
            writes: true,
            journal: false,
        }
    }
    fn validate(&self, request: &AgentsRequest) -> Result<(), Refused> {
        match request.conflicting() {
            true => Err(super::invalid_arguments(
                "--check and --remove do not combine: check the entries, or remove them.",
            )),
            false => Ok(()),
        }
    }
    fn preflight(&self, request: &AgentsRequest) -> Preflight {
        // `--check` writes nothing: no recovery, as a dry run.
        Verb::info(self).preflight().config().dry_run(request.check)
    }
    fn run(
        &self,
        _ctx: &Context,
        prepared: &Prepared,
        request: AgentsRequest,
    ) -> Result<Answer, Refused> {
        let (ws, config) = (&prepared.ws, prepared.config());
        agents::agents(ws, config, &request, &super::guide()).map(Answer::from)
    }
}
