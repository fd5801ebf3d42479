//! Unit tests of the trunk's name: what names a branch, a rename judged against the trunk it
//! came from, a rename that landed, two trunks a change came from, and CI's remote-tracking refs.

use discern_tests::TestRepo;
use gix::ObjectId;

use super::{branch_shaped, resolve, trunk_side};
use crate::git::Repo;

#[test]
fn only_branches_name_a_trunk() {
    for name in [
        "main",
        "origin/main",
        "refs/heads/main",
        "refs/remotes/up/main",
    ] {
        assert!(branch_shaped(name), "{name}");
    }
    for name in [
        "",
        "HEAD",
        "@",
        "@{u}",
        "refs/tags/main",
        "refs/notes/discern",
        "refs/discern/evidence",
        "refs/pull/1/merge",
    ] {
        assert!(!branch_shaped(name), "{name}");
    }
}

fn config(trunk: &str) -> String {
    format!("[repository]\ntrunk = \"{trunk}\"\n")
}

/// A repository whose `main` names itself the trunk, published as `origin/main`.
fn trunk() -> (TestRepo, Repo) {
    let test = TestRepo::new();
    test.write("discern.toml", config("main"))
        .commit("the gate");
    test.git(&["update-ref", "refs/remotes/origin/main", "main"]);
    let repo = Repo::discover(test.path()).expect("a repository");
    (test, repo)
}

fn id(hex: &str) -> ObjectId {
    ObjectId::from_hex(hex.as_bytes()).expect("an object id")
}

#[test]
fn a_branch_that_renames_the_trunk_is_judged_against_the_trunk_it_came_from() {
    let (test, repo) = trunk();
    test.git(&["checkout", "-q", "-b", "agent/own"]);
    // The rename first, then more work: HEAD's first parent names the same trunk.
    for trunk in ["agent/own", "HEAD", "refs/notes/discern"] {
        test.write("discern.toml", config(trunk)).commit("rename");
        let head = id(&test.write("a.rs", trunk).commit("work"));
        for ci in [false, true] {
            let named = trunk_side(&repo, trunk.to_owned(), head, ci);
            assert_eq!(named.trunk, "main", "{trunk} (CI {ci})");
            assert!(named.renamed.is_some() && named.undecided.is_none());
        }
    }
}

#[test]
fn a_rename_that_landed_on_the_trunk_counts() {
    let (test, repo) = trunk();
    test.write("discern.toml", config("develop"))
        .commit("rename");
    test.git(&["branch", "develop"]);
    test.git(&["checkout", "-q", "-b", "topic"]);
    let head = id(&test.write("a.rs", "work").commit("work"));
    let named = trunk_side(&repo, "develop".to_owned(), head, false);
    assert_eq!(named.trunk, "develop");
    assert!(named.renamed.is_none() && named.undecided.is_none());
}

#[test]
fn two_trunks_a_change_came_from_tell_no_trunk() {
    let (test, repo) = trunk();
    test.git(&["checkout", "-q", "-b", "release"]);
    test.write("discern.toml", config("release"))
        .commit("release");
    test.git(&["checkout", "-q", "-b", "agent/x"]);
    test.write("discern.toml", config("agent/x"))
        .commit("rename");
    let head = id(&test.write("a.rs", "work").commit("work"));
    let named = trunk_side(&repo, "agent/x".to_owned(), head, false);
    assert!(named.undecided.is_some(), "{named:?}");
}

#[test]
fn in_ci_a_local_branch_never_outranks_its_remote_tracking_ref() {
    let (test, repo) = trunk();
    let origin = id(&test.head());
    let ahead = id(&test.write("a.rs", "ahead").commit("ahead"));
    let local = resolve(&repo, "main", false).expect("read").expect("found");
    assert_eq!((local.trunk.commit, local.set_aside), (ahead, None));
    let ci = resolve(&repo, "main", true).expect("read").expect("found");
    assert_eq!(ci.trunk.reference, "refs/remotes/origin/main");
    assert_eq!(ci.trunk.commit, origin);
    assert_eq!(ci.set_aside.map(|s| s.commit), Some(ahead));
    // Nor does a configured upstream chosen in the clone.
    test.git(&["remote", "add", "origin", "file:///nowhere"]);
    test.git(&["branch", "-q", "-f", "agent/x", "HEAD"]);
    test.git(&["update-ref", "refs/remotes/origin/agent/x", "HEAD"]);
    test.git(&["branch", "-q", "-u", "origin/agent/x", "main"]);
    let ci = resolve(&repo, "main", true).expect("read").expect("found");
    assert_eq!(ci.trunk.commit, origin);
}
