//! `BENCH_ONLY=memory` (issue 51): the peak resident memory of a first run of the real
//! `discern standards` binary (no evidence), with a pattern Standard and a line-count Standard
//! on `**`, at several sizes of the synthetic repository side by side, measured by
//! `/usr/bin/time` (the child's maximum resident set). Once with a pattern that matches (about
//! five findings a file) and once with one that matches nothing; each followed by a commit
//! that changes one file, measured again (what the first run recorded is reused).
//!
//! Env: `BENCH_MEMORY_FILES` (default `50000,100000,200000`), `DISCERN_BIN` (default the
//! binary cargo built beside this bench).

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

/// A first run, then a one-file commit after it: each one's peak resident KiB, wall seconds.
fn first_run(bin: &str, repo: &Path, config: &str) -> [(u64, f64); 2] {
    let clone = clone_with_config(repo, "memory", config);
    let first = peak(bin, &clone);
    sh(
        &clone,
        "echo '// one more line' >> src/m000/d00/f00000.rs && git -c user.name=b -c user.email=b@x commit -qam one",
    );
    let one_file = peak(bin, &clone);
    discard(&clone);
    [first, one_file]
}

pub fn print_peaks(target: &Path) {
    let sizes: Vec<usize> = std::env::var("BENCH_MEMORY_FILES")
        .unwrap_or_else(|_| "50000,100000,200000".to_owned())
        .split(',')
        .map(|s| s.trim().parse().expect("a file count"))
        .collect();
    let bin = std::env::var("DISCERN_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_discern").into());
    println!("\nissue 51: peak memory of a first run of `discern standards` ({bin})");
    println!(
        "files      pattern matches        pattern matches nothing    one-file commit after (matches, nothing)"
    );
    let mut rows = Vec::new();
    for files in sizes {
        let repo = target.join(format!("synthetic-{files}"));
        ensure_repo(&repo, files);
        let [matching, matching_one] =
            first_run(&bin, &repo, &format!("{TOGETHER_PATTERN}{TOGETHER_EXTENT}"));
        let [nothing, nothing_one] = first_run(&bin, &repo, &format!("{NOTHING}{TOGETHER_EXTENT}"));
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
    if let [(f0, m0, n0), .., (f1, m1, n1)] = rows[..] {
        let per = |a: u64, b: u64| (b as f64 - a as f64) / (f1 - f0) as f64;
        println!(
            "growth per tracked file: {:.2} KiB (matches), {:.2} KiB (nothing)",
            per(m0, m1),
            per(n0, n1)
        );
        // Issue 51's 400,000 files, projected along the line through the first and last sizes
        // measured (or measured: name 400000 in `BENCH_MEMORY_FILES`).
        let at = PROJECT_TO.saturating_sub(f1) as f64;
        let project = |a: u64, b: u64| (b as f64 + per(a, b) * at) / 1024.0;
        println!(
            "projected at {PROJECT_TO} files: {:.0} MiB (matches), {:.0} MiB (nothing)",
            project(m0, m1),
            project(n0, n1)
        );
    }
}
