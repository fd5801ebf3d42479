//! `discern standards` and `discern init` on real repositories, through the real binary.

use discern_tests::TestRepo;
use serde_json::Value;

use crate::support::config::{Config, Standard};
use crate::support::{Fixture, cache_dir, standard};

fn todo() -> Config {
    Config::new().standard(Standard::todo(2))
}

fn two() -> Config {
    let lines = Standard::extent("lines", "", &["src/**"]).without("metric");
    Config::new()
        .standard(Standard::todo(5).margin(1))
        .standard(lines.up().limit(7))
}

macro_rules! assert_output_snapshot {
    ($name:literal, $text:expr, $root:expr) => {
        let root = $root.display().to_string();
        insta::with_settings!({filters => vec![
            (root.as_str(), "[repo]"),
            (r"[0-9a-f]{40}", "[commit]"),
            (r"\b[0-9a-f]{12}\b", "[short]"),
            (r"#[0-9a-f]{8}", "#[identity]"),
            (r"R1-[0-9A-F-]{12}", "[handle]"),
        ]}, {
            insta::assert_snapshot!($name, $text);
        });
    };
}

#[test]
fn measures_each_verdict_and_reports_pinnable_slack() {
    let fixture = Fixture::new(two());
    let run = fixture.run(&["standards", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let json = run.json();
    assert_eq!(json["ok"], true);
    let todo = standard(&json, "todo");
    assert_eq!(todo["value"], 2.0);
    assert_eq!(todo["verdict"], "improved");
    assert_eq!(todo["measurement"], "measured");
    assert_eq!(todo["pin_eligible"], true);
    assert_eq!(todo["pin_target"], 3.0);
    let lines = standard(&json, "lines");
    assert_eq!(lines["value"], 7.0);
    assert_eq!(lines["verdict"], "held");
    assert_eq!(lines["pin_eligible"], false);
    assert!(lines.get("pin_target").is_none());
    assert_eq!(json["data"]["limits"]["status"], "verified");
    assert_eq!(json["data"]["recorded"], true);
    assert!(
        json["hints"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["id"] == "standards-pinnable-slack")
    );
    assert_output_snapshot!("standards_green_json", run.stdout, fixture.path());
    assert_output_snapshot!(
        "standards_green_markdown",
        fixture.run(&["standards", "--markdown"]).stdout,
        fixture.path()
    );
    assert_output_snapshot!(
        "standards_green_human",
        fixture.run(&["standards"]).stdout,
        fixture.path()
    );

    // Regressed: a third TODO on a branch.
    fixture
        .repo
        .git(&["checkout", "-q", "-b", "agent/more-todos"]);
    fixture.repo.write(
        "src/more.rs",
        "// TODO a\n// TODO b\n// TODO c\n// TODO d\n",
    );
    fixture.repo.commit("more todos");
    let run = fixture.run(&["standards", "--json"]);
    assert_eq!(run.code, 1);
    let json = run.json();
    assert_eq!(json["ok"], false);
    assert_eq!(json["error"], "standards_failed");
    assert_eq!(standard(&json, "todo")["verdict"], "regressed");
    assert!(
        json["diagnostics"][0]["message"]
            .as_str()
            .unwrap()
            .contains("never move the limit")
    );
    assert_output_snapshot!(
        "standards_regressed_markdown",
        fixture.run(&["standards", "--markdown"]).stdout,
        fixture.path()
    );
}

#[test]
fn unknown_names_and_missing_config_are_clear() {
    let fixture = Fixture::new(todo());
    let run = fixture.run(&["standards", "nope", "--json"]);
    assert_eq!(run.code, 1);
    let json = run.json();
    assert_eq!(json["error"], "unknown_standard");
    assert!(
        json["message"]
            .as_str()
            .unwrap()
            .contains("the configured Standards are: todo")
    );
    assert_eq!(json["hints"][0]["category"], "next-step");

    let empty = TestRepo::new();
    empty.write("a.txt", "a\n");
    empty.commit("one");
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_discern"));
    cmd.args(["standards", "--json"]).current_dir(empty.path());
    discern_tests::hermetic(&mut cmd, empty.home());
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["ok"], true);
    assert_eq!(json["hints"][0]["id"], "standards-none-configured");
}

#[test]
fn invalid_config_names_table_key_and_line() {
    let fixture = Fixture::new(
        "[standards.todo]\ndirection = \"sideways\"\nlimit = 2\nproducer = \"builtin:nope\"\nlimt = 3\n\n[jobz]\n",
    );
    let run = fixture.run(&["standards", "--json"]);
    assert_eq!(run.code, 1);
    let json = run.json();
    assert_eq!(json["error"], "invalid_config");
    let messages: Vec<&str> = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["message"].as_str().unwrap())
        .collect();
    assert!(messages.contains(&"discern.toml:7: unknown table [jobz] (allowed tables: repository, jobs, acceptance, map, evidence, standards, worktree)"), "{messages:#?}");
    assert!(
        messages.iter().any(|m| m.starts_with(
            "discern.toml:2: [standards.todo] direction: unknown direction \"sideways\""
        )),
        "{messages:#?}"
    );
    assert!(
        messages.iter().any(|m| m.starts_with(
            "discern.toml:4: [standards.todo] producer: unknown built-in producer \"nope\""
        )),
        "{messages:#?}"
    );
    assert!(
        messages.iter().any(|m| m.starts_with(
            "discern.toml:5: [standards.todo] limt: unknown key (allowed keys: direction, findings, limit"
        )),
        "{messages:#?}"
    );
    assert_eq!(json["diagnostics"][0]["line"], 7);
    // Each diagnostic's command reproduces it, whatever verb met the config: `status` has no
    // dry run, and is sent to one that has.
    let status = fixture.run(&["status", "--json"]).json();
    assert_eq!(status["error"], "invalid_config", "{status}");
    let command = status["diagnostics"][0]["reproduce_cmd"].as_str().unwrap();
    assert_eq!(command, "discern standards --dry-run", "{status}");
    let reproduced = fixture.run(&["standards", "--dry-run", "--json"]).json();
    assert_eq!(reproduced["error"], "invalid_config", "{reproduced}");
    assert_eq!(reproduced["diagnostics"], json["diagnostics"]);
}

#[test]
fn a_dirty_tree_measures_head_with_an_advisory_pins_refuse_and_force_measures_the_work_tree() {
    let fixture = Fixture::new(todo());
    fixture.repo.write("src/new.rs", "// TODO new\n");
    // An uncommitted limit change is not what HEAD is measured with either.
    let config = std::fs::read_to_string(fixture.path().join("discern.toml")).unwrap();
    fixture.repo.write(
        "discern.toml",
        config.replace("limit = ", "limit = 1000 # "),
    );
    let run = fixture.run(&["standards", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let json = run.json();
    assert_eq!(standard(&json, "todo")["value"], 2.0, "HEAD is measured");
    assert_ne!(
        standard(&json, "todo")["limit"],
        1000.0,
        "with HEAD's config"
    );
    let advisory = json["advisories"][0].as_str().unwrap();
    assert!(
        advisory.starts_with("Not measured: uncommitted changes")
            && advisory.contains("src/new.rs")
            && advisory.contains("discern.toml"),
        "{advisory}"
    );
    let pin = fixture.run(&["standards", "--pin", "--json"]).json();
    assert_eq!(pin["error"], "dirty_worktree", "{pin}");
    fixture.repo.write("discern.toml", &config);

    let run = fixture.run(&["standards", "--force", "--json"]);
    let json = run.json();
    assert_eq!(
        standard(&json, "todo")["value"],
        3.0,
        "the untracked file is measured"
    );
    assert_eq!(json["data"]["worktree"], true);
    assert_eq!(json["data"]["recorded"], false);
    assert!(
        json["hints"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["id"] == "standards-force-not-recorded")
    );
    // Ignored files are not part of the work tree snapshot.
    fixture.repo.remove("src/new.rs");
    fixture.repo.write("target/ignored.rs", "// TODO ignored\n");
    let json = fixture.run(&["standards", "--force", "--json"]).json();
    assert_eq!(standard(&json, "todo")["value"], 2.0);
    // Nothing of this touched the index.
    assert_eq!(fixture.repo.git(&["status", "--porcelain"]), "");
}

#[test]
fn head_moving_during_measurement_records_nothing() {
    let config = r#"
[jobs.sneaky]
stage = "test"
run = "git -c user.name=x -c user.email=x@y commit -q --allow-empty -m moved && echo DISCERN_METRIC ok 1"

[standards.ok]
direction = "up"
limit = 1
run = "true"
producer_placeholder = 1
"#
    .replace("run = \"true\"\nproducer_placeholder = 1\n", "producer = \"builtin:discern-metric\"\nneeds = [\"jobs.sneaky\"]\n");
    let fixture = Fixture::new(&config);
    let before = fixture.repo.head();
    let json = fixture.run(&["standards", "--json"]).json();
    assert_ne!(fixture.repo.head(), before, "the job moved HEAD");
    assert_eq!(json["data"]["commit"], before.as_str());
    assert_eq!(json["data"]["recorded"], false);
    assert!(
        json["advisories"][0]
            .as_str()
            .unwrap()
            .starts_with("HEAD moved during measurement")
    );
    let record = fixture
        .path()
        .join(".git/discern/standard-measurements.json");
    assert!(!record.exists(), "nothing recorded");
}

#[test]
fn loosenings_are_blocked_and_redefinitions_and_deletions_await_the_owner() {
    let fixture = Fixture::new(two());
    // Loosened ceiling + flipped direction + changed producer config, and `lines` deleted.
    fixture.branch_with(Config::new().standard(Standard::todo(6).margin(3)));
    let json = fixture.run(&["standards", "--json"]).json();
    assert_eq!(json["ok"], false);
    assert_eq!(json["error"], "precondition_failed");
    assert_eq!(json["data"]["limits"]["status"], "loosened");
    assert_eq!(standard(&json, "todo")["measurement"], "skipped");
    let messages: Vec<&str> = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["message"].as_str().unwrap())
        .collect();
    assert!(
        messages
            .iter()
            .any(|m| m.contains("loosens its ceiling 5 -> 6 versus main")),
        "{messages:#?}"
    );
    // A deletion is a protected change: it lands only with the owner's approval.
    let advisories = json["advisories"].to_string();
    assert!(
        advisories.contains(
            "Standard lines is deleted (its floor was 7) versus main: a protected change"
        ),
        "{advisories}"
    );

    fixture.repo.write(
        "discern.toml",
        r#"
[standards.todo]
direction = "up"
limit = 5
producer = "builtin:pattern"
config = { pattern = "FIXME", paths = ["src/**"] }
metric = "matches"

[standards.lines]
direction = "up"
limit = 8
producer = "builtin:extent"
config = { paths = ["src/**"] }
timeout = 60
"#,
    );
    fixture.repo.commit("redefine");
    let json = fixture.run(&["standards", "--json"]).json();
    assert_eq!(json["data"]["limits"]["status"], "proposed", "{json}");
    // The branch's definition is measured; the redefinition awaits the owner's approval.
    assert_eq!(standard(&json, "todo")["measurement"], "measured");
    let messages: Vec<&str> = json["advisories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    let redefined = messages
        .iter()
        .find(|m| m.contains("Standard todo is redefined"))
        .unwrap();
    assert!(redefined.contains(r#"config {"paths":["src/**"],"pattern":"TODO"} → {"paths":["src/**"],"pattern":"FIXME"}"#), "{redefined}");
    assert!(
        redefined.contains(r#"direction "down" → "up""#),
        "{redefined}"
    );
    // A tightened floor with a changed timeout is fine (and measured: 7 < 8 regresses).
    assert_eq!(standard(&json, "lines")["measurement"], "measured");
    assert_output_snapshot!(
        "standards_redefined_markdown",
        fixture.run(&["standards", "--markdown"]).stdout,
        fixture.path()
    );
}

#[test]
fn a_missing_trunk_is_unverified_and_an_unparsable_trunk_config_blocks() {
    let fixture = Fixture::new(todo());
    let json = fixture
        .run_with(
            &["standards", "--json"],
            &[("DISCERN_TRUNK", "trunk-that-does-not-exist")],
        )
        .json();
    assert_eq!(json["ok"], true, "unverified is loud, not blocking");
    assert_eq!(json["data"]["limits"]["status"], "unverified");
    assert!(
        json["advisories"][0]
            .as_str()
            .unwrap()
            .starts_with("Standards limits are UNVERIFIED")
    );
    assert!(
        json["hints"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["id"] == "standards-limits-unverified")
    );

    // Trunk's config broken; the branch's fine.
    fixture
        .repo
        .write("discern.toml", "[standards.todo\nbroken");
    fixture.repo.commit("break trunk config");
    fixture.branch_with(todo());
    let json = fixture.run(&["standards", "--json"]).json();
    assert_eq!(json["ok"], false);
    assert_eq!(json["data"]["limits"]["status"], "parse_failed");
    assert!(
        json["diagnostics"][0]["message"]
            .as_str()
            .unwrap()
            .contains("cannot be parsed")
    );
    assert_eq!(
        json["diagnostics"][0]["reproduce_cmd"],
        "git show main:discern.toml"
    );
}

#[test]
fn five_standards_over_two_identities_run_the_guest_twice() {
    let fixture = Fixture::new("");
    fixture
        .repo
        .write("tools/counter.wasm", discern_tests::HOSTILE_WASM);
    let mut config = String::new();
    for (name, identity) in [("a", 1), ("b", 1), ("c", 1), ("d", 2), ("e", 2)] {
        config.push_str(&format!(
            "[standards.{name}]\ndirection = \"up\"\nlimit = 0\nproducer = \"tools/counter.wasm\"\nconfig = {{ mode = \"emit\", emit = {{ a = 1, b = 2, c = 3, d = 4, e = 5 }}, identity = {identity} }}\nmetric = \"{name}\"\n\n"
        ));
    }
    fixture.repo.write("discern.toml", &config);
    fixture.repo.commit("five standards");
    let trace = fixture.repo.home().join("trace.jsonl");
    let run = fixture.run_with(
        &["standards", "--json"],
        &[("DISCERN_TRACE", trace.to_str().unwrap())],
    );
    let json = run.json();
    assert_eq!(json["ok"], true, "{}", run.stdout);
    for (name, value) in [("a", 1.0), ("b", 2.0), ("c", 3.0), ("d", 4.0), ("e", 5.0)] {
        assert_eq!(standard(&json, name)["value"], value);
    }
    // The guest lists the snapshot once per run: count its own calls.
    let trace = std::fs::read_to_string(trace).unwrap();
    let listings = trace
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["producer"] == "tools/counter.wasm" && l["call"] == "files")
        .count();
    assert_eq!(listings, 2, "{trace}");
    let executions = json["data"]["producer_executions"].as_object().unwrap();
    assert_eq!(executions.len(), 2);
    assert!(executions.values().all(|runs| runs == 1));
}

#[test]
fn run_compatibility_and_job_artifacts() {
    let fixture = Fixture::new(
        r#"
[jobs.coverage]
stage = "test"
run = "mkdir -p target && printf 'SF:src/lib.rs\nDA:1,1\nDA:2,1\nDA:3,0\nDA:4,1\nend_of_record\n' > target/lcov.info"
artifacts = ["target/lcov.info"]

[standards.coverage]
direction = "up"
limit = 75
producer = "builtin:lcov"
needs = ["jobs.coverage"]
artifact = "target/lcov.info"
metric = "line_percent"

[standards.speed]
direction = "down"
limit = 10
run = "echo building; echo DISCERN_METRIC speed 4.5"
"#,
    );
    let json = fixture.run(&["standards", "--json"]).json();
    assert_eq!(json["ok"], true, "{json}");
    assert_eq!(standard(&json, "coverage")["value"], 75.0);
    assert_eq!(standard(&json, "speed")["value"], 4.5);

    // A job that fails fails its dependents with the job's output.
    let broken = Fixture::new(
        r#"
[standards.speed]
direction = "down"
limit = 10
run = "echo building; exit 3"
"#,
    );
    let json = broken.run(&["standards", "--json"]).json();
    assert_eq!(json["error"], "producer_failed");
    let speed = standard(&json, "speed");
    assert_eq!(speed["measurement"], "failed");
    assert!(
        speed["note"]
            .as_str()
            .unwrap()
            .contains("job standards.speed failed with exit code 3"),
        "{speed}"
    );
    let job = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["tool"] == "job:standards.speed")
        .unwrap();
    assert!(
        job["message"].as_str().unwrap().contains("building"),
        "{job}"
    );
    assert_eq!(job["reproduce_cmd"], "echo building; exit 3");
}

#[test]
fn dry_run_shows_the_plan_and_measures_nothing() {
    let fixture = Fixture::new(two());
    let trace = fixture.repo.home().join("trace.jsonl");
    let run = fixture.run_with(
        &["standards", "--dry-run", "--json"],
        &[("DISCERN_TRACE", trace.to_str().unwrap())],
    );
    let json = run.json();
    assert_eq!(json["ok"], true);
    assert_eq!(json["dry_run"], true);
    assert!(json.get("steps").is_none());
    assert_eq!(json["plan"]["executions"].as_array().unwrap().len(), 2);
    assert_eq!(
        std::fs::read_to_string(&trace).unwrap_or_default(),
        "",
        "nothing ran"
    );
    assert!(
        !fixture
            .path()
            .join(".git/discern/standard-measurements.json")
            .exists()
    );
}

#[test]
fn init_writes_a_config_that_then_passes() {
    let repo = TestRepo::new();
    repo.write(
        "src/lib.rs",
        "// TODO: later\npub fn f() -> u8 {\n    #[allow(unused)]\n    let x = 1;\n    x\n}\n",
    )
    .write("src/util.rs", "pub fn g() {}\n")
    .write("src/more.rs", "pub fn h() {}\n")
    .write(
        "web/app.ts",
        "// eslint-disable-next-line\nexport const a = 1;\n",
    )
    // Three files: a language with fewer is left out unless it is the largest.
    .write("web/b.ts", "export const b = 2;\n")
    .write("web/c.mts", "export const c = 3;\n")
    .write("assets/logo.bin", vec![1u8; 2048]);
    repo.commit("a project");
    let run = |args: &[&str]| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_discern"));
        cmd.args(args).current_dir(repo.path());
        discern_tests::hermetic(&mut cmd, repo.home());
        cmd.env("DISCERN_CACHE_DIR", cache_dir());
        cmd.output().unwrap()
    };
    let out = run(&["init", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let text = std::fs::read_to_string(repo.path().join("discern.toml")).unwrap();
    assert!(text.starts_with("# discern.toml: this repository's Standards"));
    for name in [
        "rust_longest_file_lines",
        "rust_suppressions",
        "typescript_suppressions",
        "todo_markers",
        "largest_file_bytes",
    ] {
        assert!(
            text.contains(&format!("[standards.{name}]")),
            "{name} missing:\n{text}"
        );
    }
    assert!(
        text.contains("[standards.largest_file_bytes]\ndirection = \"down\"\nlimit = 2048\n"),
        "{text}"
    );
    // Refuses to overwrite.
    let again = run(&["init", "--json"]);
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stdout).contains("never overwrites"));

    repo.commit("add discern.toml");
    let out = run(&["standards", "--json"]);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["ok"], true, "{json}");
    // Limits sit at today's value, rounded in the looser direction: nothing regresses.
    assert!(
        json["data"]["standards"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["verdict"] != "regressed")
    );
    assert_eq!(standard(&json, "largest_file_bytes")["verdict"], "held");
}
