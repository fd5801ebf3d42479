//! The `standards` row: the surfaces differ by design (ADR 0405). The CLI has `standards [NAMES]
//! [--pin] [--force] [--dry-run]` and the scalar `standards propose NAME --reason R` (or
//! `--batch`) and `standards withdraw`; MCP has one `discern_standards` tool with a required
//! `action`, whose measure arguments are [`MeasureRequest`]'s and whose propose arguments are
//! [`ProposeRequest`]'s.

use serde_json::{Map as JsonMap, Value, json};

use super::{
    Annotations, Answer, Context, Entry, Info, Outcome, Verb, call, invalid_arguments, schema_of,
};
use crate::preflight::{Cleanliness, Preflight, Prepared};
use crate::proposals::{self, ProposalRequest, ProposeRequest, WithdrawRequest};
use crate::result::Refused;
use crate::standards::{self, MeasureRequest};

/// The `standards` row, with an [`Entry`] of its own (the two surfaces differ); each of its
/// three modes is a [`Verb`] the table runs through [`call`] like every other row.
pub(super) struct Standards;

/// A limit commit writes a config-only commit: recovery first, a clean tree.
const LIMIT_COMMIT: Annotations = Annotations {
    read_only: false,
    destructive: false,
    idempotent: false,
};

/// Measuring writes evidence and a journal `progress` reads back, whatever the work tree
/// holds (HEAD is measured; `--pin` alone needs a clean tree, which its request asks for).
const STANDARDS: Info = Info {
    name: standards::VERB,
    tool: Some("discern_standards"),
    summary: "Measure the Standards of discern.toml on the committed HEAD",
    tool_description: "Measure the Standards (action measure; pin tightens gains), or, when your work itself breached limits, propose the exact measured limits for the owner's approval (action propose, all at once).",
    annotations: LIMIT_COMMIT,
    cleanliness: Cleanliness::Any,
    writes: true,
    journal: true,
};

const PROPOSE: Info = Info {
    name: proposals::VERB,
    tool: Some("discern_standards"),
    summary: "Propose loosening limits to the exact measured values, for the owner's approval: one config-only commit for the whole batch",
    tool_description: "with action propose and the proposals.",
    annotations: LIMIT_COMMIT,
    cleanliness: standards::CLEANLINESS,
    writes: true,
    journal: false,
};

const WITHDRAW: Info = Info {
    name: proposals::WITHDRAW_VERB,
    tool: Some("discern_standards"),
    summary: "Withdraw every proposal: limits back to the trunk's in one config-only commit, so one batch can propose them together",
    tool_description: "with action withdraw.",
    annotations: LIMIT_COMMIT,
    cleanliness: standards::CLEANLINESS,
    writes: true,
    journal: false,
};

/// `standards [NAMES] [--pin]` (MCP `action: "measure"`).
struct Measure;
impl Verb for Measure {
    type Request = MeasureRequest;
    fn info(&self) -> &'static Info {
        &STANDARDS
    }
    fn validate(&self, request: &MeasureRequest) -> Result<(), Refused> {
        request.validate()
    }
    fn preflight(&self, request: &MeasureRequest) -> Preflight {
        request.preflight()
    }
    fn run(
        &self,
        ctx: &Context,
        prepared: &Prepared,
        request: MeasureRequest,
    ) -> Result<Answer, Refused> {
        let runtime = ctx.runtime()?;
        let claims = &proposals::claims;
        standards::standards(prepared, &runtime, &request, claims, ctx.progress).map(Answer::from)
    }
}

/// `standards propose` (MCP `action: "propose"`).
struct Propose;
impl Verb for Propose {
    type Request = ProposeRequest;
    fn info(&self) -> &'static Info {
        &PROPOSE
    }
    fn preflight(&self, request: &ProposeRequest) -> Preflight {
        PROPOSE.preflight().config().dry_run(request.dry_run)
    }
    fn run(
        &self,
        ctx: &Context,
        prepared: &Prepared,
        request: ProposeRequest,
    ) -> Result<Answer, Refused> {
        let runtime = ctx.runtime()?;
        proposals::propose(prepared, &runtime, &request, ctx.progress).map(Answer::from)
    }
}

/// `standards withdraw` (MCP `action: "withdraw"`).
struct Withdraw;
impl Verb for Withdraw {
    type Request = WithdrawRequest;
    fn info(&self) -> &'static Info {
        &WITHDRAW
    }
    fn preflight(&self, request: &WithdrawRequest) -> Preflight {
        WITHDRAW.preflight().config().dry_run(request.dry_run)
    }
    fn run(
        &self,
        _ctx: &Context,
        prepared: &Prepared,
        request: WithdrawRequest,
    ) -> Result<Answer, Refused> {
        proposals::withdraw(prepared, &request).map(Answer::from)
    }
}

/// `standards --pin`: a measurement that commits the gains, so it needs the clean tree a
/// limit commit describes (`MeasureRequest::preflight` asks for it).
const PIN: Info = Info {
    name: "standards --pin",
    cleanliness: standards::CLEANLINESS,
    journal: true,
    ..STANDARDS
};

/// The modes' rows, for the reference page (the subcommands' and `--pin`'s facts); the MCP
/// tool list is the table's rows only, so `discern_standards` is listed once.
pub(super) const MODES: &[&Info] = &[&PIN, &PROPOSE, &WITHDRAW];

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

impl Entry for Standards {
    fn info(&self) -> &'static Info {
        &STANDARDS
    }

    fn modes(&self) -> &'static [&'static Info] {
        MODES
    }

    fn command(&self) -> clap::Command {
        let propose = <ProposeArgs as clap::Args>::augment_args(clap::Command::new("propose"))
            .about(PROPOSE.summary);
        let withdraw =
            <WithdrawRequest as clap::Args>::augment_args(clap::Command::new("withdraw"))
                .about(WITHDRAW.summary);
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
                Ok(request) => call(&Propose, ctx, request),
                Err(message) => Outcome::refused(
                    PROPOSE.name,
                    crate::result::Refused::new(
                        crate::result::ErrorSlug::InvalidArguments,
                        message,
                        crate::result::Hint::next_step(
                            crate::result::HintId::SeeHelp,
                            "Pass NAME --reason R, or --batch with a JSON array of {\"name\", \"reason\"}.",
                        ),
                    ),
                ),
            });
        }
        if let Some(("withdraw", sub)) = matches.subcommand() {
            let request = <WithdrawRequest as clap::FromArgMatches>::from_arg_matches(sub)?;
            return Ok(call(&Withdraw, ctx, request));
        }
        let request = <MeasureRequest as clap::FromArgMatches>::from_arg_matches(matches)?;
        Ok(call(&Measure, ctx, request))
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
        let rest = |arguments: &JsonMap<String, Value>| Value::Object(arguments.clone());
        match arguments.remove("action").as_ref().and_then(Value::as_str) {
            Some("measure") => super::parse::<MeasureRequest>(rest(&arguments)).is_ok(),
            Some("propose") => super::parse::<ProposeRequest>(rest(&arguments)).is_ok(),
            Some("withdraw") => super::parse::<WithdrawRequest>(rest(&arguments)).is_ok(),
            _ => false,
        }
    }

    fn run_tool(&self, ctx: &Context, arguments: Value) -> Outcome {
        match tool_call(ctx, arguments) {
            Ok(outcome) => outcome,
            Err(refused) => Outcome::refused(STANDARDS.name, refused),
        }
    }
}

/// A `discern_standards` call: its `action`'s request decoded and run through the table's
/// one path, or the refusal of arguments that do not make one.
fn tool_call(ctx: &Context, arguments: Value) -> Result<Outcome, Refused> {
    let Value::Object(mut arguments) = arguments else {
        return Err(invalid_arguments("Invalid arguments: expected an object."));
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
    let proposing = arguments.contains_key("proposals");
    let arguments = Value::Object(arguments);
    match action {
        Some("measure") if asks => Err(invalid_arguments(
            "action measure takes no proposals; use action propose.",
        )),
        Some("measure") => Ok(call(&Measure, ctx, super::parse(arguments)?)),
        Some("propose") if asks => Err(invalid_arguments(
            "action propose takes proposals only (no pin, force, fresh or names).",
        )),
        Some("propose") if !proposing => Err(invalid_arguments(
            "action propose needs proposals: [{name, reason}, …].",
        )),
        Some("propose") => Ok(call(&Propose, ctx, super::parse(arguments)?)),
        Some("withdraw") if asks => Err(invalid_arguments("action withdraw takes dry_run only.")),
        Some("withdraw") => Ok(call(&Withdraw, ctx, super::parse(arguments)?)),
        _ => Err(invalid_arguments(
            "Invalid arguments: `action` is required and must be \"measure\", \"propose\" or \"withdraw\"; to measure as `discern standards` does, call with {\"action\": \"measure\"}.",
        )),
    }
}
