//! The in-process ignore decision against `git check-ignore` itself, on generated trees:
//! nested `.gitignore` files with negations, folder-only, anchored and `**` patterns, escaped
//! characters, `info/exclude` and `core.excludesFile`; every path decided alike.

use std::collections::HashSet;
use std::path::Path;

use discern_tests::TestRepo;

use super::ignores;

/// Lines the generated ignore files are made of.
const PATTERNS: &[&str] = &[
    "*.log",
    "!keep.log",
    "build/",
    "/anchored",
    "a/**/z",
    "**/deep",
    "\\#hash",
    "#comment",
    "",
    "\\!bang",
    "trail\\ ",
    "name   ",
    "[abc]x",
    "?q",
    "dir/*",
    "!dir/c",
    "doc/*.txt",
    "**/cache/**",
    "x/**",
    "foo/",
    "!foo/",
    "*",
    "!*/",
    "!important",
    ".hidden*",
    "/*.tmp",
    "sub/",
    "*.o/",
    "[!a]*.c",
    "[[:digit:]]n",
    "a/",
    "!a/b",
    "z",
    "deep/",
    "!deep",
    "**",
    "b/**/",
    "*/c",
    "/sub/x.log",
    "\\*star",
    "back\\\\slash",
    "[a-c]*",
    "!**/keep*",
    "$dollar",
    "*/",
];

/// Names the generated tree is made of.
const NAMES: &[&str] = &[
    "a",
    "b",
    "c",
    "z",
    "deep",
    "build",
    "keep.log",
    "x.log",
    "anchored",
    "#hash",
    "!bang",
    "trail ",
    "name",
    "ax",
    "bq",
    "dir",
    "doc",
    "f.txt",
    "cache",
    "x",
    "foo",
    ".hidden1",
    "1n",
    "e.o",
    "k.c",
    "important",
    "sub",
    "t.tmp",
    "*star",
    "back\\slash",
    "keepme",
    "$dollar",
];

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }

    fn lines(&mut self, count: usize) -> String {
        (0..count)
            .map(|_| format!("{}\n", PATTERNS[self.below(PATTERNS.len())]))
            .collect()
    }
}

/// Grow a tree below `prefix` (relative, empty or ending in `/`) of `dir`, listing every path
/// made (folders with a trailing `/`).
fn grow(rng: &mut Rng, dir: &Path, prefix: &str, depth: usize, paths: &mut Vec<String>) {
    if rng.below(3) == 0 {
        let count = 1 + rng.below(5);
        std::fs::write(dir.join(prefix).join(".gitignore"), rng.lines(count)).unwrap();
        paths.push(format!("{prefix}.gitignore"));
    }
    let entries = 2 + rng.below(5);
    let mut used = HashSet::new();
    for _ in 0..entries {
        let name = NAMES[rng.below(NAMES.len())];
        if !used.insert(name) {
            continue;
        }
        let path = format!("{prefix}{name}");
        if depth < 4 && rng.below(2) == 0 {
            std::fs::create_dir(dir.join(&path)).unwrap();
            paths.push(format!("{path}/"));
            grow(rng, dir, &format!("{path}/"), depth + 1, paths);
        } else {
            std::fs::write(dir.join(&path), "x\n").unwrap();
            paths.push(path);
        }
    }
}

/// A repository with one tracked file and a generated untracked tree, its ignore rules in
/// `.gitignore` files, `info/exclude` and a `core.excludesFile`; every untracked path.
fn generated(seed: u64) -> (TestRepo, Vec<String>) {
    let repo = TestRepo::new();
    repo.write("tracked.rs", "x\n");
    repo.commit("init");
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let info = repo.path().join(".git/info");
    std::fs::create_dir_all(&info).unwrap();
    std::fs::write(info.join("exclude"), rng.lines(3)).unwrap();
    let excludes = repo.parent().join("excludes");
    std::fs::write(&excludes, rng.lines(3)).unwrap();
    repo.git(&["config", "core.excludesFile", excludes.to_str().unwrap()]);
    let mut paths = Vec::new();
    grow(&mut rng, repo.path(), "", 0, &mut paths);
    (repo, paths)
}

#[test]
fn in_process_decisions_are_git_s_on_every_path_of_generated_trees() {
    let mut decided = 0;
    for seed in 0..120 {
        let (repo, paths) = generated(seed);
        let git = ignores::check_ignore(repo.path(), &paths).expect("git answers");
        // Left to git only where a global pattern matches the top folder (`*`, `**`, `*/`).
        let Some(ours) = ignores::in_process(repo.path(), &paths) else {
            continue;
        };
        decided += 1;
        for path in &paths {
            assert_eq!(
                ours.contains(path),
                git.contains(path),
                "seed {seed}: {path:?} (git ignores: {})",
                git.contains(path)
            );
        }
    }
    assert!(decided > 60, "decided {decided} of 120 in-process");
}

#[test]
fn a_symlinked_gitignore_is_skipped_as_git_skips_it() {
    let repo = TestRepo::new();
    repo.write("tracked.rs", "x\n").commit("init");
    repo.write("rules", "*.log\n");
    std::fs::create_dir(repo.path().join("sub")).unwrap();
    std::os::unix::fs::symlink("../rules", repo.path().join("sub/.gitignore")).unwrap();
    repo.write("sub/x.log", "x\n");
    let names = ["sub/x.log".to_owned(), "rules".to_owned()];
    let ours = ignores::in_process(repo.path(), &names).expect("decided in-process");
    assert_eq!(ours, ignores::check_ignore(repo.path(), &names).unwrap());
    assert!(ours.is_empty());
}

#[test]
fn what_gix_might_read_otherwise_goes_to_git() {
    let names = ["x.log".to_owned()];
    // A relative excludes file is relative to where git runs.
    let repo = TestRepo::new();
    repo.write(".gitignore", "*.log\n").commit("init");
    assert!(ignores::in_process(repo.path(), &names).is_some());
    repo.git(&["config", "core.excludesFile", "rules"]);
    assert!(ignores::in_process(repo.path(), &names).is_none());
    repo.git(&["config", "--unset", "core.excludesFile"]);
    // An include could carry any setting.
    repo.git(&["config", "include.path", "other"]);
    assert!(ignores::in_process(repo.path(), &names).is_none());
    repo.git(&["config", "--unset", "include.path"]);
    repo.git(&["config", "includeIf.onbranch:main.path", "other"]);
    assert!(ignores::in_process(repo.path(), &names).is_none());
    repo.git(&["config", "--remove-section", "includeIf.onbranch:main"]);
    // A global pattern matching the top folder itself: gix's stack would exclude everything.
    let exclude = repo.path().join(".git/info/exclude");
    std::fs::write(&exclude, "*\n!x.log\n").unwrap();
    assert!(ignores::in_process(repo.path(), &names).is_none());
    assert!(
        ignores::ignored(repo.path(), &names)
            .unwrap()
            .contains("x.log")
    );
    std::fs::write(&exclude, "").unwrap();
    // A case-insensitive repository.
    repo.git(&["config", "core.ignoreCase", "true"]);
    assert!(ignores::in_process(repo.path(), &names).is_none());
    repo.git(&["config", "core.ignoreCase", "false"]);
    // An unreadable ignore file.
    let rules = repo.parent().join("unreadable");
    std::fs::create_dir(&rules).unwrap();
    std::fs::write(rules.join("x"), "").unwrap();
    repo.git(&[
        "config",
        "core.excludesFile",
        rules.join("x/y").to_str().unwrap(),
    ]);
    let decided = ignores::in_process(repo.path(), &names);
    let asked = ignores::ignored(repo.path(), &names).unwrap();
    assert!(decided.is_none() || decided.as_ref() == Some(&asked));
    assert!(asked.contains("x.log"));
}
