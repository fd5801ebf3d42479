//! The attacker suite, issue 44 items 1 and 5: what a change can run and what a protected path
//! can hold. A pull request adds a command — a `run` Standard, a job, a repository component, a
//! `needs` — or changes what a protected path holds without touching its blob — a submodule
//! bumped, a link's target edited, a helper a protected script sources edited — or hides what it
//! adds from the producers behind an LFS pointer or a NUL byte. CI runs as the README writes it
//! (the forge and clones of `attacks.rs`: a bare origin over file://, an actions/checkout-shaped
//! depth-1 clone, the README's fetch, `CI=true discern standards`, `--baseline BEFORE` on a
//! push). The `baseline_*` tests run the same shapes without the attack, or with the owner's
//! approval, and pass.

use std::path::Path;

use serde_json::Value;

use crate::attacks::{
    COUNT_SH, File, Forge, SIGNERS, passed, pattern_wasm, refused, refused_naming, said,
    signed_config,
};
use crate::support::Fixture;

/// A compatibility Standard whose command reports a reading of its own.
const RUN_STANDARD: &str = r#"
[standards.probe]
direction = "down"
limit = 1
run = "echo 'DISCERN_METRIC probe 0'"
"#;

/// A job, and a built-in Standard fed by its output.
const NEW_JOB: &str = r#"
[jobs.extra]
stage = "test"
run = "echo 'DISCERN_METRIC extra 0'"
"#;

const NEEDS_JOB: &str = r#"
[standards.extra]
direction = "down"
limit = 1
producer = "builtin:discern-metric"
needs = ["jobs.extra"]
"#;

/// A Standard measured by a component committed in the repository.
const COMPONENT_STANDARD: &str = r#"
[standards.own]
direction = "down"
limit = 5
producer = "tools/p.wasm"
config = { pattern = "TODO", paths = ["src/**"] }
metric = "matches"
"#;

/// A compatibility Standard that runs a protected script (a link to the real one).
const LINKED_SCRIPT: &str = r#"
[standards.count]
direction = "down"
limit = 1
run = "sh scripts/count.sh"
"#;
const LIE: &[u8] = b"echo 'DISCERN_METRIC count 0'\n";
const HACKS: &[u8] = b"// HACK 1\n// HACK 2\n// HACK 3\n";

/// The attacker's branch off origin's `main`, where `prepare` runs in the attacker's clone
/// before the commit (links, submodules: what `Forge::pull_request` cannot write), pushed.
fn pull_request_with(forge: &Forge, branch: &str, prepare: impl FnOnce(&Path)) -> String {
    let dir = &forge.contributor;
    forge.git(dir, &["fetch", "-q", "origin"]);
    forge.git(dir, &["checkout", "-q", "-B", branch, "origin/main"]);
    prepare(dir);
    forge.git(dir, &["commit", "-q", "--allow-empty", "-m", "work"]);
    let target = format!("HEAD:refs/heads/{branch}");
    forge.git(dir, &["push", "-q", "-f", "origin", &target]);
    forge.out(dir, &["rev-parse", "HEAD"])
}

/// The owner's commit on `main`, prepared by `prepare` in the owner's clone, pushed: part of the
/// trunk before any pull request.
fn owner_commits(forge: &Forge, prepare: impl FnOnce(&Path)) {
    let dir = forge.owner.as_path();
    prepare(dir);
    forge.git(dir, &["commit", "-q", "-m", "the owner sets it up"]);
    forge.git(dir, &["push", "-q", "origin", "main"]);
}

fn symlink(dir: &Path, target: &str, path: &str) {
    let full = dir.join(path);
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(&full);
    std::os::unix::fs::symlink(target, &full).unwrap();
}

fn write(dir: &Path, path: &str, content: &[u8]) {
    let full = dir.join(path);
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    std::fs::write(full, content).unwrap();
}

/// A submodule entry at `path` pinning `commit` (a gitlink), staged.
fn gitlink(forge: &Forge, dir: &Path, path: &str, commit: &str) {
    let info = format!("160000,{commit},{path}");
    forge.git(dir, &["update-index", "--add", "--cacheinfo", &info]);
}

/// The owner approves the pull request `branch` from their clone with their key, and pushes.
fn owner_approves(forge: &Forge, branch: &str) {
    let dir = forge.owner.as_path();
    forge.git(dir, &["fetch", "-q", "origin"]);
    let tracking = format!("origin/{branch}");
    forge.git(dir, &["checkout", "-q", "-B", branch, &tracking]);
    let key = forge.keys.owner.to_str().unwrap();
    let head = forge.out(dir, &["rev-parse", "HEAD"]);
    let run = forge.fixture.run_in(
        dir,
        &["approve", "--head", &head, "--key", key, "--json"],
        &[],
    );
    let json = passed(&run, "the owner's approval");
    assert!(json["data"]["approval_file"].as_str().is_some(), "{json}");
    forge.git(dir, &["push", "-q", "origin", branch]);
    forge.git(dir, &["checkout", "-q", "main"]);
}

/// The advisory of `json` that names `path`.
#[track_caller]
fn advisory_naming<'a>(json: &'a Value, path: &str) -> &'a str {
    json["advisories"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .find(|a| a.contains(&format!("\"{path}\"")))
        .unwrap_or_else(|| panic!("no advisory names {path}:\n{}", said(json)))
}

// ---------------------------------------------------------------------------------------------
// 1. A new command in a change is a protected change.
// ---------------------------------------------------------------------------------------------

/// A pull request adds a `run` Standard: its command runs in CI and its reading is its own. It
/// fails PR CI until the owner approves it; pushed straight onto the trunk, it fails the push
/// check.
#[test]
fn class_p1a_a_new_run_standard_fails_pr_and_push_ci() {
    let forge = Forge::new(signed_config("", ""), &[]);
    let config = signed_config(RUN_STANDARD, "");
    forge.pull_request(
        "agent/probe",
        &[("discern.toml", config.as_bytes())],
        &[],
        false,
    );
    let json = refused_naming(&forge.pr_ci("agent/probe"), "a new run Standard", "probe");
    assert!(said(&json).contains("Standard probe is new"), "{json}");
    let (before, _) = forge.push_main(&[("discern.toml", config.as_bytes())], &[], "probe");
    let json = refused(
        &forge.push_ci(&before),
        "a run Standard pushed onto the trunk",
    );
    assert!(said(&json).contains("probe"), "{json}");
}

/// A pull request adds a job and a built-in Standard that needs it: the job's command runs in
/// CI and its output is the reading. A `needs` added to a new built-in Standard on an existing
/// job is a command too.
#[test]
fn class_p1b_a_new_job_and_a_new_needs_fail_pr_ci() {
    let forge = Forge::new(signed_config("", ""), &[]);
    let config = signed_config(&format!("{NEW_JOB}{NEEDS_JOB}"), "");
    forge.pull_request(
        "agent/job",
        &[("discern.toml", config.as_bytes())],
        &[],
        false,
    );
    let json = refused_naming(&forge.pr_ci("agent/job"), "a new job", "jobs.extra");
    assert!(said(&json).contains("Standard extra is new"), "{json}");

    let forge = Forge::new(signed_config(NEW_JOB, ""), &[]);
    let config = signed_config(&format!("{NEW_JOB}{NEEDS_JOB}"), "");
    forge.pull_request(
        "agent/needs",
        &[("discern.toml", config.as_bytes())],
        &[],
        false,
    );
    let json = refused(&forge.pr_ci("agent/needs"), "a new needs on a trunk job");
    assert!(said(&json).contains("Standard extra is new"), "{json}");
    assert!(said(&json).contains("jobs.extra"), "{json}");
}

/// A pull request adds a Standard measured by a component it commits.
#[test]
fn class_p1c_a_new_repository_component_fails_pr_ci() {
    let forge = Forge::new(signed_config("", ""), &[]);
    let config = signed_config(COMPONENT_STANDARD, "");
    let wasm = pattern_wasm();
    let files: &[File] = &[("discern.toml", config.as_bytes()), ("tools/p.wasm", &wasm)];
    forge.pull_request("agent/own", files, &[], false);
    let json = refused(&forge.pr_ci("agent/own"), "a new repository component");
    let text = said(&json);
    assert!(
        text.contains("Standard own is new") && text.contains("tools/p.wasm"),
        "{json}"
    );
    assert_ne!(json["data"]["limits"]["status"], "verified", "{json}");
}

/// The owner approves a pull request that adds a job and a `run` Standard: PR CI passes,
/// approved, and so does the trunk's push check once it lands as a merge commit, with the new
/// Standard measured there.
#[test]
fn baseline_an_owner_approved_new_job_passes_pr_and_push_ci() {
    let forge = Forge::new(signed_config("", ""), &[]);
    let config = signed_config(&format!("{NEW_JOB}{RUN_STANDARD}"), "");
    forge.pull_request(
        "agent/job",
        &[("discern.toml", config.as_bytes())],
        &[],
        false,
    );
    let json = refused_naming(&forge.pr_ci("agent/job"), "a new job", "jobs.extra");
    assert!(said(&json).contains("Standard probe is new"), "{json}");
    owner_approves(&forge, "agent/job");
    let json = passed(&forge.pr_ci("agent/job"), "an approved new job");
    assert_eq!(json["data"]["limits"]["status"], "approved", "{json}");
    let dir = forge.owner.as_path();
    let before = forge.main();
    forge.git(dir, &["fetch", "-q", "origin"]);
    forge.git(
        dir,
        &["merge", "-q", "--no-ff", "--no-edit", "origin/agent/job"],
    );
    forge.git(dir, &["push", "-q", "origin", "main"]);
    let json = passed(&forge.push_ci(&before), "an approved new job, landed");
    assert_eq!(
        crate::support::standard(&json, "probe")["value"],
        0.0,
        "{json}"
    );
}

// ---------------------------------------------------------------------------------------------
// 5. Protected paths cover what a path can hold.
// ---------------------------------------------------------------------------------------------

/// A protected submodule is bumped: its tree entry is a commit id, not a blob.
#[test]
fn class_p5a_a_protected_submodule_bumped_fails_pr_ci() {
    let forge = Forge::new(signed_config("", "protected = [\"vendor/**\"]\n"), &[]);
    let (one, two) = ("1".repeat(40), "2".repeat(40));
    owner_commits(&forge, |dir| gitlink(&forge, dir, "vendor/tool", &one));
    pull_request_with(&forge, "agent/ok", |dir| {
        write(dir, "src/ok.rs", b"pub fn ok() {}\n");
        forge.git(dir, &["add", "src/ok.rs"]);
    });
    passed(
        &forge.pr_ci("agent/ok"),
        "an innocuous pull request beside a submodule",
    );
    pull_request_with(&forge, "agent/bump", |dir| {
        gitlink(&forge, dir, "vendor/tool", &two);
    });
    let json = refused_naming(
        &forge.pr_ci("agent/bump"),
        "a bumped submodule",
        "file:vendor/tool",
    );
    assert!(said(&json).contains(&two), "{json}");
}

/// A protected script is a link to a file outside the protected set: the pull request edits
/// that file (so the script reports less, while adding what it counts); another adds a
/// protected link that leads out of the repository.
#[test]
fn class_p5b_a_protected_links_target_edited_fails_pr_ci() {
    let forge = Forge::new(
        signed_config(LINKED_SCRIPT, "protected = [\"scripts/**\"]\n"),
        &[("lib/count.sh", COUNT_SH.as_bytes())],
    );
    owner_commits(&forge, |dir| {
        symlink(dir, "../lib/count.sh", "scripts/count.sh");
        forge.git(dir, &["add", "scripts/count.sh"]);
    });
    forge.pull_request(
        "agent/ok",
        &[("src/ok.rs", b"pub fn ok() {}\n")],
        &[],
        false,
    );
    let json = passed(&forge.pr_ci("agent/ok"), "an innocuous pull request");
    assert_eq!(
        crate::support::standard(&json, "count")["value"],
        0.0,
        "{json}"
    );
    forge.pull_request(
        "agent/target",
        &[("lib/count.sh", LIE), ("src/hack.rs", HACKS)],
        &[],
        false,
    );
    refused_naming(
        &forge.pr_ci("agent/target"),
        "the link's target edited",
        "file:scripts/count.sh",
    );
    pull_request_with(&forge, "agent/out", |dir| {
        symlink(dir, "/tmp/count.sh", "scripts/other.sh");
        forge.git(dir, &["add", "scripts/other.sh"]);
    });
    let json = refused_naming(
        &forge.pr_ci("agent/out"),
        "a protected link out of the repository",
        "file:scripts/other.sh",
    );
    assert!(said(&json).contains("outside the repository"), "{json}");
}

/// `init` on a repository whose npm test script runs `scripts/test.sh`, which sources
/// `scripts/helper.sh`: after the config it wrote lands, a pull request that edits the helper
/// fails PR CI.
#[test]
fn class_p5c_a_sourced_helper_of_a_protected_script_edited_after_init_fails_pr_ci() {
    let package = br#"{ "name": "x", "scripts": { "test": "sh scripts/test.sh" } }"#;
    let test_sh = b". \"$(dirname \"$0\")/helper.sh\"\nrun_tests\n" as &[u8];
    let helper = b"run_tests() { exit 1; }\n" as &[u8];
    let files: &[File] = &[
        ("package.json", package),
        ("scripts/test.sh", test_sh),
        ("scripts/helper.sh", helper),
    ];
    // `init` on the same tree, in a scratch clone, gives the config the owner commits.
    let scratch = Fixture::new("");
    scratch.repo.remove("discern.toml");
    for (path, content) in files {
        scratch.repo.write(path, content);
    }
    scratch.repo.commit("no config yet");
    let init = scratch.run(&["init", "--json"]);
    let json = passed(&init, "init");
    let written = std::fs::read_to_string(scratch.path().join("discern.toml")).unwrap();
    assert!(written.contains("[jobs.npm_test]"), "{written}\n{json}");
    let config = match written.contains("\n[acceptance]\n") {
        true => format!("{written}allowed_signers = \"{SIGNERS}\"\n"),
        false => format!("{written}\n[acceptance]\nallowed_signers = \"{SIGNERS}\"\n"),
    };
    let forge = Forge::new(&config, files);
    forge.pull_request(
        "agent/ok",
        &[("src/ok.rs", b"pub fn ok() {}\n")],
        &[],
        false,
    );
    passed(
        &forge.pr_ci("agent/ok"),
        "an innocuous pull request after init",
    );
    let lenient = b"run_tests() { exit 0; }\n" as &[u8];
    forge.pull_request(
        "agent/helper",
        &[("scripts/helper.sh", lenient)],
        &[],
        false,
    );
    refused_naming(
        &forge.pr_ci("agent/helper"),
        "a sourced helper edited",
        "file:scripts/helper.sh",
    );
    forge.pull_request(
        "agent/package",
        &[("package.json", br#"{ "scripts": { "test": "true" } }"#)],
        &[],
        false,
    );
    refused_naming(
        &forge.pr_ci("agent/package"),
        "the test script redefined",
        "file:package.json",
    );
}

/// A pull request adds TODOs in a file committed as an LFS pointer and in one with a NUL byte
/// in its first line, inside the Standard's paths: the count does not move, and PR CI names
/// both files in an advisory.
#[test]
fn class_p5d_an_lfs_pointer_and_a_binary_file_in_a_standards_paths_are_named() {
    let forge = Forge::new(signed_config("", ""), &[]);
    let pointer = b"version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 4096\n" as &[u8];
    let nul = b"\0\n// TODO 1\n// TODO 2\n// TODO 3\n// TODO 4\n" as &[u8];
    forge.pull_request(
        "agent/hidden",
        &[
            ("src/big.rs", pointer),
            ("src/hidden.rs", nul),
            (
                ".gitattributes",
                b"src/big.rs filter=lfs diff=lfs merge=lfs -text\n",
            ),
        ],
        &[],
        false,
    );
    let json = forge.pr_ci("agent/hidden").json();
    let lfs = advisory_naming(&json, "src/big.rs");
    assert!(
        lfs.contains("standards.todo") && lfs.contains("LFS pointer"),
        "{lfs}"
    );
    let binary = advisory_naming(&json, "src/hidden.rs");
    assert!(binary.contains("NUL byte"), "{binary}");
    // An innocuous pull request names nothing.
    forge.pull_request(
        "agent/ok",
        &[("src/ok.rs", b"pub fn ok() {}\n")],
        &[],
        false,
    );
    let json = passed(&forge.pr_ci("agent/ok"), "an innocuous pull request");
    assert!(!said(&json).contains("hide their content"), "{json}");
}
