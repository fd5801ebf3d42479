//! Status size and speed against fleet size, side by side with `git status` in the same run.
//! The default (orientation) result must not grow with the fleet, and its time should stay
//! flat: at most twice the one-worktree time plus 5 ms per worktree (issue 19). Prints, per
//! fleet size, the default status payload (JSON + Markdown, in characters), the full
//! (`--verbose`) payload, the wall time of `discern status --json` (the release binary, warm
//! file-system cache, median), one `git status --porcelain` of the main checkout, their ratio,
//! the least a stat walk of the same worktrees costs (the walk floor) and the budget.
//!
//! Fleet 0 is the main checkout alone (one checkout). Last, the largest fleet again with git's
//! fsmonitor hook (watchman and git's `fsmonitor-watchman` sample) configured for every
//! worktree, when watchman is installed, beside the hook floor: every worktree's hook alone.
//! A grown fleet ages past the settle margin before it is timed (`git/settled.rs`): the
//! `first` column is the status that settles the new worktrees' racily clean files.
//!
//! Run: `cargo bench -p discern --bench status_fleet` (env `BENCH_FLEETS=0,1,20,100`,
//! `BENCH_FILES=4000`, `BENCH_RUNS=5`; `BENCH_BEFORE=<path to another discern binary>` times
//! that build beside this one, in the same interleaved runs). A third of the efforts have an
//! untracked file, a fifth a modified tracked one.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use discern::status::{StatusRequest, status};
use discern::workspace::{Settings, Workspace};

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.com")
        .env("GIT_COMMITTER_NAME", "bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.com")
        .status()
        .expect("git");
    assert!(status.success(), "git {args:?}");
}

/// Longer than the margin past a file's last write (in whole seconds) after which a survey trusts
/// what it settled of it (`git/settled.rs`, 2 s).
const SETTLE_MARGIN: Duration = Duration::from_secs(3);

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A repository of `files` small text files in 100 folders, committed and packed.
fn repository(root: &Path, files: usize) {
    std::fs::create_dir_all(root).expect("mkdir");
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["config", "gc.auto", "0"]);
    std::fs::write(root.join("discern.toml"), "[standards.x]\ndirection = \"down\"\nlimit = 1000000\nproducer = \"builtin:extent\"\nconfig = { paths = [\"src\"] }\nmetric = \"files\"\n").expect("write");
    std::fs::write(root.join(".gitignore"), "*.log\n").expect("write");
    for i in 0..files {
        let dir = root.join(format!("src/m{:02}", i % 100));
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(
            dir.join(format!("f{i:05}.rs")),
            format!("pub fn f{i}() -> u32 {{\n    {i}\n}}\n"),
        )
        .expect("write");
    }
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "init"]);
    git(root, &["repack", "-adq"]);
}

/// Grow the fleet to `n` effort worktrees (every third with an untracked file, every fifth
/// with a modified tracked file, every seventh with an ignored one).
fn grow(root: &Path, from: usize, n: usize) {
    for i in from..n {
        let path = worktree_path(root, i);
        git(
            root,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                &format!("agent/e{i:04}"),
                path.to_str().expect("utf-8"),
                "main",
            ],
        );
        if i % 3 == 0 {
            std::fs::write(path.join("wip.txt"), "wip\n").expect("write");
        }
        if i % 5 == 1 {
            let file = path.join("src/m01/f00001.rs");
            std::fs::write(&file, "pub fn changed() {}\n").expect("write");
        }
        if i % 7 == 2 {
            std::fs::write(path.join("src/build.log"), "ignored\n").expect("write");
        }
    }
}

/// The least any stat walk of the fleet can cost: every folder of the main checkout and of `n`
/// worktrees read and every entry `lstat`ed (relative to its open folder, as the clean check
/// does), on every core, comparing nothing. `git status` does at least this much per worktree;
/// on a machine where system calls are dear it can exceed the budget on its own.
fn walk_floor(root: &Path, n: usize) {
    let mut roots: Vec<PathBuf> = (0..n).map(|i| worktree_path(root, i)).collect();
    roots.push(root.to_path_buf());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(1, usize::from);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                while let Some(dir) =
                    roots.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                {
                    walk(dir);
                }
            });
        }
    });
}

fn walk(dir: &Path) {
    for entry in std::fs::read_dir(dir).expect("read a worktree folder") {
        let entry = entry.expect("a folder entry");
        if entry.file_name() == ".git" {
            continue;
        }
        let meta = entry.metadata().expect("lstat");
        if meta.is_dir() {
            walk(&entry.path());
        }
    }
}

fn worktree_path(root: &Path, i: usize) -> PathBuf {
    root.with_file_name("repo.worktrees")
        .join(format!("e{i:04}"))
}

fn median(runs: usize, mut f: impl FnMut()) -> Duration {
    medians(runs, &mut [&mut f])[0]
}

/// The median time of each of `fs` over `runs` rounds, each round running every one of them in
/// turn, starting one further each round: on a shared machine, what slows one round slows all
/// of them alike, and none always runs right after the same one (whose reads warm its caches).
fn medians(runs: usize, fs: &mut [&mut dyn FnMut()]) -> Vec<Duration> {
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); fs.len()];
    for round in 0..runs.max(1) {
        for turn in 0..fs.len() {
            let at = (round + turn) % fs.len();
            let start = Instant::now();
            fs[at]();
            times[at].push(start.elapsed());
        }
    }
    times
        .into_iter()
        .map(|mut times| {
            times.sort();
            times[times.len() / 2]
        })
        .collect()
}

/// `discern status --json` of `binary` in `root`, timed with the references in one
/// interleaved run: this build, the `before` build (if any), `git status` and `floor`.
fn timed(
    root: &Path,
    (discern, before): (&str, Option<&str>),
    runs: usize,
    floor: &mut dyn FnMut(),
) -> (Duration, Option<Duration>, Duration, Duration) {
    let then_binary = before.unwrap_or(discern);
    let mut now = || run_quiet(root, discern, &["status", "--json"]);
    let mut then = || run_quiet(root, then_binary, &["status", "--json"]);
    let mut git = || run_quiet(root, "git", &["status", "--porcelain"]);
    let t = match before {
        Some(_) => medians(runs, &mut [&mut now, &mut git, floor, &mut then]),
        None => medians(runs, &mut [&mut now, &mut git, floor]),
    };
    (t[0], t.get(3).copied(), t[1], t[2])
}

fn ms(d: Option<Duration>) -> String {
    d.map_or_else(String::new, |d| format!("{:.0}ms", d.as_secs_f64() * 1e3))
}

fn run_quiet(dir: &Path, program: &str, args: &[&str]) {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("run");
    assert!(out.status.success(), "{program} {args:?}");
}

/// Sizes of the default and the full status result, in characters.
fn sizes(root: &Path) -> (usize, usize, usize) {
    let ws = Workspace::open(root, Settings::default()).expect("workspace");
    let envelope = |reply: discern::result::Reply| reply.into_envelope(discern::status::VERB);
    let default = envelope(status(&ws, &StatusRequest::default()).expect("status"));
    let markdown = discern::result::markdown(&default, &discern::verbs::steps::tool_call);
    let full = envelope(
        status(
            &ws,
            &StatusRequest {
                verbose: true,
                ..StatusRequest::default()
            },
        )
        .expect("status"),
    );
    let full_chars = full.to_json().len()
        + discern::result::markdown(&full, &discern::verbs::steps::tool_call).len();
    (
        default.to_json().len() + markdown.len(),
        markdown.len(),
        full_chars,
    )
}

fn main() {
    let fleets: Vec<usize> = std::env::var("BENCH_FLEETS")
        .unwrap_or_else(|_| "0,1,20,100".to_owned())
        .split(',')
        .filter_map(|n| n.trim().parse().ok())
        .collect();
    let files = env_or("BENCH_FILES", 4_000);
    let runs = env_or("BENCH_RUNS", 5);
    let discern = env!("CARGO_BIN_EXE_discern");
    // Another build to time beside this one, in the same interleaved runs (`before`).
    let before = std::env::var("BENCH_BEFORE").ok().filter(|v| !v.is_empty());
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path().join("repo");
    repository(&root, files);
    println!("repository: {files} files; median of {runs} runs, warm file-system cache");
    println!(
        "{:>6} {:>10} {:>10} {:>10} {:>12} {:>12} {:>12} {:>7} {:>12} {:>7} {:>10} {:>8}",
        "fleet",
        "default",
        "of it md",
        "full",
        "first",
        "status",
        "git status",
        "ratio",
        "walk floor",
        "/floor",
        "budget",
        "before"
    );
    let mut grown = 0;
    let mut one = None;
    let mut last = None;
    for n in fleets {
        grow(&root, grown, n);
        grown = grown.max(n);
        // A fresh worktree's files are as new as its index (racily clean): a survey reads them
        // and trusts what it settled only once they are older than the margin (settled.rs).
        // The fleet ages past it first, as any fleet a status surveys twice does.
        std::thread::sleep(SETTLE_MARGIN);
        // The first status after the fleet grew reads the new worktrees' racily clean files.
        let first = median(1, || run_quiet(&root, discern, &["status", "--json"]));
        let (default, markdown, full) = sizes(&root);
        // Warm the file-system cache, then time.
        run_quiet(&root, discern, &["status", "--json"]);
        let (took, then, reference, floor) =
            timed(&root, (discern, before.as_deref()), runs, &mut || {
                walk_floor(&root, n)
            });
        let base = *one.get_or_insert(took);
        let budget = 2 * base + Duration::from_millis(5) * u32::try_from(n).unwrap_or(u32::MAX);
        last = Some((n, took, floor, budget));
        println!(
            "{n:>6} {default:>10} {markdown:>10} {full:>10} {:>10.0}ms {:>10.0}ms {:>10.1}ms {:>6.1}x {:>10.0}ms {:>6.2}x {:>8.0}ms {:>8}{}",
            first.as_secs_f64() * 1e3,
            took.as_secs_f64() * 1e3,
            reference.as_secs_f64() * 1e3,
            took.as_secs_f64() / reference.as_secs_f64(),
            floor.as_secs_f64() * 1e3,
            took.as_secs_f64() / floor.as_secs_f64(),
            budget.as_secs_f64() * 1e3,
            ms(then),
            if took <= budget { "" } else { "  over" }
        );
    }
    if let Some((n, without, floor, budget)) = last {
        let binaries = (discern, before.as_deref());
        fsmonitor_row(&root, binaries, (n, runs), (without, floor, budget));
    }
    println!(
        "fleet 0 = the main checkout alone (one checkout); fleet n = main + n efforts.\n\
         fsmonitor = the largest fleet again, every worktree's core.fsmonitor running git's\n\
         fsmonitor-watchman sample hook against watchman (tokens saved by a first status);\n\
         hook floor = every worktree's hook run once with its saved token, on every core, nothing\n\
         else done (no survey that asks every hook can be faster); its x = status / hook floor."
    );
    println!(
        "first = the first status after the fleet grew; status = the median after it (worktrees\nremember what was settled, git/settled.rs); ratio = status / one git status; walk floor =\nevery folder of every worktree read and every entry lstat'ed on every core, nothing compared\n(no stat walk can be faster); budget = 2 x the first row's status + 5 ms per worktree;\nbefore = the BENCH_BEFORE build's status in the same interleaved runs"
    );
}

/// git's sample hook, as Debian's git installs it.
const SAMPLE_HOOK: &str = "/usr/share/git-core/templates/hooks/fsmonitor-watchman.sample";

/// The largest fleet again with git's fsmonitor hook configured for every worktree (watchman
/// and git's sample hook): `discern status` against the same fleet without it, the walk floor
/// and the budget. Skipped, saying why, without watchman.
fn fsmonitor_row(
    root: &Path,
    (discern, before): (&str, Option<&str>),
    (n, runs): (usize, usize),
    (without, floor, budget): (Duration, Duration, Duration),
) {
    let watchman = Command::new("watchman").arg("--version").output();
    if !watchman.is_ok_and(|out| out.status.success()) || !Path::new(SAMPLE_HOOK).exists() {
        println!(
            "{n:>6} fsmonitor: skipped (needs watchman and git's fsmonitor-watchman sample hook: apt-get install -y watchman)"
        );
        return;
    }
    let hook = root.with_file_name("query-watchman");
    std::fs::copy(SAMPLE_HOOK, &hook).expect("copy the sample hook");
    std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("make the hook executable");
    // The common config: every worktree runs it (from its own top folder, as git does).
    git(
        root,
        &["config", "core.fsmonitor", hook.to_str().expect("utf-8")],
    );
    let mut roots: Vec<PathBuf> = (0..n).map(|i| worktree_path(root, i)).collect();
    roots.push(root.to_path_buf());
    // The first status walks every worktree and keeps each hook's token.
    run_quiet(root, discern, &["status", "--json"]);
    run_quiet(root, discern, &["status", "--json"]);
    let tokens = saved_tokens(root, n);
    let unanswered = tokens.iter().filter(|t| t.is_none()).count();
    if unanswered > 0 {
        println!(
            "{n:>6} fsmonitor: {unanswered} worktree(s) without a token: their hook failed and they are walked (check `watchman watch-list` and fs.inotify.max_user_instances)"
        );
    }
    let tokens: Vec<String> = tokens.into_iter().map(Option::unwrap_or_default).collect();
    let (took, then, reference, hooks) = timed(root, (discern, before), runs, &mut || {
        hook_floor(&hook, &roots, &tokens)
    });
    println!(
        "{n:>6} fsmonitor {:>36}ms {:>10.1}ms {:>6.1}x {:>10.0}ms {:>6.2}x {:>8.0}ms {:>8}{}  (without: {:.0}ms; hook floor: {:.0}ms, {:.2}x)",
        format!("{:.0}", took.as_secs_f64() * 1e3),
        reference.as_secs_f64() * 1e3,
        took.as_secs_f64() / reference.as_secs_f64(),
        floor.as_secs_f64() * 1e3,
        took.as_secs_f64() / floor.as_secs_f64(),
        budget.as_secs_f64() * 1e3,
        ms(then),
        if took <= budget { "" } else { "  over" },
        without.as_secs_f64() * 1e3,
        hooks.as_secs_f64() * 1e3,
        took.as_secs_f64() / hooks.as_secs_f64(),
    );
    git(root, &["config", "--unset", "core.fsmonitor"]);
    for dir in roots {
        let _ = Command::new("watchman").arg("watch-del").arg(&dir).output();
    }
}

/// The token each worktree's survey saved (`<git-dir>/discern/fsmonitor`), in the order of the
/// roots (`n` efforts, then the main checkout).
/// `None` for a worktree whose hook never answered (watchman out of inotify instances, say).
fn saved_tokens(root: &Path, n: usize) -> Vec<Option<String>> {
    let git_dirs = (0..n)
        .map(|i| root.join(format!(".git/worktrees/e{i:04}")))
        .chain([root.join(".git")]);
    git_dirs
        .map(|dir| {
            let saved = std::fs::read(dir.join("discern/fsmonitor")).ok()?;
            let saved: serde_json::Value = serde_json::from_slice(&saved).ok()?;
            saved["token"].as_str().map(str::to_owned)
        })
        .collect()
}

/// The least any survey that asks every worktree's hook costs: the hook run once per worktree
/// as git runs it (through the shell, in the worktree's top folder, with its saved token), on
/// every core (two at a time per core, as status asks them: a hook waits for watchman too),
/// nothing else done.
fn hook_floor(hook: &Path, roots: &[PathBuf], tokens: &[String]) {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let workers = 2 * std::thread::available_parallelism().map_or(1, usize::from);
    let hook = hook.to_str().expect("utf-8");
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let at = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let (Some(dir), Some(token)) = (roots.get(at), tokens.get(at)) else {
                        return;
                    };
                    if token.is_empty() {
                        continue;
                    }
                    let out = Command::new("sh")
                        .arg("-c")
                        .arg(format!("{hook} \"$@\""))
                        .arg(hook)
                        .args(["2", token])
                        .current_dir(dir)
                        .stdin(std::process::Stdio::null())
                        .output()
                        .expect("run the hook");
                    assert!(out.status.success(), "the hook in {}", dir.display());
                }
            });
        }
    });
}
