//! The listing against `git ls-tree -r`, on names whose order differs between a tree and a
//! plain sort, and the depth git itself refuses.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use discern_tests::TestRepo;
use gix::objs::tree::EntryKind as Mode;

use super::{Check, ListingError, MAX_DEPTH, list};
use crate::snapshot::{Entry, EntryKind, Snapshot};

/// What `git ls-tree -r --full-tree HEAD` lists, as entries (names that are not UTF-8 left out).
fn ls_tree(repo: &TestRepo) -> Vec<Entry> {
    let out = repo.git_output(&["ls-tree", "-r", "-z", "--full-tree", "HEAD"]);
    assert!(out.status.success(), "git ls-tree failed");
    let mut entries = Vec::new();
    for record in out.stdout.split(|&b| b == 0).filter(|r| !r.is_empty()) {
        let tab = record.iter().position(|&b| b == b'\t').unwrap();
        let head = std::str::from_utf8(&record[..tab]).unwrap();
        let [mode, _, id] = head.split(' ').collect::<Vec<_>>()[..] else {
            panic!("{head}");
        };
        let Ok(path) = std::str::from_utf8(&record[tab + 1..]) else {
            continue;
        };
        let kind = match mode {
            "160000" => EntryKind::Submodule,
            "120000" => EntryKind::Symlink,
            _ => EntryKind::Blob,
        };
        entries.push(Entry::new(
            path,
            id.parse().unwrap(),
            mode == "100755",
            kind,
        ));
    }
    entries
}

#[test]
fn a_listing_is_what_git_ls_tree_lists_in_the_order_of_its_paths() {
    let repo = TestRepo::new();
    for path in [
        "a", "a-b", "a.b", "a0", "a b", "b/c", "b-c/d", "b.c", "b/c.d/e", "ü/é.rs", "z",
    ] {
        let path = if path == "a" { "a/x" } else { path };
        repo.write(path, format!("{path}\n"));
    }
    repo.write("run.sh", "#!/bin/sh\n");
    std::os::unix::fs::symlink("b/c", repo.path().join("link")).unwrap();
    std::fs::write(repo.path().join(OsStr::from_bytes(b"bad\xff.txt")), "x\n").unwrap();
    repo.git(&["add", "-A"]);
    repo.git(&["update-index", "--chmod=+x", "run.sh"]);
    repo.git(&["commit", "-qm", "awkward names"]);
    let commit = repo.head();
    repo.git(&[
        "update-index",
        "--add",
        "--cacheinfo",
        &format!("160000,{commit},sub/module"),
    ]);
    repo.git(&["commit", "-qm", "a gitlink"]);
    let snapshot = Snapshot::open(repo.path(), "HEAD").unwrap();
    let reference = ls_tree(&repo);
    assert!(snapshot.entries().iter().eq(&reference));
    let mut sorted = reference.clone();
    sorted.sort_by(|a, b| a.path().cmp(b.path()));
    assert_eq!(
        sorted, reference,
        "git's tree order is the order of the paths"
    );
    assert!(reference.iter().any(|e| e.kind == EntryKind::Submodule));
    assert!(reference.iter().any(|e| e.kind == EntryKind::Symlink));
    assert!(reference.iter().any(|e| e.executable));
    assert_eq!(snapshot.skipped(), ["bad\\xff.txt"]);
}

#[test]
fn trees_nested_deeper_than_git_reads_are_refused() {
    let repo = TestRepo::new();
    let git = gix::open(repo.path()).unwrap();
    let blob = git.write_blob(b"deep\n").unwrap().detach();
    let nest = |depth: usize| {
        let mut inner = git
            .write_object(tree("f.rs", Mode::Blob, blob))
            .unwrap()
            .detach();
        for _ in 1..depth {
            inner = git
                .write_object(tree("d", Mode::Tree, inner))
                .unwrap()
                .detach();
        }
        inner
    };
    // `nest(n)`: n trees, so a file n - 1 directories deep.
    let deepest = list(&git, nest(MAX_DEPTH + 1), Check::AsStored).unwrap();
    let path = deepest.entries.iter().map(|e| e.path()).collect::<Vec<_>>();
    assert_eq!(path, [format!("{}f.rs", "d/".repeat(MAX_DEPTH))]);
    for check in [Check::AsStored, Check::Hashed] {
        let refused = list(&git, nest(MAX_DEPTH + 2), check);
        assert!(
            matches!(&refused, Err(ListingError::TooDeep { path }) if path.len() == 2 * MAX_DEPTH + 1),
            "{refused:?}"
        );
    }
}

fn tree(name: &str, mode: Mode, oid: gix::ObjectId) -> gix::objs::Tree {
    gix::objs::Tree {
        entries: vec![gix::objs::tree::Entry {
            mode: mode.into(),
            filename: name.into(),
            oid,
        }],
    }
}
