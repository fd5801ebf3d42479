//! Which files `init` measures: each language's files, minus what the committed
//! `.gitattributes` mark generated, vendored or binary, and minus the usual vendor and fixture
//! folders; and which languages count at all (a handful of files is not a project).

use std::collections::BTreeSet;

use crate::snapshot::{Pathspec, Snapshot};

/// Folders whose files are someone else's code or test data, excluded where they exist.
const THIRD_PARTY_FOLDERS: &[&str] = &[
    "vendor",
    "third_party",
    "third-party",
    "node_modules",
    "fixtures",
    "testdata",
    "__fixtures__",
    "__snapshots__",
];

/// A language with fewer files than this counts only when no language has more files.
pub(super) const MIN_FILES: usize = 3;

/// The attributes that take a file out of what `init` measures.
fn excluding(attribute: &str) -> bool {
    matches!(
        attribute,
        "linguist-generated"
            | "linguist-generated=true"
            | "linguist-vendored"
            | "linguist-vendored=true"
            | "binary"
            | "-diff"
    )
}

/// The `:(exclude)` pathspecs every starter Standard carries, sorted.
pub(super) fn exclusions(snapshot: &Snapshot) -> Vec<String> {
    let mut specs = BTreeSet::new();
    for folder in THIRD_PARTY_FOLDERS {
        let spec = format!("**/{folder}/**");
        if present(snapshot, &[spec.as_str()]) {
            specs.insert(format!(":(exclude){spec}"));
        }
    }
    specs.extend(attribute_exclusions(snapshot));
    specs.into_iter().collect()
}

fn present(snapshot: &Snapshot, specs: &[&str]) -> bool {
    snapshot.matching(&Pathspec::new(specs)).next().is_some()
}

/// How many files `specs` match.
pub(super) fn count(snapshot: &Snapshot, specs: &[String]) -> usize {
    snapshot.matching(&Pathspec::new(specs)).count()
}

/// One exclusion per `.gitattributes` line that marks paths generated, vendored or binary.
fn attribute_exclusions(snapshot: &Snapshot) -> Vec<String> {
    let mut reader = snapshot.reader();
    let files: Vec<String> = snapshot
        .entries()
        .iter()
        .filter(|e| e.path() == ".gitattributes" || e.path().ends_with("/.gitattributes"))
        .map(|e| e.path().to_string())
        .collect();
    let mut specs = Vec::new();
    for file in files {
        let Ok((_, bytes)) = reader.read(&file) else {
            continue;
        };
        let dir = &file[..file.len() - ".gitattributes".len()];
        for line in String::from_utf8_lossy(&bytes).lines() {
            if let Some(spec) = exclusion(dir, line) {
                specs.push(spec);
            }
        }
    }
    specs
}

/// The pathspec of one `.gitattributes` line in `dir` (`""` or `"a/b/"`), if it excludes.
fn exclusion(dir: &str, line: &str) -> Option<String> {
    let mut words = line.split_whitespace();
    let pattern = words.next().filter(|p| !p.starts_with(['#', '"']))?;
    if !words.any(excluding) || pattern.ends_with('/') {
        return None;
    }
    // A pattern without a slash matches at any depth below its file; one with a slash is
    // anchored to the folder of its `.gitattributes`.
    let spec = match pattern.strip_prefix('/') {
        Some(anchored) => format!("{dir}{anchored}"),
        None if !pattern.contains('/') => format!("{dir}**/{pattern}"),
        None => format!("{dir}{pattern}"),
    };
    let spec = format!(":(exclude){spec}");
    Pathspec::check(&spec).is_ok().then_some(spec)
}

#[cfg(test)]
mod tests {
    use super::exclusion;

    #[test]
    fn attribute_lines_become_exclusions_where_they_apply() {
        let e = |dir, line| exclusion(dir, line);
        assert_eq!(
            e("", "*.pb.go linguist-generated").as_deref(),
            Some(":(exclude)**/*.pb.go")
        );
        assert_eq!(
            e("web/", "/dist/** linguist-vendored=true").as_deref(),
            Some(":(exclude)web/dist/**")
        );
        assert_eq!(
            e("", "assets/*.png binary").as_deref(),
            Some(":(exclude)assets/*.png")
        );
        assert_eq!(e("", "*.svg -diff").as_deref(), Some(":(exclude)**/*.svg"));
        assert_eq!(e("", "*.rs linguist-generated=false"), None);
        assert_eq!(e("", "*.rs text eol=lf"), None);
        assert_eq!(e("", "# *.rs binary"), None);
        assert_eq!(e("", "docs/ binary"), None);
        assert_eq!(e("", "*.{a,b} binary"), None);
    }
}
