//! The ratchet compares the right things everywhere, as a newcomer meets it: a deleted config,
//! a CI clone (shallow, detached, single-branch, only `refs/remotes/origin/*`, a trunk named
//! `master`), a branch behind the trunk, and commits straight on the trunk.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::config::{Config, Standard, quoted};
use crate::support::{Fixture, Run};

fn config() -> Config {
    Config::new().standard(Standard::todo(5))
}

fn messages(json: &Value) -> Vec<String> {
    json["diagnostics"]
        .as_array()
        .map(|d| {
            d.iter()
                .map(|d| d["message"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn advisories(json: &Value) -> Vec<String> {
    json["advisories"]
        .as_array()
        .map(|a| a.iter().map(|a| a.as_str().unwrap().to_owned()).collect())
        .unwrap_or_default()
}

fn short(id: &str) -> &str {
    &id[..12]
}

#[test]
fn deleting_discern_toml_deletes_every_standard_on_a_branch_and_on_the_trunk_for_the_owner_to_approve()
 {
    let fixture = Fixture::new(config());
    fixture.repo.git(&["checkout", "-q", "-b", "agent/x"]);
    fixture.repo.remove("discern.toml");
    fixture.repo.commit("drop the config");
    // On a branch, deleting Standards is a protected change: it awaits the owner's approval
    // (locally a loud advisory, in CI a failure).
    let run = fixture.run(&["standards", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let json = run.json();
    assert_eq!(json["data"]["limits"]["status"], "proposed", "{json}");
    let advisories = json["advisories"].to_string();
    assert!(
        advisories.contains(
            "Standard todo is deleted (its ceiling was 5) versus main: a protected change"
        ),
        "{json}"
    );
    let ci = fixture.run_with(&["standards", "--json"], &[("CI", "true")]);
    assert_eq!(ci.code, 1, "{}", ci.stdout);
    assert_eq!(
        ci.json()["error"],
        "awaiting_standard_approval",
        "{}",
        ci.stdout
    );

    // Renaming a Standard is deleting one and adding another.
    fixture.repo.write(
        "discern.toml",
        Config::new()
            .standard(Standard::pattern("todos", "TODO", &["src/**"]).limit(5))
            .to_string(),
    );
    fixture.repo.commit("rename the Standard");
    let json = fixture.run(&["standards", "--json"]).json();
    assert_eq!(json["data"]["limits"]["status"], "proposed");
    assert!(
        json["advisories"]
            .to_string()
            .contains("Standard todo is deleted"),
        "{json}"
    );

    // The same commit straight on the trunk.
    fixture.repo.git(&["checkout", "-q", "main"]);
    fixture.repo.remove("discern.toml");
    let commit = fixture.repo.commit("drop the config on main");
    let run = fixture.run(&["standards", "--json"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let json = run.json();
    let found = messages(&json);
    assert!(
        found.iter().any(|m| m.contains("Standard todo is deleted")
            && m.contains(short(&commit))
            && m.contains("drop the config on main")),
        "{found:#?}"
    );
}

/// `origin` with the trunk `master` and a branch `agent/x` one commit ahead of it, and a clone
/// of the branch shaped like `actions/checkout`'s: depth 1, single branch, detached HEAD.
fn ci_clone(branch_config: &str) -> (Fixture, PathBuf) {
    let fixture = Fixture::new(config().repository("trunk", quoted("master")));
    fixture.repo.git(&["branch", "-m", "main", "master"]);
    fixture.repo.write("NEWS.md", "trunk moves on\n");
    fixture.repo.commit("news on the trunk");
    fixture.repo.git(&["checkout", "-q", "-b", "agent/x"]);
    fixture.repo.write("src/extra.rs", "pub fn extra() {}\n");
    fixture.repo.write(
        "discern.toml",
        format!("[repository]\ntrunk = \"master\"\n{branch_config}"),
    );
    fixture.repo.commit("work on the branch");
    fixture.repo.git(&["checkout", "-q", "master"]);
    let clone = shallow_clone(&fixture, "agent/x", "ci");
    fixture.git_in(&clone, &["checkout", "-q", "--detach"]);
    (fixture, clone)
}

/// A clone shaped like `actions/checkout`'s: depth 1, only `branch`, in `<tmp>/<name>`.
fn shallow_clone(fixture: &Fixture, branch: &str, name: &str) -> PathBuf {
    let clone = fixture.repo.parent().join(name);
    let url = format!("file://{}", fixture.path().display());
    let args = [
        "clone",
        "-q",
        "--depth",
        "1",
        "--single-branch",
        "--branch",
        branch,
    ];
    let mut args: Vec<&str> = args.to_vec();
    args.extend([url.as_str(), clone.to_str().unwrap()]);
    fixture.git_in(fixture.repo.parent(), &args);
    clone
}

/// Run a command line the way a user pastes it, in `dir`.
fn shell(fixture: &Fixture, dir: &Path, line: &str) {
    let mut cmd = std::process::Command::new("sh");
    cmd.args(["-c", line]).current_dir(dir);
    discern_tests::hermetic(&mut cmd, fixture.repo.home());
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{line}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn ci(fixture: &Fixture, dir: &Path, args: &[&str]) -> Run {
    fixture.run_in(dir, args, &[("CI", "true")])
}

#[test]
fn a_ci_clone_fails_until_the_printed_fetch_makes_the_trunk_and_its_history_readable() {
    let (fixture, clone) = ci_clone(&config().to_string());
    let fix = "git fetch --unshallow origin master:refs/remotes/origin/master";

    // In CI an unreadable trunk fails the run, with the command that fixes this clone.
    let run = ci(&fixture, &clone, &["standards", "--json"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let json = run.json();
    assert_eq!(json["data"]["limits"]["status"], "unverified");
    assert_eq!(json["diagnostics"][0]["reproduce_cmd"], fix, "{json}");
    // Locally it is a loud advisory naming the same command; `--require-trunk` makes it fail.
    let local = fixture.run_in(&clone, &["standards", "--json"], &[]);
    assert_eq!(local.code, 0, "{}", local.stdout);
    let advisory = advisories(&local.json()).join("\n");
    assert!(
        advisory.contains("Standards limits are UNVERIFIED") && advisory.contains(fix),
        "{advisory}"
    );
    let required = fixture.run_in(&clone, &["standards", "--require-trunk", "--json"], &[]);
    assert_eq!(required.code, 1, "{}", required.stdout);

    // The printed command is what makes it work.
    shell(&fixture, &clone, fix);
    let run = ci(&fixture, &clone, &["standards", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let limits = &run.json()["data"]["limits"];
    assert_eq!(limits["status"], "verified", "{limits}");
    assert_eq!(limits["trunk"], "master");
    assert_eq!(limits["trunk_ref"], "refs/remotes/origin/master");
    assert_eq!(limits["baseline_kind"], "merge_base");

    // DISCERN_TRUNK is resolved exactly as written, and named in the result.
    let run = fixture.run_in(
        &clone,
        &["standards", "--json"],
        &[("CI", "true"), ("DISCERN_TRUNK", "origin/master")],
    );
    let limits = &run.json()["data"]["limits"];
    assert_eq!(limits["trunk"], "origin/master", "{limits}");
    assert_eq!(limits["trunk_ref"], "refs/remotes/origin/master");
    assert_eq!(limits["status"], "verified");
}

#[test]
fn require_trunk_in_the_config_fails_an_unreadable_trunk_everywhere() {
    let fixture = Fixture::new(
        config()
            .repository("trunk", quoted("release"))
            .repository("require_trunk", "true"),
    );
    let run = fixture.run(&["standards", "--json"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let json = run.json();
    assert_eq!(json["data"]["limits"]["status"], "unverified");
    assert_eq!(
        json["diagnostics"][0]["reproduce_cmd"],
        "git fetch origin release:refs/remotes/origin/release"
    );
}

#[test]
fn a_ci_clone_catches_a_loosening_once_the_trunk_is_fetched() {
    let (fixture, clone) = ci_clone(&config().standard(Standard::todo(9)).to_string());
    shell(
        &fixture,
        &clone,
        "git fetch --unshallow origin master:refs/remotes/origin/master",
    );
    let run = ci(&fixture, &clone, &["standards", "--json"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let json = run.json();
    assert_eq!(json["data"]["limits"]["status"], "loosened");
    assert!(
        messages(&json)
            .iter()
            .any(|m| m.contains("loosens its ceiling 5 -> 9 versus master")),
        "{json}"
    );
}

#[test]
fn a_branch_behind_the_trunk_is_not_blamed_for_the_trunks_changes() {
    let fixture = Fixture::new(config());
    fixture.repo.git(&["checkout", "-q", "-b", "agent/x"]);
    fixture.repo.write("README.md", "# unrelated work\n");
    fixture.repo.commit("unrelated work");
    fixture.repo.git(&["checkout", "-q", "main"]);
    let tightened = config().standard(Standard::todo(3)).to_string();
    fixture.repo.write("discern.toml", &tightened);
    fixture.repo.commit("pin todo 5 -> 3");
    fixture.repo.write(
        "discern.toml",
        format!(
            "{tightened}\n{}",
            Config::new().standard(
                Standard::extent("lines", "lines", &["src/**"])
                    .up()
                    .limit(1)
            )
        ),
    );
    fixture.repo.commit("add a Standard");
    fixture.repo.git(&["checkout", "-q", "agent/x"]);

    let run = fixture.run(&["standards", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let json = run.json();
    let limits = &json["data"]["limits"];
    assert_eq!(limits["status"], "verified", "{json}");
    assert_eq!(limits["behind"], 2);
    assert_eq!(limits["baseline_kind"], "merge_base");
    assert!(messages(&json).is_empty(), "{json}");
    let advisory = advisories(&json).join("\n");
    assert!(
        advisory.contains("2 commit(s) behind the trunk main")
            && advisory.contains("todo tightened 5 -> 3")
            && advisory.contains("lines added")
            && advisory.contains("`discern update`"),
        "{advisory}"
    );

    // What the branch itself changes is still judged.
    fixture.repo.write(
        "discern.toml",
        config().standard(Standard::todo(6)).to_string(),
    );
    fixture.repo.commit("loosen on the branch");
    let run = fixture.run(&["standards", "--json"]);
    assert_eq!(run.code, 1);
    assert!(
        messages(&run.json())
            .iter()
            .any(|m| m.contains("loosens its ceiling 5 -> 6 versus main")),
        "{}",
        run.stdout
    );
}

#[test]
fn commits_on_the_trunk_are_judged_cumulatively_and_named() {
    let fixture = Fixture::new(config());
    let before = fixture.repo.head();
    fixture.repo.write(
        "discern.toml",
        config().standard(Standard::todo(500)).to_string(),
    );
    let loosening = fixture.repo.commit("relax todo");
    let run = fixture.run(&["standards", "--json"]);
    assert_eq!(
        run.code, 1,
        "a trunk is never verified against itself: {}",
        run.stdout
    );
    let json = run.json();
    assert_eq!(json["data"]["limits"]["baseline_kind"], "first_parent");
    assert!(
        messages(&json).iter().any(|m| m
            .contains("Standard todo loosens its ceiling 5 -> 500 on the trunk main in")
            && m.contains(short(&loosening))
            && m.contains("relax todo")),
        "{json}"
    );

    // A later commit hides it from a first-parent check; the push's `before` does not.
    fixture.repo.write("README.md", "# later\n");
    fixture.repo.commit("later");
    let run = fixture.run(&["standards", "--baseline", &before, "--json"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let json = run.json();
    assert_eq!(json["data"]["limits"]["baseline"], before.as_str());
    assert_eq!(json["data"]["limits"]["baseline_kind"], "given");
    assert!(
        messages(&json)
            .iter()
            .any(|m| m.contains(short(&loosening)) && m.contains("relax todo")),
        "{json}"
    );
    // A baseline that is not there fails, whatever CI says.
    let run = fixture.run(&["standards", "--baseline", "no-such-rev", "--json"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert_eq!(run.json()["data"]["limits"]["status"], "unverified");
}

/// The README's CI recipe, push job: a depth-1 clone of the trunk, the recipe's fetches, then
/// `--baseline` the push's `before`.
#[test]
fn the_ci_recipes_push_job_judges_every_pushed_commit() {
    let fixture = Fixture::new(config());
    let before = fixture.repo.head();
    fixture.repo.write(
        "discern.toml",
        config().standard(Standard::todo(9)).to_string(),
    );
    let loosening = fixture.repo.commit("relax todo");
    fixture.repo.write("README.md", "# later\n");
    fixture.repo.commit("later");
    let clone = shallow_clone(&fixture, "main", "push");
    let args = ["standards", "--baseline", &before, "--json"];
    let run = ci(&fixture, &clone, &args);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let json = run.json();
    assert_eq!(json["data"]["limits"]["status"], "unverified");
    let fix = "git fetch --unshallow origin main:refs/remotes/origin/main";
    assert_eq!(json["diagnostics"][0]["reproduce_cmd"], fix, "{json}");

    shell(&fixture, &clone, fix);
    // The README's next step: discern's notes and published evidence, through `discern sync`.
    let synced = ci(&fixture, &clone, &["sync", "--json"]);
    assert_eq!(synced.code, 0, "{}", synced.stdout);
    let run = ci(&fixture, &clone, &args);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let json = run.json();
    assert_eq!(json["data"]["limits"]["status"], "loosened");
    assert!(
        messages(&json)
            .iter()
            .any(|m| m.contains(short(&loosening)) && m.contains("relax todo")),
        "{json}"
    );
}

#[test]
fn init_takes_the_trunk_from_origin_head_prints_it_and_accepts_trunk() {
    let origin = Fixture::new(config());
    let clone = origin.repo.parent().join("clone");
    origin.git_in(
        origin.repo.parent(),
        &["clone", "-q", origin.path().to_str().unwrap(), "clone"],
    );
    origin.git_in(&clone, &["checkout", "-q", "-b", "feature/x"]);
    origin.git_in(&clone, &["rm", "-q", "discern.toml"]);
    origin.git_in(&clone, &["commit", "-q", "-m", "start over"]);
    let run = origin.run_in(&clone, &["init"], &[]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert!(run.stdout.contains("the trunk is main"), "{}", run.stdout);
    let written = std::fs::read_to_string(clone.join("discern.toml")).unwrap();
    assert!(written.contains("trunk = \"main\""), "{written}");

    std::fs::remove_file(clone.join("discern.toml")).unwrap();
    let json = origin.run_in(&clone, &["init", "--json"], &[]).json();
    assert_eq!(json["data"]["trunk"], "main", "{json}");
    std::fs::remove_file(clone.join("discern.toml")).unwrap();
    let json = origin
        .run_in(&clone, &["init", "--trunk", "develop", "--json"], &[])
        .json();
    assert_eq!(json["data"]["trunk"], "develop");

    // No origin/HEAD, no main, no master: asked for, never guessed.
    let lone = Fixture::new(config());
    lone.repo.git(&["branch", "-m", "main", "trunk"]);
    lone.repo.remove("discern.toml");
    lone.repo.commit("start over");
    let json = lone.run(&["init", "--json"]).json();
    assert_eq!(json["ok"], false, "{json}");
    assert_eq!(json["hints"][0]["action"]["arguments"]["trunk"], "NAME");
}
