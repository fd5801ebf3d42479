//! An approval covers one change, in one repository (issue 44, class 4). A signed approval in
//! the tree names the repository, the trunk commit it was judged against, the items and the
//! digest of what the change does to the tree; the owner signs what they reviewed (`approve
//! --head SHA`, or `--token`). Each attack below got through before, on the forge the README
//! describes (a bare origin over file://, one clone per actor, CI as `actions/checkout` clones
//! plus the README's fetch); the controls show that the same change still lands by every merge
//! strategy, and over a trunk that moved on other paths.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::approval::{effort, proposed_effort, signed_fixture, trunk};
use crate::forge::BREACH;
use crate::support::APPROVAL_REPOSITORY;
use crate::support::config::Config;
use crate::support::forge::{File, Forge, REASON, STRATEGIES, Strategy, fails, passes};

/// Other code with the same breach as [`BREACH`]: four TODOs in another file, so the same
/// proposal (todo 5 -> 6, the same reason) and the same approval token.
const OTHER_CODE: &[(&str, &str)] = &[(
    "src/other.rs",
    "// TODO a\n// TODO b\n// TODO c\n// TODO d\npub fn other() {}\n",
)];

/// Everything an envelope says, in one string to search.
fn said(json: &Value) -> String {
    json.to_string()
}

/// The approval file `branch` adds (its path) and its bytes, as the forge has them.
fn approval_on(forge: &Forge, branch: &str) -> (String, String) {
    let c = &forge.contributor;
    forge.git(c, &["fetch", "-q", "origin"]);
    let path = forge.out(
        c,
        &[
            "diff",
            "--name-only",
            "origin/main",
            &format!("origin/{branch}"),
            "--",
            ".discern/approvals",
        ],
    );
    assert!(path.ends_with(".json"), "no approval on {branch}: {path:?}");
    let bytes = forge.out(c, &["show", &format!("origin/{branch}:{path}")]);
    (path, bytes)
}

/// Commit `files` on the contributor's checkout of `branch` and push it.
fn push_to(forge: &Forge, branch: &str, files: &[File], message: &str) {
    let c = &forge.contributor;
    forge.git(c, &["checkout", "-q", branch]);
    for (file, content) in files {
        let path = c.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    forge.git(c, &["add", "-A"]);
    forge.git(c, &["commit", "-q", "-m", message]);
    forge.git(c, &["push", "-q", "-f", "origin", branch]);
}

/// The owner's dry run of `origin/<branch>` in their clone: what it lists.
fn listed(forge: &Forge, branch: &str) -> Value {
    let o = &forge.owner;
    forge.git(o, &["fetch", "-q", "origin"]);
    let target = format!("origin/{branch}");
    let (code, json) = forge.discern(o, &["approve", &target, "--dry-run", "--json"], false);
    assert_eq!(code, 0, "{json}");
    json
}

/// The command the owner's dry run of `origin/<branch>` prints (it names the head it read), as
/// arguments (without `discern`), with the owner's key; and what it lists.
fn reviewed(forge: &Forge, branch: &str) -> (Value, Vec<String>) {
    let json = listed(forge, branch);
    let command = json["data"]["command"]
        .as_str()
        .unwrap_or_else(|| panic!("the dry run prints no command: {json}"));
    let head = forge.out(&forge.owner, &["rev-parse", &format!("origin/{branch}")]);
    assert!(command.ends_with(&format!("--head {head}")), "{command}");
    let mut args: Vec<String> = command
        .split_whitespace()
        .skip(1)
        .map(str::to_owned)
        .collect();
    args.extend([
        "--key".to_owned(),
        forge.keys.owner.to_str().unwrap().to_owned(),
    ]);
    (json, args)
}

/// Run `args` (and `--json`) in the owner's clone.
fn owner_runs(forge: &Forge, args: &[String]) -> (i32, Value) {
    let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
    args.push("--json");
    forge.discern(&forge.owner, &args, false)
}

/// The owner's clone has no local `branch`: no approval commit was made for it.
fn nothing_signed(forge: &Forge, branch: &str) {
    let o = &forge.owner;
    let local = forge.out(
        o,
        &[
            "rev-parse",
            "--verify",
            "-q",
            &format!("refs/heads/{branch}"),
        ],
    );
    assert_eq!(local, "", "an approval commit was made on {branch}");
}

#[test]
fn an_approval_copied_into_another_pull_request_with_the_same_limit_change_approves_nothing() {
    let forge = Forge::new(Config::landing().signed(), &[]);
    forge.pull_request_from("origin/main", "first", BREACH, &[], true);
    forge.approve("first");
    passes(
        "control: PR CI of the approved PR",
        forge.pr_ci_no_notes("first"),
    );
    let (path, bytes) = approval_on(&forge, "first");

    // Another pull request: other code, the same loosening with the same reason — the same
    // token the owner signed — and the first one's approval file copied in.
    let other: Vec<File> = OTHER_CODE.iter().map(|(p, t)| (*p, t.as_bytes())).collect();
    forge.pull_request_from("origin/main", "second", &other, &[], true);
    let listed = listed(&forge, "second");
    let token = discern::testing::proposals::approval_token("todo", 6.0, REASON);
    assert_eq!(
        listed["data"]["required"]["proposals"][0]["token"],
        token.as_str()
    );
    assert!(bytes.contains(&token), "the copied approval signs {token}");
    push_to(
        &forge,
        "second",
        &[(path.as_str(), format!("{bytes}\n").as_bytes())],
        "the first PR's approval",
    );

    let json = fails("PR CI of the copy", forge.pr_ci_no_notes("second"));
    assert_ne!(json["data"]["limits"]["status"], "approved", "{json}");
    assert!(
        said(&json).contains("another change to the tree than this one makes"),
        "{json}"
    );
    fails("the merge ref of the copy", forge.merge_ref_ci("second"));
    let before = forge.land("second", Strategy::Squash);
    let json = fails("trunk CI after the copy landed", forge.trunk_ci(&before));
    assert!(said(&json).contains("does not count"), "{json}");
}

/// A sibling repository: `origin`'s history at this point (a fork, a mirror, a repository
/// split off), the same signers file and the owner's key, its own bare origin.
fn sibling(forge: &Forge) -> PathBuf {
    let sibling = forge.dir.join("sibling.git");
    forge.git(
        &forge.dir,
        &[
            "clone",
            "-q",
            "--bare",
            forge.origin.to_str().unwrap(),
            sibling.to_str().unwrap(),
        ],
    );
    sibling
}

/// PR CI in the sibling on `rev`: a fresh clone of it as `actions/checkout` makes it.
fn sibling_ci(forge: &Forge, sibling: &Path, name: &str, rev: &str, args: &[&str]) -> (i32, Value) {
    let clone = forge.dir.join(format!("sibling-ci-{name}"));
    forge
        .fixture
        .ci_checkout(&clone, &format!("file://{}", sibling.display()), rev);
    forge.discern(&clone, args, true)
}

#[test]
fn an_approval_copied_into_a_sibling_repository_sharing_history_and_the_key_approves_nothing() {
    let forge = Forge::new(Config::landing().signed(), &[]);
    let shared = forge.out(&forge.owner, &["rev-parse", "origin/main"]);
    let sibling = sibling(&forge);

    // The sibling names itself, as the owner approves it there (the trunk side names the
    // repository it came from until then).
    let own = forge.dir.join("sibling-owner");
    forge.git(
        &forge.dir,
        &[
            "clone",
            "-q",
            sibling.to_str().unwrap(),
            own.to_str().unwrap(),
        ],
    );
    let config = std::fs::read_to_string(own.join("discern.toml")).unwrap();
    let named = config.replace(
        &format!("repository = \"{APPROVAL_REPOSITORY}\""),
        "repository = \"example.com/acme/sibling\"",
    );
    assert_ne!(named, config);
    forge.git(&own, &["checkout", "-q", "-b", "rename"]);
    std::fs::write(own.join("discern.toml"), named).unwrap();
    forge.git(&own, &["commit", "-q", "-am", "name the sibling"]);
    let head = forge.out(&own, &["rev-parse", "HEAD"]);
    let key = forge.keys.owner.to_str().unwrap();
    let (code, json) = forge.discern(
        &own,
        &["approve", "rename", "--head", &head, "--key", key, "--json"],
        false,
    );
    assert_eq!(code, 0, "{json}");
    forge.git(&own, &["checkout", "-q", "main"]);
    forge.git(
        &own,
        &["merge", "-q", "--no-ff", "-m", "Merge rename", "rename"],
    );
    forge.git(&own, &["push", "-q", "origin", "main"]);
    let (code, json) = sibling_ci(
        &forge,
        &sibling,
        "rename",
        "refs/heads/main",
        &["standards", "--baseline", &shared, "--json"],
    );
    assert_eq!(
        code, 0,
        "control: the sibling's approved rename passes its push check: {json}"
    );

    // The owner approves a pull request in the first repository.
    forge.pull_request_from("origin/main", "first", BREACH, &[], true);
    forge.approve("first");
    passes(
        "control: PR CI of the approved PR",
        forge.pr_ci_no_notes("first"),
    );

    // The same branch, its approval commit included, pushed as a pull request of the sibling
    // (forked from the history both share).
    let c = &forge.contributor;
    forge.git(c, &["fetch", "-q", "origin"]);
    let url = format!("file://{}", sibling.display());
    forge.git(c, &["push", "-q", &url, "origin/first:refs/heads/first"]);
    let (code, json) = sibling_ci(
        &forge,
        &sibling,
        "first",
        "refs/heads/first",
        &["standards", "--json"],
    );
    assert_eq!(
        code, 1,
        "PR CI in the sibling: the attack got through: {json}"
    );
    assert_ne!(json["data"]["limits"]["status"], "approved", "{json}");
    assert!(
        said(&json).contains(&format!(
            "repository {APPROVAL_REPOSITORY}, and this one is example.com/acme/sibling"
        )),
        "{json}"
    );
}

#[test]
fn the_owners_command_after_the_contributor_pushed_a_bigger_loosening_signs_nothing() {
    let forge = Forge::new(Config::landing().signed(), &[]);
    forge.pull_request_from("origin/main", "grows", BREACH, &[], true);
    // The owner reviews 5 -> 6; the dry run prints the command that signs exactly that.
    let listed = listed(&forge, "grows");
    let proposal = &listed["data"]["required"]["proposals"][0];
    assert_eq!(proposal["proposed_limit"], 6.0, "{listed}");
    let token = proposal["token"].as_str().unwrap().to_owned();
    let printed = listed["data"]["command"].as_str().map(str::to_owned);

    // The contributor pushes more: 5 -> 8.
    let c = &forge.contributor;
    forge.git(c, &["checkout", "-q", "grows"]);
    let (code, json) = forge.discern(c, &["standards", "withdraw", "--json"], false);
    assert_eq!(code, 0, "{json}");
    std::fs::write(c.join("src/even-more.rs"), "// TODO 5\n// TODO 6\n").unwrap();
    forge.git(c, &["add", "-A"]);
    forge.git(c, &["commit", "-q", "-m", "more"]);
    let (code, json) = forge.discern(
        c,
        &["standards", "propose", "todo", "--reason", REASON, "--json"],
        false,
    );
    assert_eq!(code, 0, "{json}");
    forge.git(c, &["push", "-q", "-f", "origin", "grows"]);
    forge.git(&forge.owner, &["fetch", "-q", "origin"]);

    // Whatever the owner runs, nothing is signed for what they did not review.
    let key = forge.keys.owner.to_str().unwrap().to_owned();
    let without_head: Vec<String> = ["approve", "origin/grows", "--key", &key]
        .map(str::to_owned)
        .to_vec();
    let (code, json) = owner_runs(&forge, &without_head);
    assert_ne!(code, 0, "the command without --head signed 5 -> 8: {json}");
    nothing_signed(&forge, "grows");
    let printed = printed.unwrap_or_else(|| panic!("the dry run printed no command: {listed}"));
    let mut command: Vec<String> = printed
        .split_whitespace()
        .skip(1)
        .map(str::to_owned)
        .collect();
    command.extend(["--key".to_owned(), key.clone()]);
    let (code, json) = owner_runs(&forge, &command);
    assert_eq!(code, 1, "the reviewed command signed 5 -> 8: {json}");
    assert!(said(&json).contains("commit(s) past"), "{json}");
    nothing_signed(&forge, "grows");
    let with_token: Vec<String> = ["approve", "origin/grows", "--token", &token, "--key", &key]
        .map(str::to_owned)
        .to_vec();
    let (code, json) = owner_runs(&forge, &with_token);
    assert_eq!(code, 1, "the reviewed token signed 5 -> 8: {json}");
    nothing_signed(&forge, "grows");
    let json = fails("PR CI", forge.pr_ci_no_notes("grows"));
    assert_eq!(json["error"], "awaiting_standard_approval", "{json}");

    // Reviewing again shows 5 -> 8, and its command signs exactly that.
    let (listed, command) = reviewed(&forge, "grows");
    assert_eq!(
        listed["data"]["required"]["proposals"][0]["proposed_limit"], 8.0,
        "{listed}"
    );
    let (code, json) = owner_runs(&forge, &command);
    assert_eq!(code, 0, "{json}");
    forge.git(&forge.owner, &["push", "-q", "origin", "grows:grows"]);
    passes(
        "PR CI once the owner approved what is there",
        forge.pr_ci_no_notes("grows"),
    );
}

#[test]
fn the_same_approved_change_passes_the_push_check_by_merge_commit_squash_and_rebase() {
    let forge = Forge::new(Config::landing().signed(), &[]);
    let start = forge.out(&forge.owner, &["rev-parse", "origin/main"]);
    for strategy in STRATEGIES {
        forge.reset_trunk(&start);
        let name = format!("landed-{strategy:?}").to_lowercase();
        // Work in two commits, then the proposal, then the owner's approval commit.
        forge.pull_request_from(
            "origin/main",
            &name,
            &[("src/first.rs", b"pub fn first() {}\n")],
            &[],
            false,
        );
        push_to(&forge, &name, BREACH, "the breach");
        let c = &forge.contributor;
        let (code, json) = forge.discern(
            c,
            &["standards", "propose", "todo", "--reason", REASON, "--json"],
            false,
        );
        assert_eq!(code, 0, "{json}");
        forge.git(c, &["push", "-q", "-f", "origin", &name]);
        forge.approve(&name);
        let json = forge.everywhere(&name, strategy, true);
        assert_eq!(json["data"]["limits"]["status"], "approved", "{json}");
    }
}

/// Push a commit of `files` straight onto the forge's trunk (another landing, say).
fn trunk_moves(forge: &Forge, files: &[File]) {
    let bot = forge.bot();
    for (file, content) in files {
        std::fs::write(bot.join(file), content).unwrap();
    }
    forge.git(&bot, &["commit", "-q", "-am", "the trunk moves on"]);
    forge.git(&bot, &["push", "-q", "origin", "main"]);
}

#[test]
fn a_trunk_that_moved_on_other_paths_still_verifies_under_every_strategy() {
    let forge = Forge::new(Config::landing().signed(), &[]);
    let start = forge.out(&forge.owner, &["rev-parse", "origin/main"]);
    for strategy in STRATEGIES {
        forge.reset_trunk(&start);
        let name = format!("disjoint-{strategy:?}").to_lowercase();
        forge.pull_request_from("origin/main", &name, BREACH, &[], true);
        forge.approve(&name);
        trunk_moves(&forge, &[("README.md", b"# the trunk moved on\n")]);
        passes("PR CI on the head", forge.pr_ci_no_notes(&name));
        let (code, json) = forge.merge_ref_ci(&name);
        assert_eq!(code, 0, "{strategy:?}: the merge ref: {json}");
        assert_eq!(json["data"]["limits"]["status"], "approved", "{json}");
        let before = forge.land(&name, strategy);
        let (code, json) = forge.trunk_ci(&before);
        assert_eq!(code, 0, "{strategy:?}: trunk CI after landing: {json}");
        assert_eq!(json["data"]["limits"]["status"], "approved", "{json}");
    }
}

#[test]
fn a_trunk_that_moved_on_the_same_path_fails_closed_and_names_reapproval() {
    let forge = Forge::new(Config::landing().signed(), &[]);
    // A protected change (the test job) with code in src/lib.rs, approved.
    let lib = std::fs::read_to_string(forge.owner.join("src/lib.rs")).unwrap();
    let config = std::fs::read_to_string(forge.owner.join("discern.toml")).unwrap();
    let jobs = config.replace("test = \"true\"", "test = \"true && true\"");
    let ours = format!("{lib}pub fn c() {{}}\n");
    forge.pull_request_from(
        "origin/main",
        "overlap",
        &[
            ("discern.toml", jobs.as_bytes()),
            ("src/lib.rs", ours.as_bytes()),
        ],
        &[],
        false,
    );
    forge.approve("overlap");
    passes("PR CI once approved", forge.pr_ci_no_notes("overlap"));

    // The trunk edits the same file elsewhere; git merges the two cleanly, and what lands does
    // something else to src/lib.rs than what the owner approved.
    let theirs = lib.replace("pub fn a() {}", "pub fn a() -> u8 {\n    0\n}");
    assert_ne!(theirs, lib);
    trunk_moves(&forge, &[("src/lib.rs", theirs.as_bytes())]);
    let moved = forge.out(&forge.owner, &["ls-remote", "origin", "refs/heads/main"]);
    let moved = moved.split_whitespace().next().unwrap().to_owned();
    let json = fails("the merge ref", forge.merge_ref_ci("overlap"));
    let text = said(&json);
    assert!(
        text.contains("the trunk moved since the owner approved it")
            && text.contains("discern approve origin/BRANCH --dry-run"),
        "{json}"
    );
    let before = forge.land("overlap", Strategy::MergeCommit);
    let json = fails("trunk CI after the merge", forge.trunk_ci(&before));
    assert!(
        said(&json).contains("the trunk moved since the owner approved it"),
        "{json}"
    );

    // The way through: bring the trunk in, and the owner approves the change as it now is.
    forge.reset_trunk(&moved);
    let c = &forge.contributor;
    forge.git(c, &["fetch", "-q", "origin"]);
    forge.git(c, &["checkout", "-q", "overlap"]);
    forge.git(c, &["merge", "-q", "--no-edit", "origin/main"]);
    forge.git(c, &["push", "-q", "-f", "origin", "overlap"]);
    // The owner's local branch still holds the first approval commit (issue 47 names this
    // step); it follows the pull request before the new approval commit goes on it.
    forge.git(&forge.owner, &["fetch", "-q", "origin"]);
    forge.git(&forge.owner, &["branch", "-f", "overlap", "origin/overlap"]);
    let (_, command) = reviewed(&forge, "overlap");
    let (code, json) = owner_runs(&forge, &command);
    assert_eq!(code, 0, "{json}");
    forge.git(
        &forge.owner,
        &["push", "-q", "-f", "origin", "overlap:overlap"],
    );
    forge.everywhere("overlap", Strategy::MergeCommit, true);
}

/// The last round's regression: two local efforts make the same loosening with other code; the
/// owner approves one, and its approval file is copied onto the other.
#[test]
fn an_approval_copied_from_one_effort_onto_another_lands_nothing() {
    let (fixture, keys) = signed_fixture();
    let (first, token) = proposed_effort(&fixture, "first");
    let head = fixture.git_out(&first, &["rev-parse", "HEAD"]);
    let owner = keys.owner.to_str().unwrap();
    let json = fixture
        .run(&[
            "approve", "--effort", "first", "--head", &head, "--key", owner, "--json",
        ])
        .json();
    assert_eq!(json["ok"], true, "{json}");
    let file = json["data"]["approval_file"].as_str().unwrap().to_owned();
    let bytes = std::fs::read(first.join(&file)).unwrap();

    let second = effort(&fixture, "second", OTHER_CODE);
    let proposed = fixture
        .run_in(
            &second,
            &["standards", "propose", "todo", "--reason", REASON, "--json"],
            &[],
        )
        .json();
    assert_eq!(proposed["ok"], true, "{proposed}");
    let done = fixture.run_in(&second, &["done", "--json"], &[]).json();
    assert_eq!(done["ok"], true, "{done}");
    let listed = fixture
        .run(&["approve", "--effort", "second", "--dry-run", "--json"])
        .json();
    assert_eq!(
        listed["data"]["required"]["proposals"][0]["token"],
        token.as_str(),
        "the same item"
    );
    std::fs::create_dir_all(second.join(".discern/approvals")).unwrap();
    std::fs::write(second.join(&file), bytes).unwrap();
    fixture.git_in(&second, &["add", "-A"]);
    fixture.git_in(
        &second,
        &["commit", "-q", "-m", "the first effort's approval"],
    );

    let before = trunk(&fixture);
    let json = fixture
        .run(&["accept", "--effort", "second", "--confirmed", "--json"])
        .json();
    assert_eq!(json["ok"], false, "the copied approval landed: {json}");
    assert_eq!(json["error"], "awaiting_standard_approval", "{json}");
    assert_eq!(trunk(&fixture), before, "nothing landed");
    let status = fixture.run(&["status", "--json"]).json();
    let row = status["data"]["fleet"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["id"] == "second"))
        .cloned()
        .unwrap_or_default();
    assert!(row["approved_by"].is_null(), "{row}");

    // Control: the effort the owner approved lands.
    let json = fixture
        .run(&["accept", "--effort", "first", "--confirmed", "--json"])
        .json();
    assert_eq!(json["ok"], true, "{json}");
}
