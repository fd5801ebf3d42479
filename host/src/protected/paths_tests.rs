//! The file side of the protected set on real repositories: a protected path is judged by what
//! it holds — a submodule's commit, a link's target, the executable bit — not by a blob alone.

use discern_tests::TestRepo;
use gix::ObjectId;

use super::{GateChanges, Side, between};
use crate::config::Config;
use crate::git::Repo;

const CONFIG: &str = "[acceptance]\nprotected = [\"scripts/**\", \"vendor/tool/**\"]\n";

fn commit(repo: &TestRepo, message: &str) -> ObjectId {
    repo.git(&["add", "-A"]);
    repo.commit(message).parse().expect("a commit id")
}

fn head(repo: &TestRepo) -> ObjectId {
    repo.head().parse().expect("a commit id")
}

/// A link at `path` to `target`, its folder made; a file or empty folder there replaced.
fn link(repo: &TestRepo, target: &str, path: &str) {
    let full = repo.path().join(path);
    let _ = std::fs::remove_file(&full);
    let _ = std::fs::remove_dir(&full);
    std::fs::create_dir_all(full.parent().expect("a folder")).expect("the folder is made");
    std::os::unix::fs::symlink(target, &full).expect("the link is made");
}

fn judged(repo: &TestRepo, old: ObjectId, new: ObjectId) -> GateChanges {
    let config = Config::parse(CONFIG).expect("the config parses");
    let discovered = Repo::discover(repo.path()).expect("a repository");
    let side = |commit| Side {
        commit,
        config: &config,
    };
    between(&discovered, side(old), side(new)).expect("both sides read")
}

fn keys(changes: &GateChanges) -> Vec<String> {
    changes.protected.iter().map(|c| c.key.clone()).collect()
}

/// A gitlink at `path` pinning `commit`, staged.
fn gitlink(repo: &TestRepo, path: &str, commit: &str) {
    let info = format!("160000,{commit},{path}");
    repo.git(&["update-index", "--add", "--cacheinfo", &info]);
}

#[test]
fn a_protected_submodule_bumped_is_a_change() {
    let repo = TestRepo::new();
    repo.write("discern.toml", CONFIG);
    let (one, two) = (repo.commit("one"), repo.commit("two"));
    gitlink(&repo, "vendor/tool", &one);
    repo.git(&["commit", "-q", "-m", "tool"]);
    let before = head(&repo);
    gitlink(&repo, "vendor/tool", &two);
    repo.git(&["commit", "-q", "-m", "bump"]);
    let after = head(&repo);
    let found = judged(&repo, before, after);
    assert_eq!(keys(&found), ["file:vendor/tool"]);
    assert_eq!(found.protected[0].old["gitlink"], one.as_str());
    assert_eq!(found.protected[0].new["gitlink"], two.as_str());
    // A submodule where protected scripts would be holds them too.
    gitlink(&repo, "scripts", &one);
    repo.git(&["commit", "-q", "-m", "scripts as a submodule"]);
    let found = judged(&repo, after, head(&repo));
    assert_eq!(keys(&found), ["file:scripts"]);
}

#[test]
fn a_protected_links_target_edited_is_a_change_of_the_link() {
    let repo = TestRepo::new();
    repo.write("discern.toml", CONFIG);
    repo.write("lib/count.sh", "echo 1\n");
    repo.write("tools/run.sh", "echo run\n");
    link(&repo, "../lib/count.sh", "scripts/count.sh");
    let before = commit(&repo, "a protected link");
    repo.write("README.md", "unrelated\n");
    let unrelated = commit(&repo, "unrelated");
    assert!(judged(&repo, before, unrelated).is_empty());
    repo.write("lib/count.sh", "echo 0\n");
    let edited = commit(&repo, "the target edited");
    let found = judged(&repo, before, edited);
    assert_eq!(keys(&found), ["file:scripts/count.sh"]);
    let change = &found.protected[0];
    assert_eq!(change.new["link"], "../lib/count.sh");
    assert_eq!(change.new["target"], "lib/count.sh");
    assert_ne!(change.old["holds"], change.new["holds"]);
    // A protected folder that is a link: its target folder is what it holds.
    std::fs::remove_file(repo.path().join("scripts/count.sh")).expect("the link is removed");
    link(&repo, "tools", "scripts");
    let folder = commit(&repo, "scripts is a link to tools");
    repo.write("tools/run.sh", "echo 0\n");
    let edited = commit(&repo, "a file behind the link edited");
    assert_eq!(keys(&judged(&repo, folder, edited)), ["file:scripts"]);
}

#[test]
fn a_protected_link_out_of_the_repository_is_refused_and_the_executable_bit_compared() {
    let repo = TestRepo::new();
    repo.write("discern.toml", CONFIG);
    repo.write("scripts/run.sh", "echo 1\n");
    let before = commit(&repo, "a script");
    link(&repo, "/tmp/count.sh", "scripts/count.sh");
    let linked = commit(&repo, "a link out");
    let found = judged(&repo, before, linked);
    assert_eq!(keys(&found), ["file:scripts/count.sh"]);
    assert!(
        found.protected[0]
            .describe()
            .contains("cannot show the target"),
        "{found:?}"
    );
    // Refused on every change after it too, though the link itself did not change.
    repo.write("README.md", "unrelated\n");
    let later = commit(&repo, "unrelated");
    assert_eq!(
        keys(&judged(&repo, linked, later)),
        ["file:scripts/count.sh"]
    );
    repo.git(&["update-index", "--chmod=+x", "scripts/run.sh"]);
    repo.git(&["commit", "-q", "-m", "executable"]);
    let found = judged(&repo, later, head(&repo));
    assert_eq!(
        keys(&found),
        ["file:scripts/count.sh", "file:scripts/run.sh"]
    );
    assert_eq!(found.protected[1].new["executable"], true);
}
