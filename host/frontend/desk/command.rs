//! The CLI command an action runs: shown before it runs, then run through the verb table's one
//! path (`Entry::run_cli` on the arguments the CLI would parse), so the desk never
//! reimplements a verb and its result or refusal is the CLI's.

use std::path::{Path, PathBuf};

use discern::result::{self, Envelope, ErrorSlug, Hint, HintId, Refused};
use discern::verbs::{self, Context, Surface};
use discern::workspace::Settings;

/// `discern [-C DIR] VERB ARGS…`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    pub verb: &'static str,
    pub args: Vec<String>,
    /// Where it runs (`-C`); `None`: the directory the desk was started in.
    pub dir: Option<PathBuf>,
}

impl Command {
    pub fn new(verb: &'static str, args: &[&str]) -> Self {
        Self {
            verb,
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            dir: None,
        }
    }

    pub fn within(mut self, dir: &str) -> Self {
        self.dir = Some(PathBuf::from(dir));
        self
    }

    /// The command line as the owner would type it.
    pub fn line(&self) -> String {
        let mut words = vec!["discern".to_owned()];
        if let Some(dir) = &self.dir {
            words.push("-C".to_owned());
            words.push(dir.display().to_string());
        }
        words.push(self.verb.to_owned());
        words.extend(self.args.iter().cloned());
        words
            .iter()
            .map(|w| quoted(w))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Run it as the CLI runs it: the verb table's row, its clap parser, `run_cli`.
    pub fn run(&self, settings: &Settings, here: &Path) -> Envelope {
        let Some(entry) = verbs::by_name(self.verb) else {
            return refused(self.verb, format!("discern has no verb {}", self.verb));
        };
        let argv = std::iter::once(self.verb.to_owned()).chain(self.args.iter().cloned());
        let matches = match entry.command().try_get_matches_from(argv) {
            Ok(matches) => matches,
            Err(e) => return refused(self.verb, e.to_string()),
        };
        let quiet = |_: &str| {};
        let ctx = Context {
            dir: self.dir.as_deref().unwrap_or(here),
            settings,
            surface: Surface::Cli,
            progress: &quiet,
        };
        match entry.run_cli(&ctx, &matches) {
            Ok(outcome) => outcome.envelope,
            Err(e) => refused(self.verb, e.to_string()),
        }
    }
}

/// The result as the CLI prints it for people, line by line.
pub fn human(envelope: &Envelope) -> Vec<String> {
    result::human(envelope, &verbs::steps::command_line)
        .lines()
        .map(str::to_owned)
        .collect()
}

fn refused(verb: &str, message: String) -> Envelope {
    Refused::new(
        ErrorSlug::InvalidArguments,
        message,
        Hint::next_step(HintId::SeeHelp, "Run the command from a shell to see why."),
    )
    .into_envelope(verb)
}

/// A word quoted for a POSIX shell when it needs it.
fn quoted(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@+,".contains(c));
    match plain {
        true => word.to_owned(),
        false => format!("'{}'", word.replace('\'', "'\\''")),
    }
}
