//! The Standards `init` proposes: per language found (enough files to be this repository's),
//! its longest file and its lint suppressions; TODO and FIXME markers in all source; and the
//! largest file that is not source — no two Standards reading one file.

use super::{LANGUAGES, Language, paths};
use crate::config::Direction;
use crate::snapshot::Snapshot;

/// One Standard `init` proposes.
pub(super) struct Candidate {
    pub(super) name: String,
    pub(super) comment: String,
    pub(super) direction: Direction,
    pub(super) body: String,
}

/// The languages with enough files to be this repository's, each with its paths (its globs
/// and the exclusions every starter Standard carries).
fn languages(snapshot: &Snapshot, exclusions: &[String]) -> Vec<(&'static Language, Vec<String>)> {
    let found: Vec<(&Language, Vec<String>, usize)> = LANGUAGES
        .iter()
        .map(|language| {
            let mut specs: Vec<String> = language.globs.iter().map(|g| (*g).to_owned()).collect();
            specs.extend_from_slice(exclusions);
            let files = paths::count(snapshot, &specs);
            (language, specs, files)
        })
        .filter(|(_, _, files)| *files > 0)
        .collect();
    let most = found.iter().map(|(_, _, files)| *files).max();
    found
        .into_iter()
        .filter(|(_, _, files)| *files >= paths::MIN_FILES || Some(*files) == most)
        .map(|(language, specs, _)| (language, specs))
        .collect()
}

pub(super) fn candidates(snapshot: &Snapshot) -> Vec<Candidate> {
    let mut out = Vec::new();
    let mut source_globs: Vec<String> = Vec::new();
    let exclusions = paths::exclusions(snapshot);
    for (language, specs) in languages(snapshot, &exclusions) {
        source_globs.extend(language.globs.iter().map(|g| (*g).to_owned()));
        let paths = toml_list(&specs);
        out.push(Candidate {
            name: format!("{}_longest_file_lines", language.key),
            comment: format!("The longest {} file, in lines (newlines, plus a last line without one).", language.name),
            direction: Direction::Down,
            body: format!("producer = \"builtin:extent\"\nconfig = {{ paths = {paths} }}\nmetric = \"max_lines\"\n"),
        });
        if let Some((pattern, what)) = language.suppressions {
            out.push(Candidate {
                name: format!("{}_suppressions", language.key),
                comment: format!("Lint suppressions in {} code: counts {what}; every match of the pattern, as `git grep -P -o` prints them.", language.name),
                direction: Direction::Down,
                body: format!(
                    "producer = \"builtin:pattern\"\nconfig = {{ pattern = '{pattern}', paths = {paths} }}\nmetric = \"matches\"\n"
                ),
            });
        }
    }
    let sources = source_globs.clone();
    if !source_globs.is_empty() {
        source_globs.extend(exclusions);
        let paths = toml_list(&source_globs);
        // A count, not a rate: a rate per line would rise when code without markers is
        // deleted, failing the gate for work that made nothing worse.
        out.push(Candidate {
            name: "todo_markers".to_owned(),
            comment: "TODO and FIXME markers in source: counts each whole word TODO or FIXME (case-sensitive), one per occurrence, as `git grep -P -o` prints them. A count, not a rate, so deleting code never raises it.".to_owned(),
            direction: Direction::Down,
            body: format!(
                "producer = \"builtin:pattern\"\nconfig = {{ pattern = '\\b(TODO|FIXME)\\b', paths = {paths} }}\nmetric = \"matches\"\n"
            ),
        });
    }
    if let Some(candidate) = largest_other_file(snapshot, &sources) {
        out.push(candidate);
    }
    out
}

/// The largest tracked file that is not source (the source files have their longest-file
/// Standard): no two Standards read the same file.
fn largest_other_file(snapshot: &Snapshot, sources: &[String]) -> Option<Candidate> {
    // discern's own files (the signers file, approvals) are the gate's, not the project's.
    let mut specs = vec![
        "**".to_owned(),
        format!(":(exclude){}", crate::config::FILE),
        ":(exclude).discern/**".to_owned(),
    ];
    specs.extend(sources.iter().map(|g| format!(":(exclude){g}")));
    if paths::count(snapshot, &specs) == 0 {
        return None;
    }
    let what = match sources.is_empty() {
        true => "any tracked file",
        false => {
            "a tracked file that is not source (each language's longest-file Standard holds those)"
        }
    };
    Some(Candidate {
        name: "largest_file_bytes".to_owned(),
        comment: format!(
            "The size of the largest file, in bytes, of {what}; discern.toml and .discern/ aside."
        ),
        direction: Direction::Down,
        body: format!(
            "producer = \"builtin:file-size\"\nconfig = {{ paths = {} }}\nmetric = \"max_bytes\"\n",
            toml_list(&specs)
        ),
    })
}

pub(super) fn toml_list<S: AsRef<str>>(items: &[S]) -> String {
    format!(
        "[{}]",
        items
            .iter()
            .map(|i| format!("{:?}", i.as_ref()))
            .collect::<Vec<_>>()
            .join(", ")
    )
}
