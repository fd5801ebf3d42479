//! Work through a forge: a bare repository plays the forge, one clone per actor (the owner with
//! an SSH key, a contributor, CI cloned as `actions/checkout` clones, a bot for the merge
//! button). Every case runs under the three merge strategies, and the verdict is the same on
//! the pull request's head, on its merge ref, and on the trunk after landing — with no notes
//! fetched anywhere: approvals travel in the tree.

use std::path::{Path, PathBuf};

use crate::support::APPROVAL_REPOSITORY;
use crate::support::config::{Config, SIGNERS};
use crate::support::forge::{File, Forge, REASON, STRATEGIES, Strategy, fails, passes};

pub(crate) const BREACH: &[File] = &[(
    "src/more.rs",
    b"// TODO 1\n// TODO 2\n// TODO 3\n// TODO 4\n",
)];

#[test]
fn an_approved_loosening_passes_pr_ci_the_merge_ref_and_the_trunk_under_every_strategy() {
    let forge = Forge::new(Config::landing().signed(), &[]);
    let start = forge.out(&forge.owner, &["rev-parse", "origin/main"]);
    for strategy in STRATEGIES {
        forge.reset_trunk(&start);
        let name = format!("approved-{strategy:?}").to_lowercase();
        forge.pull_request_from("origin/main", &name, BREACH, &[], true);
        let json = fails("PR CI before the approval", forge.pr_ci_no_notes(&name));
        assert_eq!(json["error"], "awaiting_standard_approval", "{json}");
        forge.approve(&name);
        let (code, json) = forge.pr_ci_no_notes(&name);
        assert_eq!(code, 0, "{strategy:?}: PR CI with the approval: {json}");
        assert_eq!(json["data"]["limits"]["status"], "approved", "{json}");
        passes("the merge ref", forge.merge_ref_ci(&name));
        let before = forge.land(&name, strategy);
        let (code, json) = forge.trunk_ci(&before);
        assert_eq!(code, 0, "{strategy:?}: trunk CI after landing: {json}");
        assert_eq!(json["data"]["limits"]["status"], "approved", "{json}");
        // A fresh clone of the trunk, no notes, no baseline: nothing tells it to revert.
        let fresh = forge.ci_checkout("fresh", "refs/heads/main");
        let (code, json) = forge.discern(&fresh, &["standards", "--json"], false);
        assert_eq!(code, 0, "{strategy:?}: a fresh clone of the trunk: {json}");
        let text = json.to_string().to_lowercase();
        assert!(
            !text.contains("restore") && !text.contains("revert"),
            "{json}"
        );
    }
}

#[test]
fn an_unapproved_loosening_fails_everywhere_under_every_strategy() {
    let forge = Forge::new(Config::landing().signed(), &[]);
    let start = forge.out(&forge.owner, &["rev-parse", "origin/main"]);
    for strategy in STRATEGIES {
        forge.reset_trunk(&start);
        let name = format!("unapproved-{strategy:?}").to_lowercase();
        forge.pull_request_from("origin/main", &name, BREACH, &[], true);
        forge.everywhere(&name, strategy, false);
    }
}

#[test]
fn an_approval_copied_into_another_pull_request_approves_nothing() {
    let forge = Forge::new(Config::landing().signed(), &[]);
    forge.pull_request_from("origin/main", "first", BREACH, &[], true);
    forge.approve("first");
    let c = &forge.contributor;
    forge.git(c, &["fetch", "-q", "origin"]);
    let file = forge.out(
        c,
        &[
            "diff",
            "--name-only",
            "origin/main",
            "origin/first",
            "--",
            ".discern/approvals",
        ],
    );
    let approval = forge.out(c, &["show", &format!("origin/first:{file}")]);
    // A second PR that loosens further and carries the first one's approval.
    let more: [File; 1] = [(
        "src/more.rs",
        b"// TODO 1\n// TODO 2\n// TODO 3\n// TODO 4\n// TODO 5\n",
    )];
    forge.pull_request_from("origin/main", "second", &more, &[], true);
    forge.git(c, &["checkout", "-q", "second"]);
    std::fs::create_dir_all(c.join(".discern/approvals")).unwrap();
    std::fs::write(c.join(&file), format!("{approval}\n")).unwrap();
    forge.git(c, &["add", "-A"]);
    forge.git(c, &["commit", "-q", "-m", "the first PR's approval"]);
    forge.git(c, &["push", "-q", "-f", "origin", "second"]);
    let json = fails("PR CI", forge.pr_ci_no_notes("second"));
    assert!(json.to_string().contains("does not count"), "{json}");
    let before = forge.land("second", Strategy::Squash);
    fails("trunk CI", forge.trunk_ci(&before));
}

#[test]
fn a_tightening_and_a_proposal_withdrawn_pass_everywhere_under_every_strategy() {
    let forge = Forge::new(Config::landing().signed(), &[]);
    let start = forge.out(&forge.owner, &["rev-parse", "origin/main"]);
    for strategy in STRATEGIES {
        forge.reset_trunk(&start);
        let name = format!("tighten-{strategy:?}").to_lowercase();
        let c = &forge.contributor;
        forge.git(c, &["checkout", "-q", "-B", &name, "origin/main"]);
        let (code, json) = forge.discern(c, &["standards", "--pin", "--json"], false);
        assert_eq!(code, 0, "{json}");
        forge.git(c, &["push", "-q", "-f", "origin", &name]);
        passes("PR CI", forge.pr_ci_no_notes(&name));
        let before = forge.land(&name, strategy);
        passes("trunk CI", forge.trunk_ci(&before));

        forge.reset_trunk(&start);
        let name = format!("withdrawn-{strategy:?}").to_lowercase();
        forge.pull_request_from("origin/main", &name, BREACH, &[], true);
        let (code, json) = forge.discern(c, &["standards", "withdraw", "--json"], false);
        assert_eq!(code, 0, "{json}");
        forge.git(c, &["rm", "-q", "src/more.rs"]);
        forge.git(c, &["commit", "-q", "-m", "drop the breach"]);
        forge.git(c, &["push", "-q", "-f", "origin", &name]);
        passes("PR CI", forge.pr_ci_no_notes(&name));
        let before = forge.land(&name, strategy);
        passes("trunk CI", forge.trunk_ci(&before));
    }
}

/// A key of the contributor's own, and the signers file with it appended.
fn stranger(forge: &Forge) -> (PathBuf, String) {
    let stranger = forge.dir.join("stranger-key");
    if !stranger.exists() {
        let made = std::process::Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-C", "stranger", "-f"])
            .arg(&stranger)
            .status()
            .unwrap();
        assert!(made.success());
    }
    let public = std::fs::read_to_string(stranger.with_extension("pub")).unwrap();
    let signers = std::fs::read_to_string(forge.owner.join(SIGNERS)).unwrap();
    let widened = format!("{signers}agent@example.com {}\n", public.trim());
    (stranger, widened)
}

/// The approval a contributor forges for their own branch: exactly the items `approve
/// --dry-run` lists, against the trunk's `discern.toml`, signed with `key` as `signers`
/// (the branch's own file) lists it. Committed and pushed.
fn self_approve(forge: &Forge, name: &str, key: &Path, signers: &str) {
    use discern::testing::approval::tree::{Items, LimitItem, TreeApproval};
    let c = &forge.contributor;
    let (code, listed) = forge.discern(c, &["approve", "--dry-run", "--json"], false);
    assert_eq!(code, 0, "{listed}");
    let required = &listed["data"]["required"];
    let limits = required["proposals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| LimitItem {
            standard: p["standard"].as_str().unwrap().to_owned(),
            trunk_limit: p["trunk_limit"].as_f64().unwrap(),
            proposed_limit: p["proposed_limit"].as_f64().unwrap(),
            reason: p["reason"].as_str().unwrap().to_owned(),
            token: p["token"].as_str().unwrap().to_owned(),
        })
        .collect();
    let items = Items {
        repository: APPROVAL_REPOSITORY.to_owned(),
        base_commit: forge.out(c, &["rev-parse", "origin/main"]),
        change: discern::testing::approval::net_change(c, "origin/main", "HEAD").unwrap(),
        change_outside: None,
        limits,
        protected: serde_json::from_value(required["protected"].clone()).unwrap(),
    };
    let payload = items.payload();
    let signature = discern::testing::approval::sign(key, &payload).unwrap();
    let signer =
        discern::testing::approval::verify(signers.as_bytes(), &payload, &signature).unwrap();
    let approval = TreeApproval::signed(items, signer, signature);
    let path = c.join(approval.path());
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, approval.to_bytes().unwrap()).unwrap();
    forge.git(c, &["add", "-A"]);
    forge.git(
        c,
        &[
            "commit",
            "-q",
            "-m",
            "approved (by the key this branch adds)",
        ],
    );
    forge.git(c, &["push", "-q", "-f", "origin", name]);
}

#[test]
fn a_key_a_pull_request_adds_approves_nothing_of_its_own_under_every_strategy() {
    let forge = Forge::new(Config::landing().signed(), &[]);
    let start = forge.out(&forge.owner, &["rev-parse", "origin/main"]);
    let (key, widened) = stranger(&forge);
    let mut files = BREACH.to_vec();
    files.push((SIGNERS, widened.as_bytes()));
    for strategy in STRATEGIES {
        forge.reset_trunk(&start);
        let name = format!("self-approved-{strategy:?}").to_lowercase();
        forge.pull_request_from("origin/main", &name, &files, &[], true);
        self_approve(&forge, &name, &key, &widened);
        let json = forge.everywhere(&name, strategy, false);
        assert!(json.to_string().contains("does not count"), "{json}");
    }
}

#[test]
fn a_signers_file_change_needs_the_owner_and_its_key_approves_nothing_under_every_strategy() {
    let forge = Forge::new(Config::landing().signed(), &[]);
    let start = forge.out(&forge.owner, &["rev-parse", "origin/main"]);
    let (_, widened) = stranger(&forge);
    for strategy in STRATEGIES {
        forge.reset_trunk(&start);
        let name = format!("signers-{strategy:?}").to_lowercase();
        forge.pull_request_from(
            "origin/main",
            &name,
            &[(SIGNERS, widened.as_bytes())],
            &[],
            false,
        );
        let json = fails("PR CI", forge.pr_ci_no_notes(&name));
        assert!(
            json.to_string().contains("file:.discern/allowed_signers"),
            "{json}"
        );
        let before = forge.land(&name, strategy);
        fails("trunk CI", forge.trunk_ci(&before));
    }
}

#[test]
fn a_stale_local_trunk_is_not_the_trunk_and_a_diverged_one_is_refused() {
    let forge = Forge::new(Config::landing().signed(), &[]);
    // The team moves on while the owner's local `main` stays where it was cloned.
    let c = &forge.contributor;
    forge.git(c, &["checkout", "-q", "main"]);
    std::fs::write(c.join("README.md"), "# moved on\n").unwrap();
    forge.git(c, &["commit", "-q", "-am", "the team moves on"]);
    forge.git(c, &["push", "-q", "origin", "main"]);
    forge.pull_request_from("origin/main", "later", BREACH, &[], true);
    let o = &forge.owner;
    forge.git(o, &["fetch", "-q", "origin"]);
    forge.git(o, &["checkout", "-q", "-B", "later", "origin/later"]);
    let (_, json) = forge.discern(o, &["standards", "--json"], false);
    let limits = &json["data"]["limits"];
    assert_eq!(limits["trunk_ref"], "refs/remotes/origin/main", "{json}");
    assert_eq!(limits["status"], "proposed", "{json}");
    // The owner approves against the team's trunk, so PR CI counts it.
    forge.approve("later");
    passes("PR CI", forge.pr_ci_no_notes("later"));

    // A local trunk with its own commit while the team's moved on: refused, with the fix.
    forge.git(o, &["checkout", "-q", "main"]);
    std::fs::write(o.join("NOTES.md"), "local\n").unwrap();
    forge.git(o, &["add", "-A"]);
    forge.git(o, &["commit", "-q", "-m", "a local trunk commit"]);
    forge.git(o, &["checkout", "-q", "later"]);
    let (_, json) = forge.discern(o, &["standards", "--json"], false);
    assert_eq!(json["data"]["limits"]["status"], "unverified", "{json}");
    let text = json.to_string();
    assert!(
        text.contains("have diverged") && text.contains("git branch -f main origin/main"),
        "{json}"
    );
}

#[test]
fn update_works_on_a_plain_checkout_of_a_branch_against_the_teams_trunk() {
    let forge = Forge::new(Config::landing().signed(), &[]);
    forge.pull_request_from(
        "origin/main",
        "behind",
        &[("src/work.rs", b"pub fn w() {}\n")],
        &[],
        false,
    );
    let c = &forge.contributor;
    forge.git(c, &["checkout", "-q", "main"]);
    forge.git(c, &["pull", "-q", "origin", "main"]);
    std::fs::write(c.join("README.md"), "# moved on\n").unwrap();
    forge.git(c, &["commit", "-q", "-am", "the team moves on"]);
    forge.git(c, &["push", "-q", "origin", "main"]);
    // The owner's clone: `main` left behind, the pull request's branch checked out.
    let o = &forge.owner;
    forge.git(o, &["fetch", "-q", "origin"]);
    forge.git(o, &["checkout", "-q", "-B", "behind", "origin/behind"]);
    let (code, json) = forge.discern(o, &["update", "--json"], false);
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["data"]["merged"], true, "{json}");
    let team = forge.out(o, &["rev-parse", "origin/main"]);
    // The branch now contains the team's trunk (git exits 0 only then).
    forge.git(o, &["merge-base", "--is-ancestor", &team, "HEAD"]);
}

/// The `[jobs]` change every protected-change case makes: not a limit, but the gate's own
/// definition.
fn protected_change(forge: &Forge) -> String {
    let config = std::fs::read_to_string(forge.owner.join("discern.toml")).unwrap();
    config.replace("test = \"true\"", "test = \"true && true\"")
}

#[test]
fn a_protected_change_lands_only_with_the_owners_approval_under_every_strategy() {
    let forge = Forge::new(Config::landing().signed(), &[]);
    let start = forge.out(&forge.owner, &["rev-parse", "origin/main"]);
    let changed = protected_change(&forge);
    let o = &forge.owner;
    for strategy in STRATEGIES {
        forge.reset_trunk(&start);
        let name = format!("jobs-{strategy:?}").to_lowercase();
        forge.pull_request_from(
            "origin/main",
            &name,
            &[("discern.toml", changed.as_bytes())],
            &[],
            false,
        );
        let json = fails("PR CI without the approval", forge.pr_ci_no_notes(&name));
        assert!(json.to_string().contains("jobs.test"), "{json}");
        fails(
            "the merge ref without the approval",
            forge.merge_ref_ci(&name),
        );

        // The owner approves from their clone with the trunk checked out: no checkout of the
        // branch, no worktree; the approval commit goes on a local branch of the same name.
        forge.git(o, &["checkout", "-q", "main"]);
        forge.git(o, &["fetch", "-q", "origin"]);
        let key = forge.keys.owner.to_str().unwrap();
        let target = format!("origin/{name}");
        let reviewed = forge.out(o, &["rev-parse", &target]);
        let (code, json) = forge.discern(
            o,
            &[
                "approve", &target, "--head", &reviewed, "--key", key, "--json",
            ],
            false,
        );
        assert_eq!(code, 0, "{json}");
        let push = json["data"]["push"].as_str().unwrap_or_default();
        assert!(
            push.contains(&format!("git push origin {name}:{name}")),
            "{json}"
        );
        assert_eq!(forge.out(o, &["rev-parse", "--abbrev-ref", "HEAD"]), "main");
        forge.git(o, &["push", "-q", "origin", &format!("{name}:{name}")]);
        forge.everywhere(&name, strategy, true);
    }
}

#[test]
fn an_unapproved_protected_change_fails_on_the_trunk_under_every_strategy() {
    let forge = Forge::new(Config::landing().signed(), &[]);
    let start = forge.out(&forge.owner, &["rev-parse", "origin/main"]);
    let changed = protected_change(&forge);
    for strategy in STRATEGIES {
        forge.reset_trunk(&start);
        let name = format!("jobs-unapproved-{strategy:?}").to_lowercase();
        forge.pull_request_from(
            "origin/main",
            &name,
            &[("discern.toml", changed.as_bytes())],
            &[],
            false,
        );
        let before = forge.land(&name, strategy);
        let json = fails("trunk CI", forge.trunk_ci(&before));
        assert!(json.to_string().contains("jobs.test"), "{json}");
    }
}

#[test]
fn the_owner_approves_a_fork_pull_request_by_its_pull_ref() {
    let forge = Forge::new(Config::landing().signed(), &[]);
    forge.pull_request_from("origin/main", "from-fork", BREACH, &[], true);
    // The forge keeps the pull request's head under refs/pull/N/head.
    let c = &forge.contributor;
    forge.git(c, &["push", "-q", "origin", "from-fork:refs/pull/7/head"]);
    let o = &forge.owner;
    forge.git(
        o,
        &[
            "fetch",
            "-q",
            "origin",
            "+refs/pull/7/head:refs/pull/7/head",
        ],
    );
    let key = forge.keys.owner.to_str().unwrap();
    let (code, json) = forge.discern(
        o,
        &["approve", "refs/pull/7/head", "--dry-run", "--json"],
        false,
    );
    assert_eq!(code, 0, "{json}");
    assert_eq!(
        json["data"]["required"]["proposals"][0]["standard"], "todo",
        "{json}"
    );
    // The owner approves the head the pull ref holds: what they reviewed.
    let approve_pull_ref = || {
        let reviewed = forge.out(o, &["rev-parse", "refs/pull/7/head"]);
        let args = [
            "approve",
            "refs/pull/7/head",
            "--head",
            &reviewed,
            "--key",
            key,
            "--json",
        ];
        let (code, json) = forge.discern(o, &args, false);
        assert_eq!(code, 0, "{json}");
        (reviewed, json)
    };
    let (_, json) = approve_pull_ref();
    assert_eq!(json["data"]["approval_branch"], "pr-7", "{json}");
    let push = json["data"]["push"].as_str().unwrap_or_default();
    assert!(push.contains("pr-7:BRANCH"), "{json}");
    // The maintainer pushes the approval to the pull request's branch.
    forge.git(o, &["push", "-q", "origin", "pr-7:from-fork"]);
    passes("PR CI with the approval", forge.pr_ci_no_notes("from-fork"));

    // The author pulls the approval and builds on it: the proposal is renewed on the new
    // HEAD by a commit that carries it (the owner's clone sees it live there), the net change
    // moved, so the owner approves again with the same command, and pr-7 (behind, checked out
    // nowhere) is fast-forwarded to what was reviewed — no `git branch -f`.
    forge.git(c, &["pull", "-q", "--no-rebase", "origin", "from-fork"]);
    std::fs::write(c.join("README.md"), "# more work\n").unwrap();
    forge.git(c, &["commit", "-q", "-am", "more work"]);
    let (code, json) = forge.discern(
        c,
        &["standards", "propose", "todo", "--reason", REASON, "--json"],
        false,
    );
    assert_eq!(code, 0, "{json}");
    assert_eq!(
        json["data"]["proposal_batch"]["status"], "rebound",
        "{json}"
    );
    forge.git(c, &["push", "-q", "origin", "from-fork"]);
    forge.git(
        c,
        &["push", "-q", "-f", "origin", "from-fork:refs/pull/7/head"],
    );
    fails("PR CI after more work", forge.pr_ci_no_notes("from-fork"));
    let fetch = [
        "fetch",
        "-q",
        "origin",
        "+refs/pull/7/head:refs/pull/7/head",
    ];
    forge.git(o, &fetch);
    let (reviewed, _) = approve_pull_ref();
    assert_eq!(forge.out(o, &["rev-parse", "pr-7^"]), reviewed);
    forge.git(o, &["push", "-q", "origin", "pr-7:from-fork"]);
    passes("PR CI re-approved", forge.pr_ci_no_notes("from-fork"));

    // A local pr-7 somewhere else is never moved: refused with the fix.
    forge.git(
        c,
        &[
            "commit",
            "-q",
            "--amend",
            "--allow-empty",
            "-m",
            "rewritten",
        ],
    );
    forge.git(
        c,
        &["push", "-q", "-f", "origin", "from-fork:refs/pull/7/head"],
    );
    forge.git(
        o,
        &[
            "fetch",
            "-q",
            "origin",
            "+refs/pull/7/head:refs/pull/7/head",
        ],
    );
    let (code, json) = forge.discern(o, &["approve", "refs/pull/7/head", "--json"], false);
    assert_eq!(code, 1, "{json}");
    assert!(
        json.to_string()
            .contains("git branch -f pr-7 refs/pull/7/head"),
        "{json}"
    );
}

#[test]
fn accept_lands_a_branch_from_a_plain_checkout_and_refuses_a_local_trunk_left_behind() {
    let forge = Forge::new(Config::landing().signed(), &[]);
    // The team moves on; the owner's local `main` stays where it was cloned.
    let c = &forge.contributor;
    forge.git(c, &["checkout", "-q", "main"]);
    std::fs::write(c.join("README.md"), "# moved on\n").unwrap();
    forge.git(c, &["commit", "-q", "-am", "the team moves on"]);
    forge.git(c, &["push", "-q", "origin", "main"]);
    forge.pull_request_from(
        "origin/main",
        "feature",
        &[("src/work.rs", b"pub fn w() {}\n")],
        &[],
        false,
    );

    let o = &forge.owner;
    forge.git(o, &["fetch", "-q", "origin"]);
    forge.git(o, &["checkout", "-q", "-B", "feature", "origin/feature"]);
    let (code, json) = forge.discern(o, &["done", "--json"], false);
    assert_eq!(code, 0, "{json}");
    let (code, json) = forge.discern(o, &["accept", "--confirmed", "--json"], false);
    assert_eq!(code, 1, "{json}");
    assert!(
        json.to_string().contains("git fetch origin main:main"),
        "{json}"
    );
    forge.git(o, &["fetch", "-q", "origin", "main:main"]);
    let before = forge.out(o, &["rev-parse", "main"]);
    let (code, json) = forge.discern(o, &["accept", "--confirmed", "--json"], false);
    assert_eq!(code, 0, "{json}");
    let head = forge.out(o, &["rev-parse", "HEAD"]);
    assert_eq!(forge.out(o, &["rev-parse", "main"]), head);
    // The checkout keeps its branch out; nothing is removed from under the owner.
    assert_eq!(
        forge.out(o, &["rev-parse", "--abbrev-ref", "HEAD"]),
        "feature"
    );
    assert_eq!(json["data"]["landing"]["worktree_removed"], false, "{json}");
    assert!(json.to_string().contains("discern sync --push"), "{json}");
    let status = forge.out(o, &["status", "--porcelain"]);
    assert_eq!(status, "", "the checkout is untouched");
    let journals = o.join(".git/discern/landings");
    let left = std::fs::read_dir(&journals).map_or(0, |d| d.count());
    assert_eq!(left, 0, "a finished landing leaves no journal");
    // The landing and its Proof note reach the forge in one atomic push.
    let (code, sync) = forge.discern(o, &["sync", "--push", "--json"], false);
    assert_eq!(code, 0, "{sync}");
    assert_eq!(sync["data"]["landed_trunk"], head.as_str(), "{sync}");
    assert_eq!(forge.out(&forge.origin, &["rev-parse", "main"]), head);
    assert!(
        !forge
            .out(&forge.origin, &["notes", "--ref=discern", "show", &head])
            .is_empty()
    );
    passes("trunk CI", forge.trunk_ci(&before));
}

/// A fork's clone follows the project's trunk through its local trunk's upstream, as the
/// README's recipe sets it (`git branch -u upstream/main main`).
#[test]
fn a_forks_clone_is_judged_against_the_projects_trunk() {
    let forge = Forge::new(Config::landing().signed(), &[]);
    let fork = forge.dir.join("fork.git");
    let origin = forge.origin.to_str().unwrap();
    forge.git(
        &forge.dir,
        &["clone", "-q", "--bare", origin, fork.to_str().unwrap()],
    );
    let mine = forge.dir.join("forked");
    forge.git(
        &forge.dir,
        &[
            "clone",
            "-q",
            fork.to_str().unwrap(),
            mine.to_str().unwrap(),
        ],
    );
    forge.git(&mine, &["remote", "add", "upstream", origin]);
    // The project moves on after the fork was made.
    let c = &forge.contributor;
    forge.git(c, &["checkout", "-q", "main"]);
    std::fs::write(c.join("README.md"), "# the project moved\n").unwrap();
    forge.git(c, &["commit", "-q", "-am", "the project moves on"]);
    forge.git(c, &["push", "-q", "origin", "main"]);
    forge.git(&mine, &["fetch", "-q", "upstream"]);
    forge.git(&mine, &["branch", "-q", "-u", "upstream/main", "main"]);
    forge.git(&mine, &["checkout", "-q", "-b", "topic", "upstream/main"]);
    let (code, json) = forge.discern(&mine, &["standards", "--json"], false);
    assert_eq!(code, 0, "{json}");
    assert_eq!(
        json["data"]["limits"]["trunk_ref"], "refs/remotes/upstream/main",
        "{json}"
    );
}
