//! The snapshot of a commit, read through gix from the object database only.

use discern::testing::snapshot::{EntryKind, Pathspec, Snapshot};
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
    let paths: Vec<_> = snapshot.entries().iter().map(|e| e.path()).collect();
    assert_eq!(paths, ["a/script.sh", "b.txt"]);
    let script = snapshot.entry("a/script.sh").unwrap();
    assert!(script.executable);
    assert_eq!(snapshot.reader().size(0).unwrap(), 10);
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
    let paths: Vec<_> = snapshot.matching(&spec).map(|e| e.path()).collect();
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

#[test]
fn changed_since_names_exactly_the_paths_a_tree_diff_finds() {
    let repo = TestRepo::new();
    repo.write("keep/deep/same.txt", "same\n")
        .write("edit/deep/file.txt", "before\n")
        .write("gone/x/one.txt", "1\n")
        .write("gone/two.txt", "2\n")
        .write("mode.sh", "#!/bin/sh\n")
        .write("becomes-dir", "a file first\n");
    let before = repo.commit("before");
    repo.write("edit/deep/file.txt", "after\n")
        .write("new/a/b.txt", "new\n")
        .remove("gone/x/one.txt")
        .remove("gone/two.txt")
        .remove("becomes-dir")
        .write("becomes-dir/inner.txt", "now a folder\n");
    let script = repo.path().join("mode.sh");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    repo.commit("after");
    let snapshot = Snapshot::open(repo.path(), "HEAD").unwrap();
    // The whole-listing comparison is the reference the tree diff must agree with.
    let old = Snapshot::open(repo.path(), &before).unwrap();
    // The listing compares whole entries, so the mode change is in it too.
    let reference = discern::testing::snapshot::changed_paths(Some(&old), &snapshot);
    assert_eq!(snapshot.changed_since(&before), Some(reference.clone()));
    assert_eq!(
        reference,
        [
            "becomes-dir",
            "becomes-dir/inner.txt",
            "edit/deep/file.txt",
            "gone/two.txt",
            "gone/x/one.txt",
            "mode.sh",
            "new/a/b.txt"
        ]
    );
    assert_eq!(snapshot.changed_since(&repo.head()), Some(Vec::new()));
    // A commit the repository does not have: unknown, never "nothing changed".
    assert_eq!(snapshot.changed_since(&"1".repeat(40)), None);
    assert_eq!(snapshot.changed_since("not a commit"), None);
}

/// The fast clean check proves exactly the clean states and leaves everything else to
/// `git status`, whose answer `dirty_against` then gives.
#[test]
fn the_clean_check_proves_clean_trees_and_defers_everything_else_to_git_status() {
    use discern::Repo;
    let repo = TestRepo::new();
    repo.write("src/a.txt", "a\n")
        .write("src/deep/b.txt", "b\n")
        .write("run.sh", "#!/bin/sh\n")
        .write(".gitignore", "target/\n*.log\n");
    // Files as old as a real checkout's: written in the second the index is written, an entry
    // is racily clean (only its content could tell), and the check rightly cannot tell.
    let age = |paths: &[&str]| {
        for path in paths {
            std::fs::File::options()
                .append(true)
                .open(repo.path().join(path))
                .unwrap()
                .set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(30))
                .unwrap();
        }
    };
    let tracked = ["src/a.txt", "src/deep/b.txt", "run.sh", ".gitignore"];
    age(&tracked);
    repo.commit("base");
    let check = |line: u32, expect_proven: bool, expect_dirty: &[&str]| {
        let discerned = Repo::discover(repo.path()).unwrap();
        let head = discerned.head().unwrap().unwrap();
        let snapshot = discerned.snapshot(head).unwrap();
        assert_eq!(
            discerned.proves_clean(&snapshot),
            expect_proven,
            "line {line}: proven clean? (git status: {})",
            repo.git(&["status", "--porcelain"])
        );
        assert_eq!(
            discerned.dirty_against(&snapshot).unwrap(),
            expect_dirty,
            "line {line}"
        );
    };
    check(line!(), true, &[]);

    // Ignored names, even inside tracked folders, and a folder that is ignored as a whole.
    repo.write("target/debug/x", "built\n")
        .write("src/deep/trace.log", "log\n");
    check(line!(), true, &[]);
    // A folder holding only ignored files: git shows nothing, but only git can tell.
    repo.write("logs/one.log", "1\n");
    check(line!(), false, &[]);
    std::fs::remove_dir_all(repo.path().join("logs")).unwrap();
    // `keep/*` ignores everything in keep/ but `!keep/c` shows it: asked with a trailing
    // slash, check-ignore would call the folder ignored.
    repo.write(".git/info/exclude", "keep/*\n!keep/c\n");
    repo.write("keep/c", "shown\n");
    check(line!(), false, &["keep/"]);
    repo.write("keep/c", "").remove("keep/c");
    std::fs::remove_dir_all(repo.path().join("keep")).unwrap();
    // A name that git would read as pathspec magic (`:(top)target` would ask about the
    // ignored target/ folder).
    repo.write(":(top)target", "not ignored\n");
    check(line!(), false, &[":(top)target"]);
    repo.remove(":(top)target");

    // Untracked names that are not ignored.
    repo.write("notes.txt", "n\n");
    check(line!(), false, &["notes.txt"]);
    repo.remove("notes.txt");
    repo.write("src/new/c.txt", "c\n");
    check(line!(), false, &["src/new/"]);
    std::fs::remove_dir_all(repo.path().join("src/new")).unwrap();
    check(line!(), true, &[]);

    // Content changed (same size), deleted, mode changed, staged.
    repo.write("src/a.txt", "A\n");
    check(line!(), false, &["src/a.txt"]);
    repo.git(&["checkout", "--", "src/a.txt"]);
    repo.remove("src/deep/b.txt");
    check(line!(), false, &["src/deep/b.txt"]);
    repo.git(&["checkout", "--", "src/deep/b.txt"]);
    // A second later, so that git itself sees the mode change's new ctime and refreshes it.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let script = repo.path().join("run.sh");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    check(line!(), false, &["run.sh"]);
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    repo.write("src/a.txt", "staged\n");
    repo.git(&["add", "src/a.txt"]);
    repo.write("src/a.txt", "a\n");
    check(line!(), false, &["src/a.txt"]);
    repo.git(&["reset", "-q", "src/a.txt"]);

    // Touched but unchanged: the stat differs, so only git (which compares content) can tell.
    let file = std::fs::File::options()
        .append(true)
        .open(repo.path().join("src/deep/b.txt"))
        .unwrap();
    file.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(60))
        .unwrap();
    check(line!(), false, &[]);
    // Once git refreshes the index's stat data, the fast check proves it again.
    age(&tracked);
    repo.git(&["update-index", "-q", "--refresh"]);
    check(line!(), true, &[]);

    // A tracked folder replaced by a file.
    std::fs::remove_dir_all(repo.path().join("src/deep")).unwrap();
    repo.write("src/deep", "now a file\n");
    check(line!(), false, &["src/deep/b.txt", "src/deep"]);
}

/// Files committed within the second the index was written are racily clean: their stat data
/// cannot tell, so the check hashes them, as git does.
#[test]
fn racily_clean_files_are_settled_by_their_content() {
    use discern::Repo;
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n").write("dir/b.txt", "b\n");
    std::os::unix::fs::symlink("a.txt", repo.path().join("link")).unwrap();
    repo.commit("just now");
    let state = || {
        let discerned = Repo::discover(repo.path()).unwrap();
        let snapshot = discerned
            .snapshot(discerned.head().unwrap().unwrap())
            .unwrap();
        (
            discerned.proves_clean(&snapshot),
            discerned.dirty_against(&snapshot).unwrap(),
        )
    };
    assert_eq!(state(), (true, Vec::<String>::new()));
    // Same size, most likely the same second: only the content differs.
    repo.write("a.txt", "b\n");
    assert_eq!(state(), (false, vec!["a.txt".to_owned()]));
}

#[test]
fn reads_ahead_of_a_listing_return_exactly_the_blobs_in_any_order() {
    let repo = TestRepo::new();
    for i in 0..120 {
        let body = format!("file {i}\n").repeat(i * 37 + 1);
        repo.write(&format!("f/{i:03}.txt"), body);
    }
    repo.write("empty.txt", "");
    repo.commit("many");
    let snapshot = Snapshot::open(repo.path(), "HEAD").unwrap();
    let blob = |path: &str| {
        repo.git_output(&["cat-file", "blob", &format!("HEAD:{path}")])
            .stdout
    };
    let expected: Vec<(String, Vec<u8>)> = snapshot
        .entries()
        .iter()
        .map(|e| (e.path().to_string(), blob(e.path())))
        .collect();
    let all: Vec<usize> = (0..expected.len()).collect();
    // In order; every third skipped; backwards; a file read twice; then a new listing.
    let orders: Vec<Vec<usize>> = vec![
        all.clone(),
        all.iter().copied().filter(|i| i % 3 != 0).collect(),
        all.iter().rev().copied().collect(),
        vec![5, 5, 6, 4, 100, 7, 7],
    ];
    for order in orders {
        let mut reader = snapshot.reader();
        for i in &all {
            reader.size(*i).unwrap();
        }
        reader.plan(&all);
        for &i in &order {
            let (path, bytes) = &expected[i];
            assert_eq!(&*reader.read(path).unwrap().1, bytes, "{path} in {order:?}");
            assert_eq!(&reader.read_owned(path).unwrap().1, bytes, "{path} again");
        }
        reader.plan(&all[10..20]);
        assert_eq!(&*reader.read(&expected[12].0).unwrap().1, &expected[12].1);
        // Dropped with workers still inflating: nothing waits, nothing leaks into the next.
        drop(reader);
    }
}

#[test]
fn a_blob_the_workers_cannot_read_is_the_readers_usual_error() {
    let repo = TestRepo::new();
    repo.write("a.txt", "alpha\n")
        .write("b.txt", "beta\n")
        .write("c.txt", "gamma\n");
    repo.commit("three");
    let snapshot = Snapshot::open(repo.path(), "HEAD").unwrap();
    let mut reader = snapshot.reader();
    for i in 0..3 {
        reader.size(i).unwrap();
    }
    let id = snapshot.entry("b.txt").unwrap().id.to_string();
    let object = repo
        .path()
        .join(".git/objects")
        .join(&id[..2])
        .join(&id[2..]);
    std::fs::remove_file(object).unwrap();
    reader.plan(&[0, 1, 2]);
    assert_eq!(&*reader.read("a.txt").unwrap().1, b"alpha\n");
    let err = reader.read("b.txt").unwrap_err().to_string();
    assert!(err.contains("b.txt") && err.contains(&id), "{err}");
    assert_eq!(&*reader.read("c.txt").unwrap().1, b"gamma\n");
}

#[test]
fn a_mode_change_alone_is_a_changed_path() {
    let repo = TestRepo::new();
    repo.write("run.sh", "#!/bin/sh\n")
        .write("discern.toml", "");
    repo.commit("script");
    let before = Snapshot::open(repo.path(), "HEAD").unwrap();
    repo.git(&["update-index", "--chmod=+x", "run.sh"]);
    repo.git(&["commit", "-q", "-m", "executable"]);
    let after = Snapshot::open(repo.path(), "HEAD").unwrap();
    // Same blob, new mode: a config-only commit check must see it.
    assert_eq!(
        before.entry("run.sh").unwrap().id,
        after.entry("run.sh").unwrap().id
    );
    assert_eq!(
        discern::testing::snapshot::changed_paths(Some(&before), &after),
        ["run.sh"]
    );
}

/// A branch `deep{dirs}` whose one file is `dirs` directories deep, written by `git
/// fast-import` (no work tree can hold it: the path is longer than the system allows).
fn deep_branch(repo: &TestRepo, dirs: usize) {
    use std::io::Write;
    let path = format!("{}f.rs", "d/".repeat(dirs));
    let stream = format!(
        "commit refs/heads/deep{dirs}\ncommitter a <a@x> 0 +0000\ndata 4\ndeep\nM 100644 inline {path}\ndata 2\nx\n\n"
    );
    let mut git = std::process::Command::new("git");
    git.args(["fast-import", "--quiet"])
        .current_dir(repo.path())
        .stdin(std::process::Stdio::piped());
    discern_tests::hermetic(&mut git, repo.home());
    let mut child = git.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stream.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success(), "git fast-import failed");
}

#[test]
fn a_tree_deeper_than_git_reads_is_refused_as_git_refuses_it() {
    let repo = TestRepo::new();
    for dirs in [2048, 2049] {
        deep_branch(&repo, dirs);
    }
    let git_lists = |rev: &str| repo.git_output(&["ls-tree", "-r", rev]).status.success();
    assert!(git_lists("deep2048"));
    let listed = Snapshot::open(repo.path(), "deep2048").unwrap();
    let paths: Vec<_> = listed.entries().iter().map(|e| e.path().len()).collect();
    assert_eq!(
        paths,
        [2 * 2048 + 4],
        "the one file, 2,048 directories deep"
    );
    assert!(
        !git_lists("deep2049"),
        "git refuses a file 2,049 directories deep"
    );
    let refused = Snapshot::open(repo.path(), "deep2049")
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("deeper than 2048 levels") && refused.contains("flatten"),
        "{refused}"
    );
}
