//! Git's pathspec glob dialect, as producers use it in `snapshot.files(globs)`.
//!
//! `*` and `?` stay within one path component, `**/` spans directories, `[...]` is a class; a
//! pattern without wildcards names a file or every file below a directory; `:!pattern`,
//! `:^pattern` and `:(exclude)pattern` exclude. Only exclusions means "everything except".

use gix::glob::wildmatch::Mode;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pathspec {
    includes: Vec<String>,
    excludes: Vec<String>,
}

impl Pathspec {
    pub fn new<S: AsRef<str>>(globs: &[S]) -> Self {
        let mut includes = Vec::new();
        let mut excludes = Vec::new();
        for glob in globs {
            let glob = glob.as_ref();
            let glob = glob.strip_prefix(":(glob)").unwrap_or(glob);
            match [":!", ":^", ":(exclude)"]
                .iter()
                .find_map(|magic| glob.strip_prefix(magic))
            {
                Some(excluded) => excludes.push(excluded.to_owned()),
                None => includes.push(glob.to_owned()),
            }
        }
        Self { includes, excludes }
    }

    pub fn is_empty(&self) -> bool {
        self.includes.is_empty() && self.excludes.is_empty()
    }

    pub fn matches(&self, path: &str) -> bool {
        let included = if self.includes.is_empty() {
            !self.excludes.is_empty()
        } else {
            self.includes.iter().any(|g| matches(g, path))
        };
        included && !self.excludes.iter().any(|g| matches(g, path))
    }
}

fn matches(glob: &str, path: &str) -> bool {
    if glob.contains(['*', '?', '[']) {
        gix::glob::wildmatch(
            glob.as_bytes().into(),
            path.as_bytes().into(),
            Mode::NO_MATCH_SLASH_LITERAL,
        )
    } else {
        let dir = glob.trim_end_matches('/');
        dir.is_empty()
            || path == dir
            || path
                .strip_prefix(dir)
                .is_some_and(|rest| rest.starts_with('/'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(globs: &[&str], path: &str) -> bool {
        Pathspec::new(globs).matches(path)
    }

    #[test]
    fn dialect() {
        assert!(m(&["src/*.rs"], "src/a.rs"));
        assert!(!m(&["src/*.rs"], "src/x/a.rs"));
        assert!(m(&["src/**/*.rs"], "src/a.rs"));
        assert!(m(&["src/**/*.rs"], "src/x/y/a.rs"));
        assert!(m(&["**"], "a/b/c"));
        assert!(m(&["src"], "src/x/a.rs"));
        assert!(m(&["src/"], "src/a.rs"));
        assert!(!m(&["src"], "srcfile"));
        assert!(m(&["a.rs"], "a.rs"));
        assert!(m(&["*.[ch]"], "x.h"));
        assert!(m(&[":(glob)**/*.md"], "docs/a.md"));
    }

    #[test]
    fn exclusions() {
        assert!(!m(&["**", ":!vendor"], "vendor/x.rs"));
        assert!(m(&["**", ":^vendor"], "src/x.rs"));
        assert!(m(&[":(exclude)*.md"], "src/x.rs"));
        assert!(!m(&[":(exclude)*.md"], "README.md"));
        assert!(!m(&[] as &[&str], "anything"));
    }
}
