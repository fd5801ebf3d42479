//! JUnit XML (`quick-xml`), as GitLab, Jenkins and Azure Pipelines show test reports: one
//! `<testsuite name="discern <verb>">` with one `<testcase>` per Standard — `<failure>` for a
//! regressed or swapped one (its note and new findings), `<error>` for one whose producer
//! failed, `<skipped/>` for one the never-loosen check blocked. A verb without Standards is one
//! test case, failing with the refusal and its diagnostics.

use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesText, Event};

use super::view::{self, Outcome, Problem, StandardView};
use crate::result::Envelope;

/// One test case before it is written.
struct Case {
    name: String,
    outcome: Outcome,
    /// The one-line reason (`message` attribute).
    message: String,
    /// The body of a failure or error: the note, then the findings.
    body: String,
}

/// The JUnit report of `envelope`.
pub(super) fn render(envelope: &Envelope) -> String {
    let standards = view::standards(envelope);
    let cases = if standards.is_empty() {
        vec![verb_case(envelope, &view::problems(envelope, &standards))]
    } else {
        standards
            .iter()
            .map(|s| standard_case(s, envelope))
            .collect()
    };
    let mut writer = Writer::new_with_indent(Vec::new(), b' ', 2);
    // Writing into a Vec cannot fail.
    let _ = write(&mut writer, &format!("discern {}", envelope.verb), &cases);
    let mut xml = String::from_utf8_lossy(&writer.into_inner()).into_owned();
    xml.push('\n');
    xml
}

fn write(writer: &mut Writer<Vec<u8>>, suite: &str, cases: &[Case]) -> std::io::Result<()> {
    let count = |outcome: Outcome| cases.iter().filter(|c| c.outcome == outcome).count();
    let (tests, failures, errors, skipped) = (
        cases.len().to_string(),
        count(Outcome::Failed).to_string(),
        count(Outcome::Errored).to_string(),
        count(Outcome::Skipped).to_string(),
    );
    writer.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let attributes = [
        ("name", suite),
        ("tests", tests.as_str()),
        ("failures", failures.as_str()),
        ("errors", errors.as_str()),
        ("skipped", skipped.as_str()),
    ];
    writer
        .create_element("testsuites")
        .with_attributes(attributes)
        .write_inner_content(|w| {
            w.create_element("testsuite")
                .with_attributes(attributes)
                .write_inner_content(|w| cases.iter().try_for_each(|case| write_case(w, case)))
                .map(drop)
        })
        .map(drop)
}

fn write_case(writer: &mut Writer<Vec<u8>>, case: &Case) -> std::io::Result<()> {
    let name = clean(&case.name);
    let element = writer
        .create_element("testcase")
        .with_attribute(("name", name.as_str()))
        .with_attribute(("classname", "discern"));
    let child = match case.outcome {
        Outcome::Passed => return element.write_empty().map(drop),
        Outcome::Failed => "failure",
        Outcome::Errored => "error",
        Outcome::Skipped => "skipped",
    };
    let message = clean(&case.message);
    let body = clean(&case.body);
    element
        .write_inner_content(|w| {
            let start = w
                .create_element(child)
                .with_attribute(("message", message.as_str()));
            if body.is_empty() {
                start.write_empty().map(drop)
            } else {
                start.write_text_content(BytesText::new(&body)).map(drop)
            }
        })
        .map(drop)
}

fn standard_case(standard: &StandardView, envelope: &Envelope) -> Case {
    let diagnostic = envelope
        .diagnostics
        .iter()
        .find(|d| d.tool == format!("standard:{}", standard.name));
    let mut body: Vec<String> = diagnostic
        .map(|d| d.message.clone())
        .or_else(|| standard.note.clone())
        .into_iter()
        .collect();
    for finding in standard.new_findings() {
        body.push(format!("new: {}", locate(finding)));
    }
    if standard.unlisted() > 0 {
        body.push(format!(
            "… {} more new: `discern standards --explain {}`",
            standard.unlisted(),
            standard.name
        ));
    }
    Case {
        name: standard.name.clone(),
        outcome: standard.outcome(),
        message: standard.headline(),
        body: if standard.outcome() == Outcome::Skipped {
            String::new()
        } else {
            body.join("\n")
        },
    }
}

fn verb_case(envelope: &Envelope, problems: &[Problem]) -> Case {
    let failing = !envelope.ok;
    let body: Vec<String> = problems
        .iter()
        .map(|p| match (&p.file, p.line) {
            (Some(file), Some(line)) => format!("{file}:{line}: {}", p.message),
            (Some(file), None) => format!("{file}: {}", p.message),
            _ => p.message.clone(),
        })
        .collect();
    Case {
        name: envelope.verb.clone(),
        outcome: if failing {
            Outcome::Failed
        } else {
            Outcome::Passed
        },
        message: envelope
            .message
            .clone()
            .unwrap_or_else(|| envelope.report.state.clone()),
        body: body.join("\n"),
    }
}

fn locate(finding: &view::FindingView) -> String {
    let place = match (&finding.path, finding.line, finding.column) {
        (Some(p), Some(l), Some(c)) => format!("{p}:{l}:{c}"),
        (Some(p), Some(l), None) => format!("{p}:{l}"),
        (Some(p), None, _) => p.clone(),
        (None, _, _) => "(no file)".to_owned(),
    };
    format!("{place}  {}", finding.message)
}

/// `text` without the characters XML 1.0 cannot carry (controls other than tab, line feed and
/// carriage return, U+FFFE, U+FFFF; a `str` has no unpaired surrogates). DEL and the C1
/// controls are allowed but go too: no report needs them.
fn clean(text: &str) -> String {
    text.chars()
        .filter(|c| matches!(c, '\t' | '\n' | '\r') || !c.is_control())
        .filter(|c| !matches!(c, '\u{fffe}' | '\u{ffff}'))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_controls_removed() {
        assert_eq!(clean("a\u{1}b\tc\u{7f}"), "ab\tc");
        let case = Case {
            name: "x<y".to_owned(),
            outcome: Outcome::Failed,
            message: "a \"quoted\" & <tagged>\nline".to_owned(),
            body: "</failure><injected/>\u{0}".to_owned(),
        };
        let mut writer = Writer::new(Vec::new());
        write_case(&mut writer, &case).expect("writes");
        let xml = String::from_utf8(writer.into_inner()).expect("utf-8");
        assert_eq!(
            xml,
            "<testcase name=\"x&lt;y\" classname=\"discern\"><failure message=\"a &quot;quoted&quot; &amp; &lt;tagged&gt;&#10;line\">&lt;/failure&gt;&lt;injected/&gt;</failure></testcase>"
        );
    }
}
