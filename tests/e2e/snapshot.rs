//! The snapshot of a commit, read through gix from the object database only.

use discern::snapshot::{EntryKind, Pathspec, Snapshot};
use discern_tests::TestRepo;

#[test]
fn lists_tracked_entries_with_size_id_and_mode() {
    let repo = TestRepo::new();
    repo.write("b.txt", "bee\n")
        .write("a/script.sh", "#!/bin/sh\n");
    let script = repo.path().join("a/script.sh");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    repo.commit("one");
    let snapshot = Snapshot::open(repo.path(), "HEAD").unwrap();
    let paths: Vec<_> = snapshot.entries().iter().map(|e| e.path.as_str()).collect();
    assert_eq!(paths, ["a/script.sh", "b.txt"]);
    let script = snapshot.entry("a/script.sh").unwrap();
    assert!(script.executable);
    assert_eq!(script.size, 10);
    assert_eq!(
        script.id.to_string(),
        repo.git(&["rev-parse", "HEAD:a/script.sh"]).trim()
    );
    assert!(!snapshot.entry("b.txt").unwrap().executable);
    assert_eq!(snapshot.commit().to_string(), repo.head());
}

#[test]
fn symlinks_and_submodules_are_listed_not_followed() {
    let repo = TestRepo::new();
    repo.write("target.txt", "secret\n");
    std::os::unix::fs::symlink("/etc/passwd", repo.path().join("link")).unwrap();
    repo.git(&["add", "-A"]);
    let commit = repo.commit("links");
    repo.git(&[
        "update-index",
        "--add",
        "--cacheinfo",
        &format!("160000,{commit},vendor/sub"),
    ]);
    repo.git(&["commit", "-q", "-m", "submodule"]);
    let snapshot = Snapshot::open(repo.path(), "HEAD").unwrap();
    let link = snapshot.entry("link").unwrap();
    assert_eq!(link.kind, EntryKind::Symlink);
    let mut reader = snapshot.reader();
    // A symlink's content is its target path, never the file it points to.
    assert_eq!(reader.read("link").unwrap().1.as_slice(), b"/etc/passwd");
    let sub = snapshot.entry("vendor/sub").unwrap();
    assert_eq!(sub.kind, EntryKind::Submodule);
    assert_eq!(sub.id.to_string(), commit);
    assert!(
        reader
            .read("vendor/sub")
            .unwrap_err()
            .to_string()
            .contains("submodule")
    );
    assert!(
        reader
            .read("nope")
            .unwrap_err()
            .to_string()
            .contains("no such file")
    );
}

#[test]
fn a_snapshot_never_sees_the_work_tree_or_the_index() {
    let repo = TestRepo::new();
    repo.write("a.txt", "committed\n");
    repo.commit("one");
    repo.write("a.txt", "edited\n")
        .write("new.txt", "untracked\n");
    repo.git(&["add", "new.txt"]);
    let snapshot = Snapshot::open(repo.path(), "HEAD").unwrap();
    assert_eq!(snapshot.entries().len(), 1);
    assert_eq!(
        snapshot.reader().read("a.txt").unwrap().1.as_slice(),
        b"committed\n"
    );
}

#[test]
fn pathspec_selection_and_clear_errors() {
    let repo = TestRepo::new();
    repo.write("src/a.rs", "")
        .write("src/x/b.rs", "")
        .write("vendor/c.rs", "");
    repo.commit("one");
    let snapshot = Snapshot::open(repo.path(), "HEAD").unwrap();
    let spec = Pathspec::new(&["**/*.rs", ":!vendor"]);
    let paths: Vec<_> = snapshot.matching(&spec).map(|e| e.path.as_str()).collect();
    assert_eq!(paths, ["src/a.rs", "src/x/b.rs"]);

    let err = Snapshot::open(repo.path(), "no-such-branch").unwrap_err();
    assert!(
        err.to_string()
            .contains("cannot resolve \"no-such-branch\""),
        "{err}"
    );
    let not_a_repo = tempfile::tempdir().unwrap();
    let err = Snapshot::open(not_a_repo.path(), "HEAD").unwrap_err();
    assert!(err.to_string().contains("not a git repository"), "{err}");
}
