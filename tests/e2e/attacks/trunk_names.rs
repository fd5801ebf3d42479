//! Class 21: the change names its own trunk. A pull request renames the trunk in one commit and
//! loosens in the next (so that its own first parent agrees with its head), names its own
//! branch, `HEAD`, a branch it pushes or one of discern's own refs; code in the CI clone makes a
//! local `main` at the attacker's commit, ahead of `origin/main` or diverged from it. Each run
//! must be judged against the trunk the change came from (`refs/remotes/origin/main`), naming
//! the loosening, or refused: never judged against a trunk the change chose.

use std::path::Path;

use serde_json::Value;

use super::*;

/// The trunk's config with `[repository].trunk = trunk` (when given) and the limit 5 loosened
/// to 9 (when `loose`).
fn config(trunk: Option<&str>, loose: bool) -> String {
    let mut text = signed_config("", "");
    if loose {
        text = text.replace("limit = 5", "limit = 9");
    }
    if let Some(trunk) = trunk {
        text = text.replace(
            "pin_on_done = false",
            &format!("pin_on_done = false\ntrunk = \"{trunk}\""),
        );
    }
    text
}

/// The attacker's branch `branch` off origin's main with two commits, pushed: `(first, head)`.
fn two_commits(forge: &Forge, branch: &str, first: &[File], second: &[File]) -> (String, String) {
    forge.git(&forge.contributor, &["fetch", "-q", "origin"]);
    forge.git(
        &forge.contributor,
        &["checkout", "-q", "-B", branch, "origin/main"],
    );
    let c1 = forge.commit(&forge.contributor, first, &[], "rename the trunk");
    let c2 = forge.commit(&forge.contributor, second, &[], "relax todo");
    forge.git(
        &forge.contributor,
        &[
            "push",
            "-q",
            "-f",
            "origin",
            &format!("HEAD:refs/heads/{branch}"),
        ],
    );
    (c1, c2)
}

/// The two shapes of the attack: the rename first and the loosening second, and both first
/// with a harmless second commit. The breach (6 TODOs) comes with the loosening.
fn shapes(trunk: &str) -> [(String, String, &'static str); 2] {
    let renamed = config(Some(trunk), false);
    let both = config(Some(trunk), true);
    [
        (renamed, config(Some(trunk), true), "rename, then loosen"),
        (both.clone(), both, "rename and loosen, then work"),
    ]
}

/// Push `commit` of the attacker's clone to `reference` on origin.
fn push_ref(forge: &Forge, commit: &str, reference: &str) {
    forge.git(
        &forge.contributor,
        &[
            "push",
            "-q",
            "-f",
            "origin",
            &format!("{commit}:{reference}"),
        ],
    );
}

/// PR CI (`CI=true discern standards --json`) in `clone`.
fn standards(forge: &Forge, clone: &Path) -> crate::support::Run {
    forge.ci(clone, &["standards", "--json"], &[])
}

/// Refused, judged against origin's main (never a trunk the change chose), naming the
/// loosening.
#[track_caller]
fn judged_against_main(run: &crate::support::Run, what: &str) -> Value {
    let json = refused(run, what);
    assert_eq!(
        json["data"]["limits"]["trunk_ref"], "refs/remotes/origin/main",
        "{what}: judged against a trunk the change chose:\n{json}"
    );
    assert_eq!(
        json["data"]["limits"]["status"], "loosened",
        "{what}: {json}"
    );
    names(&json, "5 -> 9");
    json
}

// ---------------------------------------------------------------------------------------------
// (a) The trunk renamed by the pull request.
// ---------------------------------------------------------------------------------------------

/// Class 21a: the rename names the pull request's own branch (as written, as a full local or
/// remote-tracking name, as `origin/…`), `HEAD` or `@`, in the first commit; the loosening comes
/// in the second, so that HEAD's first parent names the same trunk as HEAD.
#[test]
fn class_21a_a_pull_request_renaming_its_trunk_in_two_commits_fails_pr_ci() {
    let forge = Forge::new(signed_config("", ""), &[]);
    for (branch, trunk) in [
        ("agent/own", "agent/own"),
        ("agent/heads", "refs/heads/agent/heads"),
        ("agent/remotes", "refs/remotes/origin/agent/remotes"),
        ("agent/origin", "origin/agent/origin"),
        ("agent/head", "HEAD"),
        ("agent/at", "@"),
    ] {
        for (first, second, shape) in shapes(trunk) {
            two_commits(
                &forge,
                branch,
                &[("discern.toml", first.as_bytes())],
                &[
                    ("discern.toml", second.as_bytes()),
                    ("src/more.rs", TODOS.as_bytes()),
                ],
            );
            let what = format!("{trunk} ({shape})");
            let json = judged_against_main(&forge.pr_ci(branch), &what);
            names(&json, "repository.trunk");
            names(
                &json,
                "a rename counts once it lands on the trunk it renames",
            );
        }
    }
}

/// Class 21b: the same, in the clone `actions/checkout` makes for a pull request (the forge's
/// merge, `refs/pull/1/merge`), the rename naming the pull request's branch and the merge ref.
#[test]
fn class_21b_a_renamed_trunk_fails_pr_ci_on_the_forges_merge() {
    for trunk in ["agent/merge", "refs/remotes/pull/1/merge", "pull/1/merge"] {
        let forge = Forge::new(signed_config("", ""), &[]);
        let (_, head) = two_commits(
            &forge,
            "agent/merge",
            &[("discern.toml", config(Some(trunk), false).as_bytes())],
            &[
                ("discern.toml", config(Some(trunk), true).as_bytes()),
                ("src/more.rs", TODOS.as_bytes()),
            ],
        );
        let clone = forge.merge_ref_clone(&head);
        judged_against_main(&standards(&forge, &clone), trunk);
    }
}

/// Class 21c: the rename names a branch the attacker pushes at the commit that loosens, and
/// the pull request builds on it: in the README's CI (which fetches only the trunk) and in a
/// CI that fetched every branch (`fetch-depth: 0`).
#[test]
fn class_21c_a_trunk_renamed_to_a_branch_the_attacker_pushed_fails_pr_ci() {
    let forge = Forge::new(signed_config("", ""), &[]);
    for (first, second, shape) in shapes("agent/base") {
        let (c1, _) = two_commits(
            &forge,
            "agent/pr",
            &[("discern.toml", first.as_bytes())],
            &[
                ("discern.toml", second.as_bytes()),
                ("src/more.rs", TODOS.as_bytes()),
            ],
        );
        push_ref(&forge, &c1, "refs/heads/agent/base");
        let readme = forge.ci_clone("agent/pr");
        let what = format!("README CI ({shape})");
        judged_against_main(&standards(&forge, &readme), &what);

        let every = forge.ci_clone("agent/pr");
        forge.git(
            &every,
            &[
                "fetch",
                "-q",
                "origin",
                "+refs/heads/*:refs/remotes/origin/*",
            ],
        );
        assert_eq!(
            forge.out(&every, &["rev-parse", "refs/remotes/origin/agent/base"]),
            c1
        );
        let what = format!("every branch fetched ({shape})");
        judged_against_main(&standards(&forge, &every), &what);
    }
}

/// Class 21d: the rename names one of discern's own refs, which the README's CI fetches (the
/// Proof notes, the published evidence), pushed by the attacker at the commit that loosens.
#[test]
fn class_21d_a_trunk_renamed_to_a_ref_discern_fetches_fails_pr_ci() {
    for reference in [
        "refs/notes/discern",
        "refs/discern/evidence",
        "refs/notes/remotes/origin/discern",
    ] {
        let forge = Forge::new(signed_config("", ""), &[]);
        let (c1, _) = two_commits(
            &forge,
            "agent/notes",
            &[("discern.toml", config(Some(reference), true).as_bytes())],
            &[("src/more.rs", TODOS.as_bytes())],
        );
        let pushed = reference.replace("remotes/origin/", "");
        push_ref(&forge, &c1, &pushed);
        let clone = forge.ci_clone("agent/notes");
        // The README's `discern sync`, and the same ref fetched as itself.
        forge.ci(&clone, &["sync", "--json"], &[]);
        forge.git(
            &clone,
            &["fetch", "-q", "origin", &format!("+{pushed}:{reference}")],
        );
        assert_eq!(forge.out(&clone, &["rev-parse", reference]), c1);
        let json = judged_against_main(&standards(&forge, &clone), reference);
        names(&json, "repository.trunk");
    }
}

/// Class 21e: pushed straight to the trunk, the same two commits fail the push check (which
/// judges every commit since `--baseline`, whatever the trunk is called).
#[test]
fn class_21e_a_pushed_rename_fails_the_push_check() {
    for trunk in ["agent/own", "HEAD", "refs/notes/discern"] {
        let forge = Forge::new(signed_config("", ""), &[]);
        let before = forge.main();
        let (c1, c2) = two_commits(
            &forge,
            "agent/own",
            &[("discern.toml", config(Some(trunk), false).as_bytes())],
            &[
                ("discern.toml", config(Some(trunk), true).as_bytes()),
                ("src/more.rs", TODOS.as_bytes()),
            ],
        );
        if trunk.starts_with("refs/") {
            push_ref(&forge, &c1, trunk);
        }
        forge.push_commit(&c2);
        refused(&forge.push_ci(&before), trunk);
    }
}

/// Class 21f: the pull request's first parent is a root commit of an unrelated history that
/// names itself the trunk (loosened, with the breach), pushed as the branch `agent/base`, with
/// origin's main merged in as the second parent: on the branch and on the forge's merge, in the
/// README's CI and in one that fetched every branch (where `agent/base` is there to name).
#[test]
fn class_21f_an_unrelated_history_naming_itself_the_trunk_fails_pr_ci() {
    let forge = Forge::new(signed_config("", ""), &[]);
    let main = forge.main();
    forge.git(&forge.contributor, &["fetch", "-q", "origin"]);
    forge.git(
        &forge.contributor,
        &["checkout", "-q", "--orphan", "agent/base"],
    );
    let loose = config(Some("agent/base"), true);
    let root = forge.commit(
        &forge.contributor,
        &[
            ("discern.toml", loose.as_bytes()),
            ("src/more.rs", TODOS.as_bytes()),
        ],
        &[],
        "an unrelated root",
    );
    push_ref(&forge, &root, "refs/heads/agent/base");
    forge.git(
        &forge.contributor,
        &["checkout", "-q", "-B", "agent/pr", &root],
    );
    forge.git(
        &forge.contributor,
        &[
            "merge",
            "-q",
            "--allow-unrelated-histories",
            "-s",
            "ours",
            "--no-edit",
            &main,
        ],
    );
    let head = forge.out(&forge.contributor, &["rev-parse", "HEAD"]);
    push_ref(&forge, &head, "refs/heads/agent/pr");

    judged_against_main(&forge.pr_ci("agent/pr"), "the branch");
    let every = forge.ci_clone("agent/pr");
    forge.git(
        &every,
        &[
            "fetch",
            "-q",
            "origin",
            "+refs/heads/*:refs/remotes/origin/*",
        ],
    );
    judged_against_main(&standards(&forge, &every), "every branch fetched");
    let clone = forge.merge_ref_clone(&head);
    judged_against_main(&standards(&forge, &clone), "the forge's merge");
    forge.git(
        &clone,
        &[
            "fetch",
            "-q",
            "origin",
            "+refs/heads/*:refs/remotes/origin/*",
        ],
    );
    judged_against_main(
        &standards(&forge, &clone),
        "the forge's merge, every branch fetched",
    );
}

// ---------------------------------------------------------------------------------------------
// (b) A local trunk made in the CI clone.
// ---------------------------------------------------------------------------------------------

/// The attacker's pull request `agent/local`: the loosening (with the breach) in its first
/// commit, work in its second. `(first, head)`.
fn loosening_pr(forge: &Forge) -> (String, String) {
    two_commits(
        forge,
        "agent/local",
        &[
            ("discern.toml", config(None, true).as_bytes()),
            ("src/more.rs", TODOS.as_bytes()),
        ],
        &[("src/work.rs", b"pub fn work() {}\n")],
    )
}

/// Class 21g: code that ran in the CI clone before discern made a local `main` at the
/// attacker's commit, ahead of `origin/main`: at the loosening, and at HEAD.
#[test]
fn class_21g_a_local_main_ahead_of_origin_main_in_ci_is_not_the_trunk() {
    let forge = Forge::new(signed_config("", ""), &[]);
    let (c1, c2) = loosening_pr(&forge);
    for (at, what) in [(&c1, "at the loosening"), (&c2, "at HEAD")] {
        let clone = forge.ci_clone("agent/local");
        forge.git(&clone, &["branch", "-f", "main", at]);
        judged_against_main(&standards(&forge, &clone), what);
    }
    // On the forge's merge too.
    let clone = forge.merge_ref_clone(&c2);
    forge.git(&clone, &["branch", "-f", "main", "HEAD"]);
    judged_against_main(
        &standards(&forge, &clone),
        "a local main at the forge's merge",
    );
}

/// Class 21h: the local `main` diverged from `origin/main` (the trunk moved on after the
/// attacker's commit).
#[test]
fn class_21h_a_local_main_diverged_from_origin_main_in_ci_is_not_the_trunk() {
    let forge = Forge::new(signed_config("", ""), &[]);
    let (c1, _) = loosening_pr(&forge);
    forge.commit(
        forge.owner.as_path(),
        &[("NEWS.md", b"the trunk moves on\n")],
        &[],
        "news",
    );
    forge.git(forge.owner.as_path(), &["push", "-q", "origin", "main"]);
    let clone = forge.ci_clone("agent/local");
    forge.git(&clone, &["branch", "-f", "main", &c1]);
    let upstream = forge.out(&clone, &["rev-parse", "refs/remotes/origin/main"]);
    assert_eq!(
        forge.out(&clone, &["merge-base", &c1, &upstream]),
        forge.out(&clone, &["rev-parse", &format!("{c1}^")]),
        "diverged"
    );
    judged_against_main(&standards(&forge, &clone), "a diverged local main");
}

/// Class 21i: the local `main` made to follow the pull request's own remote-tracking branch,
/// which is ahead of it.
#[test]
fn class_21i_a_local_main_following_the_pull_requests_branch_is_not_the_trunk() {
    let forge = Forge::new(signed_config("", ""), &[]);
    let (c1, _) = loosening_pr(&forge);
    let clone = forge.ci_clone("agent/local");
    forge.git(&clone, &["branch", "-f", "main", &c1]);
    forge.git(
        &clone,
        &["branch", "-q", "-u", "origin/agent/local", "main"],
    );
    judged_against_main(
        &standards(&forge, &clone),
        "a local main following the pull request",
    );
}

/// The same shapes without the attack pass: a harmless pull request whose CI clone has a local
/// `main` at HEAD (a runner that merged the change into a local trunk) is judged as a branch
/// against `origin/main`.
#[test]
fn baseline_passes_a_local_main_at_head_in_ci() {
    let forge = Forge::new(signed_config("", ""), &[]);
    forge.pull_request(
        "agent/fine",
        &[("src/fine.rs", b"pub fn fine() {}\n")],
        &[],
        false,
    );
    let clone = forge.ci_clone("agent/fine");
    forge.git(&clone, &["branch", "-f", "main", "HEAD"]);
    let json = passed(&standards(&forge, &clone), "a harmless change");
    assert_eq!(
        json["data"]["limits"]["trunk_ref"], "refs/remotes/origin/main",
        "{json}"
    );
    assert_eq!(
        json["data"]["limits"]["baseline_kind"], "merge_base",
        "{json}"
    );
}

// ---------------------------------------------------------------------------------------------
// What stays legitimate.
// ---------------------------------------------------------------------------------------------

/// A pull request that renames the trunk (and nothing else) is judged against the trunk it
/// came from, and the rename awaits the owner's approval.
#[test]
fn baseline_a_rename_on_a_branch_is_a_protected_change_against_the_trunk_it_came_from() {
    let forge = Forge::new(signed_config("", ""), &[]);
    let renamed = config(Some("develop"), false);
    forge.pull_request(
        "agent/rename",
        &[("discern.toml", renamed.as_bytes())],
        &[],
        false,
    );
    let json = refused_naming(&forge.pr_ci("agent/rename"), "a rename", "repository.trunk");
    assert_eq!(json["data"]["limits"]["status"], "proposed", "{json}");
    assert_eq!(
        json["data"]["limits"]["trunk_ref"], "refs/remotes/origin/main",
        "{json}"
    );
}

/// A rename that landed on the trunk it renamed counts: with the renamed branch published
/// beside the old one (which holds the rename), a pull request off it is judged against it.
#[test]
fn baseline_a_rename_that_landed_names_the_trunk() {
    let forge = Forge::new(signed_config("", ""), &[]);
    let renamed = config(Some("develop"), false);
    forge.commit(
        forge.owner.as_path(),
        &[("discern.toml", renamed.as_bytes())],
        &[],
        "the trunk is develop now",
    );
    forge.git(
        forge.owner.as_path(),
        &["push", "-q", "origin", "main", "main:develop"],
    );
    forge.git(&forge.contributor, &["fetch", "-q", "origin"]);
    forge.git(
        &forge.contributor,
        &["checkout", "-q", "-B", "agent/fine", "origin/develop"],
    );
    forge.commit(
        &forge.contributor,
        &[("src/fine.rs", b"pub fn fine() {}\n")],
        &[],
        "work",
    );
    forge.git(&forge.contributor, &["push", "-q", "origin", "agent/fine"]);
    let clone = forge.ci_clone("agent/fine");
    forge.git(
        &clone,
        &[
            "fetch",
            "-q",
            "origin",
            "+refs/heads/develop:refs/remotes/origin/develop",
        ],
    );
    let json = passed(
        &standards(&forge, &clone),
        "a pull request off the renamed trunk",
    );
    assert_eq!(
        json["data"]["limits"]["trunk_ref"], "refs/remotes/origin/develop",
        "{json}"
    );
}

/// `[repository].trunk = "upstream/main"`, where every clone has that remote: a clone whose
/// `upstream` is the project is judged against it, locally and in CI.
#[test]
fn baseline_a_trunk_on_the_upstream_remote() {
    let standards_config = config(Some("upstream/main"), false);
    let forge = Forge::new(&standards_config, &[]);
    let parent = forge.fixture.repo.parent().to_owned();
    forge.git(&parent, &["clone", "-q", &forge.url(), "forked"]);
    let fork = parent.join("forked");
    forge.git(&fork, &["remote", "add", "upstream", &forge.url()]);
    forge.git(&fork, &["fetch", "-q", "upstream"]);
    forge.git(&fork, &["checkout", "-q", "-b", "topic", "upstream/main"]);
    forge.commit(
        &fork,
        &[("src/fine.rs", b"pub fn fine() {}\n")],
        &[],
        "work",
    );
    for env in [&[][..], &[("CI", "true")][..]] {
        let run = forge.fixture.run_in(&fork, &["standards", "--json"], env);
        let json = passed(&run, "a fork judged against upstream/main");
        assert_eq!(
            json["data"]["limits"]["trunk_ref"], "refs/remotes/upstream/main",
            "{env:?}: {json}"
        );
    }
}
