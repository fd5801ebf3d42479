//! Findings explain every number: kept with the evidence, compared with the baseline (the
//! merge base on a branch, the first parent on the trunk), a swap caught, renames followed,
//! and a 0.1 producer run beside 0.2 ones in one batch.

use serde_json::Value;

use crate::support::config::{Config, Standard, quoted};
use crate::support::{Fixture, standard};

/// Two TODOs on the trunk (the fixture's `src/lib.rs`), the ceiling pinned at 2.
/// `TODO: <word>` markers in `src/**` at most `limit` (the fixture has two).
fn pinned(limit: u32) -> Standard {
    Standard::pattern("todo", r"TODO: \w+", &["src/**"]).limit(limit)
}

fn pinned_config() -> Config {
    Config::new().standard(pinned(2))
}

fn measure(fixture: &Fixture) -> Value {
    fixture.run(&["standards", "--json"]).json()
}

fn on_branch(fixture: &Fixture, file: &str, content: &str) {
    fixture.repo.git(&["checkout", "-q", "-b", "agent/work"]);
    fixture.repo.write(file, content);
    fixture.repo.commit("work");
}

/// A new effort `name` with `file` written as `content` and committed; its worktree.
fn effort_with(fixture: &Fixture, name: &str, file: &str, content: &str) -> std::path::PathBuf {
    let run = fixture.run(&["start", "--name", name, "--title", name, "--json"]);
    let path = std::path::PathBuf::from(run.json()["data"]["path"].as_str().unwrap().to_owned());
    std::fs::write(path.join(file), content).unwrap();
    fixture.git_in(&path, &["add", "-A"]);
    fixture.git_in(&path, &["commit", "-q", "-m", &format!("{name}: {file}")]);
    path
}

#[test]
fn a_swap_on_a_branch_fails_with_the_new_finding_located() {
    let fixture = Fixture::new(pinned_config());
    // One TODO fixed, another added: the count holds at 2.
    on_branch(
        &fixture,
        "src/lib.rs",
        "// TODO: one\npub fn a() {}\npub fn b() {}\n\n// TODO: three\n",
    );
    let run = fixture.run(&["standards", "--json"]);
    let json = run.json();
    assert_eq!(json["ok"], false, "{json}");
    let todo = standard(&json, "todo");
    assert_eq!(todo["value"], 2.0);
    assert_eq!(todo["verdict"], "swapped", "{todo}");
    let findings = &todo["findings"];
    assert_eq!(findings["total"], 2);
    assert_eq!(findings["new_total"], 1);
    assert_eq!(findings["fixed_total"], 1);
    assert_eq!(findings["swap_check"], "swapped");
    assert_eq!(findings["new"][0]["path"], "src/lib.rs");
    assert_eq!(findings["new"][0]["line"], 5);
    assert_eq!(findings["new"][0]["column"], 4);
    assert_eq!(findings["new"][0]["message"], "TODO: three");
    assert_eq!(findings["fixed"][0]["message"], "TODO: two");
    let base = fixture.git_out(fixture.path(), &["merge-base", "HEAD", "main"]);
    assert_eq!(findings["baseline"], base.as_str());
    // The diagnostic points at the new finding, not at discern.toml.
    let diagnostic = &json["diagnostics"][0];
    assert_eq!(diagnostic["file"], "src/lib.rs", "{json}");
    assert_eq!(diagnostic["line"], 5);
    // The text shows the why under the failing Standard.
    let text = fixture.run(&["standards"]);
    assert!(
        text.stdout.contains("SWAPPED") && text.stdout.contains("    src/lib.rs:5:4  TODO: three"),
        "{}",
        text.stdout
    );
}

#[test]
fn a_renamed_file_brings_its_findings_and_moved_lines_are_not_new() {
    let fixture = Fixture::new(pinned_config());
    fixture.repo.git(&["checkout", "-q", "-b", "agent/work"]);
    fixture.repo.git(&["mv", "src/lib.rs", "src/core.rs"]);
    fixture.repo.write(
        "src/core.rs",
        "\n\n// TODO: one\npub fn a() {}\n// TODO: two\npub fn b() {}\n",
    );
    fixture.repo.commit("rename and move lines");
    let json = measure(&fixture);
    assert_eq!(json["ok"], true, "{json}");
    let findings = &standard(&json, "todo")["findings"];
    assert_eq!(findings["new_total"], 0, "{findings}");
    assert_eq!(findings["fixed_total"], 0);
    assert_eq!(findings["swap_check"], "passed");
}

#[test]
fn count_mode_judges_the_count_alone_and_growth_under_a_loose_limit_is_no_swap() {
    let loose = Config::new().standard(pinned(5));
    let fixture = Fixture::new(&loose);
    on_branch(
        &fixture,
        "src/lib.rs",
        "// TODO: one\npub fn a() {}\npub fn b() {}\n// TODO: three\n",
    );
    // A swap that would not breach the ceiling even without the fix is only reported.
    let json = measure(&fixture);
    let todo = standard(&json, "todo");
    assert_eq!(todo["verdict"], "improved", "{todo}");
    assert_eq!(todo["findings"]["new_total"], 1);
    assert_eq!(todo["findings"]["swap_check"], "passed");

    let counted = Config::new().standard(pinned(2).set("findings", quoted("count")));
    let fixture = Fixture::new(&counted);
    on_branch(
        &fixture,
        "src/lib.rs",
        "// TODO: one\npub fn a() {}\npub fn b() {}\n// TODO: three\n",
    );
    let json = measure(&fixture);
    let todo = standard(&json, "todo");
    assert_eq!(todo["verdict"], "held", "{todo}");
    assert_eq!(todo["findings"]["swap_check"], "off");
}

#[test]
fn findings_come_back_with_reused_evidence_and_the_trunk_compares_with_its_first_parent() {
    let fixture = Fixture::new(pinned_config());
    fixture.repo.write(
        "src/lib.rs",
        "// TODO: one\npub fn a() {}\npub fn b() {}\n// TODO: four\n",
    );
    let second = fixture.repo.commit("swap on the trunk");
    let first = measure(&fixture);
    let again = measure(&fixture);
    for json in [&first, &again] {
        let todo = standard(json, "todo");
        assert_eq!(todo["verdict"], "swapped", "{todo}");
        assert_eq!(todo["findings"]["new"][0]["message"], "TODO: four");
        let parent = fixture.git_out(fixture.path(), &["rev-parse", &format!("{second}^")]);
        assert_eq!(todo["findings"]["baseline"], parent.as_str());
    }
    assert_eq!(standard(&again, "todo")["measurement"], "reused", "{again}");
}

#[test]
fn without_a_trunk_the_baseline_is_null_and_an_advisory_says_why() {
    let fixture = Fixture::new(pinned_config());
    fixture.repo.git(&["branch", "-m", "main", "solo"]);
    let json = measure(&fixture);
    let todo = standard(&json, "todo");
    assert_eq!(todo["findings"]["baseline"], Value::Null, "{todo}");
    assert_eq!(todo["findings"]["new_total"], Value::Null);
    assert_eq!(todo["findings"]["swap_check"], "unverified");
    let advisories = json["advisories"].to_string();
    assert!(
        advisories.contains("not compared with a baseline"),
        "{advisories}"
    );
}

#[test]
fn explain_lists_every_finding_by_file_with_the_new_ones_marked() {
    let fixture = Fixture::new(pinned_config());
    on_branch(
        &fixture,
        "src/main.rs",
        "fn main() {\n    // TODO: later\n    lib::a();\n}\n",
    );
    let run = fixture.run(&["standards", "--explain", "todo"]);
    let base = fixture.git_out(fixture.path(), &["rev-parse", "main"]);
    insta::assert_snapshot!(run.stdout.replace(&base[..12], "<base>"));
    let json = fixture
        .run(&["standards", "--explain", "todo", "--json"])
        .json();
    let all = json["data"]["all"].as_array().unwrap();
    assert_eq!(all.len(), 3);
    assert_eq!(all.iter().filter(|f| f["new"] == true).count(), 1);
}

#[test]
fn a_v0_1_component_runs_beside_v0_2_built_ins_in_one_batch() {
    let legacy = Standard::new("legacy", "tools/legacy.wasm")
        .limit(1)
        .metric("legacy_files")
        .config(r#"{ paths = ["src/**"] }"#);
    let config = pinned_config().standard(legacy);
    let fixture = Fixture::new(&config);
    fixture
        .repo
        .write("tools/legacy.wasm", discern_tests::LEGACY_V01_WASM)
        .write("src/old.rs", "// LEGACY\n");
    // In the first commit, beside the config that names it: added later on the trunk, the
    // component would be a protected change.
    fixture.repo.git(&["add", "-A"]);
    fixture.repo.git(&["commit", "-q", "--amend", "--no-edit"]);
    let json = measure(&fixture);
    assert_eq!(json["ok"], true, "{json}");
    let legacy = standard(&json, "legacy");
    assert_eq!(legacy["value"], 1.0, "{legacy}");
    assert_eq!(legacy["findings"]["total"], 1);
    let todo = standard(&json, "todo");
    assert_eq!(todo["value"], 2.0);
    // The 0.1 producer's findings have no line; the adapter says nothing it did not know.
    let explained = fixture
        .run(&["standards", "--explain", "legacy", "--json"])
        .json();
    let finding = &explained["data"]["all"][0];
    assert_eq!(finding["path"], "src/old.rs");
    assert_eq!(finding.get("line"), None, "{finding}");
}

#[test]
fn a_breach_the_baseline_has_too_is_inherited_and_the_owner_can_rebaseline_it() {
    // The trunk already breaches (2 TODOs under a ceiling of 1), as it does when a producer's
    // new version reads more than the old one did.
    let fixture = Fixture::new(Config::new().standard(pinned(1)));
    let path = effort_with(&fixture, "rebase", "src/other.rs", "pub fn c() {}\n");
    let json = fixture.run_in(&path, &["standards", "--json"], &[]).json();
    assert_eq!(json["ok"], true, "{json}");
    let todo = standard(&json, "todo");
    assert_eq!(todo["verdict"], "inherited", "{todo}");
    let advisories = json["advisories"].to_string();
    assert!(
        advisories.contains("builtin:pattern 0.") && advisories.contains("standards propose todo"),
        "{advisories}"
    );
    // The owner's re-baseline: a proposal that needs no attribution.
    let propose = fixture
        .run_in(
            &path,
            &[
                "standards",
                "propose",
                "todo",
                "--reason",
                "the producer reads 2 now",
                "--json",
            ],
            &[],
        )
        .json();
    assert_eq!(propose["ok"], true, "{propose}");
    // Worse than the baseline is the branch's own regression.
    let path = effort_with(&fixture, "worse", "src/more.rs", "// TODO: more\n");
    let json = fixture.run_in(&path, &["standards", "--json"], &[]).json();
    let todo = standard(&json, "todo");
    assert_eq!(todo["verdict"], "regressed", "{todo}");
}

#[test]
fn several_inherited_breaches_are_rebaselined_by_one_batch_command() {
    let lines = Standard::pattern("todo_lines", "TODO", &["src/**"]).metric("lines");
    let config = Config::new().standard(pinned(1)).standard(lines.limit(1));
    let fixture = Fixture::new(&config);
    let path = effort_with(&fixture, "both", "src/other.rs", "pub fn c() {}\n");
    let json = fixture.run_in(&path, &["standards", "--json"], &[]).json();
    assert_eq!(standard(&json, "todo")["verdict"], "inherited", "{json}");
    assert_eq!(
        standard(&json, "todo_lines")["verdict"],
        "inherited",
        "{json}"
    );
    let advisories: Vec<&str> = json["advisories"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let all = advisories
        .iter()
        .find(|a| a.starts_with("2 Standards inherit their breach"))
        .unwrap_or_else(|| panic!("{advisories:?}"));
    // The command's batch, run as the advisory says (here from a file rather than a pipe).
    let batch = all
        .split("echo '")
        .nth(1)
        .unwrap()
        .split("' |")
        .next()
        .unwrap();
    let file = path.join("../rebaseline.json");
    std::fs::write(&file, batch).unwrap();
    let propose = fixture
        .run_in(
            &path,
            &[
                "standards",
                "propose",
                "--batch",
                file.to_str().unwrap(),
                "--json",
            ],
            &[],
        )
        .json();
    assert_eq!(propose["ok"], true, "{propose}");
    let toml = std::fs::read_to_string(path.join("discern.toml")).unwrap();
    assert_eq!(toml.matches("limit = 2").count(), 2, "{toml}");
    let log = fixture.git_out(&path, &["log", "--format=%s", "main..HEAD"]);
    assert_eq!(
        log.lines().count(),
        2,
        "one config-only commit after the work: {log}"
    );
}

#[test]
fn a_swap_is_proposed_like_a_breach_with_room_for_its_new_findings() {
    let fixture = Fixture::new(pinned_config());
    let path = effort_with(
        &fixture,
        "swap",
        "src/lib.rs",
        "// TODO: one\npub fn a() {}\npub fn b() {}\n// TODO: three\n",
    );
    let reason = "three replaces two: the parser needs it";
    let propose = fixture
        .run_in(
            &path,
            &["standards", "propose", "todo", "--reason", reason, "--json"],
            &[],
        )
        .json();
    assert_eq!(propose["ok"], true, "{propose}");
    // The proposed ceiling is what the count would read had nothing been fixed: 2 + 1.
    let toml = std::fs::read_to_string(path.join("discern.toml")).unwrap();
    assert!(toml.contains("limit = 3"), "{toml}");
    let json = fixture.run_in(&path, &["standards", "--json"], &[]).json();
    let todo = standard(&json, "todo");
    assert_eq!(todo["findings"]["swap_check"], "passed", "{todo}");
    assert_eq!(json["data"]["limits"]["status"], "proposed", "{json}");
    // `done` proves it without pinning the proposed limit away.
    let done = fixture.run_in(&path, &["done", "--json"], &[]).json();
    assert_eq!(done["ok"], true, "{done}");
    let toml = std::fs::read_to_string(path.join("discern.toml")).unwrap();
    assert!(toml.contains("limit = 3"), "{toml}");
}

#[test]
fn findings_that_only_illustrate_a_value_are_reported_but_never_swap_checked() {
    let config = r#"
[standards.largest]
direction = "down"
limit = 100000
producer = "builtin:file-size"
config = { paths = ["src/**"] }
metric = "max_bytes"
"#;
    let fixture = Fixture::new(config);
    on_branch(&fixture, "src/big.rs", &"x".repeat(500));
    let json = measure(&fixture);
    let largest = standard(&json, "largest");
    assert_eq!(largest["findings"]["total"], 1, "{largest}");
    assert_eq!(largest["findings"].get("swap_check"), None, "{largest}");
    assert_eq!(largest["findings"]["new_total"], 1);
}

/// `src/sink.rs` on the trunk: two identical `// TODO` lines (lines 2 and 5), so the trunk reads
/// 4 TODOs with the fixture's two.
const SINK: &str =
    "pub fn drain() {\n    // TODO\n    flush();\n}\n    // TODO\npub fn flush() {}\n";

fn with_sink() -> Fixture {
    let fixture = Fixture::new(Config::new().standard(Standard::todo(4)));
    fixture.repo.write("src/sink.rs", SINK);
    fixture.repo.commit("sink");
    fixture
}

/// The lines `--explain` marks `NEW` in `path`'s section, by number.
fn marked_new(fixture: &Fixture, path: &str) -> Vec<String> {
    let text = fixture.run(&["standards", "--explain", "todo"]).stdout;
    let section = text
        .split(path)
        .nth(1)
        .unwrap_or_else(|| panic!("no {path} in {text}"));
    section
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.trim_start().strip_prefix("NEW "))
        .map(|rest| {
            let place = rest.split_whitespace().next().unwrap_or("");
            place.split(':').next().unwrap_or("").to_owned()
        })
        .collect()
}

#[test]
fn of_identical_todos_the_added_one_is_new_in_the_json_the_text_and_the_annotations() {
    // A third `// TODO` between the two: line 4, and the old second one moves to line 6.
    for (content, added) in [
        (
            "pub fn drain() {\n    // TODO\n    flush();\n    // TODO\n}\n    // TODO\npub fn flush() {}\n",
            4,
        ),
        // After both, and before both.
        (&format!("{SINK}// TODO\n"), 7),
        (&format!("// TODO\n{SINK}"), 1),
    ] {
        let fixture = with_sink();
        on_branch(&fixture, "src/sink.rs", content);
        let json = measure(&fixture);
        let todo = standard(&json, "todo");
        assert_eq!(todo["verdict"], "regressed", "{todo}");
        let findings = &todo["findings"];
        assert_eq!(findings["total"], 5);
        assert_eq!(findings["new_total"], 1, "{findings}");
        assert_eq!(findings["fixed_total"], 0);
        assert_eq!(findings["new"][0]["path"], "src/sink.rs");
        assert_eq!(findings["new"][0]["line"], added, "{findings}");
        assert_eq!(marked_new(&fixture, "src/sink.rs"), [added.to_string()]);
        let github = fixture.run(&["standards", "--output-format", "github"]);
        let annotated: Vec<&str> = github
            .stdout
            .lines()
            .filter(|l| l.starts_with("::error file=src/sink.rs,"))
            .collect();
        assert_eq!(annotated.len(), 1, "{}", github.stdout);
        assert!(
            annotated[0].starts_with(&format!("::error file=src/sink.rs,line={added},col=")),
            "{annotated:?}"
        );
    }
}

#[test]
fn a_block_moved_within_a_file_brings_its_identical_todos_along() {
    let fixture = with_sink();
    // `flush` moved above `drain`, and `drain` (with one TODO) below the other TODO.
    on_branch(
        &fixture,
        "src/sink.rs",
        "pub fn flush() {}\n    // TODO\npub fn drain() {\n    // TODO\n    flush();\n}\n",
    );
    let json = measure(&fixture);
    let todo = standard(&json, "todo");
    let findings = &todo["findings"];
    assert_eq!(findings["total"], 4);
    assert_eq!(findings["new_total"], 0, "{findings}");
    assert_eq!(findings["fixed_total"], 0, "{findings}");
    assert_eq!(todo["verdict"], "held", "{todo}");
    assert_eq!(marked_new(&fixture, "src/sink.rs"), Vec::<String>::new());
}

#[test]
fn a_renamed_file_with_identical_todos_brings_them_along_and_its_new_one_is_new() {
    let fixture = with_sink();
    fixture.repo.git(&["checkout", "-q", "-b", "agent/work"]);
    fixture.repo.git(&["mv", "src/sink.rs", "src/drain.rs"]);
    fixture.repo.commit("rename");
    let json = measure(&fixture);
    let findings = &standard(&json, "todo")["findings"];
    assert_eq!(findings["new_total"], 0, "{findings}");
    assert_eq!(findings["fixed_total"], 0, "{findings}");
    // Renamed and changed at once: git still pairs the files (`-M`), and only the TODO the
    // change added is new: the one git's diff shows as added (line 6, below the old second).
    fixture.repo.write(
        "src/drain.rs",
        "pub fn drain() {\n    // TODO\n    flush();\n}\n    // TODO\n    // TODO\npub fn flush() {}\n",
    );
    fixture.repo.commit("one more");
    let shown = fixture.git_out(
        fixture.path(),
        &[
            "diff",
            "-U0",
            "-M",
            "main",
            "HEAD",
            "--",
            "src/sink.rs",
            "src/drain.rs",
        ],
    );
    assert!(shown.contains("@@ -5,0 +6 @@"), "{shown}");
    let json = measure(&fixture);
    let findings = &standard(&json, "todo")["findings"];
    assert_eq!(findings["new_total"], 1, "{findings}");
    assert_eq!(findings["fixed_total"], 0, "{findings}");
    assert_eq!(findings["new"][0]["path"], "src/drain.rs");
    assert_eq!(findings["new"][0]["line"], 6, "{findings}");
    assert_eq!(marked_new(&fixture, "src/drain.rs"), ["6"]);
}

#[test]
fn fingerprints_are_the_place_s_and_stay_when_lines_above_are_added() {
    let fixture = with_sink();
    // Every finding, by place (`path:line`), with its fingerprint.
    let ids = || -> Vec<(String, String)> {
        let all = fixture
            .run(&["standards", "--explain", "todo", "--json"])
            .json();
        all["data"]["all"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    format!("{}:{}", f["path"].as_str().unwrap(), f["line"]),
                    f["fingerprint"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    let old = ids();
    assert_eq!(old.len(), 4, "{old:?}");
    let unique: std::collections::BTreeSet<&String> = old.iter().map(|(_, id)| id).collect();
    assert_eq!(
        unique.len(),
        4,
        "identical lines get distinct fingerprints: {old:?}"
    );
    // Another TODO and a blank line above everything in src/sink.rs: every finding keeps its
    // fingerprint, though its line moved and a match of the same text came before it.
    on_branch(
        &fixture,
        "src/sink.rs",
        &format!("// TODO: first\n\n{SINK}"),
    );
    let mut new = ids();
    assert_eq!(
        new.remove(2).0,
        "src/sink.rs:1",
        "the added one, listed first: {new:?}"
    );
    let shifted: Vec<(String, String)> = old
        .iter()
        .map(|(place, id)| {
            let place = match place.strip_prefix("src/sink.rs:") {
                Some(line) => format!("src/sink.rs:{}", line.parse::<u32>().unwrap() + 2),
                None => place.clone(),
            };
            (place, id.clone())
        })
        .collect();
    assert_eq!(new, shifted);
}

#[test]
fn a_work_tree_measurement_follows_an_uncommitted_rename_and_marks_the_added_todo() {
    let fixture = with_sink();
    on_branch(&fixture, "README.md", "# work\n");
    // Uncommitted: the rename, and a third `// TODO` between the two (line 4).
    fixture.repo.git(&["mv", "src/sink.rs", "src/drain.rs"]);
    fixture.repo.write(
        "src/drain.rs",
        "pub fn drain() {\n    // TODO\n    flush();\n    // TODO\n}\n    // TODO\npub fn flush() {}\n",
    );
    let json = fixture.run(&["standards", "--force", "--json"]).json();
    let findings = &standard(&json, "todo")["findings"];
    assert_eq!(findings["new_total"], 1, "{findings}");
    assert_eq!(findings["fixed_total"], 0, "{findings}");
    assert_eq!(findings["new"][0]["path"], "src/drain.rs");
    assert_eq!(findings["new"][0]["line"], 4, "{findings}");
}
