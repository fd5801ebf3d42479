//! ARCHITECTURE.md is a code map whose every claim is meant to be true: the files, folders and
//! tests it names as the evidence behind an invariant must exist, so a file renamed or a test
//! deleted fails here instead of leaving the map pointing at nothing.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Everything under the repository's code folders: the `.rs` files' base names, the folders'
/// names, and the `.rs` files' text (where a named test or function must occur).
struct Tree {
    files: BTreeSet<String>,
    folders: BTreeSet<String>,
    code: String,
}

fn walk(dir: &Path, tree: &mut Tree) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "target" && !name.starts_with('.') {
                tree.folders.insert(name);
                walk(&path, tree);
            }
        } else if name.ends_with(".rs") || name.ends_with(".wit") {
            tree.code.push_str(&std::fs::read_to_string(&path).unwrap());
            tree.files.insert(name);
        }
    }
}

/// Every backticked span outside fenced code.
fn spans(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut found = Vec::new();
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            found.extend(line.split('`').skip(1).step_by(2).map(str::to_owned));
        }
    }
    found
}

/// What a span says must exist, if it names a file, a folder or a test; `None` for the rest
/// (commands, keys, values).
fn missing(span: &str, tree: &Tree) -> Option<String> {
    let base = span.rsplit('/').find(|s| !s.is_empty()).unwrap_or(span);
    let plain = |s: &str| s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if span.ends_with(".rs") && plain(base.trim_end_matches(".rs")) {
        return (!tree.files.contains(base)).then(|| format!("file {span}"));
    }
    // A folder of the code, or one discern keeps its state in (named by a string literal).
    if span.ends_with('/') && !span.starts_with('<') && plain(base) {
        let known = tree.folders.contains(base) || tree.code.contains(&format!("\"{base}\""));
        return (!known).then(|| format!("folder {span}"));
    }
    let name = span.trim_end_matches('*').trim_end_matches('_');
    let test_like = name.matches('_').count() >= 2 && plain(name) && name == name.to_lowercase();
    (test_like && !tree.code.contains(name)).then(|| format!("name {span}"))
}

#[test]
fn every_file_folder_and_test_architecture_names_exists() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut tree = Tree {
        files: BTreeSet::new(),
        folders: BTreeSet::new(),
        code: String::new(),
    };
    for dir in [
        "host",
        "tests",
        "producers",
        "sdk",
        "wit",
        "fuzz",
        "scripts",
        "docs",
    ] {
        tree.folders.insert(dir.to_owned());
        walk(&root.join(dir), &mut tree);
    }
    let map = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let named = spans(&map);
    let checked = named.iter().filter(|s| s.ends_with(".rs")).count();
    assert!(
        checked > 100,
        "the reader found the files the map names: {checked}"
    );
    let missing: Vec<String> = named.iter().filter_map(|s| missing(s, &tree)).collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names what does not exist: {missing:#?}"
    );
}

#[test]
fn a_name_that_is_gone_is_reported() {
    let tree = Tree {
        files: ["clean.rs".to_owned()].into(),
        folders: ["commit".to_owned()].into(),
        code: "fn five_standards_share_one_run() {}".to_owned(),
    };
    assert_eq!(missing("git/clean.rs", &tree), None);
    assert_eq!(missing("commit/", &tree), None);
    assert_eq!(missing("five_standards_*", &tree), None);
    assert_eq!(
        missing("git/gone.rs", &tree).as_deref(),
        Some("file git/gone.rs")
    );
    assert_eq!(missing("gone/", &tree).as_deref(), Some("folder gone/"));
    assert_eq!(
        missing("a_test_that_is_gone", &tree).as_deref(),
        Some("name a_test_that_is_gone")
    );
    assert_eq!(missing("--output-format", &tree), None);
}
