//! The table itself: one row per verb, in the MCP tool order ADR 0405 fixes (the eight-tool
//! lifecycle prefix status … map, then progress, test and the one `discern_standards` tool),
//! followed by the verbs only the CLI has.

use serde_json::{Map as JsonMap, Value, json};

use super::{
    Annotations, Context, Entry, Info, Outcome, Surface, Verb, invalid_arguments, schema_of,
};
use crate::lifecycle::{
    self, accept::AcceptRequest, approve::ApproveRequest, done::DoneRequest,
    stage_verbs::StageRequest, start::StartRequest, update::UpdateRequest, wait::AwaitRequest,
};
use crate::map::{self, MapRequest};
use crate::operations::{self, ProgressRequest};
use crate::preflight::{Cleanliness, Preflight, Prepared, Recover};
use crate::proposals::{self, ProposalRequest, ProposeRequest};
use crate::result::Envelope;
use crate::standards::{self, MeasureRequest, init::InitRequest};
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
    &Standards,
    &Init,
    &Abandon,
    &Sync,
    &Resolve,
    &MergeDriver,
    &super::producers::Producers,
];

/// The MCP tool names, in order.
pub fn tool_names() -> Vec<&'static str> {
    TABLE.iter().filter_map(|e| e.info().tool).collect()
}

const READ_ONLY: Annotations = Annotations {
    read_only: true,
    destructive: false,
    idempotent: true,
};

const WRITES: Annotations = Annotations {
    read_only: false,
    destructive: false,
    idempotent: false,
};

const WRITES_IDEMPOTENT: Annotations = Annotations {
    idempotent: true,
    ..WRITES
};

/// `resolve` and git's merge driver run inside a merge git is making: recovering another
/// transaction there would write under it.
const INSIDE_A_MERGE: Preflight = Preflight {
    recover: Recover::No,
    cleanliness: Cleanliness::Any,
    config: false,
    journal: false,
    dry_run: false,
};

const DESTRUCTIVE: Annotations = Annotations {
    destructive: true,
    ..WRITES
};

/// Run `f` with the producer runtime, or return the refusal of `verb` when it cannot start.
fn with_runtime(
    ctx: &Context,
    verb: &str,
    f: impl FnOnce(&crate::runtime::Runtime) -> Outcome,
) -> Outcome {
    match ctx.runtime(verb) {
        Ok(runtime) => f(&runtime),
        Err(refusal) => refusal.into(),
    }
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
    fn validate(&self, request: &StatusRequest) -> Result<(), Box<Envelope>> {
        request.validate()
    }
    fn run(&self, _ctx: &Context, prepared: &Prepared, request: StatusRequest) -> Outcome {
        crate::status::status(&prepared.ws, &request).into()
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
        Verb::info(self).preflight().dry_run(request.dry_run)
    }
    fn run(&self, _ctx: &Context, prepared: &Prepared, request: StartRequest) -> Outcome {
        let started = lifecycle::start::start(&prepared.ws, &request);
        Outcome::from(started.envelope).with_root(started.root)
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
    fn run(&self, ctx: &Context, prepared: &Prepared, _request: StageRequest) -> Outcome {
        lifecycle::stage_verbs::prepare(&prepared.ws, ctx.progress).into()
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
    fn run(&self, ctx: &Context, prepared: &Prepared, request: DoneRequest) -> Outcome {
        with_runtime(ctx, Verb::info(self).name, |runtime| {
            lifecycle::done::done(prepared, runtime, &request, ctx.progress).into()
        })
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
    fn run(&self, ctx: &Context, prepared: &Prepared, request: UpdateRequest) -> Outcome {
        with_runtime(ctx, Verb::info(self).name, |runtime| {
            lifecycle::update::update(prepared, runtime, &request).into()
        })
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
    fn validate(&self, request: &AwaitRequest) -> Result<(), Box<Envelope>> {
        request.validate()
    }
    fn run(&self, ctx: &Context, prepared: &Prepared, request: AwaitRequest) -> Outcome {
        let default_timeout = match ctx.surface {
            Surface::Cli => lifecycle::wait::DEFAULT_TIMEOUT_S,
            Surface::Mcp => MCP_AWAIT_TIMEOUT_S,
        };
        let awaited = lifecycle::wait::await_condition(&prepared.ws, &request, default_timeout);
        let not_met = awaited.envelope.ok && !awaited.met;
        let outcome = Outcome::from(awaited.envelope);
        // Not met is a success with a distinct exit code, so scripts can loop on it.
        match not_met {
            true => outcome.with_exit_code(124),
            false => outcome,
        }
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
    fn run(&self, ctx: &Context, prepared: &Prepared, request: AcceptRequest) -> Outcome {
        with_runtime(ctx, Verb::info(self).name, |runtime| {
            let accepted = lifecycle::accept::accept(prepared, runtime, &request);
            Outcome::from(accepted.envelope).with_root(accepted.root)
        })
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
    fn validate(&self, request: &ApproveRequest) -> Result<(), Box<Envelope>> {
        request.validate()
    }
    fn preflight(&self, request: &ApproveRequest) -> Preflight {
        Verb::info(self).preflight().dry_run(request.dry_run)
    }
    fn run(&self, _ctx: &Context, prepared: &Prepared, request: ApproveRequest) -> Outcome {
        lifecycle::approve::approve(&prepared.ws, &request).into()
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
    fn run(&self, _ctx: &Context, prepared: &Prepared, request: MapRequest) -> Outcome {
        let (target, search) = (request.target.as_deref(), request.search.as_deref());
        map::map(&prepared.ws, target, search).into()
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
    fn run(&self, _ctx: &Context, prepared: &Prepared, request: ProgressRequest) -> Outcome {
        operations::progress(&prepared.ws, request.handle.as_deref()).into()
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
    fn run(&self, ctx: &Context, prepared: &Prepared, _request: StageRequest) -> Outcome {
        lifecycle::stage_verbs::test(&prepared.ws, ctx.progress).into()
    }
}

/// `standards`: the surfaces differ by design (ADR 0405). The CLI has `standards [NAMES]
/// [--pin] [--force] [--dry-run]` and the scalar `standards propose NAME --reason R` (or
/// `--batch`); MCP has one `discern_standards` tool with a required `action`, whose measure
/// arguments are [`MeasureRequest`]'s and whose propose arguments are [`ProposeRequest`]'s.
struct Standards;

const STANDARDS: Info = Info {
    name: standards::VERB,
    tool: Some("discern_standards"),
    summary: "Measure the Standards of discern.toml on the committed HEAD",
    tool_description: "Measure the Standards (action measure; pin tightens gains), or, when your work itself breached limits, propose the exact measured limits for the owner's approval (action propose, all at once).",
    annotations: WRITES,
    cleanliness: standards::CLEANLINESS,
    writes: true,
    journal: false,
};

/// `standards propose`'s CLI arguments: the scalar pair or a JSON batch.
#[derive(Debug, clap::Args)]
struct ProposeArgs {
    /// The Standard to propose (the scalar form; use --batch for several at once).
    #[arg(required_unless_present = "batch", conflicts_with = "batch")]
    name: Option<String>,
    /// The technical reason (one paragraph, at most 500 characters).
    #[arg(long, required_unless_present = "batch", conflicts_with = "batch")]
    reason: Option<String>,
    /// A JSON array of {"name", "reason"} from a file, or from stdin with `-`.
    #[arg(long, value_name = "FILE|-")]
    batch: Option<String>,
    /// Validate and preview; measure and write nothing.
    #[arg(long)]
    dry_run: bool,
}

impl ProposeArgs {
    /// The batch these arguments name.
    fn request(self) -> Result<ProposeRequest, String> {
        let proposals = match (self.batch, self.name, self.reason) {
            (Some(source), _, _) => read_batch(&source)?,
            (None, Some(name), Some(reason)) => vec![ProposalRequest { name, reason }],
            _ => return Err("name a Standard and give --reason, or pass --batch".to_owned()),
        };
        Ok(ProposeRequest {
            proposals,
            dry_run: self.dry_run,
        })
    }
}

fn read_batch(source: &str) -> Result<Vec<ProposalRequest>, String> {
    let text = if source == "-" {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
            .map_err(|e| format!("cannot read the batch from stdin: {e}"))?;
        text
    } else {
        std::fs::read_to_string(source)
            .map_err(|e| format!("cannot read the batch file {source}: {e}"))?
    };
    serde_json::from_str(&text).map_err(|e| {
        format!("the batch must be a JSON array of {{\"name\", \"reason\"}} objects: {e}")
    })
}

fn measure(ctx: &Context, request: &MeasureRequest) -> Outcome {
    if let Err(refusal) = request.validate() {
        return refusal.into();
    }
    super::prepared(ctx, standards::VERB, request.preflight(), |prepared| {
        with_runtime(ctx, standards::VERB, |runtime| {
            let claims = &proposals::claims;
            standards::standards(prepared, runtime, request, claims, ctx.progress).into()
        })
    })
}

/// `propose` and `withdraw` commit limits: recovery first (never on a dry run), a clean tree.
fn limit_commit(dry_run: bool) -> Preflight {
    Preflight::of(true, standards::CLEANLINESS)
        .config()
        .dry_run(dry_run)
}

fn withdraw(ctx: &Context, request: &proposals::WithdrawRequest) -> Outcome {
    let verb = proposals::WITHDRAW_VERB;
    super::prepared(ctx, verb, limit_commit(request.dry_run), |prepared| {
        proposals::withdraw(prepared, request).into()
    })
}

fn propose(ctx: &Context, request: &ProposeRequest) -> Outcome {
    super::prepared(
        ctx,
        proposals::VERB,
        limit_commit(request.dry_run),
        |prepared| {
            with_runtime(ctx, proposals::VERB, |runtime| {
                proposals::propose(prepared, runtime, request, ctx.progress).into()
            })
        },
    )
}

impl Entry for Standards {
    fn info(&self) -> &'static Info {
        &STANDARDS
    }

    fn command(&self) -> clap::Command {
        let propose = <ProposeArgs as clap::Args>::augment_args(clap::Command::new("propose"))
            .about("Propose loosening limits to the exact measured values, for the owner's approval: one config-only commit for the whole batch");
        let withdraw = <proposals::WithdrawRequest as clap::Args>::augment_args(
            clap::Command::new("withdraw"),
        )
        .about("Withdraw every proposal: limits back to the trunk's in one config-only commit, so one batch can propose them together");
        <MeasureRequest as clap::Args>::augment_args(clap::Command::new(STANDARDS.name))
            .about(STANDARDS.summary)
            .args_conflicts_with_subcommands(true)
            .subcommand_precedence_over_arg(true)
            .subcommand(propose)
            .subcommand(withdraw)
    }

    fn run_cli(&self, ctx: &Context, matches: &clap::ArgMatches) -> Result<Outcome, clap::Error> {
        if let Some(("propose", sub)) = matches.subcommand() {
            let args = <ProposeArgs as clap::FromArgMatches>::from_arg_matches(sub)?;
            return Ok(match args.request() {
                Ok(request) => propose(ctx, &request),
                Err(message) => Outcome::from(crate::result::Envelope::refusal(
                    proposals::VERB,
                    crate::result::ErrorSlug::InvalidArguments,
                    message,
                    crate::result::Hint::next_step(
                        crate::result::HintId::SeeHelp,
                        "Pass NAME --reason R, or --batch with a JSON array of {\"name\", \"reason\"}.",
                    ),
                )),
            });
        }
        if let Some(("withdraw", sub)) = matches.subcommand() {
            let request =
                <proposals::WithdrawRequest as clap::FromArgMatches>::from_arg_matches(sub)?;
            return Ok(withdraw(ctx, &request));
        }
        let request = <MeasureRequest as clap::FromArgMatches>::from_arg_matches(matches)?;
        Ok(measure(ctx, &request))
    }

    fn input_schema(&self) -> JsonMap<String, Value> {
        let mut properties = JsonMap::new();
        properties.insert(
            "action".to_owned(),
            json!({
                "type": "string",
                "enum": ["measure", "propose", "withdraw"],
                "description": "What this call does (required, so the intent is explicit, ADR 0405): \"measure\" the Standards on the committed HEAD, what the CLI's `discern standards` does (with `pin`, tighten the gains); \"propose\" the exact measured limits your work breached for the owner's approval (`proposals`); \"withdraw\" every proposal."
            }),
        );
        for schema in [schema_of::<MeasureRequest>(), schema_of::<ProposeRequest>()] {
            if let Some(Value::Object(props)) = schema.get("properties") {
                for (key, value) in props {
                    properties
                        .entry(key.clone())
                        .or_insert_with(|| value.clone());
                }
            }
        }
        let mut schema = schema_of::<ProposeRequest>();
        schema.insert("properties".to_owned(), Value::Object(properties));
        schema.insert("required".to_owned(), json!(["action"]));
        schema
    }

    fn decodes(&self, arguments: Value) -> bool {
        let Value::Object(mut arguments) = arguments else {
            return false;
        };
        let verb = STANDARDS.name;
        let rest = |arguments: &JsonMap<String, Value>| Value::Object(arguments.clone());
        match arguments.remove("action").as_ref().and_then(Value::as_str) {
            Some("measure") => super::parse::<MeasureRequest>(verb, rest(&arguments)).is_ok(),
            Some("propose") => super::parse::<ProposeRequest>(verb, rest(&arguments)).is_ok(),
            Some("withdraw") => {
                super::parse::<proposals::WithdrawRequest>(verb, rest(&arguments)).is_ok()
            }
            _ => false,
        }
    }

    fn run_tool(&self, ctx: &Context, arguments: Value) -> Outcome {
        let verb = STANDARDS.name;
        let Value::Object(mut arguments) = arguments else {
            return invalid_arguments(verb, "Invalid arguments: expected an object.").into();
        };
        let action = arguments.remove("action");
        let action = action.as_ref().and_then(Value::as_str);
        // The other action's keys are refused only when they ask for something (as the old
        // surface did): `proposals: null`, `pin: false`, `force: false`, `names: []` are no-ops.
        let other: &[&str] = match action {
            Some("measure") => &["proposals"],
            Some("withdraw") => &[
                "proposals",
                "pin",
                "force",
                "fresh",
                "names",
                "baseline",
                "require_trunk",
            ],
            _ => &[
                "pin",
                "force",
                "fresh",
                "names",
                "baseline",
                "require_trunk",
            ],
        };
        let mut asks = false;
        for key in other {
            match arguments.remove(*key) {
                None | Some(Value::Null) | Some(Value::Bool(false)) => {}
                Some(Value::Array(items)) if items.is_empty() && *key == "names" => {}
                Some(value) => {
                    asks = true;
                    arguments.insert((*key).to_owned(), value);
                }
            }
        }
        let has = |key: &str| arguments.contains_key(key);
        match action {
            Some("measure") if asks => invalid_arguments(
                verb,
                "action measure takes no proposals; use action propose.",
            )
            .into(),
            Some("measure") => match super::parse::<MeasureRequest>(verb, Value::Object(arguments))
            {
                Ok(request) => measure(ctx, &request),
                Err(refusal) => refusal.into(),
            },
            Some("propose") if asks => invalid_arguments(
                verb,
                "action propose takes proposals only (no pin, force, fresh or names).",
            )
            .into(),
            Some("propose") if !has("proposals") => {
                invalid_arguments(verb, "action propose needs proposals: [{name, reason}, …].")
                    .into()
            }
            Some("propose") => match super::parse::<ProposeRequest>(verb, Value::Object(arguments))
            {
                Ok(request) => propose(ctx, &request),
                Err(refusal) => refusal.into(),
            },
            Some("withdraw") if asks => invalid_arguments(
                verb,
                "action withdraw takes dry_run only.",
            )
            .into(),
            Some("withdraw") => {
                match super::parse::<proposals::WithdrawRequest>(verb, Value::Object(arguments)) {
                    Ok(request) => withdraw(ctx, &request),
                    Err(refusal) => refusal.into(),
                }
            }
            _ => invalid_arguments(
                verb,
                "Invalid arguments: `action` is required and must be \"measure\", \"propose\" or \"withdraw\"; to measure as `discern standards` does, call with {\"action\": \"measure\"}.",
            )
            .into(),
        }
    }
}

struct Abandon;
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
    ) -> Outcome {
        let abandoned = lifecycle::abandon::abandon(&prepared.ws, &request);
        Outcome::from(abandoned.envelope).with_root(abandoned.root)
    }
}

struct Sync;
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
    ) -> Outcome {
        crate::sync::sync(&prepared.ws, &request).into()
    }
}

struct Resolve;
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
    ) -> Outcome {
        lifecycle::resolve::resolve(&prepared.ws.repo).into()
    }
}

struct MergeDriver;
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
    ) -> Outcome {
        lifecycle::resolve::merge_driver(&request).into()
    }
}

struct Init;
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
    fn run(&self, ctx: &Context, prepared: &Prepared, request: InitRequest) -> Outcome {
        with_runtime(ctx, Verb::info(self).name, |runtime| {
            standards::init::init(&prepared.ws, runtime, &request, ctx.progress).into()
        })
    }
}
