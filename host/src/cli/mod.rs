//! The command-line frontend: parses arguments, calls the library, renders the envelope.
//! Only this module (and later `mcp`) knows about terminals and output formats.

use clap::{Args, Parser, Subcommand};

use crate::result::{self, Envelope, ErrorSlug, Hint, HintId};
use crate::runtime::Runtime;

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
    /// List the producers discern can run: built-ins with their contract version, digest and metrics.
    Producers(OutputArgs),
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
    let (envelope, output) = match cli.command {
        Command::Producers(output) => (
            with_runtime("producers", crate::producers::producers),
            output,
        ),
    };
    print(&envelope, output);
    envelope.exit_code()
}

fn with_runtime(verb: &str, f: impl FnOnce(&Runtime) -> Envelope) -> Envelope {
    match Runtime::new() {
        Ok(runtime) => f(&runtime),
        Err(e) => Envelope::refusal(
            verb,
            ErrorSlug::Internal,
            format!("cannot start the producer runtime: {e}"),
            Hint::next_step(HintId::SeeHelp, "Report this as a bug in discern."),
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
