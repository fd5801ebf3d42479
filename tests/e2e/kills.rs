//! kill -9 at random moments: the real binary's whole process group is killed while it pins or
//! lands, and the next writing call leaves the repository exactly as it was or exactly as
//! intended. Rounds scale with `DISCERN_KILL_ROUNDS` (default 3, what CI runs).

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::support::{Fixture, cache_dir};

use crate::support::config::Config;

pub(crate) fn rounds() -> usize {
    std::env::var("DISCERN_KILL_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
}

/// A delay in `0..max_ms` that differs from round to round.
pub(crate) fn jitter(round: usize, max_ms: u64) -> Duration {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos() as u64);
    Duration::from_millis((nanos / 1000 + round as u64 * 37) % max_ms)
}

/// Start `discern args` in `dir` in its own process group, and SIGKILL the group after `after`
/// (or let it finish first). Whether it was killed.
fn kill_after(fixture: &Fixture, dir: &Path, args: &[&str], after: Duration) -> bool {
    kill_as(fixture, dir, args, after, true)
}

/// Start `discern args` in the fixture and SIGKILL that process alone after `after`: the git
/// it started goes on, as a forge's receive-pack would. Whether it was killed.
fn kill_process_after(fixture: &Fixture, args: &[&str], after: Duration) -> bool {
    kill_as(fixture, fixture.path(), args, after, false)
}

pub(crate) fn kill_as(
    fixture: &Fixture,
    dir: &Path,
    args: &[&str],
    after: Duration,
    group: bool,
) -> bool {
    kill_with(fixture, (dir, args, &[]), after, group)
}

/// [`kill_as`] with `env` set for the killed process.
pub(crate) fn kill_with(
    fixture: &Fixture,
    (dir, args, env): (&Path, &[&str], &[(&str, &str)]),
    after: Duration,
    group: bool,
) -> bool {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_discern"));
    cmd.args(args).current_dir(dir);
    if group {
        cmd.process_group(0);
    }
    discern_tests::hermetic(&mut cmd, fixture.repo.home());
    cmd.env("DISCERN_CACHE_DIR", cache_dir())
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = cmd.spawn().unwrap();
    std::thread::sleep(after);
    if child.try_wait().unwrap().is_some() {
        return false;
    }
    if group {
        // The group, through the kernel: `kill -<pgid>` without `--` means every process to
        // procps-ng's kill.
        let pid = i32::try_from(child.id()).ok();
        let group = pid
            .and_then(rustix::process::Pid::from_raw)
            .expect("a child pid");
        let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
    } else {
        let _ = child.kill();
    }
    let _ = child.wait();
    true
}

#[test]
fn a_pin_killed_at_a_random_moment_leaves_nothing_or_exactly_the_pin() {
    let (mut killed, mut landed) = (0, 0);
    for round in 0..rounds() {
        let fixture = Fixture::new(Config::landing());
        fixture.repo.git(&["checkout", "-q", "-b", "agent/x"]);
        let before = fixture.repo.head();
        killed += usize::from(kill_after(
            &fixture,
            fixture.path(),
            &["standards", "--pin"],
            jitter(round, 400),
        ));
        let json = fixture.run(&["standards", "--json"]).json();
        assert_eq!(json["ok"], true, "round {round}: {json}");
        fixture.assert_settled(&format!("round {round}"));
        let head = fixture.repo.head();
        if head != before {
            landed += 1;
            let changed =
                fixture.git_out(fixture.path(), &["diff", "--name-only", &before, "HEAD"]);
            assert_eq!(changed, "discern.toml", "round {round}: exactly the pin");
            assert_eq!(
                fixture.git_out(fixture.path(), &["rev-parse", "HEAD~1"]),
                before
            );
        }
    }
    eprintln!("pin: {} rounds, {killed} killed, {landed} pinned", rounds());
}

#[test]
fn a_landing_killed_at_a_random_moment_is_landed_once_or_not_at_all() {
    let (mut killed, mut landed) = (0, 0);
    for round in 0..rounds() {
        let fixture = Fixture::new(Config::landing());
        let before = fixture.git_out(fixture.path(), &["rev-parse", "main"]);
        let (effort, head) = fixture.proven_effort("kill");
        killed += usize::from(kill_after(
            &fixture,
            &effort,
            &["accept", "--confirmed"],
            jitter(round, 300),
        ));
        // The next writing call, from the main checkout, settles it.
        let next = fixture.run(&["start", "--name", "after", "--json"]).json();
        assert_eq!(next["ok"], true, "round {round}: {next}");
        assert_eq!(
            fixture.git_out(fixture.path(), &["status", "--porcelain"]),
            "",
            "round {round}: index.lock left: {}; {next}",
            fixture.path().join(".git/index.lock").exists()
        );
        let trunk = fixture.git_out(fixture.path(), &["rev-parse", "main"]);
        if trunk == before {
            let json = fixture
                .run_in(&effort, &["accept", "--confirmed", "--json"], &[])
                .json();
            assert_eq!(
                json["ok"], true,
                "round {round}: it lands afterwards: {json}"
            );
        } else {
            landed += 1;
            assert_eq!(trunk, head, "round {round}: exactly the effort landed");
        }
        assert_eq!(
            fixture.git_out(fixture.path(), &["rev-parse", "HEAD"]),
            head,
            "round {round}"
        );
        assert!(!effort.exists(), "round {round}: the worktree is gone");
        assert_eq!(
            fixture.git_out(fixture.path(), &["branch", "--list", "agent/kill"]),
            ""
        );
        assert_eq!(
            fixture.git_out(fixture.path(), &["status", "--porcelain"]),
            ""
        );
    }
    eprintln!(
        "accept: {} rounds, {killed} killed, {landed} landed before the kill",
        rounds()
    );
}

/// A landing killed at a random moment — every other round with its whole process group (its
/// git children die too), else alone — and then the same `accept` again, from the worktree if
/// it is still there, else from the main checkout: it lands exactly once, and leaves no
/// journal, no lock and a clean main checkout behind.
#[test]
fn a_landing_killed_with_its_git_children_is_settled_by_the_next_accept() {
    let (mut killed, mut landed) = (0, 0);
    for round in 0..rounds() {
        let fixture = Fixture::new(Config::landing());
        let (effort, head) = fixture.proven_effort("kill");
        killed += usize::from(kill_as(
            &fixture,
            &effort,
            &["accept", "--confirmed"],
            jitter(round, 300),
            round % 2 == 0,
        ));
        // Killed alone, its git children run to their end (as a forge's would): the next call
        // is made once they have.
        wait_for_git_under(fixture.repo.parent());
        landed += usize::from(fixture.git_out(fixture.path(), &["rev-parse", "main"]) == head);
        let again = match effort.exists() {
            true => fixture.run_in(&effort, &["accept", "--confirmed", "--json"], &[]),
            false => fixture.run(&["accept", "--effort", "kill", "--confirmed", "--json"]),
        };
        let json = again.json();
        let already = json["message"]
            .as_str()
            .is_some_and(|m| m.contains("already landed"));
        assert!(json["ok"] == true || already, "round {round}: {json}");
        let main = fixture.path();
        assert_eq!(
            fixture.git_out(main, &["rev-parse", "main"]),
            head,
            "round {round}"
        );
        assert_eq!(
            fixture.git_out(main, &["rev-parse", "HEAD"]),
            head,
            "round {round}"
        );
        assert_eq!(
            fixture.git_out(main, &["status", "--porcelain"]),
            "",
            "round {round}: {json}"
        );
        assert!(!main.join(".git/index.lock").exists(), "round {round}");
        let journals: Vec<String> = std::fs::read_dir(main.join(".git/discern/landings"))
            .map(|d| {
                d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        assert!(
            journals.is_empty(),
            "round {round}: a landing journal is left: {journals:?}; {json}"
        );
        assert!(
            !effort.exists(),
            "round {round}: the worktree is gone: {json}; {}; holds {:?}",
            fixture.git_out(main, &["worktree", "list", "--porcelain"]),
            std::fs::read_dir(&effort)
                .map(|d| d.flatten().map(|e| e.file_name()).collect::<Vec<_>>())
        );
    }
    eprintln!(
        "accept again: {} rounds, {killed} killed, {landed} landed before the next accept",
        rounds()
    );
}

/// Wait (up to 10 s) until no `git` process works in a folder under `dir`.
pub(crate) fn wait_for_git_under(dir: &Path) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let busy = || {
        std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .any(|p| {
                let comm = std::fs::read_to_string(p.path().join("comm")).unwrap_or_default();
                let cwd = std::fs::read_link(p.path().join("cwd")).unwrap_or_default();
                comm.trim() == "git" && cwd.starts_with(dir)
            })
    };
    while busy() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_proposal_killed_at_a_random_moment_is_recorded_once_or_not_at_all() {
    let reason = "The new module lists three planned extension points.";
    let (mut killed, mut recorded) = (0, 0);
    for round in 0..rounds() {
        let fixture = Fixture::new(Config::landing());
        fixture.repo.git(&["checkout", "-q", "-b", "agent/x"]);
        fixture.repo.write(
            "src/more.rs",
            "// TODO 1\n// TODO 2\n// TODO 3\n// TODO 4\n// TODO 5\n",
        );
        let before = fixture.repo.commit("work that breaches");
        let propose = ["standards", "propose", "todo", "--reason", reason];
        killed += usize::from(kill_after(
            &fixture,
            fixture.path(),
            &propose,
            jitter(round, 400),
        ));
        // The same batch again: recovered, recorded, or unchanged; exactly one commit.
        let mut again = propose.to_vec();
        again.push("--json");
        let json = fixture.run(&again).json();
        assert_eq!(json["ok"], true, "round {round}: {json}");
        let log = fixture.git_out(fixture.path(), &["rev-list", &format!("{before}..HEAD")]);
        assert_eq!(log.lines().count(), 1, "round {round}: one proposal commit");
        let changed = fixture.git_out(fixture.path(), &["diff", "--name-only", &before, "HEAD"]);
        assert_eq!(changed, "discern.toml", "round {round}");
        fixture.assert_settled(&format!("round {round}"));
        if json["data"]["proposal_batch"]["status"] != "recorded" {
            recorded += 1;
        }
    }
    eprintln!(
        "propose: {} rounds, {killed} killed, {recorded} already recorded before the next call",
        rounds()
    );
}

/// After a start was killed: the next start of the same name goes through (or, when the kill
/// came after the start had finished, the effort exists whole), and exactly one effort of that
/// name exists (worktree registered, branch at the trunk, metadata written).
fn one_effort_after(fixture: &Fixture, round: &str) -> bool {
    let json = fixture
        .run(&["start", "--name", "e", "--title", "Killed", "--json"])
        .json();
    let finished_before = json["message"]
        .as_str()
        .is_some_and(|m| m.contains("already exists"));
    assert!(json["ok"] == true || finished_before, "{round}: {json}");
    let worktrees = fixture.git_out(fixture.path(), &["worktree", "list", "--porcelain"]);
    assert_eq!(
        worktrees.matches("worktree ").count(),
        2,
        "{round}: {worktrees}"
    );
    let branches = fixture.git_out(
        fixture.path(),
        &[
            "for-each-ref",
            "--format=%(refname:short)",
            "refs/heads/agent/",
        ],
    );
    assert_eq!(branches, "agent/e", "{round}");
    let path = fixture.repo.parent().join("repo.worktrees/e");
    let git_dir = fixture.git_out(&path, &["rev-parse", "--absolute-git-dir"]);
    assert!(
        Path::new(&git_dir)
            .join("discern/task-metadata.json")
            .exists(),
        "{round}"
    );
    assert!(
        !fixture.path().join(".git/discern/forks/e.json").exists(),
        "{round}"
    );
    // The next round starts from nothing again.
    fixture.git_in(
        fixture.path(),
        &["worktree", "remove", "--force", path.to_str().unwrap()],
    );
    fixture.git_in(fixture.path(), &["branch", "-D", "agent/e"]);
    finished_before
}

#[test]
fn a_start_killed_at_any_step_or_moment_is_unwound_and_the_same_start_goes_through() {
    let fixture = Fixture::new(Config::landing());
    for step in discern::testing::commit::fork::step::ALL {
        let run = fixture.run_with(
            &["start", "--name", "e", "--json"],
            &[("DISCERN_FAULT", step)],
        );
        assert_ne!(run.code, 0, "{step}: the fault hook stops it");
        assert!(
            !one_effort_after(&fixture, step),
            "{step}: unwound, then started anew"
        );
    }
    let (mut killed, mut finished) = (0, 0);
    for round in 0..rounds() {
        killed += usize::from(kill_after(
            &fixture,
            fixture.path(),
            &["start", "--name", "e"],
            jitter(round, 150),
        ));
        finished += usize::from(one_effort_after(&fixture, &format!("round {round}")));
    }
    eprintln!(
        "start: {} steps, {} rounds, {killed} killed at a random moment; {finished} rounds found the effort already whole (the start had finished)",
        discern::testing::commit::fork::step::ALL.len(),
        rounds()
    );
}

/// A kill inside `git worktree add` can leave its administrative folder half written (an
/// empty `commondir`, still locked "initializing"); from then on every git worktree command
/// dies on it, `branch -D` too. The next start unwinds it all the same and goes through.
#[test]
fn a_start_killed_inside_git_worktree_add_is_unwound_though_git_cannot_read_it() {
    let fixture = Fixture::new(Config::landing());
    let run = fixture.run_with(
        &["start", "--name", "e", "--json"],
        &[(
            "DISCERN_FAULT",
            discern::testing::commit::fork::step::WORKTREE_ADDED,
        )],
    );
    assert_ne!(run.code, 0, "the fault hook stops it");
    let admin = fixture.path().join(".git/worktrees/e");
    std::fs::write(admin.join("commondir"), "").unwrap();
    std::fs::write(admin.join("locked"), "initializing").unwrap();
    let broken = std::process::Command::new("git")
        .args(["worktree", "list"])
        .current_dir(fixture.path())
        .output()
        .unwrap();
    assert!(!broken.status.success(), "git itself cannot read it");
    assert!(!one_effort_after(&fixture, "half-written registration"));
}

/// After an update was killed: the same update goes through (or finds the merge concluded),
/// HEAD is exactly one merge of the trunk, no merge is left in progress, the tree is clean.
fn merged_once_after(fixture: &Fixture, effort: &Path, before: &str, trunk: &str, round: &str) {
    let json = fixture.run_in(effort, &["update", "--json"], &[]).json();
    assert_eq!(json["ok"], true, "{round}: {json}");
    let parents = fixture.git_out(effort, &["rev-list", "--parents", "-n", "1", "HEAD"]);
    assert!(
        parents.ends_with(&format!("{before} {trunk}")),
        "{round}: {parents}"
    );
    let git_dir = fixture.git_out(effort, &["rev-parse", "--absolute-git-dir"]);
    assert!(!Path::new(&git_dir).join("MERGE_HEAD").exists(), "{round}");
    assert!(
        !Path::new(&git_dir)
            .join("discern/merge-transaction.json")
            .exists(),
        "{round}"
    );
    assert_eq!(
        fixture.git_out(effort, &["status", "--porcelain"]),
        "",
        "{round}"
    );
    fixture.git_in(effort, &["reset", "-q", "--hard", before]);
}

#[test]
fn an_update_killed_at_any_moment_is_undone_or_kept_and_the_same_update_goes_through() {
    let fixture = Fixture::new(Config::landing());
    let json = fixture.run(&["start", "--name", "u", "--json"]).json();
    let effort = std::path::PathBuf::from(json["data"]["path"].as_str().unwrap());
    std::fs::write(effort.join("src/effort.rs"), "pub fn e() {}\n").unwrap();
    fixture.git_in(&effort, &["add", "-A"]);
    fixture.git_in(&effort, &["commit", "-q", "-m", "effort work"]);
    for n in 0..40 {
        fixture
            .repo
            .write(&format!("docs/page{n}.md"), "text\n".repeat(200));
    }
    let trunk = fixture.repo.commit("trunk work");
    let before = fixture.git_out(&effort, &["rev-parse", "HEAD"]);

    let run = fixture.run_in(
        &effort,
        &["update", "--json"],
        &[(
            "DISCERN_FAULT",
            discern::testing::commit::merging::JOURNAL_WRITTEN,
        )],
    );
    assert_ne!(run.code, 0, "the fault hook stops it");
    merged_once_after(&fixture, &effort, &before, &trunk, "journal written");
    let mut killed = 0;
    for round in 0..rounds() {
        killed += usize::from(kill_after(
            &fixture,
            &effort,
            &["update"],
            jitter(round, 250),
        ));
        merged_once_after(
            &fixture,
            &effort,
            &before,
            &trunk,
            &format!("round {round}"),
        );
    }
    eprintln!(
        "update: 1 step, {} rounds, {killed} killed at a random moment",
        rounds()
    );
}

/// `accept` killed at a random moment, then `accept` again from the effort's worktree (where
/// `done` told the agent to run it): it finishes a landing whose trunk already moved — the
/// worktree and branch removed, the note written — or lands it now. Never "the Proof was made
/// against another trunk commit".
#[test]
fn a_landing_killed_at_a_random_moment_is_finished_from_the_worktree() {
    let (mut killed, mut finished) = (0, 0);
    for round in 0..rounds() {
        let fixture = Fixture::new(Config::landing());
        let (effort, head) = fixture.proven_effort("again");
        killed += usize::from(kill_after(
            &fixture,
            &effort,
            &["accept", "--confirmed"],
            jitter(round, 300),
        ));
        // The agent's next call from the worktree, or (once the kill removed it) the owner's
        // from the main checkout.
        let json = match effort.exists() {
            true => fixture.run_in(&effort, &["accept", "--confirmed", "--json"], &[]),
            false => fixture.run(&["accept", "--effort", "again", "--confirmed", "--json"]),
        }
        .json();
        let settled = json["ok"] == true
            || (!effort.exists() && json["error"] == "not_found" && note_exists(&fixture, &head));
        assert!(settled, "round {round}: the landing goes through: {json}");
        finished += usize::from(json["ok"] == true);
        let trunk = fixture.git_out(fixture.path(), &["rev-parse", "main"]);
        assert_eq!(trunk, head, "round {round}: exactly the effort landed");
        assert!(!effort.exists(), "round {round}: the worktree is gone");
        assert_eq!(
            fixture.git_out(fixture.path(), &["branch", "--list", "agent/again"]),
            "",
            "round {round}: the branch is gone"
        );
        let note = fixture.git_out(
            fixture.path(),
            &["notes", "--ref", "discern", "show", &head],
        );
        assert!(!note.is_empty(), "round {round}: the Proof note is written");
        let left: Vec<String> = std::fs::read_dir(fixture.path().join(".git/discern/landings"))
            .map(|d| {
                // Journals (a write a kill cut short leaves only its temp file, never a journal).
                d.flatten()
                    .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
                    .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
                    .collect()
            })
            .unwrap_or_default();
        assert!(
            left.is_empty(),
            "round {round}: no landing journal is left: {left:?}; the call said {json}"
        );
    }
    eprintln!(
        "accept from the worktree: {} rounds, {killed} killed, {finished} finished by the next accept",
        rounds()
    );
}

fn note_exists(fixture: &Fixture, commit: &str) -> bool {
    !fixture
        .git_out(
            fixture.path(),
            &["notes", "--ref", "discern", "show", commit],
        )
        .is_empty()
}

/// `discern sync --push` killed at random moments (discern itself: the forge's side of a push
/// lives on another machine and is not killed with it), a new note each round: the next sync
/// finishes, and the forge ends with every note any round wrote, nothing lost or doubled.
#[test]
fn a_sync_killed_at_a_random_moment_loses_no_note() {
    let fixture = Fixture::new(Config::landing());
    let origin = fixture.repo.parent().join("origin.git");
    let origin_url = origin.to_str().unwrap();
    fixture.git_in(
        fixture.repo.parent(),
        &["init", "-q", "--bare", "-b", "main", origin_url],
    );
    fixture.repo.git(&["remote", "add", "origin", origin_url]);
    fixture.repo.git(&["push", "-q", "origin", "main"]);
    let mut killed = 0;
    let mut commits = Vec::new();
    for round in 0..rounds() * 4 {
        fixture.repo.write(&format!("r{round}.txt"), "x");
        commits.push(fixture.repo.commit(&format!("round {round}")));
        let note = format!("proof {round}");
        fixture
            .repo
            .git(&["notes", "--ref=discern", "add", "-m", &note, "HEAD"]);
        killed += usize::from(kill_process_after(
            &fixture,
            &["sync", "--push"],
            jitter(round, 250),
        ));
    }
    let json = fixture.run(&["sync", "--push", "--json"]).json();
    assert_eq!(json["ok"], true, "{json}");
    for (round, commit) in commits.iter().enumerate() {
        let note = fixture.git_out(&origin, &["notes", "--ref=discern", "show", commit]);
        assert_eq!(note, format!("proof {round}"), "round {round}");
    }
    let listed = fixture.git_out(&origin, &["notes", "--ref=discern", "list"]);
    assert_eq!(listed.lines().count(), commits.len());
    eprintln!("sync kills: {killed} of {} rounds killed", commits.len());
}
