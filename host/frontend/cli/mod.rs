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
    /// Print the result envelope as JSON (`--output-format json`).
    #[arg(long, conflicts_with_all = ["markdown", "output_format"])]
    json: bool,
    /// Print the result as Markdown (`--output-format markdown`).
    #[arg(long, conflicts_with = "output_format")]
    markdown: bool,
    /// How to print the result; CI formats: github (annotations), sarif, junit, gitlab (Code
    /// Quality); session-start (an agent's session-start hook). Default: $DISCERN_OUTPUT_FORMAT,
    /// else human.
    #[arg(long, value_name = "FORMAT")]
    output_format: Option<OutputFormat>,
}

/// Every way the CLI prints a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum OutputFormat {
    Human,
    Json,
    Markdown,
    Github,
    Sarif,
    Junit,
    Gitlab,
    /// A session-start hook's JSON (Claude Code, Codex, Gemini CLI): the human text as the
    /// session's added context.
    SessionStart,
}

impl OutputArgs {
    /// The format asked for: the flags, else `DISCERN_OUTPUT_FORMAT`, else human; an unknown
    /// name in the variable is an error that lists the formats.
    fn format(self) -> Result<OutputFormat, String> {
        use clap::ValueEnum;
        if self.json {
            return Ok(OutputFormat::Json);
        }
        if self.markdown {
            return Ok(OutputFormat::Markdown);
        }
        if let Some(format) = self.output_format {
            return Ok(format);
        }
        let Some(name) = std::env::var("DISCERN_OUTPUT_FORMAT")
            .ok()
            .filter(|v| !v.is_empty())
        else {
            return Ok(OutputFormat::Human);
        };
        OutputFormat::from_str(&name, true).map_err(|_| {
            let names: Vec<String> = OutputFormat::value_variants()
                .iter()
                .filter_map(|f| f.to_possible_value().map(|v| v.get_name().to_owned()))
                .collect();
            format!(
                "DISCERN_OUTPUT_FORMAT={name:?} is no output format (one of: {}); unset it or name one",
                names.join(", ")
            )
        })
    }
}

/// `--version`: the package version and the commit it was built from.
static VERSION: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| discern_version::long(env!("CARGO_PKG_VERSION")));

/// `--help` lists the commands by what they are for, in the order a team meets them.
const GROUPS: [(&str, &[&str]); 5] = [
    ("Set up", &["init", "producers"]),
    (
        "Measure",
        &["standards", "status", "test", "map", "progress"],
    ),
    (
        "Effort",
        &["start", "prepare", "done", "update", "await", "abandon"],
    ),
    ("Owner", &["desk", "approve", "accept"]),
    ("Integrate", &["mcp", "sync", "merge-driver", "resolve"]),
];

/// The grouped command list for `--help`; a command no group names is listed under "Other",
/// so none is ever hidden.
fn grouped(cli: &clap::Command) -> String {
    let commands: Vec<(&str, String)> = cli
        .get_subcommands()
        .map(|c| {
            let about = c.get_about().map(|a| a.to_string()).unwrap_or_default();
            (c.get_name(), about)
        })
        .collect();
    let width = commands.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    let listed: Vec<&str> = GROUPS
        .iter()
        .flat_map(|(_, names)| names.iter().copied())
        .collect();
    let other: Vec<&str> = commands
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| !listed.contains(n))
        .collect();
    let mut text = String::new();
    for (title, names) in GROUPS.iter().copied().chain([("Other", other.as_slice())]) {
        let lines: Vec<String> = names
            .iter()
            .filter_map(|name| commands.iter().find(|(n, _)| n == name))
            .map(|(name, about)| format!("  {name:width$}  {about}\n"))
            .collect();
        if !lines.is_empty() {
            text.push_str(&format!("{title}:\n{}\n", lines.concat()));
        }
    }
    text
}

/// The whole command line: every verb of the table with the output flags, and `mcp`.
fn command() -> clap::Command {
    let cli = commands();
    let template = format!(
        "{{about-with-newline}}\n{{usage-heading}} {{usage}}\n\n{}Options:\n{{options}}{{after-help}}",
        grouped(&cli).replace('{', "{{").replace('}', "}}")
    );
    cli.help_template(template)
}

/// Every subcommand, before the help is grouped.
fn commands() -> clap::Command {
    let mut cli = clap::Command::new("discern")
        .version(VERSION.as_str())
        .about("Keeps a repository's measured quality limits (Standards) honest")
        .after_help("A command's own options: `discern help COMMAND` or `discern COMMAND --help`.")
        .subcommand_required(true)
        .arg_required_else_help(true)
        .arg(
            clap::Arg::new("directory")
                .short('C')
                .value_name("DIR")
                .global(true)
                .help("Run as if discern was started in DIR (as `git -C` and `cargo -C` do); for `mcp`, the repository the server works in"),
        );
    for entry in verbs::TABLE {
        cli = cli.subcommand(with_output_flags(entry.command()));
    }
    cli.subcommand(with_output_flags(clap::Command::new(crate::desk::VERB).about(
        "The owner's desk: every effort grouped for deciding, land, approve, update, abandon (a terminal UI; no MCP tool)",
    )))
    .subcommand(
        clap::Command::new("mcp")
            .about("Serve the Model Context Protocol on stdin/stdout for coding agents"),
    )
}

/// A subcommand and every subcommand under it, each with `--json`, `--markdown` and
/// `--output-format`.
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
    // Bare `discern` on a terminal where a discern.toml is opens the owner's desk.
    if std::env::args_os().len() == 1
        && let Ok(dir) = std::env::current_dir()
    {
        let settings = Settings::from_env();
        if crate::desk::wanted(&dir, &settings) {
            return desk(&dir, &settings, OutputFormat::Human);
        }
    }
    let matches = match command().try_get_matches() {
        Ok(matches) => matches,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    if let Some(dir) = matches.get_one::<String>("directory")
        && let Err(e) = std::env::set_current_dir(dir)
    {
        eprintln!("error: -C {dir}: {e}");
        return 2;
    }
    let settings = Settings::from_env();
    let Some((name, sub)) = matches.subcommand() else {
        return 2;
    };
    if name == "mcp" {
        return crate::mcp::serve(settings);
    }
    if name == crate::desk::VERB {
        let format = OutputArgs::from_arg_matches(sub)
            .map_err(|e| e.to_string())
            .and_then(OutputArgs::format);
        return match (format, std::env::current_dir()) {
            (Ok(format), Ok(dir)) => desk(&dir, &settings, format),
            (Err(message), _) => {
                eprintln!("error: {message}");
                2
            }
            (_, Err(e)) => {
                eprintln!("error: cannot read the current directory: {e}");
                2
            }
        };
    }
    // The output flags sit on the innermost subcommand (`standards propose --json`).
    let output = match sub.subcommand() {
        Some((_, inner)) => OutputArgs::from_arg_matches(inner),
        None => OutputArgs::from_arg_matches(sub),
    };
    let (Some(entry), Ok(output)) = (verbs::by_name(name), output) else {
        return 2;
    };
    let format = match output.format() {
        Ok(format) => format,
        Err(message) => {
            eprintln!("error: {message}");
            return 2;
        }
    };
    let outcome = match std::env::current_dir() {
        Ok(dir) => {
            let progress = progress::Progress::new(settings.progress, entry.info().journal);
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
        Err(e) => verbs::Outcome::refused(
            name,
            discern::result::Refused::new(
                ErrorSlug::PreconditionFailed,
                format!("cannot read the current directory: {e}"),
                Hint::next_step(
                    HintId::RunFromRepository,
                    "Run discern from inside a git work tree.",
                ),
            ),
        ),
    };
    print(&outcome.envelope, format, &settings);
    outcome.exit_code
}

/// The owner's desk in `dir`, or its refusal printed in `format` (a machine format is itself a
/// reason to refuse: the desk is for people).
fn desk(dir: &std::path::Path, settings: &Settings, format: OutputFormat) -> i32 {
    match crate::desk::run(dir, settings, format == OutputFormat::Human) {
        Ok(code) => code,
        Err(refused) => {
            let refusal = refused.into_envelope(crate::desk::VERB);
            print(&refusal, format, settings);
            refusal.exit_code()
        }
    }
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

/// Print the result; the format never changes the exit code.
fn print(envelope: &Envelope, format: OutputFormat, settings: &Settings) {
    let steps = &verbs::steps::command_line;
    let ci = |format| result::ci::render(format, envelope, steps);
    let text = match format {
        OutputFormat::Json => envelope.to_json() + "\n",
        OutputFormat::Markdown => result::markdown(envelope, steps),
        OutputFormat::Human => result::human(envelope, steps),
        OutputFormat::Github => {
            if let Some(path) = &settings.step_summary {
                append_step_summary(path, &result::markdown(envelope, steps));
            }
            ci(result::ci::CiFormat::Github)
        }
        OutputFormat::Sarif => ci(result::ci::CiFormat::Sarif),
        OutputFormat::Junit => ci(result::ci::CiFormat::Junit),
        OutputFormat::Gitlab => ci(result::ci::CiFormat::Gitlab),
        OutputFormat::SessionStart => {
            let context = result::human(envelope, steps);
            let hook = serde_json::json!({ "hookSpecificOutput": {
                "hookEventName": "SessionStart",
                "additionalContext": context,
            }});
            hook.to_string() + "\n"
        }
    };
    print!("{text}");
}

/// Append the Markdown rendering to GitHub's job summary (`GITHUB_STEP_SUMMARY`); a file that
/// cannot be written is a warning on stderr, never a failed run.
fn append_step_summary(path: &std::path::Path, markdown: &str) {
    use std::io::Write;
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut file| file.write_all(format!("{markdown}\n").as_bytes()));
    if let Err(e) = written {
        eprintln!(
            "warning: cannot append to GITHUB_STEP_SUMMARY ({}): {e}",
            path.display()
        );
    }
}
