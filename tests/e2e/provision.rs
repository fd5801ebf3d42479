//! `[worktree]` provisioning through the real binary: `start` copies the env files, takes a
//! port, runs setup then ensure with the effort's identity; a failing setup keeps the effort,
//! marked, and `discern setup` runs it again; ensure runs on `update` and before `done`'s jobs;
//! a start killed during its setup is finished by the next verb.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::Fixture;
use crate::support::config::{Config, Standard, strings};

/// A config whose setup and ensure steps leave traces (ignored by git) and whose test job
/// writes the identity it sees.
fn config() -> Config {
    let setup = "echo \"$DISCERN_EFFORT $DISCERN_BRANCH $DISCERN_PORT $DISCERN_WORKTREE $DISCERN_MAIN_CHECKOUT\" > .setup-ran";
    Config::new()
        .repository("pin_on_done", "false")
        .job(
            "test",
            "echo \"$DISCERN_EFFORT $DISCERN_PORT\" > .job-identity",
        )
        .set("worktree", "setup", strings(&[setup]))
        .set(
            "worktree",
            "ensure",
            strings(&["echo ensured >> .ensure-log"]),
        )
        .set(
            "worktree",
            "env_files",
            strings(&[".env", "config/local.env"]),
        )
        .set("worktree", "ports", "[4100, 4101]")
}

const IGNORED: &str = "target/\n.setup-ran\n.ensure-log\n.job-identity\n.allow\n";

/// A fixture with `config`, its traces ignored, and a `.env` in the main checkout only.
fn fixture(config: Config) -> Fixture {
    let fixture = Fixture::new(config);
    fixture.repo.write(".gitignore", IGNORED);
    fixture.repo.commit("ignore the provisioning traces");
    std::fs::write(fixture.path().join(".env"), "SECRET=1\n").unwrap();
    fixture
}

fn start(fixture: &Fixture, name: &str) -> (Value, PathBuf) {
    let run = fixture.run(&["start", "--name", name, "--json"]);
    let json = run.json();
    let path = fixture.repo.parent().join(format!("repo.worktrees/{name}"));
    (json, path)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn advisories(json: &Value) -> String {
    json["advisories"].to_string()
}

#[test]
fn start_copies_the_env_file_runs_setup_with_the_identity_and_the_gate_passes() {
    let fixture = fixture(config());
    let (json, effort) = start(&fixture, "e1");
    assert_eq!(json["ok"], true, "{json}");
    assert_eq!(json["data"]["port"], 4100, "{json}");
    assert_eq!(json["data"]["setup"], "done", "{json}");
    let labels: Vec<&str> = json["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["setup:1", "ensure:1"], "{json}");
    // The setup ran in the worktree with the effort's identity.
    let main = std::fs::canonicalize(fixture.path()).unwrap();
    let setup = read(&effort.join(".setup-ran"));
    let expected = format!("e1 agent/e1 4100 {} {}", effort.display(), main.display());
    assert_eq!(setup.trim(), expected);
    // The env file: copied with mode 0600; the missing one is an advisory.
    let env = effort.join(".env");
    assert_eq!(read(&env), "SECRET=1\n");
    let mode = std::fs::metadata(&env).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the env file is its owner's only");
    let said = advisories(&json);
    assert!(
        said.contains("config/local.env is not in the main checkout"),
        "{said}"
    );
    assert!(said.contains("info/exclude"), "{said}");
    // Never an untracked change: the worktree is clean, and so is the main checkout now.
    assert_eq!(fixture.git_out(&effort, &["status", "--porcelain"]), "");
    assert_eq!(
        fixture.git_out(fixture.path(), &["status", "--porcelain"]),
        ""
    );
    // The gate: ensure before the jobs, and the job sees the identity.
    std::fs::write(effort.join("src/new.rs"), "pub fn n() {}\n").unwrap();
    fixture.git_in(&effort, &["add", "-A"]);
    fixture.git_in(&effort, &["commit", "-q", "-m", "work"]);
    // Its dry run lists the ensure step where the gate runs it, and runs nothing.
    let plan = fixture
        .run_in(&effort, &["done", "--dry-run", "--json"], &[])
        .json();
    let planned = plan["plan"]["steps"].to_string();
    assert!(
        planned.find("ensure:1 (echo ensured >> .ensure-log)") < planned.find("job:test"),
        "{plan}"
    );
    let done = fixture.run_in(&effort, &["done", "--json"], &[]).json();
    assert_eq!(done["ok"], true, "{done}");
    let steps = done["steps"].to_string();
    assert!(
        steps.find("ensure:1") < steps.find("job:test"),
        "ensure runs before the jobs: {steps}"
    );
    assert_eq!(read(&effort.join(".ensure-log")).lines().count(), 2);
    assert_eq!(read(&effort.join(".job-identity")).trim(), "e1 4100");
    let committed = fixture.git_out(&effort, &["ls-tree", "-r", "--name-only", "HEAD"]);
    assert!(!committed.contains(".env"), "{committed}");
    // It lands, and its worktree (env file and setup traces in it) goes.
    let accepted = fixture
        .run_in(&effort, &["accept", "--confirmed", "--json"], &[])
        .json();
    assert_eq!(accepted["ok"], true, "{accepted}");
    assert!(
        !effort.exists(),
        "the provisioned worktree is removed on landing"
    );
}

#[test]
fn two_efforts_get_different_ports_and_a_full_band_refuses_a_third() {
    let fixture = fixture(config());
    let (first, _) = start(&fixture, "e1");
    let (second, _) = start(&fixture, "e2");
    assert_eq!(first["data"]["port"], 4100, "{first}");
    assert_eq!(second["data"]["port"], 4101, "{second}");
    let (third, path) = start(&fixture, "e3");
    assert_eq!(third["ok"], false, "{third}");
    assert!(
        third["message"].as_str().unwrap().contains("[4100, 4101]"),
        "{third}"
    );
    assert!(!path.exists(), "a refused start leaves nothing");
}

#[test]
fn ensure_runs_on_update_and_a_failing_ensure_fails_it() {
    let fixture = fixture(config());
    let (_, effort) = start(&fixture, "e1");
    assert_eq!(read(&effort.join(".ensure-log")).lines().count(), 1);
    fixture.repo.write("src/trunk.rs", "pub fn t() {}\n");
    fixture.repo.commit("the trunk moves");
    let update = fixture.run_in(&effort, &["update", "--json"], &[]).json();
    assert_eq!(update["ok"], true, "{update}");
    assert_eq!(read(&effort.join(".ensure-log")).lines().count(), 2);
    // An ensure step that fails fails the verb with its output.
    std::fs::remove_file(effort.join(".ensure-log")).unwrap();
    std::fs::create_dir(effort.join(".ensure-log")).unwrap();
    let failed = fixture.run_in(&effort, &["update", "--json"], &[]);
    let json = failed.json();
    assert_eq!(failed.code, 1, "{json}");
    assert_eq!(json["error"], "setup_failed", "{json}");
    assert!(
        json["message"].as_str().unwrap().contains("ensure step 1"),
        "{json}"
    );
    let test = fixture.run_in(&effort, &["test", "--json"], &[]).json();
    assert_eq!(test["ok"], false, "ensure fails the test verb too: {test}");
}

fn failing() -> Config {
    let allow = "test -f .allow || { echo 'setup needs .allow' >&2; exit 3; }";
    Config::new()
        .repository("pin_on_done", "false")
        .job("test", "true")
        .set("worktree", "setup", strings(&[allow, "touch .setup-ran"]))
}

#[test]
fn a_failing_setup_keeps_the_effort_marked_and_discern_setup_runs_it_again() {
    let fixture = fixture(failing());
    let run = fixture.run(&["start", "--name", "e1", "--json"]);
    let json = run.json();
    let effort = fixture.repo.parent().join("repo.worktrees/e1");
    assert_eq!(run.code, 1, "{json}");
    assert_eq!(json["error"], "setup_failed", "{json}");
    let message = json["message"].as_str().unwrap();
    assert!(message.contains("Started effort e1"), "{message}");
    assert!(message.contains("exit code 3"), "{message}");
    assert_eq!(json["hints"][0]["action"]["verb"], "setup", "{json}");
    assert!(
        json["diagnostics"]
            .to_string()
            .contains("setup needs .allow"),
        "{json}"
    );
    assert!(effort.is_dir(), "the effort is kept");
    assert!(!effort.join(".setup-ran").exists());
    // Status names it, with the command, from the main checkout and inside the effort.
    let status = fixture.run(&["status"]).stdout;
    assert!(status.contains("setup failed at step 1"), "{status}");
    assert!(status.contains("discern setup"), "{status}");
    let inside = fixture.run_in(&effort, &["status", "--json"], &[]).json();
    assert_eq!(inside["hints"][0]["action"]["verb"], "setup", "{inside}");
    assert!(
        inside["data"]["setup"]
            .as_str()
            .unwrap()
            .contains("setup failed"),
        "{inside}"
    );
    // Fixed, the retry passes and the mark is gone.
    std::fs::write(effort.join(".allow"), "").unwrap();
    let retried = fixture.run_in(&effort, &["setup", "--json"], &[]).json();
    assert_eq!(retried["ok"], true, "{retried}");
    assert!(effort.join(".setup-ran").exists());
    let status = fixture.run(&["status"]).stdout;
    assert!(!status.contains("needs attention"), "{status}");
}

#[test]
fn a_start_killed_before_its_setup_is_finished_by_the_next_verb() {
    let fixture = fixture(failing());
    let step = discern::testing::provision::SETUP_BEGUN;
    let run = fixture.run_with(
        &["start", "--name", "e1", "--json"],
        &[("DISCERN_FAULT", step)],
    );
    assert_ne!(run.code, 0, "the fault hook stops it");
    let effort = fixture.repo.parent().join("repo.worktrees/e1");
    // The next writing verb finishes it: the effort is kept, its setup interrupted.
    let next = fixture.run(&["start", "--name", "e2", "--json"]).json();
    assert!(
        advisories(&next).contains("An interrupted start of e1 was finished"),
        "{next}"
    );
    assert!(effort.is_dir());
    let status = fixture.run(&["status"]).stdout;
    assert!(status.contains("setup interrupted"), "{status}");
    std::fs::write(effort.join(".allow"), "").unwrap();
    let retried = fixture.run_in(&effort, &["setup", "--json"], &[]).json();
    assert_eq!(retried["ok"], true, "{retried}");
}

fn slow() -> Config {
    let steps = ["sleep 0.2", "sleep 0.2", "sleep 0.2", "touch .setup-ran"];
    Config::new()
        .repository("pin_on_done", "false")
        .set("worktree", "setup", strings(&steps))
}

/// `start` killed (its whole process group) at a random moment of a slow setup: the next verb
/// leaves either no effort (the fork was unwound) or the effort with its setup done or
/// interrupted — never one whose record says it runs — and `discern setup` completes it.
#[test]
fn a_start_killed_at_a_random_moment_of_its_setup_is_finished_or_unwound() {
    let fixture = fixture(slow());
    let effort = fixture.repo.parent().join("repo.worktrees/e1");
    let (mut kept, mut unwound) = (0, 0);
    for round in 0..4u64 {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_discern"));
        cmd.args(["start", "--name", "e1"])
            .current_dir(fixture.path());
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        discern_tests::hermetic(&mut cmd, fixture.repo.home());
        cmd.env("DISCERN_CACHE_DIR", crate::support::cache_dir())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        let mut child = cmd.spawn().unwrap();
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        std::thread::sleep(std::time::Duration::from_millis(
            (u64::from(nanos) / 1000 + round * 211) % 700,
        ));
        if let Some(pid) = i32::try_from(child.id())
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
        let _ = child.wait();
        // The next writing verb recovers whatever the kill left.
        let next = fixture.run(&["start", "--name", "probe", "--json"]).json();
        assert_eq!(next["ok"], true, "round {round}: {next}");
        let probe = fixture.repo.parent().join("repo.worktrees/probe");
        if effort.is_dir() {
            kept += 1;
            let git_dir = fixture.git_out(&effort, &["rev-parse", "--absolute-git-dir"]);
            let record = read(&Path::new(&git_dir).join("discern/setup.json"));
            assert!(!record.contains("\"running\""), "round {round}: {record}");
            let retried = fixture.run_in(&effort, &["setup", "--json"], &[]).json();
            assert_eq!(retried["ok"], true, "round {round}: {retried}");
            assert!(effort.join(".setup-ran").exists());
        } else {
            unwound += 1;
            let branches = fixture.git_out(fixture.path(), &["branch", "--list", "agent/e1"]);
            assert_eq!(branches, "", "round {round}: unwound whole");
        }
        for (path, branch) in [(&effort, "agent/e1"), (&probe, "agent/probe")] {
            if path.is_dir() {
                fixture.git_in(
                    fixture.path(),
                    &["worktree", "remove", "--force", path.to_str().unwrap()],
                );
            }
            let _ = fixture.git_out(fixture.path(), &["branch", "-D", branch]);
        }
    }
    eprintln!("start during setup: {kept} kept and finished, {unwound} unwound");
}

#[test]
fn the_provisioning_replies_are_snapshotted() {
    let fixture = fixture(config());
    let (started, _) = start(&fixture, "e1");
    let failing = self::fixture(failing());
    let failed = failing.run(&["start", "--name", "e1", "--json"]).stdout;
    let mut filters = crate::contract::filters(&fixture);
    filters.extend(crate::contract::filters(&failing));
    let all: Vec<(&str, &str)> = filters
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    insta::with_settings!({ filters => all }, {
        insta::assert_snapshot!("start_provisioned", serde_json::to_string_pretty(&started).unwrap());
        insta::assert_snapshot!("start_setup_failed", failed);
    });
}

fn doctor() -> Config {
    doctor_with_setup("touch .setup-ran")
}

/// [`doctor`] with its one setup step `setup`.
fn doctor_with_setup(setup: &str) -> Config {
    let test = "test -f .setup-ran && test -f .env && test -n \"$DISCERN_PORT\"";
    Config::new()
        .repository("pin_on_done", "false")
        .job("test", test)
        .set("worktree", "setup", strings(&[setup]))
        .set("worktree", "env_files", strings(&[".env"]))
        .set("worktree", "ports", "[4100, 4199]")
        .standard(Standard::todo(5))
}

/// `doctor` provisions a throwaway worktree, runs the jobs and Standards in it, reports each
/// step with its time, records nothing and leaves no worktree; an uncommitted discern.toml is
/// what it checks.
#[test]
fn doctor_proves_the_gate_in_a_throwaway_worktree_and_leaves_nothing() {
    let fixture = fixture(doctor());
    let run = fixture.run(&["doctor", "--json"]);
    let json = run.json();
    assert_eq!(json["ok"], true, "{json}");
    assert_eq!(json["data"]["passed"], true, "{json}");
    assert_eq!(
        json["hints"][0]["text"], "Start an effort",
        "committed: {json}"
    );
    let labels: Vec<&str> = json["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["setup:1", "job:test", "standards"], "{json}");
    assert!(
        json["steps"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["duration_s"].is_number()),
        "every step is timed: {json}"
    );
    let worktrees = fixture.git_out(fixture.path(), &["worktree", "list", "--porcelain"]);
    assert_eq!(worktrees.matches("worktree ").count(), 1, "{worktrees}");
    assert!(!fixture.path().join(".git/discern/gate-proof").exists());
    // A throwaway a killed check left is removed by the next one.
    let leftover = fixture.repo.parent().join("repo.worktrees/.doctor-4294967");
    let at = leftover.to_str().unwrap();
    fixture.git_in(
        fixture.path(),
        &["worktree", "add", "-q", "--detach", at, "HEAD"],
    );
    let json = fixture.run(&["doctor", "--json"]).json();
    assert!(
        advisories(&json).contains("an interrupted check left"),
        "{json}"
    );
    assert!(!leftover.exists());
    // An uncommitted discern.toml whose job cannot pass in a fresh worktree fails the check.
    let broken = doctor_with_setup("true").to_string();
    std::fs::write(fixture.path().join("discern.toml"), broken).unwrap();
    let run = fixture.run(&["doctor", "--json"]);
    let json = run.json();
    assert_eq!(run.code, 1, "{json}");
    assert_eq!(json["error"], "gate_failed", "{json}");
    assert_eq!(json["data"]["failed_step"], "job:test", "{json}");
    let log = json["steps"][1]["output_path"].as_str().unwrap();
    assert!(
        Path::new(log).is_file(),
        "the failed step's log outlives the throwaway: {log}"
    );
    let human = fixture.run(&["doctor"]).stdout;
    assert!(human.contains("FAILED job:test"), "{human}");
    let worktrees = fixture.git_out(fixture.path(), &["worktree", "list", "--porcelain"]);
    assert_eq!(worktrees.matches("worktree ").count(), 1, "{worktrees}");
}
