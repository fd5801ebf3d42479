//! `BENCH_ONLY=memory` (issue 51): the peak resident memory of a first run of the real
//! `discern standards` binary (no evidence), with a pattern Standard and a line-count Standard
//! on `**`, at several sizes of the synthetic repository side by side, measured by
//! `/usr/bin/time` (the child's maximum resident set). Once with a pattern that matches (about
//! five findings a file) and once with one that matches nothing; each followed by a commit
//! that changes one file, measured again (what the first run recorded is reused). Each figure
//! is the median of `BENCH_MEMORY_RUNS` runs (default 3): one run's peak moves by several MiB
//! with how the allocator's arenas happen to fill.
//!
//! Env: `BENCH_MEMORY_FILES` (default `50000,100000,200000`), `BENCH_MEMORY_RUNS`,
//! `DISCERN_BIN` (default the binary cargo built beside this bench).

use std::path::Path;
use std::process::{Command, Stdio};

use super::{TOGETHER_EXTENT, TOGETHER_PATTERN, clone_with_config, discard, ensure_repo, sh};

/// The repository size issue 51 asks about, beyond what the bench generates.
const PROJECT_TO: usize = 400_000;

const NOTHING: &str = r#"
[standards.todo]
direction = "down"
limit = 1000000000
producer = "builtin:pattern"
config = { pattern = "NO_SUCH_WORD_ANYWHERE", paths = ["**"] }
metric = "matches"
"#;

/// One run of `discern standards` in `clone`: peak resident KiB, wall seconds.
fn peak(bin: &str, clone: &Path) -> (u64, f64) {
    let out = Command::new("/usr/bin/time")
        .args(["-f", "%M %e", bin, "standards"])
        .current_dir(clone)
        .stdout(Stdio::null())
        .output()
        .expect("run /usr/bin/time");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "discern standards failed: {stderr}");
    let last = stderr.lines().last().expect("time's line");
    let mut fields = last.split_whitespace();
    let kib = fields.next().and_then(|f| f.parse().ok()).expect("max RSS");
    let secs = fields.next().and_then(|f| f.parse().ok()).expect("elapsed");
    (kib, secs)
}

/// A first run, then a one-file commit after it, `runs` times in one clone: the median of
/// each one's peak resident KiB, and its wall seconds.
fn first_run(bin: &str, repo: &Path, config: &str, runs: usize) -> [(u64, f64); 2] {
    let clone = clone_with_config(repo, "memory", config);
    let (mut firsts, mut one_files) = (Vec::new(), Vec::new());
    for _ in 0..runs.max(1) {
        sh(&clone, "rm -rf .git/discern && git reset -q --hard");
        firsts.push(peak(bin, &clone));
        sh(
            &clone,
            "echo '// one more line' >> src/m000/d00/f00000.rs && git -c user.name=b -c user.email=b@x commit -qam one",
        );
        one_files.push(peak(bin, &clone));
        sh(&clone, "git reset -q --hard HEAD~1");
    }
    discard(&clone);
    [middle(firsts), middle(one_files)]
}

/// The run of median peak.
fn middle(mut runs: Vec<(u64, f64)>) -> (u64, f64) {
    runs.sort_by_key(|&(kib, _)| kib);
    runs[runs.len() / 2]
}

pub fn print_peaks(target: &Path) {
    let sizes: Vec<usize> = std::env::var("BENCH_MEMORY_FILES")
        .unwrap_or_else(|_| "50000,100000,200000".to_owned())
        .split(',')
        .map(|s| s.trim().parse().expect("a file count"))
        .collect();
    let bin = std::env::var("DISCERN_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_discern").into());
    let runs = std::env::var("BENCH_MEMORY_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(3);
    println!(
        "\nissue 51: peak memory of a first run of `discern standards` ({bin}; medians of {runs})"
    );
    println!(
        "files      pattern matches        pattern matches nothing    one-file commit after (matches, nothing)"
    );
    let mut rows = Vec::new();
    for files in sizes {
        let repo = target.join(format!("synthetic-{files}"));
        ensure_repo(&repo, files);
        let [matching, matching_one] = first_run(
            &bin,
            &repo,
            &format!("{TOGETHER_PATTERN}{TOGETHER_EXTENT}"),
            runs,
        );
        let [nothing, nothing_one] =
            first_run(&bin, &repo, &format!("{NOTHING}{TOGETHER_EXTENT}"), runs);
        let mib =
            |(kib, secs): (u64, f64)| format!("{:>5.0} MiB ({secs:>5.1} s)", kib as f64 / 1024.0);
        println!(
            "{files:>7}    {}     {}     {}, {}",
            mib(matching),
            mib(nothing),
            mib(matching_one),
            mib(nothing_one)
        );
        rows.push((files, matching.0, nothing.0));
        super::empty_trash(&repo);
    }
    for pair in rows.windows(2).filter(|_| rows.len() > 2) {
        let [(f0, m0, n0), (f1, m1, n1)] = pair else {
            continue;
        };
        let per = |a: u64, b: u64| (b as f64 - a as f64) / (f1 - f0) as f64;
        println!(
            "growth per tracked file from {f0} to {f1}: {:.2} KiB (matches), {:.2} KiB (nothing)",
            per(*m0, *m1),
            per(*n0, *n1)
        );
    }
    if let [(f0, m0, n0), .., (f1, m1, n1)] = rows[..] {
        let per = |a: u64, b: u64| (b as f64 - a as f64) / (f1 - f0) as f64;
        println!(
            "growth per tracked file: {:.2} KiB (matches), {:.2} KiB (nothing)",
            per(m0, m1),
            per(n0, n1)
        );
        // Issue 51's 400,000 files, projected along the line through the first and last sizes
        // measured (or measured: name 400000 in `BENCH_MEMORY_FILES`).
        if f1 >= PROJECT_TO {
            return;
        }
        let at = (PROJECT_TO - f1) as f64;
        let project = |a: u64, b: u64| (b as f64 + per(a, b) * at) / 1024.0;
        println!(
            "projected at {PROJECT_TO} files: {:.0} MiB (matches), {:.0} MiB (nothing)",
            project(m0, m1),
            project(n0, n1)
        );
    }
}
