//! Producer-host benchmark: a synthetic 20,000-file (~200 MB) repository, measured by the
//! built-in producers through the real host, side by side with git and coreutils doing the
//! same job in the same run. Prints a table; asserts that the values agree.
//!
//! A cold compile cache is a fresh, empty cache directory per run (what every CI runner starts
//! with); built-ins load the code precompiled into the binary either way, so cold and warm
//! rows should agree.
//!
//! Run: `cargo bench -p discern --bench producer_host` (env `BENCH_FILES`, `BENCH_RUNS`;
//! `BENCH_ONLY=together` for the pattern + line-count rows of issue 51 alone;
//! `BENCH_ONLY=memory` for the peak memory of a first run at several sizes, see [`memory`]).

#[path = "producer_host/memory.rs"]
mod memory;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use discern::testing::measure::EvidenceUse;
use discern::testing::runtime::{Artifacts, Limits, Runtime};
use discern::testing::snapshot::Snapshot;

const PATTERN: &str = "TODO";

fn main() {
    let files: usize = env_or("BENCH_FILES", 20_000);
    let runs: usize = env_or("BENCH_RUNS", 5);
    let target = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/bench");
    // `BENCH_ONLY=memory`: peak memory of a first run at `BENCH_MEMORY_FILES` sizes.
    if std::env::var("BENCH_ONLY").is_ok_and(|only| only == "memory") {
        memory::print_peaks(&target);
        return;
    }
    let repo = target.join(format!("synthetic-{files}"));
    ensure_repo(&repo, files);
    // `BENCH_ONLY=findings`: the findings rows alone (e.g. under a profiler).
    if std::env::var("BENCH_ONLY").is_ok_and(|only| only == "findings") {
        print_findings(&findings_cost(&repo, runs));
        empty_trash(&repo);
        return;
    }
    // `BENCH_ONLY=evidence`: the evidence-reuse rows alone (reuse against Proof's fresh runs).
    if std::env::var("BENCH_ONLY").is_ok_and(|only| only == "evidence") {
        print_evidence(&evidence_scenarios(&repo, runs));
        empty_trash(&repo);
        return;
    }
    // `BENCH_ONLY=together`: a pattern and a line count together against each alone.
    if std::env::var("BENCH_ONLY").is_ok_and(|only| only == "together") {
        print_together(&together(&repo, runs));
        empty_trash(&repo);
        return;
    }
    let size = dir_size(&repo);
    println!(
        "repository: {} files, {:.0} MB of text, packed ({})",
        files,
        size as f64 / 1e6,
        repo.display()
    );

    let limits = Limits::with_timeout(Duration::from_secs(600));
    let pattern = discern::testing::builtins::component("pattern").expect("built-in");
    let extent = discern::testing::builtins::component("extent").expect("built-in");
    let pattern_config = format!(r#"{{"pattern": "{PATTERN}", "paths": ["**"]}}"#);
    let extent_config = r#"{"paths": ["**"]}"#;

    // git grep -c counts matching lines per file; the fixture has at most one match per line.
    let (git_grep, git_count) = median(runs, || {
        let out = sh(&repo, &format!("git grep -c {PATTERN} HEAD"));
        out.lines()
            .filter_map(|l| l.rsplit(':').next()?.parse::<u64>().ok())
            .sum::<u64>() as f64
    });

    let cache = tempfile::tempdir().expect("temp dir");
    let (cold, cold_count) = median(runs, || {
        // A fresh cache directory each time: compile included.
        let fresh = tempfile::tempdir().expect("temp dir");
        let runtime = Runtime::with_cache_dir(Some(fresh.path().to_owned())).expect("runtime");
        measure(
            &runtime,
            &repo,
            &pattern,
            &pattern_config,
            &limits,
            "matches",
        )
    });
    let warm_runtime = || Runtime::with_cache_dir(Some(cache.path().to_owned())).expect("runtime");
    measure(
        &warm_runtime(),
        &repo,
        &pattern,
        &pattern_config,
        &limits,
        "matches",
    );
    let (warm, warm_count) = median(runs, || {
        measure(
            &warm_runtime(),
            &repo,
            &pattern,
            &pattern_config,
            &limits,
            "matches",
        )
    });

    // The producer alone, making no findings: what findings cost the scan itself.
    let no_findings_config =
        format!(r#"{{"pattern": "{PATTERN}", "paths": ["**"], "max_findings": 0}}"#);
    let (no_findings, no_findings_count) = median(runs, || {
        measure(
            &warm_runtime(),
            &repo,
            &pattern,
            &no_findings_config,
            &limits,
            "matches",
        )
    });

    let (wc, wc_lines) = median(runs, || {
        sh(&repo, "git ls-files -z | xargs -0 cat | wc -l")
            .trim()
            .parse::<f64>()
            .expect("wc prints a number")
    });
    let (extent_cold, extent_cold_lines) = median(runs, || {
        let fresh = tempfile::tempdir().expect("temp dir");
        let runtime = Runtime::with_cache_dir(Some(fresh.path().to_owned())).expect("runtime");
        measure(&runtime, &repo, &extent, extent_config, &limits, "lines")
    });
    measure(
        &warm_runtime(),
        &repo,
        &extent,
        extent_config,
        &limits,
        "lines",
    );
    let (extent_time, extent_lines) = median(runs, || {
        measure(
            &warm_runtime(),
            &repo,
            &extent,
            extent_config,
            &limits,
            "lines",
        )
    });
    let (open, open_bytes) = median(runs, || {
        let snapshot = Snapshot::open(&repo, "HEAD").expect("snapshot");
        // Sizes are looked up lazily, when a producer lists entries: include them here.
        let mut reader = snapshot.reader();
        (0..snapshot.entries().len())
            .map(|i| reader.size(i).expect("size"))
            .sum::<u64>() as f64
    });

    let evidence = evidence_scenarios(&repo, runs);
    let findings = findings_cost(&repo, runs);
    let together = together(&repo, runs);

    assert_eq!(git_count, cold_count, "pattern and git grep disagree");
    assert_eq!(cold_count, warm_count);
    assert_eq!(no_findings_count, warm_count);
    assert_eq!(wc_lines, extent_lines, "extent and wc -l disagree");
    assert_eq!(extent_cold_lines, extent_lines);

    println!("\nmedian of {runs} runs; ratio = host / reference");
    println!(
        "{:<52} {:>10} {:>12} {:>8}",
        "workload", "time", "value", "ratio"
    );
    row(
        &format!("git grep -c {PATTERN} HEAD"),
        git_grep,
        git_count,
        git_grep,
    );
    row(
        "builtin:pattern via host, cold compile cache",
        cold,
        cold_count,
        git_grep,
    );
    row(
        "builtin:pattern via host, warm compile cache",
        warm,
        warm_count,
        git_grep,
    );
    row(
        "builtin:pattern via host, warm, max_findings = 0",
        no_findings,
        no_findings_count,
        git_grep,
    );
    row("git ls-files -z | xargs -0 cat | wc -l", wc, wc_lines, wc);
    row(
        "builtin:extent lines via host, cold compile cache",
        extent_cold,
        extent_cold_lines,
        wc,
    );
    row(
        "builtin:extent lines via host, warm cache",
        extent_time,
        extent_lines,
        wc,
    );
    row(
        "  of which: snapshot open (list + sizes)",
        open,
        open_bytes,
        wc,
    );
    print_evidence(&evidence);
    print_findings(&findings);
    print_together(&together);
    empty_trash(&repo);
}

fn print_evidence(rows: &EvidenceRows) {
    let status = rows.status;
    println!(
        "\nevidence reuse: 10 Standards over 4 producer identities (whole `discern standards` flow)"
    );
    row("git status --porcelain", status, 0.0, status);
    row(
        "discern standards, no evidence (4 producer runs)",
        rows.cold,
        4.0,
        status,
    );
    row(
        "discern standards after an unrelated commit (runs)",
        rows.reused,
        f64::from(rows.reused_runs),
        status,
    );
    row(
        "  the same commit as done/accept measure it (runs; nothing reused)",
        rows.proof,
        rows.proof_runs,
        status,
    );
    row(
        "discern standards after one input changed (runs)",
        rows.one,
        f64::from(rows.one_runs),
        status,
    );
}

/// Move an earlier run's clone out of the way. Deleting twenty thousand files just before a
/// measurement would slow every file the measurement creates (ext4 skips recently deleted
/// inodes when it allocates one), so the trash is emptied after the last row.
fn discard(dir: &Path) {
    if !dir.exists() {
        return;
    }
    let trash = trash(dir);
    std::fs::create_dir_all(&trash).expect("trash folder");
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("clone");
    std::fs::rename(dir, trash.join(format!("{name}-{nanos}"))).expect("move to trash");
}

fn trash(near: &Path) -> PathBuf {
    near.with_file_name("trash")
}

fn empty_trash(repo: &Path) {
    let _ = std::fs::remove_dir_all(trash(repo));
}

/// The findings-cost rows, as ratios to keeping none.
fn print_findings(cost: &FindingsCost) {
    println!("\nfindings (issue 17): `discern standards`, one pattern Standard over every file");
    row(
        "no findings made or compared (files, max_findings = 0)",
        cost.without,
        cost.files,
        cost.without,
    );
    row(
        "findings made, then dropped (files metric, none recorded)",
        cost.made,
        cost.files,
        cost.without,
    );
    row(
        "findings kept, compared with the parent's (recorded)",
        cost.with,
        cost.count,
        cost.without,
    );
    row(
        "findings kept, no evidence (the parent measured too)",
        cost.fresh,
        cost.count,
        cost.without,
    );
    println!(
        "kept and compared against made only: {:.2}x (recorded parent), {:.2}x (no evidence)",
        cost.with.as_secs_f64() / cost.made.as_secs_f64(),
        cost.fresh.as_secs_f64() / cost.made.as_secs_f64()
    );
    println!(
        "evidence: {} findings in {} bytes of findings file per entry = {:.0} KiB per 10,000 findings",
        cost.kept,
        cost.bytes_per_entry,
        cost.bytes_per_entry as f64 / cost.kept.max(1) as f64 * 10_000.0 / 1024.0
    );
}

/// One row: name, time, value, and the time's ratio to `reference`.
fn row(name: &str, t: Duration, v: f64, reference: Duration) {
    println!(
        "{:<52} {:>8.0}ms {:>12} {:>7.2}x",
        name,
        t.as_secs_f64() * 1e3,
        v,
        t.as_secs_f64() / reference.as_secs_f64()
    );
}

/// Open the HEAD snapshot and run one producer; returns the metric's value.
fn measure(
    runtime: &Runtime,
    repo: &Path,
    component: &discern::testing::runtime::ProducerComponent,
    config: &str,
    limits: &Limits,
    metric: &str,
) -> f64 {
    let snapshot = Snapshot::open(repo, "HEAD").expect("snapshot");
    let out = runtime
        .run(
            component,
            config,
            &snapshot,
            Arc::new(Artifacts::new()),
            limits,
        )
        .unwrap_or_else(|e| panic!("{e}"));
    out.metrics
        .iter()
        .find(|m| m.name == metric)
        .expect("metric")
        .value
}

fn median(runs: usize, f: impl FnMut() -> f64) -> (Duration, f64) {
    median_after(runs, || {}, f)
}

/// [`median`], with `before` run before each timed run, untimed.
fn median_after(
    runs: usize,
    mut before: impl FnMut(),
    mut f: impl FnMut() -> f64,
) -> (Duration, f64) {
    let mut times = Vec::new();
    let mut value = 0.0;
    for _ in 0..runs.max(1) {
        before();
        let start = Instant::now();
        value = f();
        times.push(start.elapsed());
    }
    times.sort();
    (times[times.len() / 2], value)
}

fn ensure_repo(repo: &Path, files: usize) {
    if repo.join(".git/discern-bench-ready").exists() {
        return;
    }
    let _ = std::fs::remove_dir_all(repo);
    std::fs::create_dir_all(repo).expect("create bench repo");
    eprintln!("generating {files} files in {} ...", repo.display());
    let mut rng = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    const WORDS: &[&str] = &[
        "let", "value", "return", "match", "self", "config", "snapshot", "producer", "fn", "impl",
        "struct", "pub", "use", "mod", "if", "else", "for", "while", "loop", "break", "=", "+",
        "{", "}", "(", ")", ";", "//", "result", "error", "measure", "limit", "standard",
    ];
    for i in 0..files {
        let dir = repo.join(format!("src/m{:03}/d{:02}", i % 200, (i / 200) % 20));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let mut text = String::with_capacity(11_000);
        while text.len() < 10_000 {
            let words = 4 + next() % 12;
            for w in 0..words {
                if w > 0 {
                    text.push(' ');
                }
                text.push_str(WORDS[(next() % WORDS.len() as u64) as usize]);
            }
            if next() % 50 == 0 {
                text.push_str(" // TODO: revisit");
            }
            text.push('\n');
        }
        std::fs::write(dir.join(format!("f{i:05}.rs")), text).expect("write");
    }
    for args in [
        &["init", "-q", "-b", "main"][..],
        &["config", "gc.auto", "0"],
        &["add", "-A"],
        &[
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@example.com",
            "commit",
            "-q",
            "-m",
            "synthetic",
        ],
        &["repack", "-adq"],
        &["prune-packed"],
    ] {
        let status = Command::new("git")
            .args(args)
            .current_dir(repo)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .status()
            .expect("run git");
        assert!(status.success(), "git {args:?} failed");
    }
    std::fs::write(repo.join(".git/discern-bench-ready"), "").expect("marker");
}

fn sh(dir: &Path, script: &str) -> String {
    let out = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .output()
        .expect("run sh");
    assert!(out.status.success(), "{script} failed");
    String::from_utf8(out.stdout).expect("utf-8")
}

fn dir_size(repo: &Path) -> u64 {
    sh(repo, "git ls-files -z | xargs -0 cat | wc -c")
        .trim()
        .parse()
        .unwrap_or(0)
}

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

const EVIDENCE_CONFIG: &str = r#"
[standards.todo_low]
direction = "down"
limit = 1000000
producer = "builtin:pattern"
config = { pattern = "TODO", paths = ["src/m0*/**"] }
metric = "matches"
[standards.todo_low_files]
direction = "down"
limit = 1000000
producer = "builtin:pattern"
config = { pattern = "TODO", paths = ["src/m0*/**"] }
metric = "files"
[standards.fns_mid]
direction = "up"
limit = 0
producer = "builtin:pattern"
config = { pattern = "\\bfn\\b", paths = ["src/m1*/**"] }
metric = "matches"
[standards.fns_mid_files]
direction = "up"
limit = 0
producer = "builtin:pattern"
config = { pattern = "\\bfn\\b", paths = ["src/m1*/**"] }
metric = "files"
[standards.files]
direction = "up"
limit = 0
producer = "builtin:extent"
config = { paths = ["src/**"] }
[standards.lines]
direction = "up"
limit = 0
producer = "builtin:extent"
config = { paths = ["src/**"] }
[standards.words]
direction = "up"
limit = 0
producer = "builtin:extent"
config = { paths = ["src/**"] }
[standards.bytes]
direction = "up"
limit = 0
producer = "builtin:extent"
config = { paths = ["src/**"] }
[standards.largest_high]
direction = "down"
limit = 1000000
producer = "builtin:file-size"
config = { paths = ["src/m19*/**"] }
metric = "max_bytes"
[standards.total_high]
direction = "down"
limit = 1000000000
producer = "builtin:file-size"
config = { paths = ["src/m19*/**"] }
metric = "bytes"
"#;

/// No-evidence, after-an-unrelated-commit and one-input-changed runs of the whole
/// `discern standards` flow (clean check, limits, plan, execute, record), with
/// `git status` on the same repository as the reference.
fn evidence_scenarios(repo: &Path, runs: usize) -> EvidenceRows {
    use discern::workspace::{Settings, Workspace};
    // A clone keeps the synthetic repository itself untouched.
    let name = repo.file_name().and_then(|n| n.to_str()).unwrap_or("repo");
    let clone = repo.with_file_name(format!("{name}-evidence"));
    discard(&clone);
    let cloned = Command::new("git")
        .args([
            "clone",
            "-q",
            repo.to_str().expect("utf-8"),
            clone.to_str().expect("utf-8"),
        ])
        .status()
        .expect("git clone");
    assert!(cloned.success());
    std::fs::write(clone.join("discern.toml"), EVIDENCE_CONFIG).expect("write config");
    let commit = |message: &str| {
        for args in [
            &["add", "-A"][..],
            &[
                "-c",
                "user.name=b",
                "-c",
                "user.email=b@x",
                "commit",
                "-q",
                "-m",
                message,
            ],
        ] {
            assert!(
                Command::new("git")
                    .args(args)
                    .current_dir(&clone)
                    .status()
                    .expect("git")
                    .success()
            );
        }
    };
    commit("Standards");
    let cache = tempfile::tempdir().expect("temp dir");
    let runtime = Runtime::with_cache_dir(Some(cache.path().to_owned())).expect("runtime");
    let ws = Workspace::open(&clone, Settings::default()).expect("workspace");
    let measure = || {
        let measured = measure_all(&ws, &runtime, &clone);
        assert!(
            measured.standards.iter().all(|s| s.value.is_some()),
            "{:?}",
            measured.standards
        );
        measured.counts.values().sum::<u32>()
    };
    // Warm the compile cache: "no evidence" means no evidence, not cold compilation.
    for component in ["pattern", "extent", "file-size"] {
        runtime
            .load(&discern::testing::builtins::component(component).expect("built-in"))
            .expect("load");
    }
    // `git status` is timed again before each reused and one-input run (the reference moves
    // with the page cache and the disk as much as discern does): the median of every sample.
    let statuses = std::cell::RefCell::new(Vec::new());
    let git_status = || {
        let start = Instant::now();
        sh(&clone, "git status --porcelain");
        statuses.borrow_mut().push(start.elapsed());
    };
    (0..runs.max(1)).for_each(|_| git_status());
    let store = clone.join(".git/discern/evidence");
    profile_loop(&clone, "cold", &|| {
        let _ = std::fs::remove_dir_all(&store);
        measure();
    });
    let (cold, _) = median(runs, || {
        let _ = std::fs::remove_dir_all(&store);
        f64::from(measure())
    });
    std::fs::create_dir_all(clone.join("docs")).expect("mkdir");
    std::fs::write(clone.join("docs/notes.md"), "unrelated\n").expect("write");
    commit("unrelated");
    let mut reused_runs = 0;
    // `BENCH_LOOP=cold:N`, `reused:N` or `one:N`: that phase N times more (for a profiler), then exit.
    profile_loop(&clone, "reused", &|| {
        measure();
    });
    let (reused, _) = median_after(runs, git_status, || {
        reused_runs = measure();
        0.0
    });
    // What `done` and `accept` pay on the same commit: nothing reused (issue 28).
    let (proof, proof_runs) = median(runs, || {
        let measured = measure_all_with(&ws, &runtime, &clone, EvidenceUse::Proof);
        f64::from(measured.counts.values().sum::<u32>())
    });
    let one_file = clone.join("src/m100/d00/f00100.rs");
    let original = std::fs::read_to_string(&one_file).expect("read");
    let edits = std::cell::Cell::new(0);
    // The commit is made before the clock starts: the row times the measurement alone.
    let edit_and_commit = || {
        edits.set(edits.get() + 1);
        std::fs::write(&one_file, format!("{original}// edit {}\n", edits.get())).expect("write");
        commit("edit one input");
    };
    profile_loop_after(&clone, "one", &edit_and_commit, &|| {
        measure();
    });
    let mut one_runs = 0;
    let before_one = || {
        edit_and_commit();
        git_status();
    };
    let (one, _) = median_after(runs, before_one, || {
        one_runs = measure();
        0.0
    });
    let mut statuses = statuses.into_inner();
    statuses.sort();
    EvidenceRows {
        status: statuses[statuses.len() / 2],
        cold,
        reused,
        reused_runs,
        proof,
        proof_runs,
        one,
        one_runs,
    }
}

/// `BENCH_LOOP=<phase>:<n>`: run `phase` `n` times, printing each run's time, then exit (a
/// profiler then sees that phase alone, but for the setup before it).
fn profile_loop(clone: &Path, phase: &str, run: &dyn Fn()) {
    profile_loop_after(clone, phase, &|| {}, run);
}

/// [`profile_loop`], with `before` run before each timed run, untimed.
fn profile_loop_after(clone: &Path, phase: &str, before: &dyn Fn(), run: &dyn Fn()) {
    let Ok(spec) = std::env::var("BENCH_LOOP") else {
        return;
    };
    let Some(n) = spec
        .strip_prefix(phase)
        .and_then(|rest| rest.strip_prefix(':'))
        .and_then(|n| n.parse::<usize>().ok())
    else {
        return;
    };
    for _ in 0..n {
        before();
        let start = Instant::now();
        run();
        eprintln!("{phase}: {:.1} ms", start.elapsed().as_secs_f64() * 1e3);
    }
    discard(clone);
    std::process::exit(0);
}

/// The rows of [`evidence_scenarios`].
struct EvidenceRows {
    status: Duration,
    cold: Duration,
    reused: Duration,
    reused_runs: u32,
    /// The same commit measured as `done` and `accept` measure it: nothing reused.
    proof: Duration,
    proof_runs: f64,
    one: Duration,
    one_runs: u32,
}

/// The whole `discern standards` flow over one pattern Standard: making no findings; making
/// them but comparing none (as the producer ran before findings were kept); keeping them and
/// comparing them with the parent commit's (whose reading the evidence store holds, as on a
/// trunk or branch measured commit by commit); and keeping them with no evidence at all (a
/// fresh CI runner: the parent is measured too).
struct FindingsCost {
    without: Duration,
    made: Duration,
    with: Duration,
    fresh: Duration,
    files: f64,
    count: f64,
    kept: usize,
    bytes_per_entry: u64,
}

fn findings_cost(repo: &Path, runs: usize) -> FindingsCost {
    use discern::workspace::{Settings, Workspace};
    let standard = |extra: &str, metric: &str| {
        format!(
            "[standards.todo]\ndirection = \"down\"\nlimit = 1000000\nproducer = \"builtin:pattern\"\nconfig = {{ pattern = \"{PATTERN}\", paths = [\"**\"]{extra} }}\nmetric = \"{metric}\"\n"
        )
    };
    let cache = tempfile::tempdir().expect("temp dir");
    let runtime = Runtime::with_cache_dir(Some(cache.path().to_owned())).expect("runtime");
    let commit = |clone: &Path, message: &str| {
        sh(
            clone,
            &format!("git add -A && git -c user.name=b -c user.email=b@x commit -qm '{message}'"),
        );
    };
    // A clone of its own per definition: redefining a Standard on the trunk is refused.
    let configure = |suffix: &str, config: String| {
        let clone = clone_with_config(repo, &format!("findings-{suffix}"), &config);
        let ws = Workspace::open(&clone, Settings::default()).expect("workspace");
        (clone, ws)
    };
    let measure = |clone: &Path, ws: &Workspace| {
        let measured = measure_all(ws, &runtime, clone);
        let result = &measured.standards[0];
        let value = result
            .value
            .unwrap_or_else(|| panic!("not measured: {result:?}"));
        (value, result.findings.as_ref().map(|f| f.total))
    };
    // As before findings were kept: the same scan, no finding made, none compared (the files
    // metric counts no findings, so nothing asks for the parent's reading).
    let (clone, ws) = configure("none", standard(", max_findings = 0", "files"));
    let store = clone.join(".git/discern/evidence");
    let (without, files) = median(runs, || {
        let _ = std::fs::remove_dir_all(&store);
        measure(&clone, &ws).0
    });
    assert!(files > 0.0);
    // As the producer ran before this issue: its findings made, then dropped (the files
    // metric counts none, so none is compared, and nothing is recorded, so none is written).
    let (clone, ws) = configure("made", standard("", "files"));
    let (made, _) = median(runs, || {
        let measured = measure_all_with(&ws, &runtime, &clone, EvidenceUse::Fresh);
        measured.standards[0].value.expect("measured")
    });
    let (clone, ws) = configure("kept", standard("", "matches"));
    let store = clone.join(".git/discern/evidence");
    let (fresh, count) = median(runs, || {
        let _ = std::fs::remove_dir_all(&store);
        measure(&clone, &ws).0
    });
    // Commit by commit: each run's parent was measured (and recorded) by the run before.
    let edited = clone.join("src/m000/d00/f00000.rs");
    let original = std::fs::read_to_string(&edited).expect("read");
    let mut times = Vec::new();
    let mut kept = None;
    for edit in 0..runs.max(1) {
        std::fs::write(&edited, format!("{original}// edit {edit}\n")).expect("write");
        commit(&clone, "edit");
        let start = Instant::now();
        let (value, total) = measure(&clone, &ws);
        times.push(start.elapsed());
        assert_eq!(value, count);
        kept = total;
    }
    times.sort();
    let entries = findings_files(&store);
    let bytes: u64 = entries.iter().sum();
    FindingsCost {
        without,
        made,
        with: times[times.len() / 2],
        fresh,
        files,
        count,
        kept: kept.expect("findings kept"),
        bytes_per_entry: bytes / entries.len().max(1) as u64,
    }
}

/// The sizes of the `*.findings` files below `dir` (one per evidence entry).
fn findings_files(dir: &Path) -> Vec<u64> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .flat_map(|e| {
            let path = e.path();
            if path.is_dir() {
                findings_files(&path)
            } else if path.extension().is_some_and(|x| x == "findings") {
                e.metadata().map(|m| m.len()).into_iter().collect()
            } else {
                Vec::new()
            }
        })
        .collect()
}

/// Every Standard of `clone`'s `discern.toml`, through the whole `discern standards` flow.
fn measure_all(
    ws: &discern::workspace::Workspace,
    runtime: &Runtime,
    clone: &Path,
) -> discern::testing::measure::Measured {
    measure_all_with(ws, runtime, clone, EvidenceUse::ReuseAndRecord)
}

/// [`measure_all`], with the evidence store used as `evidence` says.
fn measure_all_with(
    ws: &discern::workspace::Workspace,
    runtime: &Runtime,
    clone: &Path,
    evidence: EvidenceUse,
) -> discern::testing::measure::Measured {
    let config = discern::testing::config::Config::load(clone)
        .expect("config")
        .expect("present");
    let selected: Vec<_> = config.standards.iter().collect();
    let ctx = discern::testing::measure::Context {
        ws,
        runtime,
        config: &config,
        selected: &selected,
        claims: &[],
        progress: &|_| {},
    };
    let options = discern::testing::measure::Options {
        evidence,
        ..discern::testing::measure::Options::default()
    };
    discern::testing::measure::measure(&ctx, &options).unwrap_or_else(|e| panic!("{e}"))
}

const TOGETHER_PATTERN: &str = r#"
[standards.todo]
direction = "down"
limit = 1000000000
producer = "builtin:pattern"
config = { pattern = "TODO", paths = ["**"] }
metric = "matches"
"#;

const TOGETHER_EXTENT: &str = r#"
[standards.lines]
direction = "up"
limit = 0
producer = "builtin:extent"
config = { paths = ["**"] }
metric = "lines"
"#;

/// The rows of [`together`]: medians of wall time, and of CPU time (this process and its
/// children), and the values each reading gave.
struct Together {
    grep: Duration,
    wc: Duration,
    pattern: Duration,
    extent: Duration,
    both: Duration,
    cpu: [Duration; 5],
    matches: f64,
    lines: f64,
}

/// CPU time used so far by this process and its waited-for children (`/proc/self/stat`).
fn cpu_so_far() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("read /proc/self/stat");
    // After the command name (in parentheses, and it may hold spaces): the state is field 3 of
    // the line, index 0 here; utime, stime, cutime and cstime are fields 14 to 17, indices 11
    // to 14. Fields before them (tty_nr, tpgid) can be negative, so none are filtered out.
    // Clock ticks of 10 ms (USER_HZ on Linux).
    let after = stat.rsplit(')').next().expect("a stat line");
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = fields[11..15]
        .iter()
        .map(|f| f.parse::<u64>().expect("a tick count"))
        .sum();
    Duration::from_millis(ticks * 10)
}

/// Issue 51: a first run (no evidence) of the whole `discern standards` flow with a pattern
/// Standard on `**`, a line-count Standard on `**`, and both together, each in a clone of its
/// own, interleaved run by run with `git grep -c TODO HEAD` and `wc -l` over `git ls-files` in
/// the clone that holds both (its `discern.toml` is measured too).
fn together(repo: &Path, runs: usize) -> Together {
    use discern::workspace::{Settings, Workspace};
    let cache = tempfile::tempdir().expect("temp dir");
    let runtime = Runtime::with_cache_dir(Some(cache.path().to_owned())).expect("runtime");
    for component in ["pattern", "extent"] {
        let component = discern::testing::builtins::component(component).expect("built-in");
        runtime.load(&component).expect("load");
    }
    let configure = |suffix: &str, config: String| {
        let clone = clone_with_config(repo, &format!("together-{suffix}"), &config);
        let ws = Workspace::open(&clone, Settings::default()).expect("workspace");
        (clone, ws)
    };
    let clones = [
        configure("pattern", TOGETHER_PATTERN.to_owned()),
        configure("extent", TOGETHER_EXTENT.to_owned()),
        configure("both", format!("{TOGETHER_PATTERN}{TOGETHER_EXTENT}")),
    ];
    let first_run = |(clone, ws): &(PathBuf, Workspace)| {
        let _ = std::fs::remove_dir_all(clone.join(".git/discern/evidence"));
        let (start, cpu) = (Instant::now(), cpu_so_far());
        let measured = measure_all(ws, &runtime, clone);
        let elapsed = (start.elapsed(), cpu_so_far() - cpu);
        let values: Vec<f64> = measured
            .standards
            .iter()
            .map(|s| s.value.unwrap_or_else(|| panic!("not measured: {s:?}")))
            .collect();
        (elapsed, values)
    };
    let both = &clones[2].0;
    let timed = |script: &str| {
        let (start, cpu) = (Instant::now(), cpu_so_far());
        let out = sh(both, script);
        ((start.elapsed(), cpu_so_far() - cpu), out)
    };
    let mut times: [Vec<(Duration, Duration)>; 5] = Default::default();
    let (mut matches, mut lines) = (0.0, 0.0);
    for _ in 0..runs.max(1) {
        let (t, out) = timed(&format!("git grep -c {PATTERN} HEAD"));
        times[0].push(t);
        matches = out
            .lines()
            .filter_map(|l| l.rsplit(':').next()?.parse::<u64>().ok())
            .sum::<u64>() as f64;
        let (t, out) = timed("git ls-files -z | xargs -0 cat | wc -l");
        times[1].push(t);
        lines = out.trim().parse().expect("wc prints a number");
        for (at, clone) in clones.iter().enumerate() {
            let (t, values) = first_run(clone);
            times[at + 2].push(t);
            if at == 2 {
                assert_eq!(
                    values,
                    [matches, lines],
                    "pattern + extent disagree with git"
                );
            }
        }
    }
    for clone in &clones {
        discard(&clone.0);
    }
    let median = |at: usize, cpu: bool| {
        let mut t: Vec<Duration> = times[at]
            .iter()
            .map(|t| if cpu { t.1 } else { t.0 })
            .collect();
        t.sort();
        t[t.len() / 2]
    };
    Together {
        grep: median(0, false),
        wc: median(1, false),
        pattern: median(2, false),
        extent: median(3, false),
        both: median(4, false),
        cpu: [0, 1, 2, 3, 4].map(|at| median(at, true)),
        matches,
        lines,
    }
}

/// A clone of `repo` beside it (`<repo>-<suffix>`, an earlier one discarded) whose last commit
/// adds `config` as its `discern.toml`.
fn clone_with_config(repo: &Path, suffix: &str, config: &str) -> PathBuf {
    let name = repo.file_name().and_then(|n| n.to_str()).unwrap_or("repo");
    let clone = repo.with_file_name(format!("{name}-{suffix}"));
    discard(&clone);
    sh(
        repo,
        &format!("git clone -q . {}", clone.to_str().expect("utf-8")),
    );
    std::fs::write(clone.join("discern.toml"), config).expect("write config");
    sh(
        &clone,
        "git add -A && git -c user.name=b -c user.email=b@x commit -qm Standards",
    );
    clone
}

fn print_together(t: &Together) {
    println!("\nissue 51: a first run of `discern standards` (no evidence), Standards on `**`");
    row(
        &format!("git grep -c {PATTERN} HEAD"),
        t.grep,
        t.matches,
        t.grep,
    );
    row(
        "git ls-files -z | xargs -0 cat | wc -l",
        t.wc,
        t.lines,
        t.wc,
    );
    row(
        "pattern Standard alone (vs git grep)",
        t.pattern,
        t.matches,
        t.grep,
    );
    row(
        "line-count Standard alone (vs wc -l)",
        t.extent,
        t.lines,
        t.wc,
    );
    row(
        "pattern + line count together (vs pattern alone)",
        t.both,
        2.0,
        t.pattern,
    );
    println!(
        "together / (pattern alone + line count alone): {:.2}x; together / slower alone: {:.2}x",
        t.both.as_secs_f64() / (t.pattern + t.extent).as_secs_f64(),
        t.both.as_secs_f64() / t.pattern.max(t.extent).as_secs_f64()
    );
    let [grep, wc, pattern, extent, both] = t.cpu.map(|c| c.as_secs_f64());
    println!(
        "CPU (this process and its children): git grep {:.0} ms, wc {:.0} ms, pattern {:.0} ms ({:.2}x git grep), line count {:.0} ms ({:.2}x wc), together {:.0} ms ({:.2}x pattern alone, {:.2}x the two alone)",
        grep * 1e3,
        wc * 1e3,
        pattern * 1e3,
        pattern / grep,
        extent * 1e3,
        extent / wc,
        both * 1e3,
        both / pattern,
        both / (pattern + extent)
    );
}
