//! Sharing evidence through git (issue 31), side by side with git in one run: `discern sync`
//! of the evidence published for N trunk commits into a fresh clone, against `git fetch` of the
//! same ref; the same after one more commit was published (the everyday case); and what the
//! evidence weighs: packed bytes per measured commit and per 10,000 findings.
//!
//! Then the team rows, on a babel/babel-sized repository (`BENCH_TEAM_FILES=27000` files, three
//! Standards): producer runs and wall time of trunk CI, of a developer's fresh depth-1 clone
//! and of a pull request's CI run, each without and with `discern sync` of what trunk CI
//! published (signed with ssh-keygen, verified at lookup).
//!
//! Run: `cargo bench -p discern --bench evidence_sync` (env `BENCH_COMMITS=1000`,
//! `BENCH_STANDARDS=3`, `BENCH_FINDINGS=20` per entry, `BENCH_RUNS=5`; `BENCH_TEAM_FILES=0`
//! skips the team rows). In the sync rows, signatures are realistic in size but not made by
//! ssh-keygen: sync moves bytes and never checks them (a reader does, at lookup).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use discern::testing::commit::shared_refs::{edit_tree, set_ref, tree_of, write_commit};
use discern::testing::digest::Digest;
use discern::testing::evidence::bundle::Bundle;
use discern::testing::evidence::shared::tree;
use discern::testing::runtime::{Finding, Metric};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.com")
        .env("GIT_COMMITTER_NAME", "bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.com")
        .stderr(Stdio::inherit())
        .output()
        .expect("git");
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `n` findings as a producer reports them.
fn findings(n: usize) -> Vec<Finding> {
    (0..n)
        .map(|i| Finding {
            fingerprint: Digest::of(format!("f{i}").as_bytes()).short_hex(),
            path: Some(format!("packages/pkg{:03}/src/file{i:05}.js", i % 300)),
            line: Some((i % 900) as u32 + 1),
            column: Some(5),
            severity: None,
            message: "TODO".to_owned(),
        })
        .collect()
}

/// One published bundle: an entry of `identity` on `commit` reading 300 paths, with
/// `n_findings` findings.
fn bundle(identity: &str, commit: &str, n_findings: usize) -> Bundle {
    let reads: Vec<String> = (0..300)
        .map(|i| format!("packages/pkg{:03}/src/file{i:05}.js", i % 300))
        .collect();
    let entry = serde_json::json!({
        "version": discern::testing::evidence::VERSION,
        "identity": identity,
        "commit": commit,
        "exact_commit": false,
        "metrics": [{"name": "matches", "value": n_findings as f64, "counted": true}],
        "listings": [["packages/**"]],
        "reads": reads.join("\0"),
        "artifacts": {},
        "has_findings": n_findings > 0,
    });
    let metric = Metric {
        name: "matches".to_owned(),
        value: n_findings as f64,
        findings: findings(n_findings),
        findings_dropped: 0,
        counted: true,
    };
    let findings = discern::testing::evidence::findings::encode(&[metric]).expect("encode");
    let signature = format!(
        "-----BEGIN SSH SIGNATURE-----\n{}\n-----END SSH SIGNATURE-----\n",
        Digest::of(commit.as_bytes()).hex().repeat(4)
    );
    Bundle {
        entry: serde_json::to_vec(&entry).expect("json"),
        findings,
        signature: signature.into_bytes(),
    }
}

/// Publish `commits` measured commits (one publishing commit each, `standards` bundles) on the
/// evidence ref of `repo`.
fn publish(repo: &discern::Repo, from: usize, commits: usize, standards: usize, n: usize) {
    for c in from..from + commits {
        let commit = Digest::of(format!("trunk commit {c}").as_bytes()).hex()[..40].to_owned();
        let id: gix::ObjectId = commit.parse().expect("hex");
        let mut files = Vec::new();
        for s in 0..standards {
            let identity = format!("builtin:pattern#{s}");
            let b = bundle(&identity, &commit, n);
            let dir = tree::dir(id, &identity);
            files.extend(
                tree::files(&b, 1_700_000_000 + c as u64)
                    .into_iter()
                    .map(|(name, bytes)| (format!("{dir}/{name}"), bytes)),
            );
        }
        let tip = repo.resolve_ref(tree::REF).expect("ref").map(|r| r.commit);
        let base = tip.map(|t| tree_of(repo, t).expect("tree"));
        let tree = edit_tree(repo, base, &files, &[]).expect("edit");
        let parents: Vec<gix::ObjectId> = tip.into_iter().collect();
        let next = write_commit(repo, tree, &parents, "publish").expect("commit");
        set_ref(repo, tree::REF, tip, next, "publish").expect("ref");
    }
}

fn fresh_clone(root: &Path, name: &str, origin: &Path) -> PathBuf {
    let dir = root.join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("mkdir");
    git(&dir, &["init", "-q"]);
    git(
        &dir,
        &["remote", "add", "origin", origin.to_str().expect("utf-8")],
    );
    dir
}

fn git_fetch(dir: &Path) {
    let spec = format!("+{}:refs/discern/remotes/origin/evidence", tree::REF);
    git(dir, &["fetch", "-q", "--no-tags", "origin", &spec]);
}

fn discern_sync(dir: &Path) {
    let out = Command::new(env!("CARGO_BIN_EXE_discern"))
        .args(["sync", "--json"])
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("discern");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    if std::env::args().all(|a| a != "--bench") {
        return;
    }
    let commits = env_or("BENCH_COMMITS", 1000);
    let standards = env_or("BENCH_STANDARDS", 3);
    let n = env_or("BENCH_FINDINGS", 20);
    let runs = env_or("BENCH_RUNS", 5);
    let root = tempfile::tempdir().expect("tempdir");
    let root = root.path();
    let publisher = root.join("ci");
    std::fs::create_dir_all(&publisher).expect("mkdir");
    git(&publisher, &["init", "-q"]);
    let repo = discern::Repo::discover(&publisher).expect("repo");
    let started = Instant::now();
    publish(&repo, 0, commits, standards, n);
    let origin = root.join("origin.git");
    git(
        root,
        &["init", "-q", "--bare", origin.to_str().expect("utf-8")],
    );
    git(
        &publisher,
        &["push", "-q", origin.to_str().expect("utf-8"), tree::REF],
    );
    println!(
        "evidence for {commits} commits × {standards} Standards, {n} findings each: built in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    // A fresh clone: everything at once. Interleaved A/B pairs.
    let (mut fetch, mut sync) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let a = fresh_clone(root, "fetch", &origin);
        let t = Instant::now();
        git_fetch(&a);
        fetch.push(t.elapsed());
        let b = fresh_clone(root, "sync", &origin);
        let t = Instant::now();
        discern_sync(&b);
        sync.push(t.elapsed());
    }
    let (f, s) = (median(fetch), median(sync));
    println!(
        "fresh clone     git fetch {:>8.1} ms   discern sync {:>8.1} ms   {:.2}× (target < 2×)",
        ms(f),
        ms(s),
        ms(s) / ms(f)
    );

    // The everyday case: one more commit published since the clone last synced.
    let a = fresh_clone(root, "fetch-inc", &origin);
    let b = fresh_clone(root, "sync-inc", &origin);
    git_fetch(&a);
    discern_sync(&b);
    let (mut fetch, mut sync) = (Vec::new(), Vec::new());
    for run in 0..runs {
        publish(&repo, commits + run, 1, standards, n);
        git(
            &publisher,
            &["push", "-q", origin.to_str().expect("utf-8"), tree::REF],
        );
        let t = Instant::now();
        git_fetch(&a);
        fetch.push(t.elapsed());
        let t = Instant::now();
        discern_sync(&b);
        sync.push(t.elapsed());
    }
    let (f, s) = (median(fetch), median(sync));
    println!(
        "one new commit  git fetch {:>8.1} ms   discern sync {:>8.1} ms   {:.2}×",
        ms(f),
        ms(s),
        ms(s) / ms(f)
    );

    // Weight: the packed objects of the ref, per measured commit and per 10,000 findings.
    let packed = Command::new("git")
        .args(["pack-objects", "--revs", "--stdout", "-q"])
        .current_dir(&publisher)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(format!("{}\n", tree::REF).as_bytes())?;
            child.wait_with_output()
        })
        .expect("pack-objects");
    let total = commits + runs;
    println!(
        "weight          {} bytes packed for {total} commits: {:.0} bytes per commit ({standards} entries)",
        packed.stdout.len(),
        packed.stdout.len() as f64 / total as f64
    );
    findings_weight();
    let files = env_or("BENCH_TEAM_FILES", 27_000);
    if files > 0 {
        team_rows(root, files);
    }
}

fn findings_weight() {
    let ten_thousand = bundle("builtin:pattern#x", &"0".repeat(40), 10_000);
    let raw = ten_thousand.findings.as_ref().map_or(0, Vec::len);
    let deflated = deflated_size(ten_thousand.findings.as_deref().unwrap_or_default());
    println!(
        "findings        10,000 findings: {raw} bytes as stored, {deflated} bytes deflated (as git keeps a blob)"
    );
}

/// The size of `bytes` as a zlib stream (what git keeps a blob as) would hold them: gzip's
/// deflate at git's default level.
fn deflated_size(bytes: &[u8]) -> usize {
    let file = tempfile::NamedTempFile::new().expect("temp file");
    std::fs::write(file.path(), bytes).expect("write");
    let out = Command::new("gzip")
        .args(["-c", "-6"])
        .arg(file.path())
        .output()
        .expect("gzip");
    out.stdout.len()
}

const TEAM_CONFIG: &str = r#"[acceptance]
allowed_signers = ".discern/allowed_signers"

[evidence]
repository = "example.com/acme/bench"
publish = "trunk-ci"

[standards.todo]
direction = "down"
limit = 1000000
producer = "builtin:pattern"
config = { pattern = "TODO", paths = ["packages/**"] }
metric = "matches"

[standards.files]
direction = "down"
limit = 1000000
producer = "builtin:extent"
config = { paths = ["packages"] }
metric = "files"

[standards.doc_todo]
direction = "down"
limit = 1000000
producer = "builtin:pattern"
config = { pattern = "TODO", paths = ["docs/**"] }
metric = "matches"
"#;

/// A babel-sized repository on a bare origin, with a CI evidence key listed: the origin.
fn team_origin(root: &Path, files: usize) -> (PathBuf, PathBuf) {
    let seed = root.join("team-seed");
    std::fs::create_dir_all(seed.join(".discern")).expect("mkdir");
    let key = root.join("ci-key");
    let made = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "ci", "-f"])
        .arg(&key)
        .status()
        .expect("ssh-keygen");
    assert!(made.success());
    let public = std::fs::read_to_string(key.with_extension("pub")).expect("public key");
    std::fs::write(
        seed.join(".discern/allowed_signers"),
        format!(
            "ci@example.com namespaces=\"discern-evidence\" {}",
            public.trim()
        ),
    )
    .expect("write");
    std::fs::write(seed.join("discern.toml"), TEAM_CONFIG).expect("write");
    std::fs::create_dir_all(seed.join("docs")).expect("mkdir");
    std::fs::write(seed.join("docs/guide.md"), "# Guide\nTODO: write it\n").expect("write");
    for i in 0..files {
        let dir = seed.join(format!(
            "packages/pkg{:03}/src/d{:02}",
            i % 150,
            (i / 150) % 20
        ));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let todo = if i % 40 == 0 {
            "// TODO: revisit\n"
        } else {
            ""
        };
        let body =
            format!("{todo}export function f{i}(a, b) {{\n  return a + b + {i};\n}}\n").repeat(12);
        std::fs::write(dir.join(format!("file{i:05}.js")), body).expect("write");
    }
    git(&seed, &["init", "-q", "-b", "main"]);
    git(&seed, &["add", "-A"]);
    git(&seed, &["commit", "-q", "-m", "babel-sized"]);
    let origin = root.join("team-origin.git");
    git(
        root,
        &[
            "init",
            "-q",
            "--bare",
            "-b",
            "main",
            origin.to_str().expect("utf-8"),
        ],
    );
    git(
        &seed,
        &["push", "-q", origin.to_str().expect("utf-8"), "main"],
    );
    // The pull request: one docs file changed.
    git(&seed, &["checkout", "-q", "-b", "docs-only"]);
    std::fs::write(seed.join("docs/guide.md"), "# Guide\nWritten.\n").expect("write");
    git(&seed, &["commit", "-qam", "docs"]);
    git(
        &seed,
        &["push", "-q", origin.to_str().expect("utf-8"), "docs-only"],
    );
    (origin, key)
}

/// A CI clone as actions/checkout makes it, then the trunk with its history.
fn ci_checkout(root: &Path, name: &str, origin: &Path, rev: &str) -> PathBuf {
    let dir = fresh_clone(root, name, origin);
    git(&dir, &["fetch", "-q", "--depth", "1", "origin", rev]);
    git(&dir, &["checkout", "-q", "--detach", "FETCH_HEAD"]);
    git(
        &dir,
        &[
            "fetch",
            "-q",
            "--unshallow",
            "origin",
            "+refs/heads/main:refs/remotes/origin/main",
        ],
    );
    dir
}

/// `discern ARGS` in `dir`: producer runs (of a measurement) and wall time.
fn run(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (u64, Duration) {
    let t = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_discern"))
        .args(args)
        .arg("--json")
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .envs(env.iter().copied())
        .output()
        .expect("discern");
    let took = t.elapsed();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    assert_eq!(
        json["ok"],
        true,
        "discern {args:?}: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let runs = json["data"]["producer_executions"]
        .as_object()
        .map_or(0, |o| {
            o.values().filter_map(serde_json::Value::as_u64).sum()
        });
    (runs, took)
}

fn team_rows(root: &Path, files: usize) {
    let (origin, key) = team_origin(root, files);
    let ci = [("CI", "true")];
    let trunk = ci_checkout(root, "trunk-ci", &origin, "refs/heads/main");
    let head = git(&trunk, &["rev-parse", "HEAD"]);
    let (runs, t) = run(&trunk, &["standards", "--baseline", &head], &ci);
    let key_env = [
        ("CI", "true"),
        ("DISCERN_EVIDENCE_KEY", key.to_str().expect("utf-8")),
    ];
    let (_, publish) = run(&trunk, &["sync", "--push"], &key_env);
    println!("team ({files} files, 3 Standards)        producer runs   wall time");
    println!(
        "trunk CI measure                      {runs:>5}        {:>8.0} ms   (+ sync --push {:.0} ms)",
        ms(t),
        ms(publish)
    );
    let fresh = |name: &str| fresh_depth1(root, name, &origin);
    with_and_without("fresh clone", fresh("dev-without"), fresh("dev-with"), &[]);
    let pr = |name: &str| ci_checkout(root, name, &origin, "refs/heads/docs-only");
    with_and_without("PR CI (docs only)", pr("pr-without"), pr("pr-with"), &ci);
}

/// One row pair: `discern standards` in `without`, then `discern sync` and `discern standards`
/// in `with` (two like clones), as `env` says.
fn with_and_without(what: &str, without: PathBuf, with: PathBuf, env: &[(&str, &str)]) {
    let (runs_a, a) = run(&without, &["standards"], env);
    let (_, sync) = run(&with, &["sync"], env);
    let (runs_b, b) = run(&with, &["standards"], env);
    println!(
        "{:<38}{runs_a:>5}        {:>8.0} ms",
        format!("{what}, no sync"),
        ms(a)
    );
    println!(
        "{:<38}{runs_b:>5}        {:>8.0} ms   (sync {:.0} ms; {:.2}× the run without)",
        format!("{what}, sync then measure"),
        ms(b) + ms(sync),
        ms(sync),
        (ms(b) + ms(sync)) / ms(a)
    );
}

fn fresh_depth1(root: &Path, name: &str, origin: &Path) -> PathBuf {
    let dir = root.join(name);
    let _ = std::fs::remove_dir_all(&dir);
    let url = format!("file://{}", origin.display());
    git(
        root,
        &[
            "clone",
            "-q",
            "--depth",
            "1",
            &url,
            dir.to_str().expect("utf-8"),
        ],
    );
    dir
}
