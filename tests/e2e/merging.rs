//! `discern.toml` merged by meaning: pairs of branches editing it in every combination, each
//! through git's merge with discern's driver installed (`init --merge-driver`), through a plain
//! `git merge` settled by `discern resolve` (a forge runs no driver), and through `discern
//! update`. A settled result is never looser than either side — except in `update`, where the
//! trunk's landed loosening takes the trunk's value over the branch's tightening (never looser
//! than the trunk); anything else is a conflict.

use std::path::Path;

use crate::support::Fixture;

const CONFIG: &str = r#"[standards.todo]
direction = "down"
limit = 10
producer = "builtin:pattern"
config = { pattern = "TODO", paths = ["src/**"] }
metric = "matches"

[standards.lines]
direction = "down"
limit = 100
producer = "builtin:extent"
config = { paths = ["src/**"] }
metric = "lines"
"#;

/// One pair: what each side does to `CONFIG`, and the limits the merge must settle on
/// (`None`: a conflict).
#[derive(Clone, Copy)]
struct Pair {
    name: &'static str,
    ours: fn() -> String,
    theirs: fn() -> String,
    settled: Option<(&'static str, &'static str)>,
}

fn with(from: &str, to: &str) -> String {
    CONFIG.replacen(from, to, 1)
}

const PAIRS: &[Pair] = &[
    Pair {
        name: "tighten/tighten the same Standard",
        ours: || with("limit = 10", "limit = 8"),
        theirs: || with("limit = 10", "limit = 7"),
        settled: Some(("limit = 7", "limit = 100")),
    },
    Pair {
        name: "tighten/tighten different Standards",
        ours: || with("limit = 10", "limit = 8"),
        theirs: || with("limit = 100", "limit = 90"),
        settled: Some(("limit = 8", "limit = 90")),
    },
    Pair {
        name: "tighten/loosen",
        ours: || with("limit = 10", "limit = 8"),
        theirs: || with("limit = 10", "limit = 12"),
        settled: None,
    },
    Pair {
        name: "tighten/redefine",
        ours: || with("limit = 10", "limit = 8"),
        theirs: || with("direction = \"down\"", "direction = \"up\""),
        settled: None,
    },
    Pair {
        name: "add/add",
        ours: || {
            format!(
                "{CONFIG}\n[standards.x]\ndirection = \"up\"\nlimit = 1\nproducer = \"builtin:extent\"\nconfig = {{ paths = [\"src/**\"] }}\nmetric = \"files\"\n"
            )
        },
        theirs: || {
            format!(
                "{CONFIG}\n[standards.x]\ndirection = \"up\"\nlimit = 2\nproducer = \"builtin:extent\"\nconfig = {{ paths = [\"src/**\"] }}\nmetric = \"files\"\n"
            )
        },
        settled: Some(("limit = 10", "limit = 100")),
    },
    Pair {
        name: "delete/tighten",
        ours: || {
            CONFIG
                .split("[standards.lines]")
                .next()
                .unwrap_or_default()
                .to_owned()
        },
        theirs: || with("limit = 100", "limit = 90"),
        settled: None,
    },
];

/// `todo`'s and `lines`' limit lines of `text`.
fn limits(text: &str) -> (String, String) {
    let mut found = text.lines().filter(|l| l.starts_with("limit"));
    let mut next = || found.next().unwrap_or_default().to_owned();
    (next(), next())
}

fn branch(fixture: &Fixture, dir: &Path, name: &str, config: &str) {
    fixture.git_in(dir, &["checkout", "-q", "-B", name, "main"]);
    std::fs::write(dir.join("discern.toml"), config).unwrap();
    fixture.git_in(dir, &["commit", "-q", "-am", name]);
}

/// Merge `theirs` into `ours` in `dir` with git: whether git concluded it.
fn git_merge(fixture: &Fixture, dir: &Path) -> bool {
    let mut cmd = std::process::Command::new("git");
    cmd.args(["merge", "-q", "--no-edit", "theirs"])
        .current_dir(dir);
    discern_tests::hermetic(&mut cmd, fixture.repo.home());
    cmd.output().unwrap().status.success()
}

fn check(pair: &Pair, route: &str, dir: &Path, merged: bool) {
    match pair.settled {
        Some((todo, lines)) => {
            assert!(merged, "{}: {route} did not settle it", pair.name);
            let text = std::fs::read_to_string(dir.join("discern.toml")).unwrap();
            assert_eq!(
                limits(&text),
                (todo.to_owned(), lines.to_owned()),
                "{}: {route}\n{text}",
                pair.name
            );
        }
        None => assert!(!merged, "{}: {route} settled a conflict", pair.name),
    }
}

#[test]
fn pairs_merge_by_meaning_through_the_driver_resolve_and_update() {
    for pair in PAIRS {
        let fixture = Fixture::new(CONFIG);
        let dir = fixture.path().to_owned();
        branch(&fixture, &dir, "theirs", &(pair.theirs)());
        branch(&fixture, &dir, "ours", &(pair.ours)());

        // 1. git merge with the driver installed.
        let json = fixture.run(&["init", "--merge-driver", "--json"]).json();
        assert_eq!(json["ok"], true, "{json}");
        fixture.git_in(&dir, &["add", ".gitattributes"]);
        fixture.git_in(&dir, &["commit", "-q", "-m", "the driver"]);
        let merged = git_merge(&fixture, &dir);
        check(pair, "the merge driver", &dir, merged);
        if !merged {
            let text = std::fs::read_to_string(dir.join("discern.toml")).unwrap();
            assert!(
                text.starts_with("# discern: "),
                "{}: the reason leads the conflict\n{text}",
                pair.name
            );
            fixture.git_in(&dir, &["merge", "--abort"]);
        }
        fixture.git_in(&dir, &["reset", "-q", "--hard", "ours"]);
        fixture.git_in(&dir, &["config", "--remove-section", "merge.discern"]);

        // 2. a plain git merge (a forge's, a clone without the driver), then `discern resolve`.
        let mut merged = git_merge(&fixture, &dir);
        if !merged {
            let run = fixture.run(&["resolve", "--json"]);
            merged = run.json()["ok"] == true;
            if merged {
                fixture.git_in(&dir, &["commit", "-q", "--no-edit"]);
            } else {
                fixture.git_in(&dir, &["merge", "--abort"]);
            }
        }
        check(pair, "resolve", &dir, merged);
        fixture.git_in(&dir, &["reset", "-q", "--hard", "ours"]);

        // 3. `discern update`: an effort with our side, the trunk with theirs.
        fixture.git_in(&dir, &["checkout", "-q", "main"]);
        let started = fixture
            .run(&["start", "--name", "ours-effort", "--json"])
            .json();
        let effort = std::path::PathBuf::from(started["data"]["path"].as_str().unwrap());
        std::fs::write(effort.join("discern.toml"), (pair.ours)()).unwrap();
        fixture.git_in(&effort, &["commit", "-q", "-am", "ours"]);
        fixture.git_in(&dir, &["merge", "-q", "--ff-only", "theirs"]);
        let json = fixture.run_in(&effort, &["update", "--json"], &[]).json();
        check(&from_trunk(pair), "update", &effort, json["ok"] == true);
    }
}

/// What `update` settles `pair` on, where theirs is the trunk: a limit the trunk loosened (a
/// landed, approved change) takes the trunk's value over the branch's tightening; every other
/// pair as between peers.
fn from_trunk(pair: &Pair) -> Pair {
    let settled = match pair.name {
        "tighten/loosen" => Some(("limit = 12", "limit = 100")),
        _ => pair.settled,
    };
    Pair { settled, ..*pair }
}

/// A limit `update` settles is measured on the merged tree, and a breach is named with the way
/// out (never left for the gate to find).
#[test]
fn update_names_a_settled_limit_the_merged_tree_breaches() {
    let fixture = Fixture::new(CONFIG);
    let dir = fixture.path().to_owned();
    let started = fixture.run(&["start", "--name", "tight", "--json"]).json();
    let effort = std::path::PathBuf::from(started["data"]["path"].as_str().unwrap());
    // The effort's limit is tighter than its own tree reads (2 TODOs): committed by hand.
    std::fs::write(effort.join("discern.toml"), with("limit = 10", "limit = 1")).unwrap();
    fixture.git_in(&effort, &["commit", "-q", "-am", "too tight"]);
    std::fs::write(dir.join("discern.toml"), with("limit = 10", "limit = 3")).unwrap();
    fixture.git_in(&dir, &["commit", "-q", "-am", "the trunk tightens"]);
    let json = fixture.run_in(&effort, &["update", "--json"], &[]).json();
    assert_eq!(json["ok"], true, "{json}");
    let text = json["advisories"].to_string();
    assert!(
        text.contains("breaches the settled limit of todo (2 against 1)")
            && text.contains("discern standards propose todo"),
        "{json}"
    );
}

/// The merged `discern.toml` is read once more after `update` merges; one that does not load
/// is refused (naming the file and what to do), never read as no config: the merge stands and
/// the refusal carries its reply.
#[test]
fn update_refuses_a_merged_config_that_does_not_load() {
    let fixture = Fixture::new(CONFIG);
    let dir = fixture.path().to_owned();
    let started = fixture.run(&["start", "--name", "broken", "--json"]).json();
    let effort = std::path::PathBuf::from(started["data"]["path"].as_str().unwrap());
    let broken = with(
        "metric = \"matches\"",
        "metric = \"matches\"\nlimit_typo = 3",
    );
    std::fs::write(dir.join("discern.toml"), broken).unwrap();
    fixture.git_in(
        &dir,
        &["commit", "-q", "-am", "the trunk breaks its config"],
    );
    let json = fixture.run_in(&effort, &["update", "--json"], &[]).json();
    assert_eq!(json["ok"], false, "{json}");
    assert_eq!(json["error"], "invalid_config", "{json}");
    let message = json["message"].as_str().unwrap();
    assert!(
        message.contains("The trunk is merged") && message.contains("does not load"),
        "{json}"
    );
    assert!(
        json["data"].is_object(),
        "the merge's reply is carried: {json}"
    );
    let head = fixture.git_out(&effort, &["log", "-1", "--format=%P"]);
    assert_eq!(head.split_whitespace().count(), 2, "the merge stands");
}
