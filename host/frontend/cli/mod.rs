//! The command-line frontend: builds its subcommands from the verb table, parses, calls the
//! verb, renders the envelope. Only this module (and `mcp`) knows about terminals and output
//! formats.

mod progress;

use clap::{Args, FromArgMatches};

use discern::result::{self, Envelope, ErrorSlug, Hint, HintId};
use discern::verbs::{self, Context, Surface};
use discern::workspace::Settings;

// How the result is printed (no doc comment: clap would take it as every verb's `about`).
#[derive(Debug, Clone, Copy, Args)]
struct OutputArgs {
    /// Print the result envelope as JSON.
    #[arg(long, conflicts_with = "markdown")]
    json: bool,
    /// Print the result as Markdown.
    #[arg(long)]
    markdown: bool,
}

/// The whole command line: every verb of the table with the output flags, and `mcp`.
fn command() -> clap::Command {
    let mut cli = clap::Command::new("discern")
        .version(env!("CARGO_PKG_VERSION"))
        .about("Keeps a repository's measured quality limits (Standards) honest")
        .subcommand_required(true)
        .arg_required_else_help(true);
    for entry in verbs::TABLE {
        cli = cli.subcommand(with_output_flags(entry.command()));
    }
    cli.subcommand(
        clap::Command::new("mcp")
            .about("Serve the Model Context Protocol on stdin/stdout for coding agents"),
    )
}

/// A subcommand and every subcommand under it, each with `--json` and `--markdown`.
fn with_output_flags(command: clap::Command) -> clap::Command {
    let has_subcommands = command.get_subcommands().next().is_some();
    let command = OutputArgs::augment_args(command);
    if !has_subcommands {
        return command;
    }
    command.mut_subcommands(with_output_flags)
}

/// Run the CLI and return the process exit code.
pub fn main() -> i32 {
    let matches = match command().try_get_matches() {
        Ok(matches) => matches,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    let settings = Settings::from_env();
    let Some((name, sub)) = matches.subcommand() else {
        return 2;
    };
    if name == "mcp" {
        return crate::mcp::serve(settings);
    }
    // The output flags sit on the innermost subcommand (`standards propose --json`).
    let output = match sub.subcommand() {
        Some((_, inner)) => OutputArgs::from_arg_matches(inner),
        None => OutputArgs::from_arg_matches(sub),
    };
    let (Some(entry), Ok(output)) = (verbs::by_name(name), output) else {
        return 2;
    };
    let outcome = match std::env::current_dir() {
        Ok(dir) => {
            let progress = progress::Progress::new(settings.progress);
            let step = |what: &str| progress.step(what);
            let ctx = Context {
                dir: &dir,
                settings: &settings,
                surface: Surface::Cli,
                progress: &step,
            };
            // Ctrl-C cancels the call as an MCP cancel does; a second one exits at once (130).
            let cancel = interrupts();
            match cancel.scope(|| entry.run_cli(&ctx, sub)) {
                Ok(outcome) => outcome,
                Err(e) => {
                    let _ = e.print();
                    return 2;
                }
            }
        }
        Err(e) => Envelope::refusal(
            name,
            ErrorSlug::PreconditionFailed,
            format!("cannot read the current directory: {e}"),
            Hint::next_step(
                HintId::RunFromRepository,
                "Run discern from inside a git work tree.",
            ),
        )
        .into(),
    };
    print(&outcome.envelope, output);
    outcome.exit_code
}

/// The call's cancellation, set by the first SIGINT (Ctrl-C) or SIGTERM: measurement stops
/// between producers and a running job's process group is killed, while a transaction in
/// flight finishes. A second signal ends the process with 130 at once.
fn interrupts() -> discern::cancel::Cancel {
    let cancel = discern::cancel::Cancel::default();
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let _ = signal_hook::flag::register_conditional_shutdown(signal, 130, cancel.flag());
        let _ = signal_hook::flag::register(signal, cancel.flag());
    }
    cancel
}

fn print(envelope: &Envelope, output: OutputArgs) {
    let text = if output.json {
        envelope.to_json() + "\n"
    } else if output.markdown {
        result::markdown(envelope, &verbs::steps::command_line)
    } else {
        result::human(envelope, &verbs::steps::command_line)
    };
    print!("{text}");
}
