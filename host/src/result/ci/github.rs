//! GitHub Actions workflow commands: one annotation per new finding of a failing Standard, one
//! per failing Standard without a listed finding, one per refusal or other diagnostic, capped
//! at what GitHub shows per step; then the human rendering, with commands stopped so no text
//! a producer returned can issue one.

use sha2::{Digest, Sha256};

use super::view::{self, Issue, Level, Problem};
use crate::result::{Envelope, StepRenderer};

/// Annotations GitHub shows per step and per kind (error, warning, notice).
pub const SHOWN_PER_STEP: usize = 10;

/// One annotation before escaping.
#[derive(Debug, Clone, PartialEq)]
struct Annotation {
    level: Level,
    file: Option<String>,
    line: Option<u64>,
    column: Option<u32>,
    title: String,
    message: String,
}

/// The workflow commands for `envelope`, then its human text inside `::stop-commands::`.
pub(super) fn render(envelope: &Envelope, steps: StepRenderer) -> String {
    let standards = view::standards(envelope);
    let mut annotations: Vec<Annotation> = view::issues(&standards, envelope)
        .into_iter()
        .filter(Issue::failing)
        .map(|issue| from_issue(&issue))
        .collect();
    annotations.extend(
        view::problems(envelope, &standards)
            .into_iter()
            .chain(view::advisories(envelope))
            .map(from_problem),
    );
    let mut out = String::new();
    for level in [Level::Error, Level::Warning, Level::Note] {
        let of_level: Vec<&Annotation> = annotations.iter().filter(|a| a.level == level).collect();
        for annotation in capped(&of_level, level, envelope) {
            out.push_str(&command(&annotation));
            out.push('\n');
        }
    }
    out.push_str(&quoted(&crate::result::human(envelope, steps)));
    out
}

fn from_issue(issue: &Issue) -> Annotation {
    let standard = issue.standard;
    let title = match issue.finding {
        Some(_) => format!("discern: new finding of {}", standard.headline()),
        None => format!("discern: {}", standard.headline()),
    };
    Annotation {
        level: Level::Error,
        file: issue.path().map(str::to_owned),
        line: issue.line(),
        column: issue.column(),
        title,
        message: issue.message(),
    }
}

fn from_problem(problem: Problem) -> Annotation {
    Annotation {
        level: problem.level,
        file: problem.file,
        line: problem.line,
        column: None,
        title: problem.title,
        message: problem.message,
    }
}

/// At most [`SHOWN_PER_STEP`] annotations of one level: past it, the first ones and a last
/// one that says how many more there are and where to read them.
fn capped(annotations: &[&Annotation], level: Level, envelope: &Envelope) -> Vec<Annotation> {
    if annotations.len() <= SHOWN_PER_STEP {
        return annotations.iter().copied().cloned().collect();
    }
    let kept = SHOWN_PER_STEP - 1;
    let rest = annotations.len() - kept;
    let mut out: Vec<Annotation> = annotations[..kept].iter().copied().cloned().collect();
    out.push(Annotation {
        level,
        file: None,
        line: None,
        column: None,
        title: format!("discern {}: {rest} more", envelope.verb),
        message: format!(
            "{rest} more {} not shown as annotations (GitHub shows {SHOWN_PER_STEP} per step): see the job log, the job summary or `discern standards --explain NAME`",
            kind(level)
        ),
    });
    out
}

fn kind(level: Level) -> &'static str {
    match level {
        Level::Error => "errors",
        Level::Warning => "warnings",
        Level::Note => "notices",
    }
}

/// `::error file=…,line=…,col=…,title=…::message`, escaped as GitHub's toolkit escapes.
fn command(annotation: &Annotation) -> String {
    let name = match annotation.level {
        Level::Error => "error",
        Level::Warning => "warning",
        Level::Note => "notice",
    };
    let mut properties = Vec::new();
    if let Some(file) = &annotation.file {
        properties.push(format!("file={}", escape_property(file)));
        if let Some(line) = annotation.line {
            properties.push(format!("line={line}"));
            if let Some(column) = annotation.column {
                properties.push(format!("col={column}"));
            }
        }
    }
    properties.push(format!("title={}", escape_property(&annotation.title)));
    format!(
        "::{name} {}::{}",
        properties.join(","),
        escape_data(&annotation.message)
    )
}

/// A command's message: `%`, `\r` and `\n` percent-encoded.
pub(super) fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A command's property value: as a message, and `:` and `,` too.
pub(super) fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// `text` between `::stop-commands::TOKEN` and `::TOKEN::`, so that none of its lines (a
/// finding's message, a job's output) is read as a command. The token is a hash of the text:
/// the text cannot contain it.
fn quoted(text: &str) -> String {
    let token: String = Sha256::digest(text.as_bytes())[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("::stop-commands::{token}\n{text}::{token}::\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_and_properties_are_escaped_as_the_toolkit_does() {
        assert_eq!(escape_data("100% done\r\nnext"), "100%25 done%0D%0Anext");
        assert_eq!(
            escape_property("a:b,c%\n"),
            "a%3Ab%2Cc%25%0A",
            "properties escape : and , too"
        );
        let annotation = Annotation {
            level: Level::Warning,
            file: Some("src/a,b.rs".to_owned()),
            line: Some(3),
            column: Some(7),
            title: "discern: todo".to_owned(),
            message: "a: b, c".to_owned(),
        };
        assert_eq!(
            command(&annotation),
            "::warning file=src/a%2Cb.rs,line=3,col=7,title=discern%3A todo::a: b, c"
        );
    }

    #[test]
    fn past_ten_per_level_the_last_one_counts_the_rest() {
        let one = Annotation {
            level: Level::Error,
            file: None,
            line: None,
            column: None,
            title: "t".to_owned(),
            message: "m".to_owned(),
        };
        let many: Vec<&Annotation> = std::iter::repeat_n(&one, 25).collect();
        let envelope =
            crate::result::Reply::new(serde_json::Value::Null, crate::result::Report::default())
                .into_envelope("standards");
        let shown = capped(&many, Level::Error, &envelope);
        assert_eq!(shown.len(), SHOWN_PER_STEP);
        assert!(shown[9].message.starts_with("16 more errors"), "{shown:?}");
        assert_eq!(capped(&many[..10], Level::Error, &envelope).len(), 10);
    }

    #[test]
    fn quoted_text_cannot_end_its_own_quote() {
        let text = "::error::injected\n";
        let out = quoted(text);
        let token = out
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("::stop-commands::"))
            .unwrap_or_default()
            .to_owned();
        assert_eq!(token.len(), 32);
        assert!(out.ends_with(&format!("::{token}::\n")));
        assert!(!text.contains(&token));
    }
}
