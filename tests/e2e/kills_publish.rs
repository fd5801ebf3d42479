//! Publishing killed (issue 52): `discern sync --push` in trunk CI measures HEAD, signs what it
//! measured, commits the bundles onto `refs/discern/evidence` and pushes that ref (with the
//! notes) to the forge. Killed at a random moment — every other round with its process group,
//! its git children too — and run again: the forge and the clone hold the same, complete
//! published ref, no ref lock is left on either side, both repositories are sound, and a fresh
//! clone reuses every reading (what was published verifies whole).

use std::path::Path;

use crate::kills::{jitter, kill_with, rounds, wait_for_git_under};
use crate::sync::{Team, runs};

const REF: &str = "refs/discern/evidence";

#[test]
fn a_publish_killed_at_a_random_moment_is_completed_by_the_next_one() {
    let (mut killed, mut pushed_before) = (0, 0);
    for round in 0..rounds() {
        let team = Team::new();
        let clone = team.ci_clone("trunk", "refs/heads/main");
        let key = team.ci_key.to_str().unwrap();
        let env = [("CI", "true"), ("DISCERN_EVIDENCE_KEY", key)];
        killed += usize::from(kill_with(
            &team.fixture,
            (&clone, &["sync", "--push"], &env),
            jitter(round, 700),
            round % 2 == 0,
        ));
        wait_for_git_under(&team.dir);
        pushed_before += usize::from(
            !team
                .out(&team.origin, &["rev-parse", "-q", "--verify", REF])
                .is_empty(),
        );
        let (code, again) = team.discern(&clone, &["sync", "--push", "--json"], &env);
        assert_eq!(code, 0, "round {round}: {again}");
        assert_eq!(again["data"]["pushed"], true, "round {round}: {again}");
        let local = team.out(&clone, &["rev-parse", REF]);
        assert!(
            !local.is_empty(),
            "round {round}: nothing published: {again}"
        );
        assert_eq!(
            team.out(&team.origin, &["rev-parse", REF]),
            local,
            "round {round}: the forge holds what the clone published"
        );
        for repo in [&clone, &team.origin] {
            no_ref_lock(repo, round);
            let mut fsck = std::process::Command::new("git");
            fsck.args(["fsck", "--no-dangling"]).current_dir(repo);
            discern_tests::hermetic(&mut fsck, team.fixture.repo.home());
            let out = fsck.output().unwrap();
            assert!(out.status.success(), "round {round}: {out:?}");
        }
        let dev = team.shallow_clone(&format!("dev-{round}"));
        let (code, sync) = team.discern(&dev, &["sync", "--json"], &[]);
        assert_eq!(code, 0, "round {round}: {sync}");
        let (code, json) = team.discern(&dev, &["standards", "--json"], &[]);
        assert_eq!(code, 0, "round {round}: {json}");
        assert_eq!(
            runs(&json),
            0,
            "round {round}: every reading reused: {json}"
        );
    }
    eprintln!(
        "sync --push: {} rounds, {killed} killed, {pushed_before} on the forge before the next push",
        rounds()
    );
}

/// No `*.lock` under the repository's refs (or `packed-refs.lock`): a killed push or ref update
/// left none behind, or the next one cleared what was its own.
fn no_ref_lock(repo: &Path, round: usize) {
    let git_dir = if repo.join(".git").is_dir() {
        repo.join(".git")
    } else {
        repo.to_path_buf()
    };
    assert!(
        !git_dir.join("packed-refs.lock").exists(),
        "round {round}: packed-refs.lock in {}",
        git_dir.display()
    );
    let mut stack = vec![git_dir.join("refs")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                assert!(
                    path.extension().is_none_or(|e| e != "lock"),
                    "round {round}: {} is left",
                    path.display()
                );
            }
        }
    }
}
