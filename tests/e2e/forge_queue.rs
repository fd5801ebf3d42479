//! A merge queue as GitHub builds it: each entry a branch `gh-readonly-queue/main/pr-N-<sha>`,
//! the previous entry (or the trunk) with the pull request merged (`--no-ff`), CI run on each
//! entry as the README writes it (`merge_group`: `--baseline` the queue's base), then the trunk
//! fast-forwarded to the last entry and push CI on it.

use std::path::Path;

use serde_json::Value;

use crate::forge::BREACH;
use crate::support::config::{Config, Standard};
use crate::support::forge::{File, Forge, REASON, passes};

/// The signed landing config with a second Standard, so two pull requests loosen two limits.
fn with_fixme() -> Config {
    let fixme = Standard::pattern("fixme", "FIXME", &["src/**"]).limit(0);
    Config::landing().standard(fixme).signed()
}

const FIXES: &[File] = &[("src/fix.rs", b"// FIXME 1\n// FIXME 2\n")];

/// The contributor's pull request `name`: `files` committed on the trunk, `standard`'s breach
/// proposed; pushed.
fn loosening(forge: &Forge, name: &str, files: &[File], standard: &str) {
    let c = &forge.contributor;
    forge.git(c, &["checkout", "-q", "-B", name, "origin/main"]);
    for (file, content) in files {
        std::fs::write(c.join(file), content).unwrap();
    }
    forge.git(c, &["add", "-A"]);
    forge.git(c, &["commit", "-q", "-m", &format!("work on {name}")]);
    let propose = [
        "standards",
        "propose",
        standard,
        "--reason",
        REASON,
        "--json",
    ];
    let (code, json) = forge.discern(c, &propose, false);
    assert_eq!(code, 0, "{json}");
    forge.git(c, &["push", "-q", "-f", "origin", name]);
}

/// The queue's entry for `pr` in `bot` (checked out at the previous entry): the pull request
/// merged as GitHub merges it, pushed as `gh-readonly-queue/main/pr-N-<sha>`; its ref.
fn enqueue(forge: &Forge, bot: &Path, pr: &str, number: u32) -> String {
    forge.git(bot, &["fetch", "-q", "origin"]);
    let head = forge.out(bot, &["rev-parse", &format!("origin/{pr}")]);
    let message = format!("Merge pull request #{number} from contributor/{pr}");
    let merge = [
        "merge",
        "-q",
        "--no-ff",
        "-m",
        &message,
        &format!("origin/{pr}"),
    ];
    forge.git(bot, &merge);
    let branch = format!("refs/heads/gh-readonly-queue/main/pr-{number}-{head}");
    forge.git(bot, &["push", "-q", "origin", &format!("HEAD:{branch}")]);
    branch
}

/// How the queue builds an entry from the pull request: GitHub's merge queue honours the
/// repository's merge method.
#[derive(Clone, Copy, Debug)]
enum Method {
    Squash,
    Rebase,
}

/// [`enqueue`] for a queue whose merge method is `method`: the pull request squashed into one
/// commit, or its commits replayed, on the previous entry.
fn enqueue_as(forge: &Forge, bot: &Path, pr: &str, number: u32, method: Method) -> String {
    forge.git(bot, &["fetch", "-q", "origin"]);
    let head = forge.out(bot, &["rev-parse", &format!("origin/{pr}")]);
    let fork = forge.out(bot, &["merge-base", "HEAD", &head]);
    match method {
        Method::Squash => {
            forge.git(bot, &["merge", "-q", "--squash", &head]);
            let message = format!("{pr} (#{number})");
            forge.git(bot, &["commit", "-q", "-m", &message]);
        }
        Method::Rebase => {
            forge.git(
                bot,
                &["cherry-pick", "--allow-empty", &format!("{fork}..{head}")],
            );
        }
    }
    let branch = format!("refs/heads/gh-readonly-queue/main/pr-{number}-{head}");
    forge.git(bot, &["push", "-q", "origin", &format!("HEAD:{branch}")]);
    branch
}

/// Two pull requests loosening two limits, both approved; the bot's clone at the trunk, and
/// the queue's base.
fn two_approved() -> (Forge, std::path::PathBuf, String) {
    let forge = Forge::new(with_fixme(), &[]);
    loosening(&forge, "pr-1", BREACH, "todo");
    loosening(&forge, "pr-2", FIXES, "fixme");
    forge.approve("pr-1");
    forge.approve("pr-2");
    let bot = forge.bot();
    let base = forge.out(&bot, &["rev-parse", "HEAD"]);
    (forge, bot, base)
}

/// CI on a queue entry as the README writes it: checkout, the trunk's fetch, `discern sync`,
/// then `standards --baseline` the queue's base (`merge_group.base_sha`).
fn queue_ci(forge: &Forge, entry: &str, base: &str) -> (i32, Value) {
    queue_run(forge, entry, &["standards", "--baseline", base, "--json"])
}

/// `args` on a fresh CI clone of the queue's entry, after the README's fetches.
fn queue_run(forge: &Forge, entry: &str, args: &[&str]) -> (i32, Value) {
    let clone = forge.ci_checkout("queue", entry);
    let env = [("CI", "true"), ("GITHUB_EVENT_NAME", "merge_group")];
    let synced = forge.fixture.run_in(&clone, &["sync", "--json"], &env);
    assert_eq!(synced.code, 0, "{}", synced.stdout);
    let run = forge.fixture.run_in(&clone, args, &env);
    (run.code, run.json())
}

#[test]
fn two_approved_loosenings_in_one_merge_queue_pass_each_entry_and_the_trunk() {
    let forge = Forge::new(with_fixme(), &[]);
    loosening(&forge, "pr-1", BREACH, "todo");
    loosening(&forge, "pr-2", FIXES, "fixme");
    for pr in ["pr-1", "pr-2"] {
        forge.approve(pr);
        let (code, json) = forge.pr_ci_no_notes(pr);
        assert_eq!(code, 0, "PR CI of {pr}: {json}");
    }
    let bot = forge.bot();
    let base = forge.out(&bot, &["rev-parse", "HEAD"]);
    for (number, pr) in [(1, "pr-1"), (2, "pr-2")] {
        let entry = enqueue(&forge, &bot, pr, number);
        let (code, json) = queue_ci(&forge, &entry, &base);
        assert_eq!(code, 0, "the queue's entry for {pr}: {json}");
        assert_eq!(json["data"]["limits"]["status"], "approved", "{json}");
        // Without --baseline, the queue's entry is still judged as what it will land.
        let (code, json) = queue_run(&forge, &entry, &["standards", "--json"]);
        assert_eq!(code, 0, "the queue's entry for {pr}, no --baseline: {json}");
        assert_eq!(json["data"]["limits"]["baseline"], base.as_str(), "{json}");
        assert!(json.to_string().contains("merge_group.base_sha"), "{json}");
    }
    // The queue lands: the trunk fast-forwarded to its last entry, then push CI.
    forge.git(&bot, &["push", "-q", "origin", "HEAD:refs/heads/main"]);
    let (code, json) = forge.trunk_ci(&base);
    assert_eq!(code, 0, "push CI after the queue landed: {json}");
    assert_eq!(json["data"]["limits"]["status"], "approved", "{json}");
}

#[test]
fn a_queue_entry_that_adds_to_the_approved_merge_or_brings_an_unapproved_loosening_fails() {
    let (forge, bot, base) = two_approved();
    enqueue(&forge, &bot, "pr-1", 1);
    // A merge that also changes code of its own is not the approved change brought in.
    forge.git(&bot, &["fetch", "-q", "origin"]);
    forge.git(
        &bot,
        &["merge", "-q", "--no-ff", "--no-commit", "origin/pr-2"],
    );
    std::fs::write(bot.join("src/main.rs"), "fn main() {}\n").unwrap();
    forge.git(&bot, &["commit", "-q", "-am", "Merge pull request #2"]);
    let branch = "refs/heads/gh-readonly-queue/main/pr-2-tampered";
    forge.git(&bot, &["push", "-q", "origin", &format!("HEAD:{branch}")]);
    let (code, json) = queue_ci(&forge, branch, &base);
    assert_eq!(
        (code, json["ok"].clone()),
        (1, Value::Bool(false)),
        "{json}"
    );
    assert_eq!(json["data"]["limits"]["status"], "loosened", "{json}");
    // A pull request whose loosening nobody approved fails in the queue too.
    let bot = forge.bot();
    loosening(&forge, "pr-3", FIXES, "fixme");
    enqueue(&forge, &bot, "pr-1", 1);
    let entry = enqueue(&forge, &bot, "pr-3", 3);
    let (code, json) = queue_ci(&forge, &entry, &base);
    assert_eq!(
        (code, json["ok"].clone()),
        (1, Value::Bool(false)),
        "{json}"
    );
    // Judged one by one, the approved entry before it still passes.
    let first = forge.out(&bot, &["rev-parse", "HEAD^1"]);
    forge.git(
        &bot,
        &[
            "push",
            "-q",
            "-f",
            "origin",
            &format!("{first}:refs/heads/queue-head"),
        ],
    );
    passes(
        "the approved entry",
        queue_ci(&forge, "refs/heads/queue-head", &base),
    );
}

/// A squash or rebase queue lands each approved loosening as the merge button would: the second
/// entry's `discern.toml` already holds the first one's loosening, so only the change outside it
/// is the approved one, and the items are judged against the moved limits.
#[test]
fn two_approved_loosenings_pass_a_squash_and_a_rebase_merge_queue() {
    for method in [Method::Squash, Method::Rebase] {
        let (forge, bot, base) = two_approved();
        for (number, pr) in [(1, "pr-1"), (2, "pr-2")] {
            let entry = enqueue_as(&forge, &bot, pr, number, method);
            let (code, json) = queue_ci(&forge, &entry, &base);
            assert_eq!(code, 0, "{method:?}: the queue's entry for {pr}: {json}");
            assert_eq!(json["data"]["limits"]["status"], "approved", "{json}");
        }
        forge.git(&bot, &["push", "-q", "origin", "HEAD:refs/heads/main"]);
        let (code, json) = forge.trunk_ci(&base);
        assert_eq!(
            code, 0,
            "{method:?}: push CI after the queue landed: {json}"
        );
        // One more line of code in the squashed entry is not the approved change.
        let bot = forge.bot();
        forge.git(&bot, &["reset", "-q", "--hard", &base]);
        enqueue_as(&forge, &bot, "pr-1", 1, method);
        forge.git(&bot, &["fetch", "-q", "origin"]);
        forge.git(&bot, &["merge", "-q", "--squash", "origin/pr-2"]);
        std::fs::write(bot.join("src/main.rs"), "fn main() {}\n").unwrap();
        forge.git(&bot, &["add", "-A"]);
        forge.git(&bot, &["commit", "-q", "-m", "pr-2 (#2), and more"]);
        let branch = "refs/heads/gh-readonly-queue/main/pr-2-tampered";
        forge.git(
            &bot,
            &["push", "-q", "-f", "origin", &format!("HEAD:{branch}")],
        );
        let (code, json) = queue_ci(&forge, branch, &base);
        assert_eq!(code, 1, "{method:?}: a tampered entry: {json}");
        assert_eq!(json["data"]["limits"]["status"], "loosened", "{json}");
    }
}
