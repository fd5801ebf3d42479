//! Git lock files and temp files: a lock discern did not create is never deleted, and the
//! refusal names it and how to check it; temp files never land in the work tree, and the ones
//! a killed write left are cleaned by the next writing call.

use crate::support::Fixture;
use crate::support::config::{Config, Standard};

fn config() -> Config {
    Config::new().standard(Standard::todo(5))
}

fn on_branch() -> Fixture {
    let fixture = Fixture::new(config());
    fixture.repo.git(&["checkout", "-q", "-b", "agent/x"]);
    fixture
}

#[test]
fn a_stale_ref_lock_is_named_with_how_to_check_it_and_never_deleted() {
    let fixture = on_branch();
    let head = fixture.repo.head();
    let lock = fixture.path().join(".git/refs/heads/agent/x.lock");
    std::fs::write(&lock, "").unwrap();
    let json = fixture.run(&["standards", "--pin", "--json"]).json();
    assert_eq!(json["error"], "pin_failed", "{json}");
    let message = json["message"].as_str().unwrap();
    assert!(
        message.contains(lock.to_str().unwrap()) && message.contains("fuser"),
        "{message}"
    );
    assert!(
        lock.exists(),
        "a lock discern did not create is never deleted"
    );
    assert_eq!(fixture.repo.head(), head);
    assert_eq!(fixture.repo.git(&["status", "--porcelain"]), "");
    std::fs::remove_file(&lock).unwrap();
    let json = fixture.run(&["standards", "--pin", "--json"]).json();
    assert_eq!(json["ok"], true, "{json}");
}

#[test]
fn a_stale_index_lock_rolls_the_pin_back_and_is_named() {
    let fixture = on_branch();
    let head = fixture.repo.head();
    let lock = fixture.path().join(".git/index.lock");
    std::fs::write(&lock, "").unwrap();
    let json = fixture.run(&["standards", "--pin", "--json"]).json();
    assert_eq!(json["ok"], false, "{json}");
    assert!(
        json["message"].as_str().unwrap().contains("index.lock"),
        "{json}"
    );
    assert!(lock.exists());
    assert_eq!(fixture.repo.head(), head, "the ref moved back");
    assert_eq!(
        std::fs::read_to_string(fixture.path().join("discern.toml")).unwrap(),
        config().to_string()
    );
    std::fs::remove_file(&lock).unwrap();
    assert_eq!(fixture.repo.git(&["status", "--porcelain"]), "");
}

#[test]
fn temp_files_stay_out_of_the_work_tree_and_old_ones_are_cleaned() {
    let fixture = on_branch();
    let admin = fixture.path().join(".git/discern");
    std::fs::create_dir_all(admin.join("tmp")).unwrap();
    let old = [
        admin.join(".discern-tmp-old1"),
        admin.join("tmp/.discern-tmp-old2"),
    ];
    let fresh = admin.join(".discern-tmp-fresh");
    let foreign = admin.join("tmp/not-ours");
    for file in old.iter().chain([&fresh, &foreign]) {
        std::fs::write(file, "x").unwrap();
    }
    for file in &old {
        let status = std::process::Command::new("touch")
            .args(["-d", "2 hours ago"])
            .arg(file)
            .status()
            .unwrap();
        assert!(status.success());
    }
    // A pin killed after it wrote the work-tree file leaves nothing in the work tree.
    let run = fixture.run_with(
        &["standards", "--pin", "--json"],
        &[("DISCERN_FAULT", "worktree-synced")],
    );
    assert_ne!(run.code, 0);
    let at_root: Vec<String> = std::fs::read_dir(fixture.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".tmp") || n.starts_with(".discern-tmp"))
        .collect();
    assert!(at_root.is_empty(), "{at_root:?}");
    // The next writing call finishes the pin and cleans the old temp files, only those.
    let json = fixture.run(&["standards", "--json"]).json();
    assert_eq!(json["ok"], true, "{json}");
    for file in &old {
        assert!(!file.exists(), "{} is cleaned", file.display());
    }
    assert!(fresh.exists(), "a temp file that may be in flight is kept");
    assert!(foreign.exists(), "a file discern did not name is kept");
}

#[test]
fn a_lock_a_killed_transaction_claimed_is_removed_by_recovery_and_only_then() {
    let fixture = on_branch();
    let head = fixture.repo.head();
    let lock = fixture.path().join(".git/refs/heads/agent/x.lock");
    let holder = fixture.repo.parent().join("holder.pid");
    // Killed right after its journal claimed the branch's lock, with the lock just created (as
    // its ref edit would) and held open by a process that outlives it.
    let exec = format!(
        "journal-written:touch '{}'; (exec 3<'{}'; exec sleep 30) >/dev/null 2>&1 </dev/null & echo $! > '{}'",
        lock.display(),
        lock.display(),
        holder.display()
    );
    let run = fixture.run_with(
        &["standards", "--pin", "--json"],
        &[
            ("DISCERN_FAULT_EXEC", &exec),
            ("DISCERN_FAULT", "journal-written"),
        ],
    );
    assert_ne!(run.code, 0, "{}", run.stdout);
    assert!(lock.exists());
    // Open in a live process: not provably discern's leftover; named, never deleted.
    let json = fixture.run(&["standards", "--pin", "--json"]).json();
    assert_eq!(json["ok"], false, "{json}");
    assert!(json.to_string().contains("agent/x.lock"), "{json}");
    assert!(
        lock.exists(),
        "a lock a live process holds is never deleted"
    );
    assert_eq!(fixture.repo.head(), head);
    let pid: i32 = std::fs::read_to_string(&holder)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let pid = rustix::process::Pid::from_raw(pid).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::KILL).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));

    // Now the claim proves it: the claimer is gone, nobody holds it, it is younger than the
    // claim. Recovery removes it, unwinds the transaction, and the pin goes through.
    let json = fixture.run(&["standards", "--pin", "--json"]).json();
    assert_eq!(json["ok"], true, "{json}");
    assert!(!lock.exists());
    assert_ne!(fixture.repo.head(), head, "the pin landed");
    assert_eq!(fixture.repo.git(&["status", "--porcelain"]), "");
}
