//! The invariants the soak holds the repository to, at rest: each violation one line.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::ledger::Shared;

/// Every invariant, on the repository at rest; each violation one line.
pub(super) fn violations(sh: &Shared<'_>, root: &str) -> Vec<String> {
    let fixture = sh.fixture;
    let main = sh.main();
    let git = |args: &[&str]| {
        let mut cmd = std::process::Command::new("git");
        cmd.args(args).current_dir(main);
        discern_tests::hermetic(&mut cmd, fixture.repo.home());
        cmd.output().expect("git runs")
    };
    let mut found = Vec::new();

    // git fsck is clean.
    let fsck = git(&["fsck", "--no-progress", "--no-dangling"]);
    let fsck_err =
        String::from_utf8_lossy(&fsck.stderr).into_owned() + &String::from_utf8_lossy(&fsck.stdout);
    if !fsck.status.success() || !fsck_err.trim().is_empty() {
        found.push(format!("git fsck: {fsck_err}"));
    }

    // Every trunk commit that changes discern.toml is a config-only commit by discern.
    let log = git(&[
        "log",
        "--no-merges",
        "--format=%x00%H %s",
        "--name-only",
        &format!("{root}..main"),
    ]);
    for entry in String::from_utf8_lossy(&log.stdout).split('\0').skip(1) {
        let mut lines = entry.lines();
        let header = lines.next().unwrap_or_default();
        let files: Vec<&str> = lines.filter(|l| !l.is_empty()).collect();
        if files.contains(&"discern.toml") && (files.len() != 1 || !header.contains(" discern")) {
            found.push(format!(
                "a limit change on the trunk that is not a config-only commit by discern: {header} {files:?}"
            ));
        }
    }

    // The trunk moved only by landings, each onto a commit with its Proof note.
    let noted: HashSet<String> =
        String::from_utf8_lossy(&git(&["notes", "--ref=refs/notes/discern", "list"]).stdout)
            .lines()
            .filter_map(|l| l.split_whitespace().nth(1).map(str::to_owned))
            .collect();
    let reflog = git(&["reflog", "show", "--format=%H %gs", "refs/heads/main"]);
    for line in String::from_utf8_lossy(&reflog.stdout).lines() {
        let (sha, subject) = line.split_once(' ').unwrap_or((line, ""));
        if sha == root {
            continue;
        }
        if !subject.starts_with("discern accept") {
            found.push(format!(
                "the trunk moved to {sha} not by a landing: {subject}"
            ));
            continue;
        }
        if !noted.contains(sha) {
            found.push(format!(
                "the trunk landed {sha} without a Proof note ({subject})"
            ));
            continue;
        }
        let note = git(&["notes", "--ref=refs/notes/discern", "show", sha]);
        let note: Value = serde_json::from_slice(&note.stdout).unwrap_or(Value::Null);
        if note["subject"]["commit"] != sha {
            found.push(format!(
                "the Proof note of {sha} names another commit: {note}"
            ));
        }
    }

    // No effort's committed work is lost.
    let on_trunk: HashSet<String> = String::from_utf8_lossy(&git(&["rev-list", "main"]).stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    let (work, given_up) = {
        let ledger = sh.ledger();
        (ledger.work.clone(), ledger.given_up.clone())
    };
    let mut branches: HashMap<String, HashSet<String>> = HashMap::new();
    for (effort, sha) in work {
        if on_trunk.contains(&sha) || given_up.contains(&effort) {
            continue;
        }
        let reachable = branches.entry(effort.clone()).or_insert_with(|| {
            String::from_utf8_lossy(
                &git(&["rev-list", &format!("refs/heads/agent/{effort}"), "--"]).stdout,
            )
            .lines()
            .map(str::to_owned)
            .collect()
        });
        if !reachable.contains(&sha) {
            found.push(format!(
                "effort {effort}'s commit {sha} is on neither the trunk nor agent/{effort}"
            ));
        }
    }

    // No lock, journal or merge in progress left; the main checkout clean; no worktree lost.
    let git_dir = main.join(".git");
    let mut files = Vec::new();
    walk(&git_dir, &mut files);
    for file in &files {
        let rel = file.strip_prefix(&git_dir).unwrap_or(file);
        let name = rel.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let parent = rel
            .parent()
            .and_then(|p| p.file_name())
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let in_worktree_admin = rel.starts_with("worktrees") && rel.components().count() == 3;
        // discern's own lock files stay; the kernel releases their locks with the process.
        let os_lock = name == discern::testing::commit::lock::FILE || name == "sync.lock";
        let left = (name.ends_with(".lock") && !os_lock)
            || name == "config-transaction.json"
            || name == "merge-transaction.json"
            || name == "MERGE_HEAD"
            || (in_worktree_admin && name == "locked")
            || (matches!(parent, "landings" | "forks") && name.ends_with(".json"));
        if left {
            let content = std::fs::read_to_string(file).unwrap_or_default();
            found.push(format!("left behind: .git/{} {content}", rel.display()));
        }
        if os_lock {
            let held = std::fs::OpenOptions::new()
                .write(true)
                .open(file)
                .map(|f| f.try_lock().is_err())
                .unwrap_or(false);
            if held {
                found.push(format!(
                    "the writer lock .git/{} is still held",
                    rel.display()
                ));
            }
        }
    }
    let status = fixture.git_out(main, &["status", "--porcelain"]);
    if !status.is_empty() {
        found.push(format!("the main checkout is not clean: {status}"));
    }
    let worktrees = fixture.git_out(main, &["worktree", "list", "--porcelain"]);
    for block in worktrees.split("\n\n") {
        if block.contains("\nprunable") {
            found.push(format!("a worktree lost its folder: {block}"));
        }
    }
    found.extend(forge_violations(sh));
    found
}

/// The forge the owner publishes to: sound, its trunk and notes never ahead of or beside the
/// main checkout's (a push only ever fast-forwards them to what was landed), and no ref lock
/// left on it.
fn forge_violations(sh: &Shared<'_>) -> Vec<String> {
    let forge = sh.forge();
    let git = |args: &[&str]| {
        let mut cmd = std::process::Command::new("git");
        cmd.args(args).current_dir(&forge);
        discern_tests::hermetic(&mut cmd, sh.fixture.repo.home());
        cmd.output().expect("git runs")
    };
    let mut found = Vec::new();
    let fsck = git(&["fsck", "--no-progress", "--no-dangling"]);
    if !fsck.status.success() {
        found.push(format!(
            "forge: git fsck: {}",
            String::from_utf8_lossy(&fsck.stderr)
        ));
    }
    for name in ["refs/heads/main", "refs/notes/discern"] {
        let there = String::from_utf8_lossy(&git(&["rev-parse", "-q", "--verify", name]).stdout)
            .trim()
            .to_owned();
        if there.is_empty() {
            continue;
        }
        let here = sh
            .fixture
            .git_out(sh.main(), &["rev-parse", "-q", "--verify", name]);
        let mut is_ancestor = std::process::Command::new("git");
        is_ancestor
            .args(["merge-base", "--is-ancestor", &there, &here])
            .current_dir(sh.main());
        discern_tests::hermetic(&mut is_ancestor, sh.fixture.repo.home());
        let ancestor = is_ancestor.status().is_ok_and(|s| s.success());
        if here.is_empty() || !ancestor {
            found.push(format!(
                "forge: {name} is at {there}, which the main checkout's {name} ({here}) does not contain"
            ));
        }
    }
    let mut files = Vec::new();
    walk(&forge.join("refs"), &mut files);
    for file in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "lock"))
    {
        found.push(format!("forge: left behind: {}", file.display()));
    }
    found
}

fn walk(dir: &Path, into: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => {
                // Objects hold no locks or journals worth reading file by file.
                if path.file_name().is_some_and(|n| n == "objects") {
                    continue;
                }
                walk(&path, into);
            }
            Ok(_) => into.push(path),
            Err(_) => {}
        }
    }
}
