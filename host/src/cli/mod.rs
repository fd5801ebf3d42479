//! The command-line frontend: parses arguments, calls the library, renders the envelope.
//! Only this module (and later `mcp`) knows about terminals and output formats.

mod progress;

use clap::{Args, Parser, Subcommand};

use crate::result::{self, Envelope, ErrorSlug, Hint, HintId};
use crate::runtime::Runtime;
use crate::workspace::{Settings, Workspace};

#[derive(Debug, Parser)]
#[command(
    name = "discern",
    version,
    about = "Keeps a repository's measured quality limits (Standards) honest"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Measure the Standards of discern.toml on the committed HEAD.
    Standards(StandardsArgs),
    /// Write a starter discern.toml: the built-in Standards that fit, limits at today's values.
    Init(OutputArgs),
    /// List the producers discern can run: built-ins with their contract version, digest and metrics.
    Producers(OutputArgs),
}

#[derive(Debug, Args)]
#[command(
    args_conflicts_with_subcommands = true,
    subcommand_precedence_over_arg = true
)]
pub struct StandardsArgs {
    #[command(subcommand)]
    pub action: Option<StandardsAction>,
    /// Standards to measure (default: all).
    pub names: Vec<String>,
    /// Tighten the selected limits to their measured gains (value ∓ margin) in one
    /// config-only commit.
    #[arg(long)]
    pub pin: bool,
    /// Measure the work tree as it is, uncommitted changes included (for authoring a
    /// Standard); never recorded, never pinned.
    #[arg(long)]
    pub force: bool,
    /// Show which producers would run for which Standards; measure nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Subcommand)]
pub enum StandardsAction {
    /// Propose loosening limits to the exact measured values, for the owner's approval: one
    /// config-only commit for the whole batch.
    Propose(ProposeArgs),
}

#[derive(Debug, Args)]
pub struct ProposeArgs {
    /// The Standard to propose (the scalar form; use --batch for several at once).
    #[arg(required_unless_present = "batch", conflicts_with = "batch")]
    pub name: Option<String>,
    /// The technical reason (one paragraph, at most 500 characters).
    #[arg(long, required_unless_present = "batch", conflicts_with = "batch")]
    pub reason: Option<String>,
    /// A JSON array of {"name", "reason"} from a file, or from stdin with `-`.
    #[arg(long, value_name = "FILE|-")]
    pub batch: Option<String>,
    /// Validate and preview; measure and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Clone, Copy, Args)]
pub struct OutputArgs {
    /// Print the result envelope as JSON.
    #[arg(long, conflicts_with = "markdown")]
    pub json: bool,
    /// Print the result as Markdown.
    #[arg(long)]
    pub markdown: bool,
}

/// Run the CLI and return the process exit code.
pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    let settings = Settings::from_env();
    let (envelope, output) = match cli.command {
        Command::Producers(output) => (
            with_runtime("producers", &settings, |runtime| {
                crate::producers::producers(runtime)
            }),
            output,
        ),
        Command::Standards(StandardsArgs {
            action: Some(StandardsAction::Propose(args)),
            ..
        }) => {
            let envelope = match read_batch(&args) {
                Ok(requests) => in_workspace(crate::proposals::VERB, settings, |ws| {
                    with_runtime(crate::proposals::VERB, &ws.settings, |runtime| {
                        let progress = progress::Progress::new(ws.settings.progress);
                        crate::proposals::propose(
                            ws,
                            runtime,
                            &requests,
                            args.dry_run,
                            &crate::commit::Faults::from_env(),
                            &|step| progress.step(step),
                        )
                    })
                }),
                Err(message) => Envelope::refusal(
                    crate::proposals::VERB,
                    ErrorSlug::InvalidArguments,
                    message,
                    Hint::next_step(
                        HintId::SeeHelp,
                        "Pass NAME --reason R, or --batch with a JSON array of {\"name\", \"reason\"}.",
                    ),
                ),
            };
            (envelope, args.output)
        }
        Command::Standards(args) if args.pin => {
            let envelope = in_workspace("standards", settings, |ws| {
                with_runtime("standards", &ws.settings, |runtime| {
                    let progress = progress::Progress::new(ws.settings.progress);
                    crate::standards::pin::pin(
                        ws,
                        runtime,
                        &args.names,
                        &crate::commit::Faults::from_env(),
                        &|step| progress.step(step),
                    )
                })
            });
            (envelope, args.output)
        }
        Command::Standards(args) => {
            let request = crate::standards::MeasureRequest {
                names: args.names,
                force: args.force,
                dry_run: args.dry_run,
            };
            let envelope = in_workspace("standards", settings, |ws| {
                with_runtime("standards", &ws.settings, |runtime| {
                    let progress = progress::Progress::new(ws.settings.progress);
                    crate::standards::measure(ws, runtime, &request, &|step| progress.step(step))
                })
            });
            (envelope, args.output)
        }
        Command::Init(output) => (
            in_workspace("init", settings, |ws| {
                with_runtime("init", &ws.settings, |runtime| {
                    let progress = progress::Progress::new(ws.settings.progress);
                    crate::standards::init::init(ws, runtime, &|step| progress.step(step))
                })
            }),
            output,
        ),
    };
    print(&envelope, output);
    envelope.exit_code()
}

/// The proposals a `propose` invocation names: the scalar pair or a JSON batch.
fn read_batch(args: &ProposeArgs) -> Result<Vec<crate::proposals::ProposalRequest>, String> {
    match (&args.batch, &args.name, &args.reason) {
        (Some(source), _, _) => {
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
        (None, Some(name), Some(reason)) => Ok(vec![crate::proposals::ProposalRequest {
            name: name.clone(),
            reason: reason.clone(),
        }]),
        _ => Err("name a Standard and give --reason, or pass --batch".to_owned()),
    }
}

fn in_workspace(
    verb: &str,
    settings: Settings,
    f: impl FnOnce(&Workspace) -> Envelope,
) -> Envelope {
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(e) => {
            return Envelope::refusal(
                verb,
                ErrorSlug::PreconditionFailed,
                format!("cannot read the current directory: {e}"),
                Hint::next_step(
                    HintId::RunFromRepository,
                    "Run discern from inside a git work tree.",
                ),
            );
        }
    };
    match Workspace::open(&cwd, settings) {
        Ok(ws) => f(&ws),
        Err(e) => Envelope::refusal(
            verb,
            ErrorSlug::PreconditionFailed,
            e.to_string(),
            Hint::next_step(
                HintId::RunFromRepository,
                "Run discern from inside a git work tree.",
            ),
        ),
    }
}

fn with_runtime(verb: &str, settings: &Settings, f: impl FnOnce(&Runtime) -> Envelope) -> Envelope {
    let trace = match settings.trace.as_deref().map(crate::runtime::Trace::open) {
        Some(Err(e)) => {
            return Envelope::refusal(
                verb,
                ErrorSlug::InvalidArguments,
                format!("cannot open the DISCERN_TRACE file: {e}"),
                Hint::next_step(
                    HintId::SeeHelp,
                    "Point DISCERN_TRACE at a writable file, or unset it.",
                ),
            );
        }
        Some(Ok(trace)) => Some(trace),
        None => None,
    };
    match Runtime::with_cache_dir(settings.cache_dir.clone()) {
        Ok(runtime) => f(&runtime.with_trace(trace)),
        Err(e) => Envelope::refusal(
            verb,
            ErrorSlug::Internal,
            format!("cannot start the producer runtime: {e}"),
            Hint::next_step(HintId::ReportBug, "Report this as a bug in discern."),
        ),
    }
}

fn print(envelope: &Envelope, output: OutputArgs) {
    let text = if output.json {
        envelope.to_json() + "\n"
    } else if output.markdown {
        result::markdown(envelope)
    } else {
        result::human(envelope)
    };
    print!("{text}");
}
