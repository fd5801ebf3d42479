//! Classes 7–10: protected files, replace refs, evidence tampering and components.

use serde_json::{Value, json};

use super::*;
use crate::support::config::{Config, Standard};
use crate::support::{Fixture, standard};

// ---------------------------------------------------------------------------------------------
// 7. Files under `[acceptance].protected`.
// ---------------------------------------------------------------------------------------------

/// Class 7: a Standard runs `sh scripts/count.sh`, and `scripts/**` is protected: a pull
/// request edits only the script so that it reports less (while adding what it counts), or
/// also drops the path from the protected list.
#[test]
fn class_07_an_edited_protected_script_fails_pr_ci() {
    let forge = Forge::new(
        signed_config(SCRIPT, "protected = [\"scripts/**\"]\n"),
        &[("scripts/count.sh", COUNT_SH.as_bytes())],
    );
    let lie = b"echo 'DISCERN_METRIC count 0'\n" as &[u8];
    let hacks = b"// HACK 1\n// HACK 2\n// HACK 3\n" as &[u8];
    forge.pull_request(
        "agent/script",
        &[("scripts/count.sh", lie), ("src/hack.rs", hacks)],
        &[],
        false,
    );
    refused_naming(
        &forge.pr_ci("agent/script"),
        "an edited script",
        "file:scripts/count.sh",
    );
    let unprotected = signed_config(SCRIPT, "");
    forge.pull_request(
        "agent/unprotect",
        &[
            ("scripts/count.sh", lie),
            ("src/hack.rs", hacks),
            ("discern.toml", unprotected.as_bytes()),
        ],
        &[],
        false,
    );
    refused_naming(
        &forge.pr_ci("agent/unprotect"),
        "an edited script, unprotected by the branch",
        "file:scripts/count.sh",
    );
}

// ---------------------------------------------------------------------------------------------
// 8. Replace refs.
// ---------------------------------------------------------------------------------------------

/// Class 8: in an effort, `git replace` makes the trunk's discern.toml blob (or its tip
/// commit) read as a loose limit, so that the effort's loosening looks like no change.
#[test]
fn class_08_replace_refs_do_not_move_the_trunks_limits() {
    let fixture = Fixture::new(Config::landing());
    fixture.repo.write("README.md", "# second\n");
    fixture.repo.commit("a second trunk commit");
    let loose = Config::landing().standard(Standard::todo(500)).to_string();
    let path = effort(&fixture, "replace", &[("discern.toml", loose.as_bytes())]);
    let refused_here = |what: &str| {
        let run = fixture.run_in(&path, &["standards", "--json"], &[]);
        let json = refused(&run, what);
        names(&json, "5 -> 500");
        let done = fixture.run_in(&path, &["done", "--json"], &[]);
        refused(&done, what);
    };
    // The blob.
    let trunk_blob = fixture.git_out(&path, &["rev-parse", "main:discern.toml"]);
    let loose_blob = fixture.git_out(&path, &["rev-parse", "HEAD:discern.toml"]);
    fixture.git_in(&path, &["replace", &trunk_blob, &loose_blob]);
    let shown = fixture.git_out(&path, &["show", "main:discern.toml"]);
    assert!(
        shown.contains("limit = 500"),
        "git follows the replacement: {shown}"
    );
    refused_here("a replaced blob");
    fixture.git_out(&path, &["replace", "-d", &trunk_blob]);
    assert_eq!(fixture.git_out(&path, &["replace", "-l"]), "");

    // The trunk's tip commit.
    let tip = fixture.git_out(&path, &["rev-parse", "main"]);
    let fake = fixture.git_out(
        &path,
        &[
            "commit-tree",
            "HEAD^{tree}",
            "-p",
            "main~1",
            "-m",
            "a second trunk commit",
        ],
    );
    fixture.git_in(&path, &["replace", &tip, &fake]);
    let shown = fixture.git_out(&path, &["show", "main:discern.toml"]);
    assert!(
        shown.contains("limit = 500"),
        "git follows the replacement: {shown}"
    );
    refused_here("a replaced trunk commit");
}

// ---------------------------------------------------------------------------------------------
// 9. Evidence tampering.
// ---------------------------------------------------------------------------------------------

/// Every evidence entry of `fixture`'s store, edited by `edit`: how many.
fn tamper(fixture: &Fixture, edit: impl Fn(&mut Value)) -> usize {
    let store = fixture.path().join(".git/discern/evidence");
    let mut edited = 0;
    for dir in std::fs::read_dir(&store).unwrap() {
        for file in std::fs::read_dir(dir.unwrap().path()).unwrap() {
            let path = file.unwrap().path();
            if path.extension().is_none_or(|e| e != "json") {
                continue;
            }
            let mut entry: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            edit(&mut entry);
            std::fs::write(&path, entry.to_string()).unwrap();
            edited += 1;
        }
    }
    edited
}

/// Class 9a: the agent edits the evidence store — the reading of HEAD set to 0 after adding
/// TODOs beyond the limit, or an older clean reading made valid everywhere by emptying its
/// read set — and runs `done`.
#[test]
fn class_09a_tampered_evidence_proves_nothing() {
    // HEAD's own reading, set to 0 (its findings dropped).
    let fixture = Fixture::new(Config::landing());
    let path = effort(&fixture, "zero", &[("src/more.rs", TODOS.as_bytes())]);
    let run = fixture.run_in(&path, &["standards", "--json"], &[]);
    assert_eq!(
        standard(&run.json(), "todo")["value"],
        6.0,
        "{}",
        run.stdout
    );
    let edited = tamper(&fixture, |entry| {
        for metric in entry["metrics"].as_array_mut().unwrap() {
            metric["value"] = json!(0.0);
        }
        entry["has_findings"] = json!(false);
    });
    assert!(edited > 0, "evidence was recorded");
    // The worktree's measurement record of HEAD too.
    let git_dir = PathBuf::from(fixture.git_out(&path, &["rev-parse", "--absolute-git-dir"]));
    let record = git_dir.join("discern/standard-measurements.json");
    if let Ok(bytes) = std::fs::read(&record) {
        let mut value: Value = serde_json::from_slice(&bytes).unwrap();
        for reading in value["values"]
            .as_object_mut()
            .into_iter()
            .flat_map(|v| v.values_mut())
        {
            reading["value"] = json!(0.0);
        }
        value["failed"] = json!([]);
        std::fs::write(&record, value.to_string()).unwrap();
    }
    let done = fixture.run_in(&path, &["done", "--json"], &[]);
    refused(&done, "a reading set to 0");

    // A clean reading of an older commit, its read set emptied.
    let fixture = Fixture::new(Config::landing());
    let path = effort(&fixture, "empty", &[("src/ok.rs", b"pub fn ok() {}\n")]);
    passed(
        &fixture.run_in(&path, &["standards", "--json"], &[]),
        "the clean commit",
    );
    fixture.git_in(&path, &["rm", "-q", "src/ok.rs"]);
    std::fs::write(path.join("src/more.rs"), TODOS).unwrap();
    fixture.git_in(&path, &["add", "-A"]);
    fixture.git_in(&path, &["commit", "-q", "-m", "more TODOs"]);
    let edited = tamper(&fixture, |entry| {
        entry["reads"] = json!("");
        entry["listings"] = json!([]);
    });
    assert!(edited > 0, "evidence was recorded");
    let done = fixture.run_in(&path, &["done", "--json"], &[]);
    refused(&done, "a read set emptied");
}

/// Class 9b: the agent skips the gate: it writes the gate's Proof by hand for a breaching HEAD
/// and sets that HEAD's recorded reading to 0, so that `accept`'s second look would reuse it.
#[test]
fn class_09b_tampered_evidence_behind_a_hand_written_proof_lands_nothing() {
    let fixture = Fixture::new(Config::landing());
    let path = effort(&fixture, "skip", &[("src/more.rs", TODOS.as_bytes())]);
    let run = fixture.run_in(&path, &["standards", "--json"], &[]);
    assert_eq!(
        standard(&run.json(), "todo")["value"],
        6.0,
        "{}",
        run.stdout
    );
    let edited = tamper(&fixture, |entry| {
        for metric in entry["metrics"].as_array_mut().unwrap() {
            metric["value"] = json!(0.0);
        }
        entry["has_findings"] = json!(false);
    });
    assert!(edited > 0, "evidence was recorded");
    let head = fixture.git_out(&path, &["rev-parse", "HEAD"]);
    let before = fixture.git_out(fixture.path(), &["rev-parse", "main"]);
    let git_dir = PathBuf::from(fixture.git_out(&path, &["rev-parse", "--absolute-git-dir"]));
    let proof = json!({
        "version": 1, "commit": head, "branch": "agent/skip", "trunk": "main",
        "trunk_commit": before, "diffstat": "+4 −0 in 1 file",
        "standards": [{ "name": "todo", "value": 0.0, "limit": 5.0, "verdict": "held" }],
        "proposals": [], "line": "Proof: agent/skip; Standards: 1 pass.",
    });
    std::fs::create_dir_all(git_dir.join("discern")).unwrap();
    std::fs::write(git_dir.join("discern/gate-proof"), proof.to_string()).unwrap();
    let run = fixture.run_in(&path, &["accept", "--confirmed", "--json"], &[]);
    refused(&run, "accept on tampered evidence");
    assert_eq!(
        fixture.git_out(fixture.path(), &["rev-parse", "main"]),
        before
    );
}

/// A Standard measured by the repository component `tools/l.wasm` (the 0.1 test component,
/// which counts the files under `paths` that mention `LEGACY` and ignores the other keys).
const LEGACY: &str = r#"
[standards.legacy]
direction = "down"
limit = 1
producer = "tools/l.wasm"
config = { paths = ["src/**"], mode = "emit", emit = { legacy_files = 0 } }
metric = "legacy_files"
"#;

/// Class 9c: the agent poisons the compile cache: the machine code of another component (the
/// hostile test component, which under the same config reports `legacy_files = 0`) is copied
/// under the cache key of the trunk's component, and `done` runs.
#[test]
fn class_09c_a_poisoned_compile_cache_proves_nothing() {
    let fixture = Fixture::new(format!("{}{LEGACY}", Config::landing()));
    fixture
        .repo
        .write("tools/l.wasm", discern_tests::LEGACY_V01_WASM)
        .write("src/old.rs", "// LEGACY\n");
    fixture.repo.commit("the component");
    let legacy = "// LEGACY\n".as_bytes();
    let path = effort(
        &fixture,
        "poison",
        &[("src/a.rs", legacy), ("src/b.rs", legacy)],
    );
    let cache = fixture.repo.parent().join("private-cache");
    let cache_env = cache.to_str().unwrap().to_owned();
    let env = [("DISCERN_CACHE_DIR", cache_env.as_str())];
    let run = fixture.run_in(&path, &["standards", "--json"], &env);
    assert_eq!(
        standard(&run.json(), "legacy")["value"],
        3.0,
        "{}",
        run.stdout
    );
    let hostile = fixture.repo.parent().join("hostile.wasm");
    std::fs::write(&hostile, discern_tests::HOSTILE_WASM).unwrap();
    let config = r#"{"mode":"emit","emit":{"legacy_files":0}}"#;
    let run = fixture.run_in(
        &path,
        &[
            "producers",
            "run",
            hostile.to_str().unwrap(),
            "--config",
            config,
            "--json",
        ],
        &env,
    );
    passed(&run, "the hostile component compiles into the cache");
    let entry = |wasm: &[u8]| {
        let digest = discern::testing::digest::Digest::of(wasm).hex();
        std::fs::read_dir(cache.join("components"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| {
                p.file_name()
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .starts_with(&digest)
            })
            .unwrap_or_else(|| panic!("no cache entry for {digest}"))
    };
    let poisoned = entry(discern_tests::LEGACY_V01_WASM);
    std::fs::copy(entry(discern_tests::HOSTILE_WASM), &poisoned).unwrap();
    let run = fixture.run_in(&path, &["done", "--json"], &env);
    refused(&run, "done on a poisoned compile cache");
}

// ---------------------------------------------------------------------------------------------
// 10. Components come from the commit.
// ---------------------------------------------------------------------------------------------

/// Class 10a: the component a Standard names is not tracked (ignored, present only in the
/// work tree): `standards` and `done` do not load it.
#[test]
fn class_10a_an_untracked_component_is_never_loaded() {
    let fixture = Fixture::new(format!("{}{COMPONENT}", Config::landing()));
    fixture.repo.write(".gitignore", "target/\ntools/\n");
    fixture.repo.commit("ignore tools");
    fixture.repo.write("tools/p.wasm", pattern_wasm());
    assert_eq!(
        fixture.git_out(fixture.path(), &["status", "--porcelain"]),
        ""
    );
    let run = fixture.run(&["standards", "--json"]);
    let json = refused(&run, "standards with an untracked component");
    let component = standard(&json, "component");
    assert!(component["value"].is_null(), "{component}");

    let path = effort(&fixture, "untracked", &[("src/ok.rs", b"pub fn ok() {}\n")]);
    std::fs::create_dir_all(path.join("tools")).unwrap();
    std::fs::write(path.join("tools/p.wasm"), pattern_wasm()).unwrap();
    let done = fixture.run_in(&path, &["done", "--json"], &[]);
    refused(&done, "done with an untracked component");
}

/// Class 10b, tracked: the work tree holds another component than the commit: the commit's
/// runs (the work tree's would not even report the metric).
#[test]
fn class_10b_a_modified_component_in_the_work_tree_is_not_what_runs() {
    let fixture = Fixture::new(format!("{}{COMPONENT}", Config::landing()));
    fixture.repo.write("tools/p.wasm", pattern_wasm());
    fixture.repo.commit("the component");
    fixture.repo.git(&["checkout", "-q", "-b", "agent/x"]);
    fixture.repo.write("src/ok.rs", "pub fn ok() {}\n");
    fixture.repo.commit("work");
    fixture
        .repo
        .write("tools/p.wasm", discern_tests::LEGACY_V01_WASM);
    let json = passed(
        &fixture.run(&["standards", "--json"]),
        "the committed component",
    );
    assert_eq!(standard(&json, "component")["value"], 2.0, "{json}");
}

// ---------------------------------------------------------------------------------------------

/// Class 9d: the repository's own job poisons the compile cache in the middle of a run: a
/// Standard measured by a repository component needs the job, and the job writes the hostile
/// component's machine code under that component's cache key before the reading is taken.
/// Every component a waiting reading runs is loaded before the first job starts.
#[test]
fn class_09d_a_job_that_poisons_the_compile_cache_changes_no_reading() {
    let digest = |wasm: &[u8]| discern::testing::digest::Digest::of(wasm).hex();
    let (legacy, hostile) = (
        digest(discern_tests::LEGACY_V01_WASM),
        digest(discern_tests::HOSTILE_WASM),
    );
    let poison = format!(
        r#"
[jobs.poison]
stage = "test"
run = 'cd "$DISCERN_CACHE_DIR/components" && h=$(ls {hostile}-*) && cp "$h" "{legacy}-${{h#*-}}"'
"#
    );
    let needing = LEGACY.replace(
        "metric = \"legacy_files\"",
        "metric = \"legacy_files\"\nneeds = [\"jobs.poison\"]",
    );
    let fixture = Fixture::new(format!("{}{needing}{poison}", Config::landing()));
    fixture
        .repo
        .write("tools/l.wasm", discern_tests::LEGACY_V01_WASM)
        .write("src/old.rs", "// LEGACY\n");
    fixture.repo.commit("the component");
    let legacy_file = "// LEGACY\n".as_bytes();
    let path = effort(
        &fixture,
        "poison",
        &[("src/a.rs", legacy_file), ("src/b.rs", legacy_file)],
    );
    // The hostile component's machine code is in the cache already (the job could compile it
    // itself; this keeps the test short).
    let cache = fixture.repo.parent().join("ci-cache");
    let cache_env = cache.to_str().unwrap().to_owned();
    let env = [("DISCERN_CACHE_DIR", cache_env.as_str()), ("CI", "true")];
    let hostile_wasm = fixture.repo.parent().join("hostile.wasm");
    std::fs::write(&hostile_wasm, discern_tests::HOSTILE_WASM).unwrap();
    let config = r#"{"mode":"emit","emit":{"legacy_files":0}}"#;
    let compiled = fixture.run_in(
        &path,
        &[
            "producers",
            "run",
            hostile_wasm.to_str().unwrap(),
            "--config",
            config,
            "--json",
        ],
        &env,
    );
    passed(&compiled, "the hostile component compiles into the cache");
    let run = fixture.run_in(&path, &["standards", "--json"], &env);
    let poisoned = std::fs::read_dir(cache.join("components"))
        .unwrap()
        .any(|e| {
            e.unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with(&legacy)
        });
    assert!(poisoned, "the job wrote its entry: {}", run.stderr);
    assert_eq!(
        standard(&run.json(), "legacy")["value"],
        3.0,
        "the reading is the trunk component's: {}",
        run.stdout
    );
}
