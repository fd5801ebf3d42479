//! The approval commit killed (issue 52): `discern approve` signs the effort's net change and
//! commits the approval onto the effort's branch as one config-only transaction. Killed at a
//! random moment — every other round with its process group, its git children too — and then
//! approved again: the branch ends with exactly one approval commit on the reviewed head, the
//! worktree clean, no journal or lock left, and the effort lands.

use std::path::Path;

use crate::approval::{proposed_effort, signed_fixture};
use crate::kills::{jitter, kill_as, rounds, wait_for_git_under};

#[test]
fn an_approval_killed_at_a_random_moment_is_committed_once_and_lands() {
    let (mut killed, mut committed) = (0, 0);
    for round in 0..rounds() {
        let (fixture, keys) = signed_fixture();
        let (path, _) = proposed_effort(&fixture, "kill");
        let head = fixture.git_out(&path, &["rev-parse", "HEAD"]);
        let owner = keys.owner.to_str().unwrap();
        let approve = [
            "approve", "--effort", "kill", "--head", &head, "--key", owner,
        ];
        killed += usize::from(kill_as(
            &fixture,
            fixture.path(),
            &approve,
            jitter(round, 400),
            round % 2 == 0,
        ));
        // Killed alone, its git children run to their end before the next call.
        wait_for_git_under(fixture.repo.parent());
        let on_top = fixture.git_out(&path, &["rev-list", "--count", &format!("{head}..HEAD")]);
        committed += usize::from(on_top == "1");
        let again = fixture.run(&[&approve[..], &["--json"]].concat()).json();
        let settled = again["ok"] == true
            || again["message"]
                .as_str()
                .is_some_and(|m| m.contains("already"));
        assert!(settled, "round {round}: {again}");
        assert_eq!(
            fixture.git_out(&path, &["rev-list", "--count", &format!("{head}..HEAD")]),
            "1",
            "round {round}: exactly one approval commit: {again}"
        );
        assert_eq!(
            fixture.git_out(&path, &["status", "--porcelain"]),
            "",
            "round {round}"
        );
        let git_dir = fixture.git_out(&path, &["rev-parse", "--absolute-git-dir"]);
        let git_dir = Path::new(&git_dir);
        assert!(!git_dir.join("index.lock").exists(), "round {round}");
        assert!(
            !git_dir.join("discern/config-transaction.json").exists(),
            "round {round}: a journal is left"
        );
        let landed = fixture
            .run_in(&path, &["accept", "--confirmed", "--json"], &[])
            .json();
        assert_eq!(landed["ok"], true, "round {round}: it lands: {landed}");
    }
    eprintln!(
        "approve: {} rounds, {killed} killed, {committed} committed before the next approve",
        rounds()
    );
}
