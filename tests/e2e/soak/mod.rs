//! A fleet under load loses nothing (issue 34): agents — threads, each with its own `discern
//! mcp` session (a real stdio client) and CLI calls of the real binary — work one repository
//! through the whole effort lifecycle in a seeded random mix (start, commit work, done, update,
//! accept, standards --pin / propose / withdraw, status, await, the owner's approve), while a
//! few percent of the CLI calls are SIGKILLed with their process group at a random moment. An
//! agent follows a refusal's next step most of the time, and after a kill its next call in
//! that checkout is a writing one — the same call again, or in an effort another writing verb
//! (the contract: the next writing call settles what a kill left).
//!
//! After every round (all calls ended) and at the end:
//! - `git fsck` is clean;
//! - every commit on the trunk that changes `discern.toml` is a config-only commit by discern;
//! - the trunk moved only by landings (its reflog), each onto a commit whose Proof note on
//!   `refs/notes/discern` exists and names it;
//! - no effort's committed work is lost: every commit an agent made is reachable from the trunk
//!   or from its effort's branch;
//! - no lock (a git `*.lock`, a locked worktree, a held `writer.lock`), no journal (config,
//!   merge, landing, fork) and no merge in progress is left, the main checkout is clean and no
//!   registered worktree lost its folder;
//! - every refused call named the step past it (a hint's `action`, or a command in its text),
//!   and no call failed internally, printed no envelope, or hung.
//!
//! Scale: `DISCERN_SOAK_AGENTS` (default 4), `DISCERN_SOAK_SECONDS` (default 20),
//! `DISCERN_SOAK_KILL_PERCENT` (default 8: the share of CLI calls given a kill moment, anywhere
//! within how long that verb has been taking; some finish first), `DISCERN_SOAK_SEED`
//! (default: the clock; printed,
//! so a mix can be run again — thread timing still varies between runs).

mod agent;
mod calls;
mod checks;
mod ledger;
mod mix;

use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use agent::Agent;
use checks::violations;
use ledger::{Ledger, Shared};

use crate::mcp::connect;
use crate::support::Fixture;
use crate::support::config::{Config, Standard};

/// Two Standards the fleet moves: TODOs (a ceiling work breaches, so proposals happen) and the
/// lines of `src/` (a floor every effort's work raises, so `done` pins gains and efforts' pins
/// meet in `update`).
fn config() -> Config {
    let lines = Standard::extent("lines", "lines", &["src/**"])
        .up()
        .limit(3);
    Config::new()
        .job("test", "true")
        .standard(Standard::todo(6).margin(1))
        .standard(lines.margin(5))
}

const REASON: &str = "The soak agent's new module marks planned extension points as TODO comments; they are tracked work, not debt.";

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

/// What one soak run found.
struct Soak {
    seed: u64,
    ops: u64,
    /// Calls that failed outright (no envelope, an internal error, a hang, a lost worktree).
    failures: Vec<String>,
    wayless: Vec<String>,
    /// Invariant violations, by round and at the end.
    violations: Vec<String>,
}

/// One soak run per test binary, shared by the tests that judge it.
fn soak() -> &'static Soak {
    static RUN: std::sync::OnceLock<Soak> = std::sync::OnceLock::new();
    RUN.get_or_init(run)
}

#[test]
fn a_fleet_under_load_loses_nothing() {
    let soak = soak();
    let seed = soak.seed;
    assert!(
        soak.failures.is_empty(),
        "seed {seed}: {} calls failed:\n{}",
        soak.failures.len(),
        soak.failures.join("\n")
    );
    assert!(
        soak.violations.is_empty(),
        "seed {seed}: invariants broke:\n{}",
        soak.violations.join("\n")
    );
    assert!(
        soak.wayless.is_empty(),
        "seed {seed}: {} refusals named no step past them:\n{:#?}",
        soak.wayless.len(),
        soak.wayless
    );
    assert!(soak.ops > 0, "seed {seed}: the fleet did nothing");
}

fn run() -> Soak {
    let agents = env_number("DISCERN_SOAK_AGENTS", 4).max(1) as usize;
    let seconds = env_number("DISCERN_SOAK_SECONDS", 20).max(1);
    let kill_percent = env_number("DISCERN_SOAK_KILL_PERCENT", 8).min(100);
    let seed = env_number(
        "DISCERN_SOAK_SEED",
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64),
    );
    // Rounds of 5 s in the short run, 30 s in a long one; the invariants run between rounds.
    let round = if seconds <= 60 { 5 } else { 30 };
    let rounds = seconds.div_ceil(round);
    eprintln!(
        "soak: seed {seed} (DISCERN_SOAK_SEED={seed} runs this mix again), {agents} agents, {seconds} s in {rounds} rounds, {kill_percent} % of CLI calls given a kill moment"
    );

    let setup = Instant::now();
    let fixture = Fixture::new(config());
    let root = fixture.repo.head();
    with_forge(&fixture);
    let scratch = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let shared = Shared {
        fixture: &fixture,
        rt: &rt,
        scratch: scratch.path().to_owned(),
        kill_percent,
        ledger: Mutex::new(Ledger::default()),
    };
    let mut fleet: Vec<Agent> = (0..agents)
        .map(|id| Agent::new(id, seed, rt.block_on(connect(&fixture, fixture.path()))))
        .collect();
    eprintln!("soak: setup {:.1} s", setup.elapsed().as_secs_f64());

    let started = Instant::now();
    let mut failed_rounds = Vec::new();
    let mut working = Duration::ZERO;
    for r in 0..rounds {
        let round_started = Instant::now();
        let until = round_started + Duration::from_secs(round.min(seconds - r * round));
        std::thread::scope(|scope| {
            for agent in fleet.iter_mut() {
                let shared = &shared;
                scope.spawn(move || agent.round(shared, until));
            }
        });
        working += round_started.elapsed();
        let found = violations(&shared, &root);
        let ledger = shared.ledger();
        let ops: u64 = ledger
            .counts
            .values()
            .map(|c| c.ok + c.refused + c.killed)
            .sum();
        eprintln!(
            "soak: round {}/{rounds}: {ops} operations so far, {} landed, {} failures, {} invariant violations",
            r + 1,
            ledger.landed,
            ledger.failures.len(),
            found.len()
        );
        drop(ledger);
        for violation in &found {
            eprintln!("soak: round {}: VIOLATION {violation}", r + 1);
        }
        if !found.is_empty() {
            failed_rounds.push(format!("round {}: {found:#?}", r + 1));
        }
    }
    for agent in fleet {
        agent.leave(&rt);
    }
    // Every call and session has ended: the invariants once more.
    let end = violations(&shared, &root);
    let elapsed = started.elapsed();

    let ledger = shared.ledger();
    let ops: u64 = ledger
        .counts
        .values()
        .map(|c| c.ok + c.refused + c.killed)
        .sum();
    let killed: u64 = ledger.counts.values().map(|c| c.killed).sum();
    let minutes = working.as_secs_f64() / 60.0;
    eprintln!(
        "soak: {ops} operations in {:.1} s of rounds ({:.1} s with checks) = {:.0} per minute; {killed} killed; {} efforts started, {} landed ({} finished by a later call after a kill), {} abandoned; {} work commits",
        working.as_secs_f64(),
        elapsed.as_secs_f64(),
        ops as f64 / minutes,
        ledger.started,
        ledger.landed,
        ledger.landed_by_recovery,
        ledger.abandoned,
        ledger.work.len()
    );
    eprintln!(
        "soak: {:<26} {:>7} {:>7} {:>7} {:>8}",
        "verb (surface)", "ok", "refused", "killed", "per min"
    );
    for (verb, c) in &ledger.counts {
        eprintln!(
            "soak: {verb:<26} {:>7} {:>7} {:>7} {:>8.1}",
            c.ok,
            c.refused,
            c.killed,
            (c.ok + c.refused + c.killed) as f64 / minutes
        );
    }
    eprintln!("soak: refusals by verb and slug: {:?}", ledger.slugs);
    eprintln!(
        "soak: invariants after {rounds} rounds and at the end: {}",
        if failed_rounds.is_empty() && end.is_empty() {
            "all held".to_owned()
        } else {
            format!(
                "{} rounds failed, {} at the end",
                failed_rounds.len(),
                end.len()
            )
        }
    );
    for refusal in &ledger.wayless {
        eprintln!("soak: REFUSAL NAMING NO STEP: {refusal}");
    }
    let mut violations = failed_rounds;
    violations.extend(end.into_iter().map(|v| format!("at the end: {v}")));
    Soak {
        seed,
        ops,
        failures: ledger.failures.clone(),
        wayless: ledger.wayless.clone(),
        violations,
    }
}

/// A bare repository beside the fixture as its `origin`, holding the trunk: the forge the
/// owner's `sync --push` publishes to.
fn with_forge(fixture: &Fixture) {
    let forge = fixture.repo.parent().join("forge.git");
    let forge = forge.to_str().unwrap();
    fixture
        .repo
        .git(&["init", "-q", "--bare", "-b", "main", forge]);
    fixture.repo.git(&["remote", "add", "origin", forge]);
    fixture.repo.git(&["push", "-q", "-u", "origin", "main"]);
}

/// The checks can fail: each kind of damage they guard against, made by hand on a quiet
/// repository, is named.
#[test]
fn the_soak_checks_name_each_kind_of_damage() {
    let fixture = Fixture::new(config());
    let root = fixture.repo.head();
    with_forge(&fixture);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let shared = Shared {
        fixture: &fixture,
        rt: &rt,
        scratch: scratch.path().to_owned(),
        kill_percent: 0,
        ledger: Mutex::new(Ledger::default()),
    };
    assert_eq!(violations(&shared, &root), Vec::<String>::new());

    // Work whose branch was deleted before it landed.
    fixture.repo.git(&["checkout", "-q", "-b", "agent/lost"]);
    fixture.repo.write("src/lost.rs", "pub fn lost() {}\n");
    let lost = fixture.repo.commit("lost work");
    fixture.repo.git(&["checkout", "-q", "main"]);
    fixture.repo.git(&["branch", "-q", "-D", "agent/lost"]);
    shared.ledger().work.push(("lost".to_owned(), lost.clone()));
    // The trunk moved by hand, a limit loosened inside other work.
    fixture.repo.write(
        "discern.toml",
        config().standard(Standard::todo(60).margin(1)).to_string(),
    );
    fixture.repo.write("src/more.rs", "pub fn more() {}\n");
    fixture.repo.commit("loosen by hand");
    // A git lock, a landing journal, and the writer lock held.
    let git_dir = fixture.path().join(".git");
    std::fs::write(git_dir.join("packed-refs.lock"), "").unwrap();
    std::fs::create_dir_all(git_dir.join("discern/landings")).unwrap();
    std::fs::write(git_dir.join("discern/landings/agent.x.json"), "{}").unwrap();
    let writer = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(
            git_dir
                .join("discern")
                .join(discern::testing::commit::lock::FILE),
        )
        .unwrap();
    writer.lock().unwrap();
    // The forge's trunk rewritten under the owner, and a ref lock left on it.
    let forge = fixture.repo.parent().join("forge.git");
    fixture
        .repo
        .git(&["push", "-q", "-f", "origin", "HEAD~1:refs/heads/main"]);
    fixture
        .repo
        .git(&["commit", "-q", "--allow-empty", "-m", "elsewhere"]);
    fixture
        .repo
        .git(&["push", "-q", "-f", "origin", "HEAD:refs/heads/main"]);
    fixture.repo.git(&["reset", "-q", "--hard", "HEAD~1"]);
    std::fs::write(forge.join("refs/heads/main.lock"), "").unwrap();

    let found = violations(&shared, &root).join("\n");
    for expected in [
        "not by a landing: commit: loosen by hand",
        "not a config-only commit by discern",
        &format!("commit {lost} is on neither the trunk nor agent/lost"),
        "left behind: .git/packed-refs.lock",
        "left behind: .git/discern/landings/agent.x.json",
        "the writer lock",
        "forge: refs/heads/main is at",
        "forge: left behind:",
    ] {
        assert!(found.contains(expected), "{expected:?} in {found}");
    }
    writer.unlock().unwrap();

    // A damaged object.
    let blob = fixture.git_out(fixture.path(), &["rev-parse", "HEAD:README.md"]);
    let object = git_dir.join("objects").join(&blob[..2]).join(&blob[2..]);
    let mut permissions = std::fs::metadata(&object).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    permissions.set_readonly(false);
    std::fs::set_permissions(&object, permissions).unwrap();
    std::fs::write(&object, b"not a zlib stream").unwrap();
    let found = violations(&shared, &root).join("\n");
    assert!(found.contains("git fsck"), "{found}");
}
