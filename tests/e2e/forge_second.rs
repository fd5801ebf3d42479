//! The forge, second round (issue 47): what broke when a team used the forge for a day — the
//! index after an approval commit, a push that did not happen, a baseline judged by another
//! limit, several landings in one push, a branch-creating push, init's own Standards.

use std::path::Path;

use crate::forge::BREACH;
use crate::support::config::Config;
use crate::support::forge::{File, Forge, passes};

/// `git fsck` is clean in `dir` and the tree of HEAD lists `path` once.
fn sound(forge: &Forge, dir: &Path, path: &str) {
    let fsck = forge
        .fixture
        .git_out(dir, &["fsck", "--no-progress", "--no-dangling"]);
    assert_eq!(fsck, "", "git fsck");
    let mut fsck = std::process::Command::new("git");
    fsck.args(["fsck", "--no-progress", "--no-dangling"])
        .current_dir(dir);
    discern_tests::hermetic(&mut fsck, forge.fixture.repo.home());
    let out = fsck.output().unwrap();
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "git fsck: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = forge.out(dir, &["ls-tree", "-r", "--name-only", "HEAD"]);
    let hits = tree.lines().filter(|l| *l == path).count();
    assert_eq!(hits, 1, "{path} once in HEAD's tree:\n{tree}");
}

/// The approval file `approve` committed on `branch` in `dir`.
fn approval_file(forge: &Forge, dir: &Path) -> String {
    forge.out(
        dir,
        &[
            "diff",
            "--name-only",
            "HEAD~1",
            "HEAD",
            "--",
            ".discern/approvals",
        ],
    )
}

/// The owner approves the pull request `name` on its checked-out branch (`git checkout`,
/// `discern approve`), and stays on it.
fn approve_checked_out(forge: &Forge, name: &str) -> String {
    let o = &forge.owner;
    forge.git(o, &["fetch", "-q", "origin"]);
    forge.git(
        o,
        &["checkout", "-q", "-B", name, &format!("origin/{name}")],
    );
    // The index as a reset (or a commit, a merge) leaves it: with git's cache of trees.
    forge.git(o, &["reset", "-q", "--hard"]);
    let key = forge.keys.owner.to_str().unwrap();
    let head = forge.out(o, &["rev-parse", "HEAD"]);
    let args = ["approve", "--head", &head, "--key", key, "--json"];
    let (code, json) = forge.discern(o, &args, false);
    assert_eq!(code, 0, "{json}");
    let file = approval_file(forge, o);
    assert!(!file.is_empty(), "{json}");
    file
}

/// The index matches HEAD: what `git commit` would write now is HEAD's tree.
fn index_is_head(forge: &Forge, dir: &Path) {
    let written = forge.out(dir, &["write-tree"]);
    assert_eq!(written, forge.out(dir, &["rev-parse", "HEAD^{tree}"]));
}

#[test]
fn a_commit_after_an_approval_commit_keeps_the_approval_and_the_tree_sound() {
    let forge = Forge::new(Config::landing().signed(), &[]);
    forge.pull_request_from("origin/main", "reviewed", BREACH, &[], true);
    let file = approve_checked_out(&forge, "reviewed");
    let o = &forge.owner;
    sound(&forge, o, &file);
    index_is_head(&forge, o);
    // A commit of nothing writes the index's cached root tree as it is.
    forge.git(o, &["commit", "-q", "--allow-empty", "-m", "a note"]);
    sound(&forge, o, &file);
    forge.git(o, &["push", "-q", "-f", "origin", "reviewed"]);
    passes("PR CI", forge.pr_ci_no_notes("reviewed"));
    let more = "// TODO 1\n// TODO 2\n// TODO 3\n// TODO 4\n\n";
    std::fs::write(o.join("src/more.rs"), more).unwrap();
    forge.git(o, &["commit", "-q", "-am", "a blank line"]);
    sound(&forge, o, &file);
    assert_eq!(forge.out(o, &["status", "--porcelain"]), "");
}

#[test]
fn the_owners_pull_after_accepting_an_approved_loosening_keeps_the_approval() {
    let forge = Forge::new(Config::landing().signed(), &[]);
    forge.pull_request_from("origin/main", "reviewed", BREACH, &[], true);
    let file = approve_checked_out(&forge, "reviewed");
    let o = &forge.owner;
    let before = forge.out(o, &["rev-parse", "origin/main"]);
    let (code, json) = forge.discern(o, &["done", "--json"], false);
    assert_eq!(code, 0, "{json}");
    let (code, json) = forge.discern(o, &["accept", "--confirmed", "--json"], false);
    assert_eq!(code, 0, "{json}");
    index_is_head(&forge, o);
    forge.git(o, &["checkout", "-q", "main"]);
    index_is_head(&forge, o);
    forge.git(o, &["pull", "-q", "--no-rebase", "origin", "main"]);
    forge.git(
        o,
        &["commit", "-q", "--allow-empty", "-m", "after the pull"],
    );
    sound(&forge, o, &file);
    forge.git(o, &["push", "-q", "origin", "main"]);
    passes("trunk CI", forge.trunk_ci(&before));
}

/// The team pushes a commit to the forge's trunk from the contributor's clone.
fn team_moves_on(forge: &Forge, text: &str) {
    let c = &forge.contributor;
    forge.git(c, &["fetch", "-q", "origin"]);
    forge.git(c, &["checkout", "-q", "-B", "main", "origin/main"]);
    std::fs::write(c.join("README.md"), text).unwrap();
    forge.git(c, &["commit", "-q", "-am", "the team moves on"]);
    forge.git(c, &["push", "-q", "origin", "main"]);
}

#[test]
fn sync_push_says_a_landing_the_forges_moved_trunk_refuses_and_how_to_push_it() {
    let forge = Forge::new(Config::landing().signed(), &[]);
    forge.pull_request_from(
        "origin/main",
        "feature",
        &[("src/work.rs", b"pub fn w() {}\n")],
        &[],
        false,
    );
    let o = &forge.owner;
    let before = forge.out(o, &["rev-parse", "origin/main"]);
    forge.git(o, &["fetch", "-q", "origin"]);
    forge.git(o, &["checkout", "-q", "-B", "feature", "origin/feature"]);
    let (code, json) = forge.discern(o, &["done", "--json"], false);
    assert_eq!(code, 0, "{json}");
    let (code, json) = forge.discern(o, &["accept", "--confirmed", "--json"], false);
    assert_eq!(code, 0, "{json}");
    let landing = forge.out(o, &["rev-parse", "main"]);
    team_moves_on(&forge, "# moved on after the landing\n");
    let theirs = forge.out(&forge.origin, &["rev-parse", "main"]);

    let (code, sync) = forge.discern(o, &["sync", "--push", "--json"], false);
    assert_eq!(code, 1, "{sync}");
    let text = sync.to_string();
    assert!(text.contains("was not pushed"), "{sync}");
    assert!(
        text.contains("git checkout main && git pull --no-rebase origin main"),
        "{sync}"
    );
    assert!(sync["data"].get("landed_trunk").is_none(), "{sync}");
    assert_eq!(forge.out(&forge.origin, &["rev-parse", "main"]), theirs);
    let (_, status) = forge.discern(o, &["status", "--json"], false);
    let unpushed = status["data"]["unpushed_refs"].to_string();
    assert!(unpushed.contains(&landing[..7]), "{status}");

    // The commands the refusal names push it.
    forge.git(o, &["checkout", "-q", "main"]);
    forge.git(o, &["pull", "-q", "--no-rebase", "origin", "main"]);
    let (code, sync) = forge.discern(o, &["sync", "--push", "--json"], false);
    assert_eq!(code, 0, "{sync}");
    let tip = forge.out(o, &["rev-parse", "main"]);
    assert_eq!(forge.out(&forge.origin, &["rev-parse", "main"]), tip);
    assert!(
        forge
            .out(
                &forge.origin,
                &["merge-base", "--is-ancestor", &landing, "main"]
            )
            .is_empty()
    );
    let (_, status) = forge.discern(o, &["status", "--json"], false);
    assert!(status["data"].get("unpushed_refs").is_none(), "{status}");
    passes("trunk CI", forge.trunk_ci(&before));
}

/// `discern.toml` of the trunk with the todo limit `limit`.
fn with_limit(forge: &Forge, limit: u32) -> String {
    let c = &forge.contributor;
    forge.git(c, &["fetch", "-q", "origin"]);
    let config = forge.out(c, &["show", "origin/main:discern.toml"]);
    format!(
        "{}\n",
        config.replace("limit = 5", &format!("limit = {limit}"))
    )
}

#[test]
fn a_branch_over_its_own_tightened_limit_is_not_inherited_after_the_trunk_loosened_it() {
    let forge = Forge::new(Config::landing().signed(), &[]);
    // The trunk at its limit: 5 TODOs under a ceiling of 5.
    team_moves_on(&forge, "# three more\n");
    let c = &forge.contributor;
    std::fs::write(c.join("src/t.rs"), "// TODO a\n// TODO b\n// TODO c\n").unwrap();
    forge.git(c, &["add", "-A"]);
    forge.git(c, &["commit", "-q", "-m", "three TODOs"]);
    forge.git(c, &["push", "-q", "origin", "main"]);
    // Two branches make the same fix and pin it: 5 → 4.
    let fix = [
        ("src/t.rs", "// TODO a\n// TODO b\n".to_owned()),
        ("discern.toml", with_limit(&forge, 4)),
    ];
    let fix: Vec<File> = fix.iter().map(|(p, t)| (*p, t.as_bytes())).collect();
    forge.pull_request_from("origin/main", "fix-a", &fix, &[], false);
    forge.pull_request_from("origin/main", "fix-b", &fix, &[], false);
    passes("PR CI of fix-b", forge.pr_ci_no_notes("fix-b"));
    forge.land("fix-a", crate::support::forge::Strategy::MergeCommit);
    // An approved loosening lands: 4 → 5.
    forge.git(c, &["fetch", "-q", "origin"]);
    forge.pull_request_from(
        "origin/main",
        "loosen",
        &[("src/more.rs", b"// TODO more\n")],
        &[],
        true,
    );
    forge.approve("loosen");
    forge.land("loosen", crate::support::forge::Strategy::MergeCommit);

    // fix-b brings the trunk in: a clean merge keeps its 4, with 5 TODOs.
    forge.git(c, &["fetch", "-q", "origin"]);
    forge.git(c, &["checkout", "-q", "fix-b"]);
    let (code, json) = forge.discern(c, &["update", "--json"], false);
    assert_eq!(code, 0, "{json}");
    let config = std::fs::read_to_string(c.join("discern.toml")).unwrap();
    assert!(config.contains("limit = 4"), "{config}");
    forge.git(c, &["push", "-q", "origin", "fix-b"]);
    let json =
        crate::support::forge::fails("PR CI of fix-b after update", forge.pr_ci_no_notes("fix-b"));
    assert_eq!(
        json["data"]["standards"][0]["verdict"], "regressed",
        "{json}"
    );
    let text = json.to_string();
    assert!(text.contains("holds its own ceiling 5"), "{json}");
    assert!(text.contains("`limit = 5` in [standards.todo]"), "{json}");
}

const NO_PREVIOUS_TIP: &str = "0000000000000000000000000000000000000000";

#[test]
fn a_push_that_creates_the_branch_is_judged_from_the_root_commit() {
    let forge = Forge::new(Config::landing().signed(), &[]);
    let root = forge.out(&forge.owner, &["rev-parse", "origin/main"]);
    // The repository's first push, as the forge sees it: `before` is the all-zero id.
    let (code, json) = forge.trunk_ci(NO_PREVIOUS_TIP);
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["data"]["limits"]["baseline_kind"], "root", "{json}");
    // A first push of several commits: each judged from the root on.
    team_moves_on(&forge, "# a second commit\n");
    let tightened = with_limit(&forge, 4);
    let c = &forge.contributor;
    std::fs::write(c.join("discern.toml"), &tightened).unwrap();
    forge.git(c, &["commit", "-q", "-am", "tighten"]);
    forge.git(c, &["push", "-q", "origin", "main"]);
    let (code, json) = forge.trunk_ci(NO_PREVIOUS_TIP);
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["data"]["limits"]["status"], "verified", "{json}");
    assert_eq!(json["data"]["limits"]["baseline"], root.as_str(), "{json}");
    assert!(
        !json.to_string().contains("git fetch origin 0000"),
        "{json}"
    );
    // An unapproved loosening anywhere in it fails.
    let loosened = tightened.replace("limit = 4", "limit = 6");
    std::fs::write(c.join("discern.toml"), loosened).unwrap();
    forge.git(c, &["commit", "-q", "-am", "loosen"]);
    std::fs::write(c.join("README.md"), "# after\n").unwrap();
    forge.git(c, &["commit", "-q", "-am", "after"]);
    forge.git(c, &["push", "-q", "origin", "main"]);
    let json = crate::support::forge::fails("the first push", forge.trunk_ci(NO_PREVIOUS_TIP));
    assert_eq!(json["data"]["limits"]["status"], "loosened", "{json}");
}

#[test]
fn a_signed_approval_file_does_not_breach_inits_own_file_size_standard() {
    let forge = Forge::new(Config::landing().signed(), &[]);
    // The owner starts the repository with `init` and their key: its first commit is the gate's.
    let o = &forge.owner;
    forge.git(o, &["checkout", "-q", "--orphan", "fresh"]);
    forge.git(
        o,
        &[
            "rm",
            "-q",
            "--cached",
            "discern.toml",
            ".discern/allowed_signers",
        ],
    );
    std::fs::remove_file(o.join("discern.toml")).unwrap();
    std::fs::remove_dir_all(o.join(".discern")).unwrap();
    forge.git(o, &["commit", "-q", "-m", "the project"]);
    let public = forge.keys.owner.with_extension("pub");
    let public = public.to_str().unwrap();
    let args = [
        "init",
        "--owner-key",
        public,
        "--repository",
        crate::support::APPROVAL_REPOSITORY,
        "--json",
    ];
    let (code, json) = forge.discern(o, &args, false);
    assert_eq!(code, 0, "{json}");
    let config = std::fs::read_to_string(o.join("discern.toml")).unwrap();
    assert!(
        config.contains("[standards.largest_file_bytes]"),
        "{config}"
    );
    forge.git(o, &["add", "-A"]);
    forge.git(o, &["commit", "-q", "-m", "discern init"]);
    forge.git(o, &["push", "-q", "-f", "origin", "fresh:main"]);
    forge.git(o, &["fetch", "-q", "origin"]);
    forge.git(o, &["checkout", "-q", "-B", "main", "origin/main"]);

    // A pull request grows the largest file, proposed; the owner approves it in the tree.
    let c = &forge.contributor;
    forge.git(c, &["fetch", "-q", "origin"]);
    forge.git(c, &["checkout", "-q", "-B", "main", "origin/main"]);
    forge.git(c, &["checkout", "-q", "-B", "bigger", "origin/main"]);
    std::fs::write(
        c.join("README.md"),
        format!("# app\n{}\n", "words ".repeat(60)),
    )
    .unwrap();
    forge.git(c, &["commit", "-q", "-am", "a longer README"]);
    let reason = crate::support::forge::REASON;
    let args = [
        "standards",
        "propose",
        "largest_file_bytes",
        "--reason",
        reason,
        "--json",
    ];
    let (code, json) = forge.discern(c, &args, false);
    assert_eq!(code, 0, "{json}");
    forge.git(c, &["push", "-q", "origin", "bigger"]);
    forge.approve("bigger");
    forge.git(c, &["fetch", "-q", "origin"]);
    let approval = forge.out(
        c,
        &[
            "diff",
            "--name-only",
            "origin/main",
            "origin/bigger",
            "--",
            ".discern/approvals",
        ],
    );
    let size = forge.out(c, &["cat-file", "-s", &format!("origin/bigger:{approval}")]);
    let limit = forge.out(c, &["show", "origin/bigger:discern.toml"]);
    assert!(size.parse::<u64>().unwrap() > 500, "{size}: {limit}");
    let (code, json) = forge.pr_ci_no_notes("bigger");
    assert_eq!(code, 0, "{json}");
    let before = forge.land("bigger", crate::support::forge::Strategy::MergeCommit);
    passes("trunk CI", forge.trunk_ci(&before));
}

/// On the contributor's `main`: a branch `name` with `files` written (empty text: removed) and
/// committed, merged with a merge commit (a landing), not pushed.
fn land_locally(forge: &Forge, name: &str, files: &[File]) {
    let c = &forge.contributor;
    forge.git(c, &["checkout", "-q", "-b", name, "main"]);
    for (file, text) in files {
        match text.is_empty() {
            true => std::fs::remove_file(c.join(file)).unwrap(),
            false => std::fs::write(c.join(file), text).unwrap(),
        }
    }
    forge.git(c, &["add", "-A"]);
    forge.git(c, &["commit", "-q", "-m", name]);
    forge.git(c, &["checkout", "-q", "main"]);
    let message = format!("Merge {name}");
    forge.git(c, &["merge", "-q", "--no-ff", "-m", &message, name]);
}

#[test]
fn one_push_of_several_landings_is_judged_landing_by_landing() {
    let forge = Forge::new(Config::landing().signed(), &[]);
    let c = &forge.contributor;
    forge.git(c, &["checkout", "-q", "main"]);
    for file in ["a", "b", "c"] {
        std::fs::write(c.join(format!("src/{file}.rs")), "// TODO one\n").unwrap();
    }
    forge.git(c, &["add", "-A"]);
    forge.git(c, &["commit", "-q", "-m", "5 TODOs at the ceiling 5"]);
    forge.git(c, &["push", "-q", "origin", "main"]);
    let before = forge.out(c, &["rev-parse", "HEAD"]);
    // Two fixes, a tightening to 3, a loosening to 4 with a new TODO: one push.
    land_locally(&forge, "fix-a", &[("src/a.rs", b"")]);
    land_locally(&forge, "fix-b", &[("src/b.rs", b"")]);
    let config = std::fs::read_to_string(c.join("discern.toml")).unwrap();
    let tightened = config.replace("limit = 5", "limit = 3");
    land_locally(&forge, "tighten", &[("discern.toml", tightened.as_bytes())]);
    let loosened = config.replace("limit = 5", "limit = 4");
    let more = [
        ("discern.toml", loosened.as_bytes()),
        ("src/d.rs", b"// TODO new\n"),
    ];
    land_locally(&forge, "loosen", &more);
    forge.git(c, &["push", "-q", "origin", "main"]);
    let (code, json) = forge.trunk_ci(&before);
    assert_eq!(code, 0, "{json}");
    let todo = &json["data"]["standards"][0];
    assert_eq!(todo["verdict"], "held", "{json}");
    assert_eq!(todo["findings"]["swap_check"], "passed", "{json}");
    assert!(todo["note"].to_string().contains("4 landings"), "{json}");

    // A landing that swaps is still a swap in a push of several.
    let before = forge.out(c, &["rev-parse", "HEAD"]);
    land_locally(&forge, "docs", &[("README.md", b"# docs\n")]);
    let swap: [File; 2] = [("src/c.rs", b""), ("src/e.rs", b"// TODO hidden\n")];
    land_locally(&forge, "swap", &swap);
    forge.git(c, &["push", "-q", "origin", "main"]);
    let json = crate::support::forge::fails("a swap in one landing", forge.trunk_ci(&before));
    assert_eq!(json["data"]["standards"][0]["verdict"], "swapped", "{json}");
}

#[test]
fn every_verb_on_a_diverged_local_trunk_names_the_rebase() {
    let forge = Forge::new(Config::landing().signed(), &[]);
    team_moves_on(&forge, "# moved\n");
    forge.pull_request_from("origin/main", "later", BREACH, &[], false);
    // The contributor's `main` has a commit of its own; the team's moved on without it.
    let c = &forge.contributor;
    forge.git(c, &["checkout", "-q", "main"]);
    forge.git(c, &["reset", "-q", "--hard", "HEAD~1"]);
    std::fs::write(c.join("NOTES.md"), "local\n").unwrap();
    forge.git(c, &["add", "-A"]);
    forge.git(c, &["commit", "-q", "-m", "a local trunk commit"]);
    forge.git(c, &["checkout", "-q", "later"]);
    let rebase = "git rebase origin/main main";
    let propose = [
        "standards",
        "propose",
        "todo",
        "--reason",
        crate::support::forge::REASON,
    ];
    for args in [
        &propose[..],
        &["update"],
        &["done"],
        &["approve", "--dry-run"],
    ] {
        let args = [args, &["--json"]].concat();
        let (code, json) = forge.discern(c, &args, false);
        assert_eq!(code, 1, "{args:?}: {json}");
        assert_eq!(json["error"], "trunk_unreadable", "{args:?}: {json}");
        assert!(json["message"].to_string().contains("diverged"), "{json}");
        assert!(
            json["hints"].to_string().contains(rebase),
            "{args:?}: {json}"
        );
    }
    let (_, json) = forge.discern(c, &["standards", "--json"], false);
    assert!(json.to_string().contains(rebase), "{json}");
}

/// Proven against a local trunk that was only ahead, the landing waits when the team's moved
/// on meanwhile: it would land on a trunk the team is not on.
#[test]
fn accept_on_a_diverged_local_trunk_names_the_rebase_and_lands_nothing() {
    let forge = Forge::new(Config::landing().signed(), &[]);
    forge.pull_request_from(
        "origin/main",
        "feature",
        &[("src/work.rs", b"pub fn w() {}\n")],
        &[],
        false,
    );
    let o = &forge.owner;
    forge.git(o, &["fetch", "-q", "origin"]);
    forge.git(o, &["checkout", "-q", "main"]);
    std::fs::write(o.join("NOTES.md"), "local\n").unwrap();
    forge.git(o, &["add", "-A"]);
    forge.git(o, &["commit", "-q", "-m", "a local trunk commit"]);
    forge.git(o, &["checkout", "-q", "-B", "feature", "origin/feature"]);
    forge.git(o, &["merge", "-q", "--no-edit", "main"]);
    let (code, json) = forge.discern(o, &["done", "--json"], false);
    assert_eq!(code, 0, "{json}");
    team_moves_on(&forge, "# moved\n");
    forge.git(o, &["fetch", "-q", "origin"]);
    let main = forge.out(o, &["rev-parse", "main"]);
    let (code, json) = forge.discern(o, &["accept", "--confirmed", "--json"], false);
    assert_eq!(code, 1, "{json}");
    assert_eq!(json["error"], "trunk_unreadable", "{json}");
    assert!(json["message"].to_string().contains("diverged"), "{json}");
    assert!(
        json["hints"]
            .to_string()
            .contains("git rebase origin/main main"),
        "{json}"
    );
    assert_eq!(forge.out(o, &["rev-parse", "main"]), main, "nothing landed");
}
