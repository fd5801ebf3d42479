//! The effort lifecycle on real repositories with real worktrees: start → done → accept, and
//! every refusal on the way.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::Fixture;
use crate::support::config::{Config, Standard, quoted, strings};

/// [`config`] with `jobs` run before its own (`lint`, `test`).
fn config_with_jobs(jobs: &[(&str, &str)]) -> Config {
    let mut config = Config::new();
    for (name, run) in jobs {
        config = config.job(name, run);
    }
    config
        .job("lint", "test -f src/lib.rs")
        .job("test", "true")
        .acceptance("pre_authorized", strings(&["docs/**"]))
        .standard(Standard::todo(2))
}

pub(crate) fn config() -> Config {
    config_with_jobs(&[])
}

/// `git` in an effort worktree, hermetically.
pub(crate) fn git_in(fixture: &Fixture, dir: &Path, args: &[&str]) -> String {
    let mut cmd = std::process::Command::new("git");
    cmd.args(args).current_dir(dir);
    discern_tests::hermetic(&mut cmd, fixture.repo.home());
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Start an effort named `name`, write `files` in it and commit; returns its path.
pub(crate) fn effort(fixture: &Fixture, name: &str, files: &[(&str, &str)]) -> PathBuf {
    let run = fixture.run(&[
        "start",
        "--name",
        name,
        "--title",
        "A test effort",
        "--json",
    ]);
    let json = run.json();
    assert_eq!(json["ok"], true, "{}", run.stdout);
    let path = PathBuf::from(json["data"]["path"].as_str().unwrap());
    assert_eq!(
        path,
        fixture.repo.parent().join("repo.worktrees").join(name)
    );
    for (file, content) in files {
        let full = path.join(file);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, content).unwrap();
    }
    git_in(fixture, &path, &["add", "-A"]);
    git_in(
        fixture,
        &path,
        &["commit", "-q", "-m", &format!("work on {name}")],
    );
    path
}

#[test]
fn start_done_accept_lands_with_a_note_and_cleans_up() {
    let fixture = Fixture::new(config());
    let path = effort(
        &fixture,
        "feature",
        &[("src/feature.rs", "pub fn f() {}\n")],
    );
    assert_eq!(
        git_in(&fixture, &path, &["branch", "--show-current"]).trim(),
        "agent/feature"
    );
    let metadata: Value = serde_json::from_str(
        &std::fs::read_to_string(
            fixture
                .path()
                .join(".git/worktrees/feature/discern/task-metadata.json"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(metadata["title"], "A test effort");

    let run = fixture.run_in(&path, &["done", "--json"], &[]);
    let json = run.json();
    assert_eq!(json["ok"], true, "{}", run.stdout);
    assert_eq!(json["data"]["gate_ran"], true);
    let line = json["data"]["proof_line"].as_str().unwrap();
    assert!(line.starts_with("Proof: agent/feature at "), "{line}");
    assert!(
        line.contains("(+1 −0 in 1 file vs main); Standards: 1 pass."),
        "{line}"
    );
    let steps: Vec<&str> = json["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        steps,
        [
            "merge",
            "standards-limits",
            "job:lint",
            "job:test",
            "standard:todo"
        ]
    );
    // Proof is reused on the unchanged tree.
    let json = fixture.run_in(&path, &["done", "--json"], &[]).json();
    assert_eq!(json["data"]["gate_ran"], false);
    // progress reads the finished done back.
    let json = fixture.run_in(&path, &["progress", "--json"], &[]).json();
    assert_eq!(json["data"]["operation"]["verb"], "done");
    assert_eq!(json["data"]["executor"], "finished");
    assert_eq!(json["data"]["outcome"]["ok"], true);

    let head = git_in(&fixture, &path, &["rev-parse", "HEAD"])
        .trim()
        .to_owned();
    let run = fixture.run_in(&path, &["accept", "--confirmed", "--json"], &[]);
    let json = run.json();
    assert_eq!(json["ok"], true, "{}", run.stdout);
    assert_eq!(
        json["data"]["landing"],
        json!({"trunk_landed": true, "worktree_removed": true, "branch_deleted": true, "main_checkout_updated": true})
    );
    assert_eq!(
        fixture.repo.head(),
        head,
        "fast-forward: main is the proven commit"
    );
    assert!(!path.exists());
    assert!(
        fixture
            .repo
            .git_output(&["rev-parse", "--verify", "agent/feature"])
            .status
            .code()
            != Some(0)
    );
    assert!(
        fixture.path().join("src/feature.rs").exists(),
        "the main checkout follows the trunk"
    );
    assert_eq!(fixture.repo.git(&["status", "--porcelain"]), "");
    let note: Value = serde_json::from_str(&fixture.repo.git(&[
        "notes",
        "--ref=refs/notes/discern",
        "show",
        &head,
    ]))
    .unwrap();
    assert_eq!(note["version"], 1);
    assert_eq!(note["subject"]["commit"], head.as_str());
    assert_eq!(note["consent"]["source"], "confirmed");
    assert_eq!(note["proof"]["line"], line);
}

#[test]
fn done_refuses_a_dirty_tree_and_proof_goes_stale_with_a_new_commit() {
    let fixture = Fixture::new(config());
    let path = effort(&fixture, "dirty", &[("src/x.rs", "x\n")]);
    std::fs::write(path.join("scratch.txt"), "untracked\n").unwrap();
    let json = fixture.run_in(&path, &["done", "--json"], &[]).json();
    assert_eq!(json["error"], "dirty_worktree");
    assert!(json["message"].as_str().unwrap().contains("scratch.txt"));
    std::fs::remove_file(path.join("scratch.txt")).unwrap();
    assert_eq!(
        fixture.run_in(&path, &["done", "--json"], &[]).json()["data"]["gate_ran"],
        true
    );
    std::fs::write(path.join("src/y.rs"), "y\n").unwrap();
    git_in(&fixture, &path, &["add", "-A"]);
    git_in(&fixture, &path, &["commit", "-q", "-m", "more"]);
    let json = fixture
        .run_in(&path, &["accept", "--confirmed", "--json"], &[])
        .json();
    assert_eq!(json["error"], "precondition_failed");
    assert!(
        json["message"]
            .as_str()
            .unwrap()
            .contains("no honored Proof"),
        "{json}"
    );
    assert_eq!(
        fixture.run_in(&path, &["done", "--json"], &[]).json()["data"]["gate_ran"],
        true,
        "stale Proof is not reused"
    );
}

#[test]
fn a_failing_job_fails_the_gate_with_its_reproduce_command_and_bounded_output() {
    let fixture = Fixture::new(config().job("test", "seq 1 500; echo boom >&2; exit 4"));
    let path = effort(&fixture, "red", &[("src/x.rs", "x\n")]);
    let json = fixture.run_in(&path, &["done", "--json"], &[]).json();
    assert_eq!(json["error"], "gate_failed");
    assert_eq!(json["data"]["failed_stage"], "check/test");
    let diagnostic = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["tool"] == "job:test")
        .unwrap();
    assert_eq!(
        diagnostic["reproduce_cmd"],
        "seq 1 500; echo boom >&2; exit 4"
    );
    let message = diagnostic["message"].as_str().unwrap();
    assert!(
        message.starts_with("job test failed with exit code 4"),
        "{message}"
    );
    assert!(message.contains("boom"));
    assert!(message.lines().count() <= 22, "bounded output: {message}");
    let log = json["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["label"] == "job:test")
        .unwrap()["output_path"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        std::fs::read_to_string(log).unwrap().contains("\n250\n"),
        "the full output is in the log"
    );
    assert!(!path.join(".git").is_dir());
}

#[test]
fn update_aborts_a_conflict_cleanly() {
    let fixture = Fixture::new(config());
    let path = effort(&fixture, "conflict", &[("README.md", "# effort version\n")]);
    fixture.repo.write("README.md", "# trunk version\n");
    fixture.repo.commit("trunk edits the README");
    let before = git_in(&fixture, &path, &["rev-parse", "HEAD"]);
    let json = fixture.run_in(&path, &["update", "--json"], &[]).json();
    assert_eq!(json["error"], "precondition_failed");
    assert!(
        json["message"]
            .as_str()
            .unwrap()
            .contains("conflicts in README.md"),
        "{json}"
    );
    assert_eq!(git_in(&fixture, &path, &["rev-parse", "HEAD"]), before);
    assert_eq!(
        git_in(&fixture, &path, &["status", "--porcelain"]),
        "",
        "no conflict state left"
    );
    assert!(!path.join(".git").join("MERGE_HEAD").exists());
}

#[test]
fn await_met_not_met_and_resumed() {
    let fixture = Fixture::new(config());
    let path = effort(&fixture, "sibling", &[("src/x.rs", "x\n")]);
    // Not green yet: exit 124 with a resume handle.
    let run = fixture.run(&["await", "--green", "sibling", "--timeout", "0", "--json"]);
    assert_eq!(run.code, 124, "{}", run.stdout);
    let json = run.json();
    assert_eq!(json["ok"], true);
    assert_eq!(json["data"]["met"], false);
    let handle = json["data"]["resume"].as_str().unwrap().to_owned();
    assert!(handle.starts_with("C1-"));
    fixture.run_in(&path, &["done"], &[]);
    let run = fixture.run(&["await", "--resume", &handle, "--timeout", "5", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(run.json()["data"]["met"], true);

    // trunk-moved, met by a commit made while waiting.
    let waiter = {
        let fixture_path = fixture.path().to_owned();
        let home = fixture.repo.home().to_owned();
        std::thread::spawn(move || {
            let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_discern"));
            cmd.args(["await", "--trunk-moved", "--timeout", "30", "--json"])
                .current_dir(&fixture_path);
            discern_tests::hermetic(&mut cmd, &home);
            cmd.output().unwrap()
        })
    };
    std::thread::sleep(std::time::Duration::from_millis(700));
    fixture.repo.write("NEWS.md", "news\n");
    fixture.repo.commit("trunk moves");
    let out = waiter.join().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["data"]["condition"], "trunk-moved");

    // landed: after accept, the sibling's work is on the trunk.
    fixture.repo.git(&["reset", "-q", "--hard", "HEAD~1"]);
    fixture.run_in(&path, &["accept", "--confirmed"], &[]);
    let run = fixture.run(&[
        "await",
        "--landed",
        &handle.replace("C1", "nope"),
        "--timeout",
        "0",
        "--json",
    ]);
    assert_eq!(run.json()["error"], "not_found");
}

#[test]
fn start_refuses_outside_the_main_checkout_and_cleans_up_after_itself() {
    let fixture = Fixture::new(config());
    let path = effort(&fixture, "one", &[("src/x.rs", "x\n")]);
    let json = fixture.run_in(&path, &["start", "--json"], &[]).json();
    assert_eq!(json["error"], "wrong_checkout");
    let json = fixture.run(&["start", "--name", "one", "--json"]).json();
    assert_eq!(json["error"], "already_exists", "the name is taken");
    let json = fixture
        .run(&["start", "--title", &"t".repeat(121), "--json"])
        .json();
    assert_eq!(json["error"], "invalid_arguments");
    // A worktree folder in the way: the branch created for it is removed again.
    std::fs::create_dir_all(
        fixture
            .repo
            .parent()
            .join("repo.worktrees/blocked/occupied"),
    )
    .unwrap();
    std::fs::write(
        fixture
            .repo
            .parent()
            .join("repo.worktrees/blocked/occupied/file"),
        "x",
    )
    .unwrap();
    let json = fixture
        .run(&["start", "--name", "blocked", "--json"])
        .json();
    assert_eq!(json["ok"], false);
    assert!(
        fixture
            .repo
            .git_output(&["rev-parse", "--verify", "agent/blocked"])
            .status
            .code()
            != Some(0),
        "the branch was removed"
    );
}

#[test]
fn map_index_page_and_search() {
    let fixture = Fixture::new(config().set("map", "dir", quoted("docs/map")));
    for (page, text) in [
        ("docs/map/README.md", "# Map\n\nStart here.\n"),
        (
            "docs/map/runtime/sandbox.md",
            "# The sandbox\n\nProducers run with fuel and an epoch deadline.\n",
        ),
        (
            "docs/map/runtime/cache.md",
            "# The compile cache\n\nCompiled components are cached per user.\n",
        ),
        (
            "docs/map/lifecycle/accept.md",
            "# Accept\n\nLanding needs consent; the sandbox is not involved.\n",
        ),
    ] {
        fixture.repo.write(page, text);
    }
    let json = fixture.run(&["map", "--json"]).json();
    assert_eq!(json["data"]["count"], 4);
    assert_eq!(json["data"]["regions"].as_array().unwrap().len(), 3);
    let json = fixture
        .run(&["map", "--target", "runtime/sandbox", "--json"])
        .json();
    assert_eq!(json["data"]["doc"]["title"], "The sandbox");
    let json = fixture
        .run(&["map", "--search", "sandbox fuel", "--json"])
        .json();
    assert_eq!(json["data"]["count"], 2);
    assert_eq!(json["data"]["results"][0]["target"], "runtime/sandbox");
    assert_eq!(json["data"]["results"][0]["match"], "complete");
    assert_eq!(json["data"]["results"][1]["match"], "partial");
    let json = fixture
        .run(&["map", "--target", "nowhere", "--json"])
        .json();
    assert_eq!(json["error"], "not_found");
}

#[test]
fn prepare_and_test_run_their_stages_without_proof() {
    let fixture = Fixture::new(config_with_jobs(&[("format", "echo formatted > fmt.log")]));
    let path = effort(&fixture, "loop", &[("src/x.rs", "x\n")]);
    std::fs::write(path.join("uncommitted.txt"), "fine\n").unwrap();
    let json = fixture.run_in(&path, &["prepare", "--json"], &[]).json();
    assert_eq!(json["ok"], true, "{json}");
    let steps: Vec<&str> = json["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["label"].as_str().unwrap())
        .collect();
    assert_eq!(steps, ["job:format", "job:lint"]);
    assert!(path.join("fmt.log").exists());
    let json = fixture.run_in(&path, &["test", "--json"], &[]).json();
    assert_eq!(json["ok"], true);
    assert_eq!(json["data"]["proof"], "not-issued");
    assert!(
        !fixture
            .path()
            .join(".git/worktrees/loop/discern/gate-proof")
            .exists()
    );
}

#[test]
fn lifecycle_outputs_are_snapshotted() {
    let fixture = Fixture::new(config());
    let path = effort(&fixture, "snap", &[("src/x.rs", "x\n")]);
    let filters = [
        (
            fixture.repo.parent().to_str().unwrap().to_owned(),
            "[tmp]".to_owned(),
        ),
        (r"[0-9a-f]{40}".to_owned(), "[commit]".to_owned()),
        (r"\b[0-9a-f]{12}\b".to_owned(), "[short]".to_owned()),
        (r"#[0-9a-f]{8}".to_owned(), "#[identity]".to_owned()),
        (r"R1-[0-9A-F-]{12}".to_owned(), "[handle]".to_owned()),
        (
            r#""duration_s": [0-9.]+"#.to_owned(),
            r#""duration_s": "[s]""#.to_owned(),
        ),
        (
            r"passed in [0-9.]+ s".to_owned(),
            "passed in [s] s".to_owned(),
        ),
    ];
    let done = fixture.run_in(&path, &["done", "--markdown"], &[]).stdout;
    let refusal = fixture.run_in(&path, &["accept", "--json"], &[]).stdout;
    insta::with_settings!({filters => filters.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect::<Vec<_>>()}, {
        insta::assert_snapshot!("done_markdown", done);
        insta::assert_snapshot!("accept_awaiting_consent_json", refusal);
    });
}

#[test]
fn the_cli_surface_is_snapshotted() {
    let fixture = Fixture::new(config());
    insta::assert_snapshot!("cli_help", fixture.run(&["--help"]).stdout);
}

/// `--version` names the commit the binary was built from, as git names it.
#[test]
fn the_version_names_the_commit_it_was_built_from() {
    let fixture = Fixture::new(config());
    let printed = fixture.run(&["--version"]).stdout;
    let head = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let head = String::from_utf8(head.stdout).unwrap();
    let expected = match head.trim() {
        "" => format!("discern {}\n", env!("CARGO_PKG_VERSION")),
        commit => format!("discern {} (commit {commit})\n", env!("CARGO_PKG_VERSION")),
    };
    assert_eq!(printed, expected);
}
