//! `discern status`: observation, the bounded projection, owner-attention hints.

use std::path::PathBuf;

use serde_json::Value;

use crate::support::Fixture;
use crate::support::config::{Config, Standard};

fn config() -> Config {
    Config::new().standard(Standard::todo(2))
}

/// Add `n` effort worktrees with plain git (fast), every fifth one dirty.
fn fleet(fixture: &Fixture, n: usize) -> Vec<PathBuf> {
    let minute_ago = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        - 60;
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(minute_ago);
    let root = fixture.repo.parent().join("repo.worktrees");
    (0..n)
        .map(|i| {
            let path = root.join(format!("e{i:03}"));
            fixture.repo.git(&[
                "worktree",
                "add",
                "-q",
                "-b",
                &format!("agent/e{i:03}"),
                path.to_str().unwrap(),
                "main",
            ]);
            if i % 5 == 0 {
                std::fs::write(path.join("wip.txt"), "work in progress\n").unwrap();
            }
            path
        })
        .collect::<Vec<_>>()
        .into_iter()
        .inspect(|path| same_last_activity(fixture, path, at))
        .collect()
}

/// Every effort last active at the same instant, so that the order of equally ranked rows
/// (most recent first, then by path) does not depend on how fast the machine created them.
fn same_last_activity(fixture: &Fixture, worktree: &std::path::Path, at: std::time::SystemTime) {
    let name = worktree.file_name().unwrap();
    let git_dir = fixture.path().join(".git/worktrees").join(name);
    for file in ["index", "HEAD", "logs/HEAD"] {
        if let Ok(handle) = std::fs::File::options()
            .append(true)
            .open(git_dir.join(file))
        {
            handle.set_modified(at).unwrap();
        }
    }
}

#[test]
fn eighty_efforts_are_sampled_to_seven_rows_with_exact_totals() {
    let fixture = Fixture::new(config());
    fleet(&fixture, 80);
    let run = fixture.run(&["status", "--json"]);
    let json = run.json();
    assert_eq!(json["ok"], true, "{}", run.stdout);
    let data = &json["data"];
    assert_eq!(data["fleet"].as_array().unwrap().len(), 7);
    assert_eq!(data["fleet_total"], 80);
    assert_eq!(data["projection"]["omitted"]["fleet"], 74);
    // Attention first: the 16 dirty efforts lead the sample.
    assert!(
        data["fleet"].as_array().unwrap()[1..]
            .iter()
            .all(|r| r["clean"] == false),
        "{data}"
    );
    let text = run.stdout.len() + fixture.run(&["status", "--markdown"]).stdout.len();
    // Constant-size facts (the approval policy among them) fit too; the fleet adds nothing.
    assert!(
        text <= 4_000,
        "default status is {text} characters at 80 efforts"
    );
    println!("default status at 80 efforts: {text} characters (JSON + Markdown)");
    // Nothing an agent needs is lost: every sampled row names its effort and state, the
    // dirty siblings are counted for the owner, and the route to everything is one step away.
    for row in &data["fleet"].as_array().unwrap()[1..] {
        for key in ["id", "branch", "clean", "ahead", "behind", "proof"] {
            assert!(row.get(key).is_some(), "{key} in {row}");
        }
    }
    let hints = json["hints"].as_array().unwrap();
    assert!(
        hints
            .iter()
            .any(|h| h["id"] == "fleet-dirty" && h["text"].as_str().unwrap().starts_with("16 ")),
        "{hints:?}"
    );
    assert!(
        hints
            .iter()
            .any(|h| h["action"]["arguments"]["verbose"] == true),
        "{hints:?}"
    );

    let json = fixture.run(&["status", "--verbose", "--json"]).json();
    assert_eq!(json["data"]["projection"]["mode"], "full");
    assert_eq!(json["data"]["fleet"].as_array().unwrap().len(), 81);
    assert!(
        json["hints"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["id"] != "status-full-detail")
    );

    // Owner decisions about siblings are owner-attention, never the next action.
    let json = fixture.run(&["status", "--json"]).json();
    let dirty = json["hints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["id"] == "fleet-dirty")
        .unwrap();
    assert_eq!(dirty["category"], "owner-attention");
    assert!(
        dirty["text"]
            .as_str()
            .unwrap()
            .starts_with("16 other effort(s) have uncommitted changes")
    );
    let markdown = fixture.run(&["status", "--markdown"]).stdout;
    let next = markdown.split("## Next action").nth(1).unwrap();
    assert!(next.contains("discern start"), "{next}");
    assert!(!next.contains("uncommitted changes"));
    let owner = markdown.find("## Owner attention").unwrap();
    assert!(owner < markdown.find("## Next action").unwrap());
}

#[test]
fn an_unreadable_worktree_never_reads_as_clean_and_a_missing_trunk_is_null() {
    let fixture = Fixture::new(config());
    let paths = fleet(&fixture, 2);
    // Break the first worktree's link to the repository.
    std::fs::write(paths[0].join(".git"), "gitdir: /nowhere\n").unwrap();
    std::fs::remove_dir_all(&paths[1]).unwrap();
    let json = fixture.run(&["status", "--json"]).json();
    let rows = json["data"]["fleet"].as_array().unwrap();
    let broken_link = rows.iter().find(|r| r["id"] == "e000").unwrap();
    assert_eq!(broken_link["unreadable"], true);
    assert!(broken_link.get("clean").is_none(), "{broken_link}");
    let missing = rows.iter().find(|r| r["id"] == "e001").unwrap();
    assert_eq!(missing["broken"], true);
    let ids: Vec<&str> = json["hints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_str().unwrap())
        .collect();
    assert!(
        ids.contains(&"fleet-unreadable") && ids.contains(&"fleet-broken"),
        "{ids:?}"
    );

    let json = fixture
        .run_with(&["status", "--json"], &[("DISCERN_TRUNK", "no-such-trunk")])
        .json();
    assert_eq!(json["data"]["git"]["ahead_trunk"], Value::Null);
    assert_eq!(json["data"]["git"]["behind_trunk"], Value::Null);
}

#[test]
fn status_in_an_effort_routes_to_the_next_step() {
    let fixture = Fixture::new(config());
    let json = fixture
        .run(&["start", "--name", "mine", "--title", "My task", "--json"])
        .json();
    let path = PathBuf::from(json["data"]["path"].as_str().unwrap());
    let run = |args: &[&str]| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_discern"));
        cmd.args(args).current_dir(&path);
        discern_tests::hermetic(&mut cmd, fixture.repo.home());
        serde_json::from_slice::<Value>(&cmd.output().unwrap().stdout).unwrap()
    };
    let json = run(&["status", "--json"]);
    assert_eq!(json["data"]["location"], "worktree");
    assert_eq!(json["data"]["task"]["title"], "My task");
    assert_eq!(json["data"]["git"]["ahead_trunk"], 0);
    assert!(
        json["data"]["fleet"].as_array().unwrap().is_empty(),
        "no fleet survey from an effort by default"
    );
    let next = json["hints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["category"] == "next-step")
        .unwrap();
    assert_eq!(next["id"], "commit-changes");
    let json = run(&["status", "--all", "--json"]);
    assert_eq!(json["data"]["fleet_total"], 1);
    assert_eq!(json["data"]["fleet"][1]["is_current"], true);
    let json = run(&["status", "--all", "--local", "--json"]);
    assert_eq!(json["error"], "invalid_arguments");
}

#[test]
fn status_output_is_snapshotted_on_a_small_fleet() {
    let fixture = Fixture::new(config());
    fleet(&fixture, 3);
    let filters = [
        (
            fixture.repo.parent().to_str().unwrap().to_owned(),
            "[tmp]".to_owned(),
        ),
        (
            r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ".to_owned(),
            "[time]".to_owned(),
        ),
    ];
    let json = fixture.run(&["status", "--json"]).stdout;
    let markdown = fixture.run(&["status", "--markdown"]).stdout;
    insta::with_settings!({filters => filters.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect::<Vec<_>>()}, {
        insta::assert_snapshot!("status_json", json);
        insta::assert_snapshot!("status_markdown", markdown);
    });
}

/// `git status --porcelain --untracked-files=all` of `dir`, as paths (a rename's new path).
fn porcelain(fixture: &Fixture, dir: &std::path::Path) -> Vec<String> {
    let out = std::process::Command::new("git")
        .args(["status", "--porcelain=v1", "-z", "--untracked-files=all"])
        .current_dir(dir)
        .envs(discern_tests::hermetic_env(fixture.repo.home()))
        .output()
        .unwrap();
    assert!(out.status.success());
    discern_tests::porcelain_paths(&out.stdout)
}

#[test]
fn fleet_rows_agree_with_git_status_on_real_worktrees() {
    let fixture = Fixture::new(config());
    fixture
        .repo
        .write(".gitignore", "target/\n*.log\nbuild/\nkeep/*\n!keep/c\n")
        .write("src/deep/one.rs", "pub fn one() {}\n")
        .write("tool.sh", "#!/bin/sh\n");
    fixture.repo.commit("more files");
    let paths = fleet(&fixture, 12);
    let at = |i: usize, path: &str| paths[i].join(path);
    // e000, e005 and e010 have only `wip.txt` (fleet()).
    std::fs::write(at(1, "src/lib.rs"), "pub fn changed() {}\n").unwrap();
    std::fs::remove_file(at(2, "src/main.rs")).unwrap();
    std::fs::remove_dir_all(at(3, "src/deep")).unwrap();
    std::fs::write(at(4, "debug.log"), "ignored\n").unwrap();
    std::fs::create_dir_all(at(4, "build/obj")).unwrap();
    std::fs::write(at(4, "build/obj/a.o"), "ignored\n").unwrap();
    std::fs::create_dir_all(at(6, "new/sub")).unwrap();
    std::fs::write(at(6, "new/a.txt"), "a\n").unwrap();
    std::fs::write(at(6, "new/sub/b.txt"), "b\n").unwrap();
    std::fs::write(at(6, "new/sub/c.log"), "ignored\n").unwrap();
    // Touched, not changed: git status sees nothing.
    let readme = std::fs::read(at(7, "README.md")).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(at(7, "README.md"), &readme).unwrap();
    // Staged: the in-process survey leaves it to git status.
    std::fs::write(at(8, "README.md"), "# staged\n").unwrap();
    fixture
        .repo
        .git(&["-C", paths[8].to_str().unwrap(), "add", "README.md"]);
    std::fs::create_dir_all(at(9, "empty/inner")).unwrap();
    std::fs::create_dir_all(at(9, "keep")).unwrap();
    for name in ["a", "b", "c"] {
        std::fs::write(at(9, &format!("keep/{name}")), "k\n").unwrap();
    }
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(at(11, "tool.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();

    let json = fixture.run(&["status", "--verbose", "--json"]).json();
    let rows = json["data"]["fleet"].as_array().unwrap();
    assert_eq!(rows.len(), 13);
    let mut dirty = 0;
    for row in rows {
        let path = std::path::PathBuf::from(row["path"].as_str().unwrap());
        let expected = porcelain(&fixture, &path);
        let listed: Vec<String> = row
            .get("changed_paths")
            .and_then(Value::as_array)
            .map(|paths| {
                paths
                    .iter()
                    .map(|p| p.as_str().unwrap().to_owned())
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(listed, expected, "{row}");
        assert_eq!(row["clean"], expected.is_empty(), "{row}");
        assert_eq!(row["changed_files"], expected.len(), "{row}");
        dirty += usize::from(!expected.is_empty());
    }
    // e000, e005 and e010 (wip.txt), e001, e002, e003, e006, e008, e009 (keep/c), e011.
    assert_eq!(dirty, 10, "{rows:?}");
}

#[test]
fn a_worktree_whose_index_cannot_be_read_is_never_clean() {
    let fixture = Fixture::new(config());
    let paths = fleet(&fixture, 3);
    let index = fixture.path().join(".git/worktrees/e001/index");
    std::fs::write(&index, b"DIRC not an index at all").unwrap();
    std::fs::remove_dir_all(&paths[2]).unwrap();
    let json = fixture.run(&["status", "--verbose", "--json"]).json();
    let rows = json["data"]["fleet"].as_array().unwrap();
    let row = |id: &str| rows.iter().find(|r| r["id"] == id).unwrap();
    assert_eq!(row("e000")["clean"], false, "{}", row("e000"));
    let corrupt = row("e001");
    assert_eq!(corrupt["unreadable"], true, "{corrupt}");
    assert!(corrupt.get("clean").is_none(), "{corrupt}");
    assert_eq!(row("e002")["broken"], true);
    assert!(row("e002").get("clean").is_none());
    assert_eq!(row("main")["clean"], true);
}

/// The full status shows what the hints point to: each effort's path, task and Proof line,
/// which the bounded view leaves out.
#[test]
fn the_verbose_status_shows_each_efforts_path_and_task() {
    let fixture = Fixture::new(config());
    let json = fixture
        .run(&[
            "start",
            "--name",
            "where",
            "--title",
            "Find the path",
            "--json",
        ])
        .json();
    let path = json["data"]["path"].as_str().unwrap().to_owned();
    let short = fixture.run(&["status"]).stdout;
    assert!(!short.contains(&path), "{short}");
    assert!(short.contains("--verbose"), "{short}");
    let full = fixture.run(&["status", "--verbose"]).stdout;
    assert!(
        full.contains(&format!(
            "agent/where: clean, 0 ahead, 0 behind, Proof missing — {path}; task: Find the path"
        )),
        "{full}"
    );
}
