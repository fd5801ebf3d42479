//! `builtin:pattern`: how often a regular expression matches in a set of files, with one
//! finding per match (lint suppressions, `unwrap()`, TODOs…).
//!
//! Config: `pattern` (required, Rust regex syntax), `paths` (required, pathspec globs),
//! `case_insensitive` (default false), `max_findings` (default 100,000, the most the host
//! keeps; the counts stay exact).
//!
//! The line model is `git grep`'s: a file is split at `\n` (a final newline ends the last
//! line; it does not start an empty one; `\r` stays part of its line), the pattern is matched
//! within each line (so `\s` never runs across a line end, and `^`/`$` anchor at line
//! boundaries), and binary files (a NUL in the first 8,000 bytes) are skipped. Metrics:
//!
//! - `matches`: non-empty matches, each line searched left to right from the end of the
//!   previous match, as `git grep -o` prints them; an empty match (`word|`, `^$`) is not
//!   counted (git grep -o stops at a line's first empty match, discern skips it). The search
//!   goes on from a match's end with the whole line as context, so `\bx` counts once in `xx`;
//!   git grep -o restarts the line there, so a pattern that starts with `\b` can print more;
//! - `lines`: lines with at least one match, empty or not, as `git grep -c` counts them (count
//!   blank lines with `^$` or `^\s*$` here);
//! - `files`: files with at least one matching line, as `git grep -l` lists them.
#![cfg_attr(not(test), deny(clippy::unwrap_used))]

use std::collections::HashMap;

use discern_sdk::{Config, Error, Finding, Info, Metric, Producer, Snapshot, is_binary};
use regex::bytes::{Regex, RegexBuilder};

/// The host keeps at most this many findings per metric: by default, all of them.
const DEFAULT_MAX_FINDINGS: u64 = 100_000;

pub struct Pattern;

impl Producer for Pattern {
    fn describe() -> Info {
        Info::new(
            "pattern",
            env!("CARGO_PKG_VERSION"),
            &["matches", "lines", "files"],
        )
        .with_config_schema(include_str!("../config.schema.json"))
    }

    fn run(snapshot: &dyn Snapshot, config: &Config) -> Result<Vec<Metric>, Error> {
        config.allow_only(&["pattern", "paths", "case_insensitive", "max_findings"])?;
        let source = config.str("pattern")?;
        let case_insensitive = config.opt_bool("case_insensitive")?.unwrap_or(false);
        let scanner = Scanner::new(source, case_insensitive)
            .map_err(|e| Error::new(format!("config.pattern is not a valid regex: {e}")))?;
        let max_findings = config
            .opt_u64("max_findings")?
            .unwrap_or(DEFAULT_MAX_FINDINGS);
        let mut total = Counts::default();
        let mut findings = Vec::new();
        for entry in snapshot.files(&config.globs("paths")?) {
            // Nothing to match in an empty file, and a submodule has no content to read.
            if entry.size == 0 {
                continue;
            }
            let content = snapshot.read(&entry.path).map_err(Error::from)?;
            if is_binary(&content) {
                continue;
            }
            let mut seen: HashMap<&[u8], usize> = HashMap::new();
            let counts = scanner.scan(&content, |line, column, text| {
                if (findings.len() as u64) >= max_findings {
                    return;
                }
                let occurrence = seen.entry(text).or_insert(0);
                let text = String::from_utf8_lossy(text);
                findings.push(
                    Finding::new(
                        source,
                        &entry.path,
                        &text,
                        *occurrence,
                        text.trim().to_owned(),
                    )
                    .at(as_u32(line), as_u32(column)),
                );
                *occurrence += 1;
            });
            total.matches += counts.matches;
            total.lines += counts.lines;
            total.files += u64::from(counts.lines > 0);
        }
        Ok(vec![
            Metric::new("matches", total.matches as f64).counting(findings),
            Metric::new("lines", total.lines as f64),
            Metric::new("files", total.files as f64),
        ])
    }
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub matches: u64,
    pub lines: u64,
    pub files: u64,
}

fn as_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(0)
}

/// A pattern compiled twice: for `git grep`'s per-line model, and in multi-line mode for one
/// pass over a whole file, which finds the same matches as long as none spans a line end.
pub struct Scanner {
    per_line: Regex,
    whole: Option<Regex>,
}

impl Scanner {
    pub fn new(source: &str, case_insensitive: bool) -> Result<Self, regex::Error> {
        let build = |multi_line| {
            RegexBuilder::new(source)
                .case_insensitive(case_insensitive)
                .multi_line(multi_line)
                .build()
        };
        // `\A` and `\z` anchor at each line in the per-line model but only at the file's ends
        // in one pass: such a pattern is always matched line by line.
        let anchored = source.contains("\\A") || source.contains("\\z");
        Ok(Self {
            per_line: build(false)?,
            whole: if anchored { None } else { Some(build(true)?) },
        })
    }

    /// Count the pattern in one text file; `on_match(line, column, text)` (1-based line,
    /// 1-based byte column, as `git grep -n --column` prints them) sees every counted
    /// (non-empty) match.
    pub fn scan<'a>(
        &self,
        content: &'a [u8],
        mut on_match: impl FnMut(usize, usize, &'a [u8]),
    ) -> Counts {
        let body = content.strip_suffix(b"\n").unwrap_or(content);
        if content.is_empty() {
            return Counts::default();
        }
        match self
            .whole
            .as_ref()
            .and_then(|whole| within_lines(whole, body))
        {
            Some(found) => one_pass(&found, body, &mut on_match),
            None => scan(&self.per_line, content, on_match),
        }
    }
}

/// The matches of `regex` in `body` (start, end), found in one pass, unless one runs across a
/// line end: then only the per-line model gives `git grep`'s answer (`None`). A pattern that
/// can match a line end at all (`\s`, `[^x]`) does so only in a file that has one, which is
/// rare.
fn within_lines(regex: &Regex, body: &[u8]) -> Option<Vec<(usize, usize)>> {
    regex
        .find_iter(body)
        .map(|m| {
            memchr::memchr(b'\n', m.as_bytes())
                .is_none()
                .then_some((m.start(), m.end()))
        })
        .collect()
}

/// One pass over the whole file: the same matches, lines and columns as the per-line scan when
/// no match spans a line end (checked by [`within_lines`]).
fn one_pass<'a>(
    found: &[(usize, usize)],
    body: &'a [u8],
    on_match: &mut impl FnMut(usize, usize, &'a [u8]),
) -> Counts {
    let mut counts = Counts::default();
    let (mut line, mut line_start, mut scanned) = (1usize, 0usize, 0usize);
    let mut last_counted_line = 0usize;
    for &(start, end) in found {
        // Counted, not iterated: one vector pass per gap, however many lines it holds.
        let gap = &body[scanned..start];
        if let Some(last) = memchr::memrchr(b'\n', gap) {
            line += memchr::memchr_iter(b'\n', gap).count();
            line_start = scanned + last + 1;
        }
        scanned = start;
        if line != last_counted_line {
            counts.lines += 1;
            last_counted_line = line;
        }
        if end > start {
            counts.matches += 1;
            on_match(line, start - line_start + 1, &body[start..end]);
        }
    }
    counts
}

/// Count `regex` in one text file, line by line (`git grep`'s model, the reference the
/// one-pass scan is checked against); `on_match(line, column, text)` sees every counted
/// (non-empty) match.
pub fn scan<'a>(
    regex: &Regex,
    content: &'a [u8],
    mut on_match: impl FnMut(usize, usize, &'a [u8]),
) -> Counts {
    let mut counts = Counts::default();
    if content.is_empty() {
        return counts;
    }
    let body = content.strip_suffix(b"\n").unwrap_or(content);
    for (index, line) in body.split(|&b| b == b'\n').enumerate() {
        let mut matched = false;
        for m in regex.find_iter(line) {
            matched = true;
            if !m.is_empty() {
                counts.matches += 1;
                on_match(index + 1, m.start() + 1, m.as_bytes());
            }
        }
        counts.lines += u64::from(matched);
    }
    counts
}

discern_sdk::export_producer!(Pattern);

#[cfg(test)]
mod tests;
