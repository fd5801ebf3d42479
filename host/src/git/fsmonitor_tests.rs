//! The survey through git's fsmonitor hook (`fsmonitor.rs`), against Debian's watchman and
//! git's own `fsmonitor-watchman` sample hook, and against hooks that fail or lie. These tests
//! need watchman: they fail, never skip, without it.

use std::path::Path;
use std::process::Command;

use discern_tests::TestRepo;

use super::repo::Repo;
use crate::cores::Threads;

/// git's sample hook, as Debian's git installs it.
const SAMPLE: &str = "/usr/share/git-core/templates/hooks/fsmonitor-watchman.sample";

fn require_watchman() {
    let found = Command::new("watchman")
        .arg("--version")
        .output()
        .is_ok_and(|out| out.status.success());
    assert!(
        found,
        "watchman is missing: these tests run git's fsmonitor hook against it; run `scripts/test` \
         (which installs the suite's Debian packages) or `apt-get install -y watchman`"
    );
    assert!(
        Path::new(SAMPLE).exists(),
        "git's fsmonitor-watchman sample hook is missing at {SAMPLE}: install Debian's git"
    );
}

/// The work tree's changed paths as `discern status` surveys it.
fn changed(dir: &Path) -> Vec<String> {
    let repo = Repo::discover(dir).unwrap();
    let commit = repo.head().unwrap().unwrap();
    let tree = repo.tree_of(commit).unwrap();
    repo.changed_paths_in(tree, &|| repo.snapshot(commit).ok(), Threads::Fixed(2))
        .unwrap()
}

/// A committed repository of a few folders whose `core.fsmonitor` runs `hook` (a file under
/// `.git/hooks/`, made executable).
fn monitored(hook: &str) -> TestRepo {
    let repo = TestRepo::new();
    for i in 0..60 {
        repo.write(
            &format!("src/m{}/f{i:03}.rs", i % 6),
            format!("fn f{i}() {{}}\n"),
        );
    }
    repo.write(".gitignore", "*.log\n");
    repo.commit("files");
    set_hook(&repo, hook);
    repo
}

fn set_hook(repo: &TestRepo, hook: &str) {
    let path = repo.path().join(".git/hooks/query-monitor");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, hook).unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    repo.git(&["config", "core.fsmonitor", ".git/hooks/query-monitor"]);
}

/// Stop watching `dir` (the tests' temporary folders are removed after).
struct Unwatch<'a>(&'a Path);

impl Drop for Unwatch<'_> {
    fn drop(&mut self) {
        let _ = Command::new("watchman")
            .arg("watch-del")
            .arg(self.0)
            .output();
    }
}

/// Rewrite `path` in place at the same size and give it back its mtime.
fn edit_same_size_keeping_mtime(dir: &Path, path: &str) {
    let full = dir.join(path);
    let before = std::fs::read(&full).unwrap();
    let mtime = std::fs::metadata(&full).unwrap().modified().unwrap();
    let after: Vec<u8> = before
        .iter()
        .map(|b| if *b == b'f' { b'g' } else { *b })
        .collect();
    assert_eq!(before.len(), after.len());
    assert_ne!(before, after);
    std::fs::write(&full, &after).unwrap();
    std::fs::File::options()
        .append(true)
        .open(&full)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
}

#[test]
fn watchman_s_answers_limit_the_survey_and_every_change_is_still_seen() {
    require_watchman();
    let sample = std::fs::read_to_string(SAMPLE).unwrap();
    let repo = monitored(&sample);
    let _unwatch = Unwatch(repo.path());
    // The first survey walks everything (no token yet) and saves the hook's token.
    assert_eq!(changed(repo.path()), Vec::<String>::new());
    let state = repo.path().join(".git/discern/fsmonitor");
    assert!(state.exists(), "the token is kept after a survey");
    assert_eq!(changed(repo.path()), Vec::<String>::new());
    // An edit at the same size with the mtime restored: watchman saw the write.
    edit_same_size_keeping_mtime(repo.path(), "src/m1/f001.rs");
    assert_eq!(changed(repo.path()), ["src/m1/f001.rs"]);
    // A new untracked file, in a new folder too; an ignored one is not listed.
    repo.write("src/m2/new.rs", "new\n");
    repo.write("docs/notes.md", "notes\n");
    repo.write("src/build.log", "ignored\n");
    assert_eq!(
        changed(repo.path()),
        ["src/m1/f001.rs", "docs/notes.md", "src/m2/new.rs"]
    );
    // What the last survey listed is looked at again: a file put back is clean again.
    repo.git(&["checkout", "--", "src/m1/f001.rs"]);
    std::fs::remove_file(repo.path().join("docs/notes.md")).unwrap();
    assert_eq!(changed(repo.path()), ["src/m2/new.rs"]);
}

#[test]
fn a_hook_s_answer_is_trusted_by_the_survey_and_a_failing_hook_means_the_walk() {
    // Ask for nothing at all: a token, then no path (a hook that saw no change).
    let repo = monitored("#!/bin/sh\nprintf 'token\\0'\n");
    assert_eq!(changed(repo.path()), Vec::<String>::new());
    edit_same_size_keeping_mtime(repo.path(), "src/m3/f003.rs");
    // The survey trusts the hook (git status would too): the unnamed folder is not read.
    assert_eq!(changed(repo.path()), Vec::<String>::new());
    // A hook that fails: the whole walk.
    set_hook(&repo, "#!/bin/sh\necho broken >&2\nexit 1\n");
    assert_eq!(changed(repo.path()), ["src/m3/f003.rs"]);
    // A hook that answers everything: the whole walk.
    set_hook(&repo, "#!/bin/sh\nprintf 'token\\0/\\0'\n");
    repo.write("new.txt", "new\n");
    assert_eq!(changed(repo.path()), ["src/m3/f003.rs", "new.txt"]);
    // A hook that answers nothing readable (no token): the whole walk.
    set_hook(&repo, "#!/bin/sh\nprintf 'garbage'\n");
    repo.write("other.txt", "other\n");
    assert_eq!(
        changed(repo.path()),
        ["src/m3/f003.rs", "new.txt", "other.txt"]
    );
}

#[test]
fn another_index_or_an_ignore_file_outside_the_tree_means_the_walk() {
    let repo = monitored("#!/bin/sh\nprintf 'token\\0'\n");
    assert_eq!(changed(repo.path()), Vec::<String>::new());
    // info/exclude decides what is ignored; a hook watching the tree does not see it.
    repo.write("kept.tmp", "x\n");
    std::fs::write(repo.path().join(".git/info/exclude"), "*.tmp\n").unwrap();
    assert_eq!(changed(repo.path()), Vec::<String>::new());
    std::fs::write(repo.path().join(".git/info/exclude"), "").unwrap();
    assert_eq!(changed(repo.path()), ["kept.tmp"]);
    // A commit (of everything) writes another index.
    repo.write("src/m0/f000.rs", "changed\n");
    repo.commit("edit");
    edit_same_size_keeping_mtime(repo.path(), "src/m0/f006.rs");
    assert_eq!(changed(repo.path()), ["src/m0/f006.rs"]);
}

/// git's sample hook at `.git/hooks/watchman-sample`, and `core.fsmonitor` set to a hook that
/// runs it and then runs `after` (shell).
fn sample_then(repo: &TestRepo, after: &str) {
    let sample = repo.path().join(".git/hooks/watchman-sample");
    if !sample.exists() {
        std::fs::create_dir_all(sample.parent().unwrap()).unwrap();
        std::fs::copy(SAMPLE, &sample).unwrap();
        std::fs::set_permissions(&sample, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    }
    set_hook(
        repo,
        &format!("#!/bin/sh\n.git/hooks/watchman-sample \"$@\"\n{after}\n"),
    );
}

#[test]
fn watchman_s_answer_from_a_hook_that_fails_or_hangs_means_the_walk_and_keeps_the_token() {
    require_watchman();
    let repo = monitored("#!/bin/sh\nexit 1\n");
    sample_then(&repo, "");
    let _unwatch = Unwatch(repo.path());
    assert_eq!(changed(repo.path()), Vec::<String>::new());
    assert_eq!(changed(repo.path()), Vec::<String>::new());
    let state = repo.path().join(".git/discern/fsmonitor");
    let token = std::fs::read(&state).unwrap();
    // watchman answers, then the hook fails: its answer is not trusted, nor its token kept.
    sample_then(&repo, "exit 1");
    edit_same_size_keeping_mtime(repo.path(), "src/m4/f004.rs");
    repo.write("src/m5/new.rs", "new\n");
    assert_eq!(changed(repo.path()), ["src/m4/f004.rs", "src/m5/new.rs"]);
    assert_eq!(std::fs::read(&state).unwrap(), token, "the last good token");
    // A hook past its time (its answer already printed): the walk, the token kept, and no git
    // child of the survey (`check-ignore` for the new file) waits for the hook either.
    sample_then(&repo, "sleep 5");
    edit_same_size_keeping_mtime(repo.path(), "src/m0/f000.rs");
    let started = std::time::Instant::now();
    assert_eq!(
        changed(repo.path()),
        ["src/m0/f000.rs", "src/m4/f004.rs", "src/m5/new.rs"]
    );
    assert!(started.elapsed() < super::fsmonitor::TIMEOUT + std::time::Duration::from_secs(2));
    assert_eq!(std::fs::read(&state).unwrap(), token, "the last good token");
    // The hook works again: asked with the last good token, watchman names every change since.
    sample_then(&repo, "");
    assert_eq!(
        changed(repo.path()),
        ["src/m0/f000.rs", "src/m4/f004.rs", "src/m5/new.rs"]
    );
    assert_ne!(std::fs::read(&state).unwrap(), token, "a new token kept");
    assert_eq!(
        changed(repo.path()),
        ["src/m0/f000.rs", "src/m4/f004.rs", "src/m5/new.rs"]
    );
}
