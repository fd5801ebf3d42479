//! The command-line frontend: parses arguments, calls the library, renders the envelope.
//! Only this module (and `mcp`) knows about terminals and output formats.

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
    /// Where you are: this checkout, its Proof, Standards, proposals, and the fleet of efforts.
    Status(StatusArgs),
    /// Start an effort: a new worktree on a new branch forked from the trunk (main checkout only).
    Start(StartArgs),
    /// Run the fix then check jobs on the work tree as it is (no Proof).
    Prepare(OutputArgs),
    /// The gate: prove the exact clean commit (merge, limits, jobs, every Standard) and record Proof.
    Done(DoneArgs),
    /// Merge the trunk (or --from REF) into this effort; a conflict aborts cleanly.
    Update(UpdateArgs),
    /// Wait for another effort to be green or landed, or for the trunk to move.
    Await(AwaitArgs),
    /// Land this effort on the trunk with the owner's consent.
    Accept(AcceptArgs),
    /// Read a long operation (done, test, standards, accept, await) back.
    Progress(ProgressArgs),
    /// Run the test-stage jobs on the work tree as it is (no Proof).
    Test(OutputArgs),
    /// The project map: index, one page, or search.
    Map(MapArgs),
    /// Measure the Standards of discern.toml on the committed HEAD.
    Standards(StandardsArgs),
    /// Write a starter discern.toml: the built-in Standards that fit, limits at today's values.
    Init(OutputArgs),
    /// List the producers discern can run: built-ins with their contract version, digest and metrics.
    Producers(OutputArgs),
    /// Serve the Model Context Protocol on stdin/stdout for coding agents.
    Mcp,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Complete collections (`projection.mode = "full"`) instead of the bounded orientation view.
    #[arg(long, short)]
    pub verbose: bool,
    /// Survey the fleet even from an effort worktree.
    #[arg(long)]
    pub all: bool,
    /// Leave the fleet out.
    #[arg(long)]
    pub local: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct StartArgs {
    /// The effort's name (its id): default a random codename.
    #[arg(long)]
    pub name: Option<String>,
    /// A one-line title (≤ 120 characters).
    #[arg(long)]
    pub title: Option<String>,
    /// A one-line brief (≤ 500 characters).
    #[arg(long)]
    pub brief: Option<String>,
    /// Fork from this ref instead of the trunk.
    #[arg(long)]
    pub from: Option<String>,
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct DoneArgs {
    /// Run the gate even when Proof for this exact commit is current.
    #[arg(long)]
    pub rerun: bool,
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct UpdateArgs {
    /// Merge this ref instead of the trunk.
    #[arg(long)]
    pub from: Option<String>,
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("condition").args(["green", "landed", "trunk_moved", "resume"]).required(true)))]
pub struct AwaitArgs {
    /// Until this effort holds Proof for its current commit (or has landed).
    #[arg(long, value_name = "EFFORT")]
    pub green: Option<String>,
    /// Until this effort's work is on the trunk.
    #[arg(long, value_name = "EFFORT")]
    pub landed: Option<String>,
    /// Until the trunk moves.
    #[arg(long)]
    pub trunk_moved: bool,
    /// Continue an earlier wait.
    #[arg(long, value_name = "HANDLE")]
    pub resume: Option<String>,
    /// Seconds to wait (default 3300; 0 checks once). Exit 124 when not met.
    #[arg(long)]
    pub timeout: Option<f64>,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct AcceptArgs {
    /// The owner consented to this landing in conversation.
    #[arg(long)]
    pub confirmed: bool,
    /// The owner's approval of one limit proposal, by its token (once per proposal).
    #[arg(long = "approve-standard", value_name = "TOKEN")]
    pub approve_standard: Vec<String>,
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct ProgressArgs {
    /// An operation handle (default: this checkout's latest operation).
    pub handle: Option<String>,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct MapArgs {
    /// A page (path under the map dir, without .md) or a region.
    #[arg(long)]
    pub target: Option<String>,
    /// Words to search for (at most 5 results).
    #[arg(long)]
    pub search: Option<String>,
    #[command(flatten)]
    pub output: OutputArgs,
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
    use crate::lifecycle;
    let (envelope, output) = match cli.command {
        Command::Mcp => return crate::mcp::serve(settings),
        Command::Status(args) => {
            let request = crate::status::StatusRequest {
                verbose: args.verbose,
                all: args.all,
                local: args.local,
            };
            (
                in_workspace(crate::status::VERB, settings, |ws| {
                    crate::status::status(ws, &request)
                }),
                args.output,
            )
        }
        Command::Start(args) => {
            let request = lifecycle::start::StartRequest {
                name: args.name,
                title: args.title,
                brief: args.brief,
                from: args.from,
                dry_run: args.dry_run,
            };
            (
                in_workspace(lifecycle::start::VERB, settings, |ws| {
                    lifecycle::start::start(ws, &request)
                }),
                args.output,
            )
        }
        Command::Prepare(output) => (
            in_workspace("prepare", settings, |ws| {
                let progress = progress::Progress::new(ws.settings.progress);
                lifecycle::stage_verbs::prepare(ws, &|step| progress.step(step))
            }),
            output,
        ),
        Command::Test(output) => (
            in_workspace("test", settings, |ws| {
                let progress = progress::Progress::new(ws.settings.progress);
                lifecycle::stage_verbs::test(ws, &|step| progress.step(step))
            }),
            output,
        ),
        Command::Done(args) => {
            let request = lifecycle::done::DoneRequest {
                rerun: args.rerun,
                dry_run: args.dry_run,
            };
            let envelope = in_workspace(lifecycle::done::VERB, settings, |ws| {
                with_runtime(lifecycle::done::VERB, &ws.settings, |runtime| {
                    let progress = progress::Progress::new(ws.settings.progress);
                    lifecycle::done::done(ws, runtime, &request, &|step| progress.step(step))
                })
            });
            (envelope, args.output)
        }
        Command::Update(args) => (
            in_workspace(lifecycle::update::VERB, settings, |ws| {
                lifecycle::update::update(ws, args.from.as_deref(), args.dry_run)
            }),
            args.output,
        ),
        Command::Await(args) => {
            use lifecycle::wait::Condition;
            let condition = match (args.green, args.landed, args.trunk_moved) {
                (Some(e), _, _) => Some(Condition::Green(e)),
                (_, Some(e), _) => Some(Condition::Landed(e)),
                (_, _, true) => Some(Condition::TrunkMoved),
                _ => None,
            };
            let request = lifecycle::wait::AwaitRequest {
                condition,
                timeout_s: args.timeout,
                resume: args.resume,
            };
            (
                in_workspace(lifecycle::wait::VERB, settings, |ws| {
                    lifecycle::wait::await_condition(ws, &request)
                }),
                args.output,
            )
        }
        Command::Accept(args) => {
            let request = lifecycle::accept::AcceptRequest {
                confirmed: args.confirmed,
                approve_standard: args.approve_standard,
                dry_run: args.dry_run,
            };
            (
                in_workspace(lifecycle::accept::VERB, settings, |ws| {
                    lifecycle::accept::accept(ws, &request)
                }),
                args.output,
            )
        }
        Command::Progress(args) => (
            in_workspace("progress", settings, |ws| {
                lifecycle::operations::progress(ws, args.handle.as_deref())
            }),
            args.output,
        ),
        Command::Map(args) => (
            in_workspace(lifecycle::map::VERB, settings, |ws| {
                lifecycle::map::map(ws, args.target.as_deref(), args.search.as_deref())
            }),
            args.output,
        ),
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
    // `await` not met is a success with a distinct exit code, so scripts can loop on it.
    let not_met = envelope.ok
        && envelope.verb == crate::lifecycle::wait::VERB
        && envelope.data.as_ref().is_some_and(|d| d["met"] == false);
    if not_met { 124 } else { envelope.exit_code() }
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
    match settings.runtime(verb) {
        Ok(runtime) => f(&runtime),
        Err(refusal) => *refusal,
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
