//! The pathspec dialect of discern's snapshot, shared by the host (`snapshot.files(globs)`,
//! `per` extents, `inputs`) and the SDK's in-memory test snapshot, so the two cannot drift.
//!
//! Every pathspec is read as git reads it under `:(glob)` magic (`git --glob-pathspecs`):
//!
//! - `*` and `?` stay within one path component, `**/` spans directories, `[...]` is a class,
//!   `\` escapes the next character;
//! - a pattern also matches literally, as a file name or as a directory whose files it names
//!   (`src` and `src/` name every file below `src/`; a trailing slash names directories only);
//! - paths are normalised as git normalises them: `./src`, `src/./x`, `a/../b`, `src//x`, and
//!   `.` (the whole tree); an absolute path inside the repository when a root is given (the
//!   host gives none and so refuses absolute paths: they would differ in every clone);
//! - magic: `:(glob)` (the default), `:(literal)`, `:(icase)`, `:(top)`/`:/` (a no-op: every
//!   pathspec is already relative to the repository root), `:(exclude)`, `:!`, `:^`, and
//!   combinations such as `:(exclude,icase)`; several exclusions and no inclusion mean
//!   "everything except".
//!
//! Refused, with a message that says how to write the input instead: an empty pathspec, a
//! path outside the repository (`..` above the root), an absolute path when the root is not
//! known, braces (`*.{rs,toml}`: git does not expand them either), and magic discern does not
//! implement (`:(attr:…)`, unknown names, `literal` with `glob`).

mod parse;

use gix_glob::wildmatch::Mode;

pub use parse::PathspecError;

/// One parsed pathspec.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Item {
    /// Normalised, repository-relative; empty means the whole tree.
    pattern: String,
    exclude: bool,
    icase: bool,
    literal: bool,
    /// A pathspec that failed to parse where the caller asked for leniency: it matches nothing.
    invalid: bool,
}

/// A list of pathspecs: a path matches when any inclusion matches it and no exclusion does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pathspec {
    items: Vec<Item>,
}

impl Pathspec {
    /// Parse `specs` (relative to the repository root, or absolute inside `root` when given).
    pub fn parse<S: AsRef<str>>(specs: &[S], root: Option<&str>) -> Result<Self, PathspecError> {
        let items = specs
            .iter()
            .map(|s| parse::item(s.as_ref(), root))
            .collect::<Result<_, _>>()?;
        Ok(Self { items })
    }

    /// Check one pathspec, as configuration validation does.
    pub fn check(spec: &str) -> Result<(), PathspecError> {
        parse::item(spec, None).map(drop)
    }

    /// Parse leniently, for pathspecs that were already checked when they were written (a
    /// recorded listing, a validated config): one that no longer parses matches nothing.
    pub fn new<S: AsRef<str>>(specs: &[S]) -> Self {
        let items = specs
            .iter()
            .map(|s| {
                parse::item(s.as_ref(), None).unwrap_or_else(|_| Item {
                    pattern: String::new(),
                    exclude: parse::is_exclusion(s.as_ref()),
                    icase: false,
                    literal: true,
                    invalid: true,
                })
            })
            .collect();
        Self { items }
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Whether the tracked file `path` (repository-relative, `/`-separated) matches.
    pub fn matches(&self, path: &str) -> bool {
        let mut includes = self.items.iter().filter(|i| !i.exclude).peekable();
        let included = match includes.peek() {
            None => self.items.iter().any(|i| i.exclude),
            Some(_) => includes.any(|i| i.matches(path)),
        };
        included
            && !self
                .items
                .iter()
                .any(|i| i.exclude && !i.invalid && i.matches(path))
    }
}

impl Pathspec {
    /// Whether some path strictly below the directory `dir` could match (or `dir` itself
    /// does): never `false` for a directory that holds a match. Conservative — a glob is judged
    /// by its literal part before the first wildcard, exclusions are ignored — so that a walk of
    /// a tree may skip the folders this returns `false` for.
    pub fn may_match_below(&self, dir: &str) -> bool {
        let mut includes = self.items.iter().filter(|i| !i.exclude).peekable();
        match includes.peek() {
            None => self.items.iter().any(|i| i.exclude),
            Some(_) => includes.any(|i| i.may_match_below(dir)),
        }
    }
}

impl Item {
    fn may_match_below(&self, dir: &str) -> bool {
        if self.invalid {
            return false;
        }
        if self.pattern.is_empty() || self.matches(dir) {
            return true;
        }
        let pattern = self.pattern.as_bytes();
        let literal = match self.literal {
            true => pattern,
            false => {
                let end = pattern
                    .iter()
                    .position(|b| matches!(b, b'*' | b'?' | b'[' | b'\\'))
                    .unwrap_or(pattern.len());
                &pattern[..end]
            }
        };
        let below = format!("{}/", dir.trim_end_matches('/'));
        let below = below.as_bytes();
        // The literal part names something below `dir`, or stops within `dir`'s name or above
        // it (a wildcard there may still reach below).
        let common = literal.len().min(below.len());
        self.equal(&literal[..common], &below[..common])
            && (literal.len() >= below.len() || literal.len() < pattern.len())
    }

    /// Git's `match_pathspec_item` for a file: the pattern names the path literally or a
    /// directory above it, or (unless literal) matches it as a wildmatch glob.
    fn matches(&self, path: &str) -> bool {
        if self.invalid {
            return false;
        }
        let (pattern, name) = (self.pattern.as_bytes(), path.as_bytes());
        if pattern.is_empty() {
            return true;
        }
        if name.len() >= pattern.len() && self.equal(&name[..pattern.len()], pattern) {
            let rest = &name[pattern.len()..];
            if rest.is_empty() || pattern.ends_with(b"/") || rest.starts_with(b"/") {
                return true;
            }
        }
        !self.literal && parse::has_wildcard(pattern) && {
            let mode = if self.icase {
                Mode::NO_MATCH_SLASH_LITERAL | Mode::IGNORE_CASE
            } else {
                Mode::NO_MATCH_SLASH_LITERAL
            };
            gix_glob::wildmatch(pattern.into(), name.into(), mode)
        }
    }

    fn equal(&self, a: &[u8], b: &[u8]) -> bool {
        if self.icase {
            a.eq_ignore_ascii_case(b)
        } else {
            a == b
        }
    }
}

#[cfg(test)]
mod tests;
