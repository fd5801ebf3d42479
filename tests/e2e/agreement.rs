//! Differential tests: the built-ins' readings against the reference tools users trust, on
//! real git trees with awkward names and contents. `files`/`bytes` against `git ls-files` under
//! `--glob-pathspecs`, `pattern` against `git grep -P` (`-c`, `-l`, `-o`), `extent` against
//! `wc` on the committed blobs, `lcov` against tracefiles written by coverage.py and by gcc +
//! lcov. The reference tools are installed when missing (coverage.py from PyPI at a pinned
//! version into `target/`, lcov from Debian); one that cannot be installed fails the test with
//! the command that installs it, never a silent skip.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Command, Stdio};

use discern::testing::runtime::Limits;
use discern::testing::snapshot::{EntryKind, Snapshot};
use discern_tests::TestRepo;
use proptest::prelude::*;
use serde_json::json;

use crate::support::{builtin, run, value};

/// The awkward tree every fixed comparison runs on.
fn awkward_repo() -> TestRepo {
    let repo = TestRepo::new();
    let files: &[(&str, &[u8])] = &[
        ("a b.txt", b"two words\nTODO: spaced\n"),
        (
            "\u{fc}n\u{ef}/c\u{f6}d\u{e9}.rs",
            "fn caf\u{e9}() {}\n// TODO \u{e9}\u{e9}\n".as_bytes(),
        ),
        (".hidden/.x.rs", b"hidden\n\n\n"),
        ("glob[1].txt", b"bracket 1\n"),
        ("glob1.txt", b"plain 1\n"),
        ("star*.md", b"* star\n"),
        ("q?.txt", b"question\n"),
        ("br{a,b}.txt", b"brace\n"),
        ("d1/d2/d3/d4/d5/d6/deep.rs", b"deep TODO TODO\n"),
        ("src/a.rs", b"fn a() {}\n   \n\t\nlet x = 1;\n"),
        ("src/crlf.rs", b"line one\r\nline  two\r\n\r\nTODO\r\n"),
        ("src/nofinal.rs", b"no final newline TODO"),
        ("src/empty.rs", b""),
        ("src/blank.txt", b"\n\n\n"),
        (
            "src/spaces.txt",
            "a\u{b}b\u{c}c\rd e\u{a0}f\u{3000}g\u{2003}h\u{200b}i\u{85}j\n".as_bytes(),
        ),
        ("src/logo.bin", b"\x89PNG\0\0TODO\n\0binary\n"),
        ("src/num.txt", b"12 345 6789\nfoo fooo fo\n"),
        ("Src.RS", b"upper case\n"),
    ];
    for (path, content) in files {
        repo.write(path, content);
    }
    // A name that is not UTF-8.
    let bad = repo.path().join(OsStr::from_bytes(b"bad\xff.txt"));
    std::fs::write(bad, "zzz\n").unwrap();
    std::os::unix::fs::symlink("src/a.rs", repo.path().join("link.rs")).unwrap();
    let first = repo.commit("awkward");
    repo.git(&[
        "update-index",
        "--add",
        "--cacheinfo",
        &format!("160000,{first},vendor/sub"),
    ]);
    repo.git(&["commit", "-q", "-m", "a submodule"]);
    repo
}

/// Output of a command in the repository, hermetic, as bytes.
fn git_bytes(repo: &TestRepo, args: &[&str]) -> Vec<u8> {
    let mut cmd = Command::new("git");
    cmd.args(args).current_dir(repo.path());
    discern_tests::hermetic(&mut cmd, repo.home());
    cmd.env("LC_ALL", "C.UTF-8");
    let output = cmd.output().unwrap();
    assert!(
        output.status.success() || output.status.code() == Some(1),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}

/// What `git --glob-pathspecs ls-files` lists for `specs` (UTF-8 names only: the others are
/// the ones discern skips, checked on their own).
fn git_ls_files(repo: &TestRepo, specs: &[&str]) -> BTreeSet<String> {
    let mut args = vec!["--glob-pathspecs", "ls-files", "-z", "--"];
    args.extend_from_slice(specs);
    git_bytes(repo, &args)
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .filter_map(|p| String::from_utf8(p.to_vec()).ok())
        .collect()
}

fn discern_files(snapshot: &Snapshot, specs: &[&str]) -> BTreeSet<String> {
    let spec = snapshot
        .pathspec(specs)
        .unwrap_or_else(|e| panic!("{specs:?}: {e}"));
    snapshot
        .matching(&spec)
        .map(|e| e.path().to_string())
        .collect()
}

fn blob_size(repo: &TestRepo, path: &str) -> u64 {
    let out = git_bytes(repo, &["cat-file", "-s", &format!("HEAD:{path}")]);
    String::from_utf8(out).unwrap().trim().parse().unwrap()
}

const PATHSPECS: &[&[&str]] = &[
    &["*"],
    &["**"],
    &["*.rs"],
    &["**/*.rs"],
    &["src"],
    &["src/"],
    &["./src"],
    &["."],
    &["d1/../src"],
    &["src//a.rs"],
    &["glob[1].txt"],
    &[":(literal)glob[1].txt"],
    &["star*.md"],
    &["star\\*.md"],
    &["q?.txt"],
    &[":(literal)br{a,b}.txt"],
    &[":(icase)SRC/*.RS"],
    &[":(icase)src.rs"],
    &[":/src"],
    &[":(top)d1"],
    &["**/.x.rs"],
    &[".hidden"],
    &["*/.*"],
    &["d1/**/deep.rs"],
    &["d1/*/deep.rs"],
    &["\u{fc}n\u{ef}/**"],
    &["a b.txt"],
    &["a b.txt/"],
    &["src/a.rs/"],
    &["link.rs"],
    &["vendor/sub"],
    &["vendor/"],
    &["**", ":!src"],
    &["**", ":(exclude,glob)**/*.rs"],
    &[":(exclude)*.txt"],
    &[":^src", ":!d1"],
    &["src", ":(exclude,icase)SRC/A.RS"],
    &["src/*.[rt]*"],
    &["src/**", ":!src/*.rs"],
];

#[test]
fn files_agree_with_git_ls_files_under_glob_magic() {
    let repo = awkward_repo();
    let snapshot = Snapshot::open(repo.path(), "HEAD").unwrap();
    let cases: Vec<Vec<&str>> = PATHSPECS.iter().map(|c| c.to_vec()).collect();
    for specs in &cases {
        let ours = discern_files(&snapshot, specs);
        let git = git_ls_files(&repo, specs);
        assert_eq!(ours, git, "pathspecs {specs:?}");
    }
    // The extent built-in through the real sandbox: files and bytes as git counts them.
    let sandboxed = &cases[..12];
    for specs in sandboxed {
        let output = run(
            &builtin("extent"),
            json!({ "paths": specs }),
            &snapshot,
            &Limits::default(),
        )
        .unwrap_or_else(|e| panic!("{specs:?}: {e}"));
        let git = git_ls_files(&repo, specs);
        let bytes: u64 = git
            .iter()
            .filter(|p| {
                snapshot
                    .entry(p)
                    .is_some_and(|e| e.kind != EntryKind::Submodule)
            })
            .map(|p| blob_size(&repo, p))
            .sum();
        assert_eq!(value(&output, "files"), git.len() as f64, "{specs:?}");
        assert_eq!(value(&output, "bytes"), bytes as f64, "{specs:?}");
    }
    println!(
        "agreement: {} pathspec lists agree with git ls-files, {} extent files/bytes readings agree",
        cases.len(),
        sandboxed.len()
    );
}

#[test]
fn refused_pathspecs_are_the_ones_git_refuses_or_reads_otherwise() {
    let repo = awkward_repo();
    let snapshot = Snapshot::open(repo.path(), "HEAD").unwrap();
    for spec in ["../x", "/elsewhere", ":(glob,literal)x", ":(nonsense)x"] {
        assert!(snapshot.pathspec(&[spec]).is_err(), "{spec}");
        let mut cmd = Command::new("git");
        cmd.args(["--glob-pathspecs", "ls-files", "--", spec])
            .current_dir(repo.path());
        discern_tests::hermetic(&mut cmd, repo.home());
        assert!(
            !cmd.output().unwrap().status.success(),
            "git accepts {spec}"
        );
    }
    // An absolute path inside the repository: git reads it, discern refuses it and says to
    // write it relative to the root (the deliberate difference docs/standards.md names).
    let absolute = format!("{}/src", repo.path().display());
    assert_eq!(
        git_ls_files(&repo, &[&absolute]),
        git_ls_files(&repo, &["src"])
    );
    let refusal = snapshot.pathspec(&[&absolute]).unwrap_err().to_string();
    assert!(
        refusal.contains("relative to the repository root"),
        "{refusal}"
    );
    // Braces: git takes them literally (one file here); discern refuses and says why.
    assert_eq!(git_ls_files(&repo, &["br{a,b}.txt"]).len(), 1);
    let braces = snapshot.pathspec(&["*.{rs,toml}"]).unwrap_err().to_string();
    assert!(braces.contains("\"*.rs\", \"*.toml\""), "{braces}");
    // The name that is not UTF-8 is skipped and named.
    assert_eq!(snapshot.skipped(), ["bad\\xff.txt"]);
    // The pathspec a producer lists is refused through the sandbox with the same message.
    let err = run(
        &builtin("extent"),
        json!({ "paths": ["*.{rs,toml}"] }),
        &snapshot,
        &Limits::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("braces are not expanded"), "{err}");
}

/// `git grep -P <flags>` over the committed HEAD (text files only), one output line per hit.
fn git_grep(repo: &TestRepo, flags: &[&str], pattern: &str) -> Vec<String> {
    let mut args = vec!["grep", "-P", "-I", "--no-color"];
    args.extend_from_slice(flags);
    args.extend_from_slice(&["-e", pattern, "HEAD", "--", "."]);
    String::from_utf8_lossy(&git_bytes(repo, &args))
        .lines()
        .map(str::to_owned)
        .collect()
}

fn grep_count(lines: &[String]) -> f64 {
    lines
        .iter()
        .map(|l| l.rsplit(':').next().unwrap().parse::<f64>().unwrap())
        .sum()
}

struct Grep {
    lines: f64,
    files: f64,
    matches: f64,
}

fn git_grep_all(repo: &TestRepo, pattern: &str, icase: bool) -> Grep {
    let flags = |f: &'static str| if icase { vec![f, "-i"] } else { vec![f] };
    Grep {
        lines: grep_count(&git_grep(repo, &flags("-c"), pattern)),
        files: git_grep(repo, &flags("-l"), pattern).len() as f64,
        matches: git_grep(repo, &flags("-o"), pattern).len() as f64,
    }
}

fn discern_pattern(snapshot: &Snapshot, pattern: &str, icase: bool) -> (f64, f64, f64) {
    let output = run(
        &builtin("pattern"),
        json!({ "pattern": pattern, "paths": ["**"], "case_insensitive": icase }),
        snapshot,
        &Limits::default(),
    )
    .unwrap_or_else(|e| panic!("{pattern}: {e}"));
    (
        value(&output, "matches"),
        value(&output, "lines"),
        value(&output, "files"),
    )
}

/// Patterns that cannot match an empty string: all three counts agree with git grep.
/// coverage.py, installed from PyPI into a folder under `target/` by the lcov agreement test.
const COVERAGE_VERSION: &str = "7.17.3";

const NON_EMPTY_PATTERNS: &[&str] = &[
    "TODO",
    "\\s+",
    "a\\s+b",
    "e$",
    "^[a-z]+",
    "[0-9]+",
    "fo+",
    "\u{e9}+",
    "\\t",
    "\\r",
    "line\\s+two",
    "TODO\\s*\\S*",
];

/// Patterns that can match empty: lines and files agree with `git grep -c`/`-l`; occurrences
/// are non-empty matches only (git grep -o stops at a line's first empty match).
const EMPTY_PATTERNS: &[&str] = &["^$", "^[ \\t]*$", "^\\s*$", "TODO|", "x*"];

#[test]
fn pattern_agrees_with_git_grep_p() {
    let repo = awkward_repo();
    let snapshot = Snapshot::open(repo.path(), "HEAD").unwrap();
    let mut agreed = 0;
    for pattern in NON_EMPTY_PATTERNS {
        for icase in [false, true] {
            let (matches, lines, files) = discern_pattern(&snapshot, pattern, icase);
            let git = git_grep_all(&repo, pattern, icase);
            assert_eq!(matches, git.matches, "{pattern} -o (icase {icase})");
            assert_eq!(lines, git.lines, "{pattern} -c (icase {icase})");
            assert_eq!(files, git.files, "{pattern} -l (icase {icase})");
            agreed += 3;
        }
    }
    for pattern in EMPTY_PATTERNS {
        let (_, lines, files) = discern_pattern(&snapshot, pattern, false);
        let git = git_grep_all(&repo, pattern, false);
        assert_eq!(lines, git.lines, "{pattern} -c");
        assert_eq!(files, git.files, "{pattern} -l");
        agreed += 2;
    }
    // `TODO|` counts the TODOs, never every position.
    let (todo_or_empty, _, _) = discern_pattern(&snapshot, "TODO|", false);
    assert_eq!(todo_or_empty, git_grep_all(&repo, "TODO", false).matches);
    println!("agreement: {agreed} pattern readings agree with git grep -P (-o, -c, -l)");
}

/// `wc -l -w -c` of one committed blob, under `LC_ALL=C.UTF-8`.
fn wc(repo: &TestRepo, id: &str) -> (u64, u64, u64, bool) {
    let blob = git_bytes(repo, &["cat-file", "blob", id]);
    let mut child = Command::new("wc")
        .args(["-l", "-w", "-c"])
        .env_clear()
        .env("LC_ALL", "C.UTF-8")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), &blob).unwrap();
    let out = String::from_utf8(child.wait_with_output().unwrap().stdout).unwrap();
    let n: Vec<u64> = out.split_whitespace().map(|w| w.parse().unwrap()).collect();
    let unterminated = blob.last().is_some_and(|&b| b != b'\n');
    let binary = blob.iter().take(8000).any(|&b| b == 0);
    (n[0] + u64::from(unterminated), n[1], n[2], binary)
}

fn extent(snapshot: &Snapshot, specs: &[String]) -> (f64, f64, f64) {
    let output = run(
        &builtin("extent"),
        json!({ "paths": specs }),
        snapshot,
        &Limits::default(),
    )
    .unwrap_or_else(|e| panic!("{specs:?}: {e}"));
    (
        value(&output, "lines"),
        value(&output, "words"),
        value(&output, "bytes"),
    )
}

/// Every text blob's lines and words against `wc`, one file at a time (named with
/// `:(literal)`, so names full of glob characters are exercised too); returns the count.
fn extent_agrees_with_wc(repo: &TestRepo, snapshot: &Snapshot) -> usize {
    let mut agreed = 0;
    for entry in snapshot.entries() {
        if entry.kind == EntryKind::Submodule {
            continue;
        }
        let (lines, words, bytes, binary) = wc(repo, &entry.id.to_string());
        let ours = extent(snapshot, &[format!(":(literal){}", entry.path())]);
        let expected = if binary {
            (0.0, 0.0, bytes as f64)
        } else {
            (lines as f64, words as f64, bytes as f64)
        };
        assert_eq!(ours, expected, "{} (lines, words, bytes)", entry.path());
        agreed += 1;
    }
    agreed
}

#[test]
fn extent_agrees_with_wc_on_the_committed_blobs() {
    let repo = awkward_repo();
    let snapshot = Snapshot::open(repo.path(), "HEAD").unwrap();
    let agreed = extent_agrees_with_wc(&repo, &snapshot);
    println!("agreement: {agreed} files' lines, words and bytes agree with wc");
}

/// Texts of a few kilobytes, mostly ASCII source with characters of two to four bytes, lone
/// continuation bytes and every separator at any offset: the built-in judges whole blocks of
/// ASCII at once and decodes the rest, and both must agree with `wc` wherever a block is cut.
#[test]
fn long_texts_agree_with_wc_wherever_the_blocks_fall() {
    let pieces: [&[u8]; 12] = [
        b"fn main() {\n    let quick = brown(fox); // jumps over the lazy dog\n}\n",
        b"        return Err(Error::new(\"a message that runs on and on\"));\r\n",
        b" ",
        b"\t\t",
        b"\n",
        b"\x0b\x0c",
        "\u{e9}t\u{e9}".as_bytes(),
        "\u{3000}".as_bytes(),
        "\u{4e2d}\u{1f600}".as_bytes(),
        "\u{a0}".as_bytes(),
        b"\xff\x80",
        b"x",
    ];
    let repo = TestRepo::new();
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for file in 0..24 {
        let mut text = Vec::new();
        let size = 1_000 + next() % 40_000;
        while (text.len() as u64) < size {
            // Mostly the long ASCII lines, as source is.
            let piece = match next() % 4 {
                0 => next() % 12,
                _ => next() % 2,
            };
            text.extend_from_slice(pieces[piece as usize]);
        }
        repo.write(&format!("long/{file}.txt"), &text);
    }
    // More newlines than a lane counts before it is summed (255 rounds of 16 bytes).
    repo.write("long/newlines.txt", [b'\n'; 16 * 700 + 5]);
    repo.commit("long texts");
    let snapshot = Snapshot::open(repo.path(), "HEAD").unwrap();
    let agreed = extent_agrees_with_wc(&repo, &snapshot);
    assert_eq!(agreed, 25);
    println!("agreement: {agreed} long texts' lines, words and bytes agree with wc");
}

/// Names and contents drawn from the characters that break naive implementations.
fn name() -> impl Strategy<Value = String> {
    proptest::string::string_regex("[a-c .\\[\\]*?_\u{e9}\u{4e2d}-]{1,6}")
        .unwrap()
        .prop_filter("a usable file name", |n| {
            n != "." && n != ".." && !n.starts_with(' ') && !n.ends_with(' ') && n != ".git"
        })
}

fn content() -> impl Strategy<Value = String> {
    proptest::string::string_regex(
        "(TODO|ab|a|b|\u{e9}| |\t|\n|\r\n|\u{b}|\u{c}|\u{a0}|\u{3000}|\u{200b}|x|1){0,24}",
    )
    .unwrap()
}

fn tree() -> impl Strategy<Value = Vec<(String, String)>> {
    proptest::collection::vec(
        (
            proptest::collection::vec(name(), 1..4).prop_map(|parts| parts.join("/")),
            content(),
        ),
        1..8,
    )
}

/// A random tree committed; `None` when the generated paths collide (a file is also a folder).
fn commit_tree(files: &[(String, String)]) -> Option<TestRepo> {
    let repo = TestRepo::new();
    let mut seen = BTreeSet::new();
    for (path, _) in files {
        let parts: Vec<&str> = path.split('/').collect();
        for i in 1..parts.len() {
            if seen.contains(&parts[..i].join("/")) {
                return None;
            }
        }
        if seen
            .iter()
            .any(|s: &String| s.starts_with(&format!("{path}/")))
        {
            return None;
        }
        seen.insert(path.clone());
    }
    for (path, content) in files {
        repo.write(path, content);
    }
    repo.commit("random");
    Some(repo)
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10)
}

#[test]
fn random_trees_agree_with_git_and_wc() {
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    let checked = std::sync::atomic::AtomicUsize::new(0);
    runner
        .run(&tree(), |files| {
            let Some(repo) = commit_tree(&files) else {
                return Ok(());
            };
            let snapshot = Snapshot::open(repo.path(), "HEAD").unwrap();
            let first = files[0].0.clone();
            let literal = format!(":(literal){first}");
            let dir = first.split('/').next().unwrap().to_owned();
            let specs: Vec<Vec<&str>> = vec![
                vec!["**"],
                vec!["*"],
                vec!["**/*a*"],
                vec![&first],
                vec![&literal],
                vec![&dir],
                vec!["**", ":!a"],
                vec![":(icase)A*/**"],
            ];
            for spec in &specs {
                if snapshot.pathspec(spec).is_err() {
                    continue;
                }
                let ours = discern_files(&snapshot, spec);
                prop_assert_eq!(&ours, &git_ls_files(&repo, spec), "pathspecs {:?}", spec);
            }
            extent_agrees_with_wc(&repo, &snapshot);
            for pattern in ["TODO", "\\s+", "^$", "a\\s*b"] {
                let (matches, lines, files) = discern_pattern(&snapshot, pattern, false);
                let git = git_grep_all(&repo, pattern, false);
                prop_assert_eq!(lines, git.lines, "{} -c", pattern);
                prop_assert_eq!(files, git.files, "{} -l", pattern);
                if pattern != "^$" {
                    prop_assert_eq!(matches, git.matches, "{} -o", pattern);
                }
            }
            checked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Ok(())
        })
        .unwrap();
    println!(
        "agreement: {} random trees agree with git ls-files, git grep -P and wc",
        checked.into_inner()
    );
}

fn lcov_reading(
    trace: &[u8],
) -> Result<discern::testing::runtime::RunOutput, discern::testing::runtime::ProducerError> {
    let repo = TestRepo::new();
    repo.write("cov.info", trace);
    repo.commit("trace");
    let snapshot = Snapshot::open(repo.path(), "HEAD").unwrap();
    run(
        &builtin("lcov"),
        json!({ "path": "cov.info" }),
        &snapshot,
        &Limits::default(),
    )
}

fn sh(dir: &Path, script: &str) -> std::process::Output {
    Command::new("sh")
        .args(["-c", script])
        .current_dir(dir)
        .output()
        .unwrap()
}

#[test]
fn lcov_agrees_with_coverage_py() {
    let coverage = discern_tests::pip_tool(
        Path::new(env!("CARGO_TARGET_TMPDIR")),
        "coverage",
        COVERAGE_VERSION,
        "coverage",
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("m.py"),
        "def used(x):\n    if x:\n        return 1\n    return 2\n\n\ndef unused():\n    return 3\n\n\nclass K:\n    def method(self):\n        return 4\n\n\nused(True)\nK().method()\n",
    )
    .unwrap();
    let out = sh(
        dir.path(),
        &format!(
            "{c} run --branch m.py && {c} lcov -q -o cov.info && {c} json -q -o cov.json",
            c = coverage.display()
        ),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let trace = std::fs::read(dir.path().join("cov.info")).unwrap();
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("cov.json")).unwrap()).unwrap();
    let totals = &report["totals"];
    let output = lcov_reading(&trace).unwrap();
    assert_eq!(
        value(&output, "lines_found"),
        totals["num_statements"].as_f64().unwrap()
    );
    assert_eq!(
        value(&output, "lines_hit"),
        totals["covered_lines"].as_f64().unwrap()
    );
    assert_eq!(
        value(&output, "line_percent"),
        100.0 * totals["covered_lines"].as_f64().unwrap()
            / totals["num_statements"].as_f64().unwrap()
    );
    assert_eq!(
        value(&output, "branches_found"),
        totals["num_branches"].as_f64().unwrap()
    );
    assert_eq!(
        value(&output, "branches_hit"),
        totals["covered_branches"].as_f64().unwrap()
    );
    // Three functions, two of them called: each counts once whatever FN form coverage.py writes.
    if String::from_utf8_lossy(&trace).contains("FN:") {
        assert_eq!(value(&output, "functions_found"), 3.0);
        assert_eq!(value(&output, "functions_hit"), 2.0);
    }
    println!(
        "agreement: coverage.py's lcov: lines and branches found/hit agree with coverage json, functions with the source"
    );
}

/// (hit, found) of one kind.
type HitFound = (f64, f64);

/// `lcov --summary`'s "lines", "functions" and "branches" (hit, found).
fn lcov_summary(dir: &Path, file: &str) -> Option<[HitFound; 3]> {
    let out = sh(
        dir,
        &format!("lcov --rc lcov_branch_coverage=1 --summary {file} 2>&1"),
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let grab = |kind: &str| -> Option<(f64, f64)> {
        let line = text.lines().find(|l| l.trim_start().starts_with(kind))?;
        let inner = line.split('(').nth(1)?;
        let mut words = inner.split_whitespace();
        let hit = words.next()?.parse().ok()?;
        words.next()?;
        let found = words.next()?.parse().ok()?;
        Some((hit, found))
    };
    Some([grab("lines")?, grab("functions")?, grab("branches")?])
}

#[test]
fn lcov_agrees_with_gcc_and_lcov_capture() {
    discern_tests::ensure_debian_tool("gcc", "gcc");
    discern_tests::ensure_debian_tool("lcov", "lcov");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("t.c"),
        "static int used(int x) {\n  if (x)\n    return 1;\n  return 2;\n}\nint unused(void) {\n  return 3;\n}\nint main(void) {\n  return used(1) - 1;\n}\n",
    )
    .unwrap();
    let out = sh(
        dir.path(),
        "gcc --coverage -O0 -o t t.c && ./t && lcov -q --rc lcov_branch_coverage=1 --capture --directory . --output-file c.info 2>/dev/null",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let trace = std::fs::read(dir.path().join("c.info")).unwrap();
    let [
        (lines_hit, lines_found),
        (fn_hit, fn_found),
        (br_hit, br_found),
    ] = lcov_summary(dir.path(), "c.info").expect("lcov --summary reads its own file");
    let output = lcov_reading(&trace).unwrap();
    assert_eq!(value(&output, "lines_found"), lines_found);
    assert_eq!(value(&output, "lines_hit"), lines_hit);
    assert_eq!(value(&output, "functions_found"), fn_found);
    assert_eq!(value(&output, "functions_hit"), fn_hit);
    assert_eq!(value(&output, "branches_found"), br_found);
    assert_eq!(value(&output, "branches_hit"), br_hit);
    // A tracefile cut before its final `end_of_record`: lcov drops that record, so do we.
    let text = String::from_utf8_lossy(&trace).into_owned();
    let cut = format!(
        "{text}SF:{}/extra.c\nDA:1,1\nDA:2,0\n",
        dir.path().display()
    );
    std::fs::write(dir.path().join("cut.info"), &cut).unwrap();
    let cut_output = lcov_reading(cut.as_bytes()).unwrap();
    match lcov_summary(dir.path(), "cut.info") {
        Some([(hit, found), _, _]) => {
            assert_eq!(value(&cut_output, "lines_found"), found);
            assert_eq!(value(&cut_output, "lines_hit"), hit);
        }
        None => assert_eq!(value(&cut_output, "lines_found"), lines_found),
    }
    println!(
        "agreement: gcc + lcov --capture: lines, functions and branches agree with lcov --summary, with and without a final end_of_record"
    );
}
