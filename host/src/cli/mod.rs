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
pub struct StandardsArgs {
    /// Standards to measure (default: all).
    pub names: Vec<String>,
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
