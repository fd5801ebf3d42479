//! The in-process survey against git itself, on real repositories: racily clean work trees
//! settled by their content (`settle.rs`) without handing anything to git, line-ending
//! conversions judged as git judges them, filter drivers left to git, and changed-path lists
//! compared with `git status --porcelain --untracked-files=all` on generated trees.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use discern_tests::TestRepo;

use super::clean::{self, Survey, Walk};
use super::repo::Repo;
use crate::cores::{Spare, Threads};

/// `git status --porcelain -uall` of `dir`, as paths, without refreshing the index (as discern
/// runs git), so that it judges the same racily clean entries.
fn porcelain(repo: &TestRepo, dir: &Path) -> Vec<String> {
    let out = std::process::Command::new("git")
        .args(["status", "--porcelain=v1", "-z", "--untracked-files=all"])
        .current_dir(dir)
        .env_clear()
        .envs(discern_tests::hermetic_env(repo.home()))
        .env("GIT_OPTIONAL_LOCKS", "0")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    discern_tests::porcelain_paths(&out.stdout)
}

/// A linked worktree `name` of `repo` on a new branch at `main`.
fn worktree(repo: &TestRepo, name: &str) -> PathBuf {
    let path = repo.parent().join("repo.worktrees").join(name);
    let at = path.to_str().unwrap();
    repo.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        &format!("agent/{name}"),
        at,
        "main",
    ]);
    path
}

/// Make every entry of the index at `dir` racily clean: its file's time goes back an hour,
/// before every file's mtime, as if checked out within the second the index was written.
fn make_racy(dir: &Path) {
    let git_dir = Repo::discover(dir).unwrap().git_dir().to_owned();
    std::fs::File::options()
        .append(true)
        .open(git_dir.join("index"))
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(3600))
        .unwrap();
}

/// One walk of the work tree at `dir` against HEAD; `None` is "cannot tell".
fn walk(dir: &Path, mode: Walk) -> Option<Survey> {
    let repo = Repo::discover(dir).unwrap();
    let head = repo.snapshot(repo.head().unwrap().unwrap()).unwrap();
    let index = clean::usual_index(&repo.local(), clean::Head::Snapshot(&head))?;
    clean::walk(&index, repo.root(), repo.git_dir(), mode)
}

/// What discern lists for the work tree at `dir` (survey, else `git status`).
/// Against HEAD's snapshot and against HEAD's tree alone (the snapshot opened only when the
/// cache-tree cannot vouch for it), on one thread and on several, which must all agree.
fn changed(dir: &Path) -> Vec<String> {
    let repo = Repo::discover(dir).unwrap();
    let commit = repo.head().unwrap().unwrap();
    let head = repo.snapshot(commit).unwrap();
    let (tree, open) = (repo.tree_of(commit).unwrap(), || repo.snapshot(commit).ok());
    let changed = repo.changed_paths(&head).unwrap();
    // One thread (a row of a fleet) reads what every core reads.
    for threads in [1, 3] {
        assert_eq!(
            repo.changed_paths_in(tree, &open, Threads::Fixed(threads))
                .unwrap(),
            changed
        );
    }
    // So does a row that starts alone and is lent two idle cores as it reads (the first two
    // folders each start a thread), and the cores come back when it is done.
    let spare = Spare::new(2);
    let lent = repo.changed_paths_in(tree, &open, Threads::Lent(&spare));
    assert_eq!(lent.unwrap(), changed);
    let back = [spare.borrow(), spare.borrow()];
    assert!(
        back.iter().all(Option::is_some),
        "a lent core did not come back"
    );
    changed
}

fn proves_clean(dir: &Path) -> bool {
    let repo = Repo::discover(dir).unwrap();
    let commit = repo.head().unwrap().unwrap();
    let head = repo.snapshot(commit).unwrap();
    let open = || repo.snapshot(commit).ok();
    let clean = repo.proves_clean(&head);
    assert_eq!(repo.proves_clean_at(commit, &open), clean);
    clean
}

/// Rewrite `path` below `dir` with `content` and give it back its mtime (the ctime moves on).
fn rewrite_keeping_mtime(dir: &Path, path: &str, content: &[u8]) {
    let full = dir.join(path);
    let mtime = std::fs::metadata(&full).unwrap().modified().unwrap();
    std::fs::write(&full, content).unwrap();
    std::fs::File::options()
        .append(true)
        .open(&full)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
}

/// Edit `path` below `dir` in place to `edit` of its bytes, which keeps the size.
fn edit_same_size(dir: &Path, path: &str, edit: impl Fn(&[u8]) -> Vec<u8>) {
    let before = std::fs::read(dir.join(path)).unwrap();
    let after = edit(&before);
    assert_eq!(before.len(), after.len(), "{path}: {before:?} -> {after:?}");
    rewrite_keeping_mtime(dir, path, &after);
}

/// `bytes` with the first `from` replaced by `to`.
fn replace_first(bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let at = bytes.windows(from.len()).position(|w| w == from).unwrap();
    [&bytes[..at], to, &bytes[at + from.len()..]].concat()
}

/// A repository of `files` small files in ten folders, a symlink and a script, committed.
fn many_files(files: usize) -> TestRepo {
    let repo = TestRepo::new();
    for i in 0..files {
        repo.write(
            &format!("src/m{}/f{i:04}.rs", i % 10),
            format!("pub fn f{i}() {{}}\n"),
        );
    }
    repo.write("run.sh", "#!/bin/sh\n")
        .write(".gitignore", "*.log\n");
    std::os::unix::fs::symlink("src/m0/f0000.rs", repo.path().join("link")).unwrap();
    let script = repo.path().join("run.sh");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    repo.commit("files");
    repo
}

#[test]
fn a_fresh_racy_worktree_is_settled_in_process() {
    // More racily clean entries than the old budget for `git diff-files`.
    let repo = many_files(400);
    let wt = worktree(&repo, "e1");
    make_racy(&wt);
    let proving = walk(&wt, Walk::Prove).expect("readable as usual");
    assert!(
        proving.suspects.is_empty(),
        "left to git: {:?}",
        proving.suspects
    );
    assert!(proving.untracked.is_empty());
    assert!(proves_clean(&wt));
    let surveyed = walk(&wt, Walk::Survey).unwrap();
    assert!(
        surveyed.suspects.is_empty() && surveyed.changed.is_empty(),
        "{surveyed:?}"
    );
    assert_eq!(changed(&wt), Vec::<String>::new());
    assert_eq!(porcelain(&repo, &wt), Vec::<String>::new());
}

#[test]
fn a_racy_change_of_the_same_size_and_second_is_changed() {
    let repo = many_files(30);
    let wt = worktree(&repo, "e1");
    make_racy(&wt);
    rewrite_keeping_mtime(&wt, "src/m3/f0003.rs", b"pub fn X3() {}\n");
    // The symlink now points elsewhere, at a target of the same length.
    std::fs::remove_file(wt.join("link")).unwrap();
    std::os::unix::fs::symlink("src/m1/f0001.rs", wt.join("link")).unwrap();
    // Touched, same content: unchanged.
    rewrite_keeping_mtime(&wt, "src/m4/f0004.rs", b"pub fn f4() {}\n");
    let surveyed = walk(&wt, Walk::Survey).unwrap();
    assert!(
        surveyed.suspects.is_empty(),
        "left to git: {:?}",
        surveyed.suspects
    );
    let expected = ["link", "src/m3/f0003.rs"];
    assert_eq!(changed(&wt), expected);
    assert_eq!(porcelain(&repo, &wt), expected);
    assert!(!proves_clean(&wt));
}

#[test]
fn a_symlink_recreated_with_its_target_is_unchanged() {
    let repo = many_files(3);
    let wt = worktree(&repo, "e1");
    make_racy(&wt);
    std::fs::remove_file(wt.join("link")).unwrap();
    std::os::unix::fs::symlink("src/m0/f0000.rs", wt.join("link")).unwrap();
    assert_eq!(changed(&wt), Vec::<String>::new());
    assert_eq!(porcelain(&repo, &wt), Vec::<String>::new());
}

/// Files under line-ending conversions, checked out by git, then edited: discern lists what
/// `git status` lists, and settles them in-process (nothing handed to git).
fn line_endings_agree(configure: impl Fn(&TestRepo)) {
    let repo = TestRepo::new();
    repo.write("lf.txt", "one\ntwo\n")
        .write("crlf-in-index.txt", "one\r\ntwo\r\n")
        .write("mixed.txt", "one\r\ntwo\n")
        .write("binary.dat", b"\0\r\n\r\n".as_slice())
        .write("lone-cr.txt", "one\rtwo\n")
        .write("resized.txt", "one\ntwo\n")
        .write("docs/a.md", "# a\n\nb\n");
    repo.commit("line endings");
    configure(&repo);
    repo.commit("attributes");
    let wt = worktree(&repo, "e1");
    make_racy(&wt);
    assert_eq!(changed(&wt), porcelain(&repo, &wt), "as checked out");
    assert!(walk(&wt, Walk::Survey).unwrap().suspects.is_empty());
    // Same sizes: other content, line endings swapped, a lone CR, rewritten unchanged.
    edit_same_size(&wt, "lf.txt", |b| replace_first(b, b"t", b"T"));
    edit_same_size(&wt, "mixed.txt", |b| {
        let swapped = replace_first(b, b"\r\n", b"\n");
        [&swapped[..swapped.len() - 1], b"\r\n".as_slice()].concat()
    });
    edit_same_size(&wt, "docs/a.md", |b| match b.contains(&b'\r') {
        true => replace_first(b, b"\r\n", b"\n\r"),
        false => replace_first(b, b"\n\n", b"\r\n"),
    });
    edit_same_size(&wt, "crlf-in-index.txt", <[u8]>::to_vec);
    // Other sizes: listed as git lists them, unread, even the other line endings that git
    // would store as the same blob.
    let resized = wt.join("resized.txt");
    let other = match std::fs::read(&resized).unwrap().contains(&b'\r') {
        true => "one\ntwo\n",
        false => "one\r\ntwo\r\n",
    };
    std::fs::write(&resized, other).unwrap();
    std::fs::write(wt.join("lone-cr.txt"), "one\rtwo\nthree\n").unwrap();
    let surveyed = walk(&wt, Walk::Survey).unwrap();
    assert!(
        surveyed.suspects.is_empty(),
        "left to git: {:?}",
        surveyed.suspects
    );
    assert_eq!(changed(&wt), porcelain(&repo, &wt), "edited");
}

#[test]
fn autocrlf_is_judged_as_git_judges_it() {
    line_endings_agree(|repo| {
        repo.git(&["config", "core.autocrlf", "true"]);
    });
}

#[test]
fn text_auto_and_eol_crlf_are_judged_as_git_judges_them() {
    line_endings_agree(|repo| {
        repo.write(
            ".gitattributes",
            "* text=auto\n*.md eol=crlf\nbinary.dat -text\n",
        );
    });
}

#[test]
fn a_filter_driver_is_left_to_git() {
    let repo = many_files(3);
    repo.write(".gitattributes", "*.secret filter=same\n*.id ident\n")
        .write("a.secret", "hidden\n")
        .write("b.id", "$Id$\n");
    repo.git(&["config", "filter.same.clean", "cat"]);
    repo.git(&["config", "filter.same.smudge", "cat"]);
    repo.commit("filtered");
    let wt = worktree(&repo, "e1");
    make_racy(&wt);
    let mut proving = walk(&wt, Walk::Prove).unwrap();
    proving.suspects.sort();
    assert_eq!(
        proving.suspects,
        ["a.secret", "b.id"],
        "cannot tell in-process"
    );
    let mut surveyed = walk(&wt, Walk::Survey).unwrap();
    surveyed.suspects.sort();
    assert_eq!(surveyed.suspects, ["a.secret", "b.id"]);
    assert!(surveyed.changed.is_empty());
    // git settles them: clean.
    assert!(proves_clean(&wt));
    rewrite_keeping_mtime(&wt, "a.secret", b"hiddeN\n");
    assert_eq!(changed(&wt), ["a.secret"]);
    assert_eq!(porcelain(&repo, &wt), ["a.secret"]);
}

/// A small deterministic generator (no seed from the clock: a failure replays).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % n
    }
}

#[test]
fn changed_paths_agree_with_git_status_on_generated_trees() {
    let repo = many_files(60);
    repo.write("src/m1/.gitattributes", "*.rs text eol=crlf\n");
    repo.commit("crlf folder");
    for seed in 1..=6u64 {
        let wt = worktree(&repo, &format!("e{seed}"));
        if seed % 2 == 0 {
            make_racy(&wt);
        }
        let mut rng = Lcg(seed);
        for _ in 0..8 {
            let i = rng.below(60);
            let path = format!("src/m{}/f{i:04}.rs", i % 10);
            match rng.below(6) {
                0 => std::fs::write(wt.join(&path), format!("pub fn g{i}() {{}}\n")).unwrap(),
                1 => drop(std::fs::remove_file(wt.join(&path))),
                2 => std::fs::write(wt.join(format!("src/new{i}.rs")), "new\n").unwrap(),
                3 => std::fs::write(wt.join(format!("src/m2/{i}.log")), "ignored\n").unwrap(),
                4 if wt.join(&path).exists() => {
                    edit_same_size(&wt, &path, |b| vec![b'x'; b.len()]);
                }
                _ if wt.join(&path).exists() => edit_same_size(&wt, &path, <[u8]>::to_vec),
                _ => {}
            }
        }
        assert_eq!(changed(&wt), porcelain(&repo, &wt), "seed {seed}");
    }
}

#[test]
fn settled_entries_are_remembered_until_their_file_is_written_again() {
    let repo = many_files(200);
    let wt = worktree(&repo, "e1");
    make_racy(&wt);
    let listed = repo.git_output(&["ls-files", "-z"]).stdout;
    let entries = listed.iter().filter(|&&b| b == 0).count();
    // Only files written well before a settling are remembered by it.
    std::thread::sleep(Duration::from_secs(super::settled::MARGIN) + Duration::from_millis(200));
    // Proving writes no record (dry runs write nothing); a survey (`discern status`) does.
    let proving = walk(&wt, Walk::Prove).unwrap();
    assert_eq!(proving.settled.len(), entries, "every entry was racy");
    let first = walk(&wt, Walk::Survey).unwrap();
    assert_eq!(
        first.settled.len(),
        entries,
        "read again: nothing was recorded"
    );
    let again = walk(&wt, Walk::Prove).unwrap();
    assert!(again.settled.is_empty(), "read again: {:?}", again.settled);
    assert!(walk(&wt, Walk::Survey).unwrap().settled.is_empty());
    assert!(proves_clean(&wt));
    // Written again at the same size with its mtime put back: its ctime moved, so it is read
    // again and its change seen.
    edit_same_size(&wt, "src/m3/f0003.rs", |b| replace_first(b, b"f3", b"g3"));
    assert!(!proves_clean(&wt));
    let surveyed = walk(&wt, Walk::Survey).unwrap();
    assert_eq!(surveyed.changed, ["src/m3/f0003.rs"]);
    assert_eq!(changed(&wt), porcelain(&repo, &wt));
}

#[test]
fn branches_under_a_prefix_are_those_git_for_each_ref_lists() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.commit("a");
    // Packed ones (`tmp` itself: a branch and branches below it cannot coexist), then loose.
    for branch in ["tmp", "tmp-x", "tmpx"] {
        repo.git(&["branch", branch]);
    }
    let listed = |repo: &TestRepo, prefix: &str| {
        let out = repo.git(&[
            "for-each-ref",
            "--format=%(refname) %(objectname)",
            &format!("refs/heads/{prefix}"),
        ]);
        let git: Vec<(String, gix::ObjectId)> = out
            .lines()
            .filter_map(|l| l.split_once(' '))
            .map(|(name, id)| {
                let name = name.strip_prefix("refs/heads/").unwrap().to_owned();
                (name, id.parse().unwrap())
            })
            .collect();
        let ours = Repo::discover(repo.path())
            .unwrap()
            .branches_under(prefix)
            .unwrap();
        assert_eq!(ours, git, "prefix {prefix:?}");
        ours.len()
    };
    repo.git(&["pack-refs", "--all"]);
    for branch in ["agent/one", "agent/deep/two", "agent-x", "agentx", "other"] {
        repo.git(&["branch", branch]);
    }
    assert_eq!(listed(&repo, "agent/"), 2);
    assert_eq!(listed(&repo, "agent"), 2);
    assert_eq!(listed(&repo, "tmp"), 1);
    assert_eq!(listed(&repo, "tmp/"), 0);
    assert_eq!(listed(&repo, "none/"), 0);
}

#[test]
fn worktrees_are_listed_in_process_as_git_lists_them() {
    let repo = TestRepo::new();
    repo.write("a.txt", "a\n");
    repo.commit("a");
    let both = |dir: &Path| {
        let ours = Repo::discover(dir).unwrap();
        let read = ours.worktrees_read();
        let git = ours.worktrees_by_git().unwrap();
        assert_eq!(read.as_ref(), Some(&git), "from {}", dir.display());
        git
    };
    // The main checkout alone, on a branch, then detached.
    assert_eq!(both(repo.path()).len(), 1);
    repo.git(&["checkout", "-q", "--detach"]);
    both(repo.path());
    repo.git(&["checkout", "-q", "main"]);
    // Registered in an order other than their paths' (git sorts by path), one on a packed
    // branch, one detached.
    let later = worktree(&repo, "zz");
    worktree(&repo, "aa");
    repo.git(&["pack-refs", "--all"]);
    let detached = repo.parent().join("repo.worktrees").join("mm");
    repo.git(&[
        "worktree",
        "add",
        "-q",
        "--detach",
        detached.to_str().unwrap(),
        "main",
    ]);
    // Gone: one locked (never prunable), one not (prunable).
    let locked = worktree(&repo, "locked");
    repo.git(&["worktree", "lock", locked.to_str().unwrap()]);
    std::fs::remove_dir_all(&locked).unwrap();
    std::fs::remove_dir_all(worktree(&repo, "pruned")).unwrap();
    let listed = both(repo.path());
    assert_eq!(listed.len(), 6);
    assert_eq!(listed.iter().filter(|w| w.prunable).count(), 1);
    // Case folding (git sorts folded) or a setting that is not a boolean: git lists them.
    for value in ["true", "maybe"] {
        repo.git(&["config", "core.ignoreCase", value]);
        let ours = Repo::discover(repo.path()).unwrap();
        assert_eq!(ours.worktrees_read(), None, "core.ignoreCase={value}");
    }
    repo.git(&["config", "--unset", "core.ignoreCase"]);
    // The same from inside a linked worktree, after a commit there.
    std::fs::write(later.join("b.txt"), "b\n").unwrap();
    for args in [&["add", "b.txt"][..], &["commit", "-qm", "b"]] {
        let status = std::process::Command::new("git")
            .args(args)
            .current_dir(&later)
            .env_clear()
            .envs(discern_tests::hermetic_env(repo.home()))
            .status()
            .unwrap();
        assert!(status.success());
    }
    let moved = both(&later);
    assert_ne!(moved, listed, "the commit moved its worktree's HEAD");
}

/// `git rev-list --left-right --count base...head`, as (ahead, behind).
fn counted_by_git(repo: &TestRepo, base: &str, head: &str) -> (u64, u64) {
    let out = repo.git(&[
        "rev-list",
        "--left-right",
        "--count",
        &format!("{base}...{head}"),
    ]);
    let counts: Vec<u64> = out.split_whitespace().map(|n| n.parse().unwrap()).collect();
    (counts[1], counts[0])
}

/// A commit on top of `parent` (its tree), made without touching the checkout.
fn commit_on(repo: &TestRepo, parent: &str, message: &str) -> String {
    let tree = format!("{parent}^{{tree}}");
    repo.git(&["commit-tree", &tree, "-p", parent, "-m", message])
        .trim()
        .to_owned()
}

#[test]
fn ahead_and_behind_are_counted_as_git_rev_list_counts_them() {
    let repo = TestRepo::new();
    let on = |parent: &str, message: &str| commit_on(&repo, parent, message);
    let c0 = repo.write("a", "0\n").commit("root");
    let c1 = on(&c0, "c1");
    let c2 = on(&c1, "c2");
    let (c3, e1a, e4a) = (on(&c2, "c3"), on(&c2, "e1a"), on(&c2, "e4a"));
    let (c4, e1b) = (on(&c3, "c4"), on(&e1a, "e1b"));
    let (e1c, e2a) = (on(&e1b, "e1c"), on(&c4, "e2a"));
    let merge = |parents: [&str; 2], message: &str| {
        let tree = format!("{}^{{tree}}", parents[0]);
        let args = [
            "commit-tree",
            &tree,
            "-p",
            parents[0],
            "-p",
            parents[1],
            "-m",
            message,
        ];
        repo.git(&args).trim().to_owned()
    };
    // A merge on the effort's side, and a trunk that merged an effort.
    let e4m = merge([&e4a, &c3], "merge the trunk in");
    let e4b = on(&e4m, "e4b");
    let trunk_merged = merge([&c4, &e1c], "land e1");
    let after_landing = on(&trunk_merged, "after landing");
    // An unrelated history, and a chain longer than the in-process walk goes.
    let orphan = repo.git(&["commit-tree", &format!("{c0}^{{tree}}"), "-m", "orphan"]);
    let orphan = orphan.trim().to_owned();
    let mut long = c4.clone();
    for n in 0..260 {
        long = on(&long, &format!("long {n}"));
    }
    let in_reach = repo
        .git(&["rev-parse", &format!("{long}~10")])
        .trim()
        .to_owned();
    let tips = [
        &c0,
        &c1,
        &c2,
        &c3,
        &c4,
        &e1a,
        &e1c,
        &e2a,
        &e4b,
        &trunk_merged,
        &after_landing,
        &orphan,
        &long,
        &in_reach,
    ];
    let discern = Repo::discover(repo.path()).unwrap();
    let id = |hex: &str| gix::ObjectId::from_hex(hex.as_bytes()).unwrap();
    for base in tips {
        for head in tips {
            let counted = discern.ahead_behind(id(base), id(head)).unwrap();
            assert_eq!(
                counted,
                counted_by_git(&repo, base, head),
                "{base}...{head}"
            );
        }
    }
    // The plain cases are counted in-process: ahead, behind, diverged, a merge commit met.
    let plain = |base: &str, head: &str| discern.linear_ahead_behind(id(base), id(head));
    assert_eq!(plain(&c4, &e1c), Some((3, 2)));
    assert_eq!(plain(&c4, &e2a), Some((1, 0)));
    assert_eq!(plain(&c4, &c1), Some((0, 3)));
    assert_eq!(plain(&trunk_merged, &after_landing), Some((1, 0)));
    assert_eq!(plain(&c4, &in_reach), Some((250, 0)));
    // Everything else is left to git: a merge on either side, unrelated roots, a long chain.
    assert_eq!(plain(&c4, &e4b), None);
    assert_eq!(plain(&after_landing, &e2a), None);
    assert_eq!(plain(&c4, &orphan), None);
    assert_eq!(plain(&c4, &long), None);
}
