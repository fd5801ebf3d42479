//! Where a result is, as a repository-relative path: an `artifactLocation` resolved through
//! the run's `originalUriBaseIds` (recursively) and `artifacts[index]`, percent-decoded and
//! normalised. A relative URI without a known base is relative to the checkout root (what
//! `%SRCROOT%` conventionally names). An absolute `file://` URI is made relative to the
//! checkout the job ran in: the run's `invocations[].workingDirectory` when it says so, else
//! the directory whose tracked files the absolute paths name (the producer never learns the
//! host's paths otherwise). What lies outside the checkout is `Outside`, never guessed.

use discern_sdk::{Error, Snapshot};
use percent_encoding::percent_decode_str;

use crate::model::{ArtifactLocation, Run};

/// A result's place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// A repository-relative path.
    Inside(String),
    /// Outside the checkout (another directory, another scheme): the URI as written.
    Outside(String),
    /// The result has no location.
    Nowhere,
}

/// A URI resolved as far as the log itself can resolve it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    Relative(String),
    Absolute(String),
    Foreign(String),
}

/// How deep `uriBaseId` chains may go (a cycle stops here).
const MAX_BASE_DEPTH: usize = 8;
/// How many distinct absolute paths are tried to find the checkout root.
const MAX_ROOT_PROBES: usize = 16;

/// Resolves the locations of one run.
pub struct Locator<'a> {
    run: &'a Run,
    /// The checkout's absolute path, ending in `/`, when known.
    root: Option<String>,
}

impl<'a> Locator<'a> {
    /// A locator for `run`. Refuses a run whose results name absolute paths when none of them
    /// is a file of the snapshot: the checkout root cannot be told, and every count would be
    /// a guess.
    pub fn new(run: &'a Run, snapshot: &dyn Snapshot) -> Result<Self, Error> {
        let mut locator = Locator { run, root: None };
        locator.root = locator.working_directory();
        let absolute = locator.absolute_paths();
        if locator.root.is_none() && !absolute.is_empty() {
            locator.root = infer_root(snapshot, &absolute);
            if locator.root.is_none() {
                return Err(Error::new(format!(
                    "the SARIF log names absolute paths (such as {}) and none of them is a file tracked in this commit, so the checkout the tool ran in cannot be told: run the tool in the repository root, with paths relative to it, or give the run an invocations[].workingDirectory",
                    absolute[0]
                )));
            }
        }
        Ok(locator)
    }

    /// Where `location` is.
    pub fn place(&self, location: Option<&ArtifactLocation>) -> Place {
        let Some(target) = location.and_then(|l| self.target(l, 0)) else {
            return Place::Nowhere;
        };
        match target {
            Target::Relative(path) => match normalise(&path) {
                Some(path) if !path.is_empty() => Place::Inside(path),
                _ => Place::Outside(path),
            },
            Target::Absolute(path) => {
                let inside = self
                    .root
                    .as_deref()
                    .and_then(|root| path.strip_prefix(root))
                    .and_then(normalise)
                    .filter(|p| !p.is_empty());
                inside.map_or(Place::Outside(format!("file://{path}")), Place::Inside)
            }
            Target::Foreign(uri) => Place::Outside(uri),
        }
    }

    fn working_directory(&self) -> Option<String> {
        self.run
            .invocations
            .iter()
            .filter_map(|i| i.working_directory.as_ref())
            .find_map(|l| match self.target(l, 0) {
                Some(Target::Absolute(path)) => Some(directory(path)),
                _ => None,
            })
    }

    /// The distinct absolute paths the run's results name, in order of appearance.
    fn absolute_paths(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for result in self.run.results.iter().flatten() {
            let location = result.physical().and_then(|p| p.artifact_location.as_ref());
            if let Some(Target::Absolute(path)) = location.and_then(|l| self.target(l, 0))
                && !out.contains(&path)
            {
                out.push(path);
            }
        }
        out
    }

    fn target(&self, location: &ArtifactLocation, depth: usize) -> Option<Target> {
        if depth > MAX_BASE_DEPTH {
            return None;
        }
        let artifact = location
            .index
            .and_then(|i| usize::try_from(i).ok())
            .and_then(|i| self.run.artifacts.get(i))
            .and_then(|a| a.location.as_ref());
        let location = match (&location.uri, artifact) {
            (None, Some(artifact)) => artifact,
            _ => location,
        };
        let uri = location.uri.as_deref()?;
        if let Some(target) = scheme(uri) {
            return Some(target);
        }
        let path = decode(uri);
        if path.starts_with('/') {
            return Some(absolute(path));
        }
        let base = location
            .uri_base_id
            .as_ref()
            .and_then(|id| self.run.original_uri_base_ids.get(id))
            .and_then(|base| self.target(base, depth + 1));
        Some(match base {
            None => Target::Relative(path),
            Some(Target::Relative(base)) => Target::Relative(join(&base, &path)),
            Some(Target::Absolute(base)) => absolute(join(&base, &path)),
            Some(Target::Foreign(base)) => Target::Foreign(join(&base, &path)),
        })
    }
}

/// An absolute URI: a `file:` one as its path, any other scheme as foreign.
fn scheme(uri: &str) -> Option<Target> {
    let (scheme, rest) = uri.split_once(':')?;
    let is_scheme = scheme.len() > 1
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !is_scheme {
        return None;
    }
    if !scheme.eq_ignore_ascii_case("file") {
        return Some(Target::Foreign(uri.to_owned()));
    }
    // file:///p, file://localhost/p, file:/p
    let path = match rest.strip_prefix("//") {
        Some(authority_and_path) => {
            let at = authority_and_path
                .find('/')
                .unwrap_or(authority_and_path.len());
            &authority_and_path[at..]
        }
        None => rest,
    };
    Some(absolute(decode(path)))
}

/// An absolute path, normalised (`/a/./b/../c` → `/a/c`).
fn absolute(path: String) -> Target {
    Target::Absolute(normalise(&path).map_or(path, |p| format!("/{p}")))
}

fn decode(text: &str) -> String {
    percent_decode_str(text).decode_utf8_lossy().into_owned()
}

fn join(base: &str, path: &str) -> String {
    if base.is_empty() || base.ends_with('/') {
        format!("{base}{path}")
    } else {
        format!("{base}/{path}")
    }
}

fn directory(mut path: String) -> String {
    if !path.ends_with('/') {
        path.push('/');
    }
    path
}

/// `a/./b//c` → `a/b/c`; `a/../b` → `b`; `None` when `..` climbs above the root.
fn normalise(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    Some(parts.join("/"))
}

/// The checkout root: the longest tail of one of `absolute` that is a tracked file names the
/// rest as the root.
fn infer_root(snapshot: &dyn Snapshot, absolute: &[String]) -> Option<String> {
    absolute.iter().take(MAX_ROOT_PROBES).find_map(|path| {
        let tails: Vec<&str> = path
            .match_indices('/')
            .map(|(at, _)| &path[at + 1..])
            .filter(|tail| !tail.is_empty())
            .collect();
        let specs: Vec<String> = tails.iter().map(|t| format!(":(literal){t}")).collect();
        let tracked = snapshot.files(&specs);
        let longest = tails
            .iter()
            .find(|tail| tracked.iter().any(|e| e.path == **tail))?;
        Some(path[..path.len() - longest.len()].to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_normalise_and_decode() {
        assert_eq!(normalise("./a//b/../c"), Some("a/c".to_owned()));
        assert_eq!(normalise("../a"), None);
        assert_eq!(
            scheme("file:///home/u/my%20repo/a.py"),
            Some(Target::Absolute("/home/u/my repo/a.py".to_owned()))
        );
        assert_eq!(
            scheme("file://localhost/x/a.py"),
            Some(Target::Absolute("/x/a.py".to_owned()))
        );
        assert_eq!(
            scheme("https://example.org/a.py"),
            Some(Target::Foreign("https://example.org/a.py".to_owned()))
        );
        assert_eq!(scheme("src/a:b.py"), None, "a colon in a path is no scheme");
    }
}
