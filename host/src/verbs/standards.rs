//! The `standards` row: the surfaces differ by design (ADR 0405). The CLI has `standards [NAMES]
//! [--pin] [--force] [--dry-run]` and the scalar `standards propose NAME --reason R` (or
//! `--batch`) and `standards withdraw`; MCP has one `discern_standards` tool with a required
//! `action`, whose measure arguments are [`MeasureRequest`]'s and whose propose arguments are
//! [`ProposeRequest`]'s.

use serde_json::{Map as JsonMap, Value, json};

use super::{
    Annotations, Context, Entry, Info, Outcome, invalid_arguments, schema_of, with_runtime,
};
use crate::preflight::Preflight;
use crate::proposals::{self, ProposalRequest, ProposeRequest};
use crate::standards::{self, MeasureRequest};

/// The `standards` row, with an [`Entry`] of its own (the two surfaces differ).
pub(super) struct Standards;

const STANDARDS: Info = Info {
    name: standards::VERB,
    tool: Some("discern_standards"),
    summary: "Measure the Standards of discern.toml on the committed HEAD",
    tool_description: "Measure the Standards (action measure; pin tightens gains), or, when your work itself breached limits, propose the exact measured limits for the owner's approval (action propose, all at once).",
    annotations: Annotations {
        read_only: false,
        destructive: false,
        idempotent: false,
    },
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
