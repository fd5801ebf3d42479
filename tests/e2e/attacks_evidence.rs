//! The attacker suite for published evidence (issue 44, classes 2, 3 and 7): a test that the
//! trunk's CI runs, a pull request's author and a holder of a leaked CI key, each trying to get
//! a false reading signed by CI or reused by a pull request. CI is simulated as the README
//! writes it: a bare forge over file://, an `actions/checkout`-shaped depth-1 clone, the
//! README's fetch, `discern sync`, `CI=true discern standards` (a push's with `--baseline
//! BEFORE`), then the publish step, `discern sync --push` holding the CI key. Each test asserts
//! the secure outcome; the controls inside them show the setup would pass without the attack.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::attacks::signed_config;
use crate::red_team::TODOS;
use crate::support::config::SIGNERS;
use crate::support::forge::{Forge, passed, refused};
use crate::support::{Fixture, Run, standard};

const REPOSITORY: &str = "example.com/acme/app";

/// The trunk's config: the signed forge's (`todo` over `src/**`, the owner's signers file),
/// `standards` besides, and evidence published by trunk CI for [`REPOSITORY`].
fn evidence_config(standards: &str) -> String {
    format!(
        "{}\n[evidence]\nrepository = \"{REPOSITORY}\"\npublish = \"trunk-ci\"\n",
        signed_config(standards, "")
    )
}

/// A compatibility Standard whose command is the repository's test script: the "test job".
const TEST_JOB: &str = r#"
[standards.tests]
direction = "up"
limit = 1
run = "sh scripts/test.sh"
metric = "passed"
"#;
const PASSING: &str = "echo 'DISCERN_METRIC passed 1'\n";

/// The forge with the CI key (Forge's second key) listed in the trunk's signers, and `files`.
fn forge(standards: &str, files: &[(&str, &[u8])]) -> Forge {
    Forge::with_second_signer(evidence_config(standards), files)
}

/// `discern <args>` in `dir` as a CI step runs it, with `env` besides.
fn ci(forge: &Forge, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut all = vec![("CI", "true")];
    all.extend_from_slice(env);
    forge.fixture.run_in(dir, args, &all)
}

/// The README's steps up to measuring: a CI clone of `branch`, `discern sync`, then `discern
/// standards` (with `--baseline before` for a push). The clone and the measuring step's run.
fn measure_step(forge: &Forge, branch: &str, before: Option<&str>) -> (PathBuf, Run) {
    let clone = forge.ci_clone(branch);
    let synced = ci(forge, &clone, &["sync", "--json"], &[]);
    assert_eq!(synced.code, 0, "discern sync: {}", synced.stdout);
    let mut args = vec!["standards", "--json"];
    if let Some(before) = before {
        args.extend(["--baseline", before]);
    }
    let run = ci(forge, &clone, &args, &[]);
    (clone, run)
}

/// The publish step: `discern sync --push` in `clone` holding the CI key.
fn publish_step(forge: &Forge, clone: &Path) -> Value {
    let key = forge.keys.second.to_str().unwrap().to_owned();
    let run = ci(
        forge,
        clone,
        &["sync", "--push", "--json"],
        &[("DISCERN_EVIDENCE_KEY", key.as_str())],
    );
    run.json()
}

/// The entries of the bundles published on the forge's evidence ref.
fn published_entries(forge: &Forge) -> Vec<Value> {
    let files = forge.out(
        &forge.origin,
        &["ls-tree", "-r", "--name-only", "refs/discern/evidence"],
    );
    files
        .lines()
        .filter(|p| p.ends_with(".json"))
        .map(|p| {
            let text = forge.out(
                &forge.origin,
                &["show", &format!("refs/discern/evidence:{p}")],
            );
            serde_json::from_str(&text).unwrap()
        })
        .collect()
}

/// The `todo` Standard's evidence identity and its store folder, as a run of the trunk's config
/// records them (what an attacker learns by running discern once on their own machine).
fn todo_identity(config: &str) -> (String, String) {
    let scratch = Fixture::new(config);
    let run = scratch.run(&["standards", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let store = scratch.path().join(".git/discern/evidence");
    for dir in std::fs::read_dir(&store)
        .unwrap()
        .map(|d| d.unwrap().path())
    {
        for file in std::fs::read_dir(&dir).unwrap().map(|f| f.unwrap().path()) {
            if file.extension().is_some_and(|e| e == "json") {
                let entry: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
                let identity = entry["identity"].as_str().unwrap().to_owned();
                if identity.contains("TODO") {
                    let folder = dir.file_name().unwrap().to_string_lossy().into_owned();
                    return (identity, folder);
                }
            }
        }
    }
    panic!("no todo entry in {}", store.display());
}

/// An entry of `identity` claiming `value` TODOs, measured on `commit`, having read `reads`.
fn forged_entry(identity: &str, commit: &str, value: f64, reads: &str) -> Value {
    serde_json::json!({
        "version": discern::testing::evidence::VERSION,
        "identity": identity,
        "commit": commit,
        "exact_commit": false,
        "metrics": [{ "name": "matches", "value": value }],
        "listings": [],
        "reads": reads,
        "artifacts": {},
    })
}

// ---------------------------------------------------------------------------------------------
// Class 2: the publish step signed what it found in the clone's store, not what it measured.
// ---------------------------------------------------------------------------------------------

#[test]
fn a_store_entry_planted_by_the_trunks_test_job_is_never_signed_or_reused() {
    // The todo Standard's identity does not depend on the other Standards.
    let (identity, folder) = todo_identity(&evidence_config(""));
    // The trunk's test writes an entry into the store, filed under HEAD: 0 TODOs, nothing read.
    let planted = forged_entry(&identity, "HEAD_COMMIT", 0.0, "");
    let script = format!(
        "d=\"$(git rev-parse --git-common-dir)/discern/evidence/{folder}\"\nmkdir -p \"$d\"\nsed \"s/HEAD_COMMIT/$(git rev-parse HEAD)/\" scripts/planted.json > \"$d/planted.json\"\n{PASSING}"
    );
    let planted = planted.to_string();
    let forge = forge(
        TEST_JOB,
        &[
            ("scripts/test.sh", script.as_bytes()),
            ("scripts/planted.json", planted.as_bytes()),
        ],
    );
    // A push: the push job measures (its test plants the entry), then publishes.
    let (before, _) = forge.push_main(&[("NEWS.md", b"news\n")], &[], "news");
    let (clone, run) = measure_step(&forge, "main", Some(&before));
    passed(&run, "control: the push check");
    let sync = publish_step(&forge, &clone);
    assert_eq!(sync["ok"], true, "{sync}");
    assert!(
        sync["data"]["publish"]["published"].as_u64() > Some(0),
        "control: the push job publishes: {sync}"
    );
    let planted_published: Vec<Value> = published_entries(&forge)
        .into_iter()
        .filter(|e| {
            e["reads"] == ""
                && e["listings"] == serde_json::json!([])
                && e["artifacts"] == serde_json::json!({})
        })
        .collect();
    assert!(
        planted_published.is_empty(),
        "the push job signed an entry that read nothing: {planted_published:?}"
    );

    // A pull request with four more TODOs (6 against the limit of 5) reuses nothing planted.
    let todos = format!("{TODOS}pub fn c() {{}}\n");
    forge.pull_request(
        "agent/todos",
        &[("src/extra.rs", todos.as_bytes())],
        &[],
        false,
    );
    let (_, run) = measure_step(&forge, "agent/todos", None);
    let json = refused(&run, "PR CI reusing the planted reading");
    assert_eq!(
        standard(&json, "todo")["value"].as_f64(),
        Some(6.0),
        "{json}"
    );
}

// ---------------------------------------------------------------------------------------------
// Class 3: the key met the clone's own config in the publish step.
// ---------------------------------------------------------------------------------------------

/// A program git would run in the publish step, installed by the trunk's test: it appends
/// what it can see of the key — its own environment, the file it names, the environment of
/// every process it may read (discern's included) — to `$HOME/captured`.
const CAPTURE: &str = r#"#!/bin/sh
{
  echo "key=${DISCERN_EVIDENCE_KEY}"
  [ -f "${DISCERN_EVIDENCE_KEY}" ] && cat "${DISCERN_EVIDENCE_KEY}"
  for environ in /proc/[0-9]*/environ; do
    tr '\0' '\n' < "$environ" 2>/dev/null | grep '^DISCERN_EVIDENCE_KEY='
  done
} >> "$HOME/captured" 2>/dev/null
exit 0
"#;

#[test]
fn an_upload_pack_hook_or_fsmonitor_set_by_a_test_never_sees_the_evidence_key() {
    // The trunk's test points git's upload-pack, a reference-transaction hook and the
    // fsmonitor at tracked scripts that capture the key.
    let script = format!(
        "root=\"$(pwd)\"\n\
         git config remote.origin.uploadpack \"sh $root/scripts/capture.sh; git-upload-pack\"\n\
         git config core.fsmonitor \"$root/scripts/capture.sh\"\n\
         hooks=\"$(git rev-parse --git-path hooks)\"\n\
         mkdir -p \"$hooks\"\n\
         cp scripts/capture.sh \"$hooks/reference-transaction\"\n\
         cp scripts/capture.sh \"$hooks/pre-push\"\n\
         chmod +x \"$hooks/reference-transaction\" \"$hooks/pre-push\" scripts/capture.sh\n\
         {PASSING}"
    );
    let forge = forge(
        TEST_JOB,
        &[
            ("scripts/test.sh", script.as_bytes()),
            ("scripts/capture.sh", CAPTURE.as_bytes()),
        ],
    );
    let (before, _) = forge.push_main(&[("NEWS.md", b"news\n")], &[], "news");
    let (clone, run) = measure_step(&forge, "main", Some(&before));
    passed(&run, "control: the push check");
    let captured = forge.fixture.repo.home().join("captured");
    let _ = std::fs::remove_file(&captured);
    let sync = publish_step(&forge, &clone);
    let seen = std::fs::read_to_string(&captured).unwrap_or_default();
    assert!(
        !seen.contains("PRIVATE KEY") && !seen.contains("key=/"),
        "a program of the clone's config saw the evidence key in the publish step:\n{seen}\n{sync}"
    );
    assert!(
        !seen.contains("DISCERN_EVIDENCE_KEY="),
        "a program of the clone's config read the key from discern's environment:\n{seen}"
    );
    assert_eq!(
        sync["ok"], true,
        "the overridden config does not stop publishing: {sync}"
    );
    assert!(
        sync["data"]["publish"]["published"].as_u64() > Some(0),
        "control: the push job publishes: {sync}"
    );
}

// ---------------------------------------------------------------------------------------------
// Class 7: a pull-request job holding a key published when its test created a local `main` at
// HEAD, or its committed config named its own branch the trunk.
// ---------------------------------------------------------------------------------------------

#[test]
fn a_pull_request_job_holding_the_key_publishes_nothing_when_its_test_makes_a_local_main() {
    let forge = forge(TEST_JOB, &[("scripts/test.sh", PASSING.as_bytes())]);
    // The pull request's test creates a local `main` at HEAD (the script is not protected).
    let script = format!("git branch -f main HEAD\n{PASSING}");
    forge.pull_request(
        "agent/local-main",
        &[("scripts/test.sh", script.as_bytes())],
        &[],
        false,
    );
    let (clone, run) = measure_step(&forge, "agent/local-main", None);
    passed(&run, "control: PR CI on an innocuous change");
    let head = forge.out(&clone, &["rev-parse", "HEAD"]);
    assert_eq!(forge.out(&clone, &["rev-parse", "refs/heads/main"]), head);
    let sync = publish_step(&forge, &clone);
    assert_eq!(
        sync["data"]["publish"]["published"], 0,
        "a PR job published because its test made a local main: {sync}"
    );
    let why = sync["data"]["publish"]["not_published"]
        .as_str()
        .unwrap_or_default();
    assert!(why.contains("not the tip of the trunk main"), "{sync}");
    assert!(published_entries(&forge).is_empty(), "{sync}");
}

#[test]
fn a_pull_request_job_holding_the_key_publishes_nothing_when_its_config_names_its_own_branch() {
    // The pull request's committed config names its own branch (on the forge, at HEAD) the
    // trunk; its check fails (a protected change), and the job publishes anyway.
    let own = evidence_config("").replace(
        "[repository]\n",
        "[repository]\ntrunk = \"agent/own-trunk\"\n",
    );
    let forge = forge("", &[]);
    forge.pull_request(
        "agent/own-trunk",
        &[("discern.toml", own.as_bytes())],
        &[],
        false,
    );
    let (clone, _) = measure_step(&forge, "agent/own-trunk", None);
    let sync = publish_step(&forge, &clone);
    assert_eq!(
        sync["data"]["publish"]["published"], 0,
        "a PR job published because its config named its own branch the trunk: {sync}"
    );
    assert!(published_entries(&forge).is_empty(), "{sync}");
}

// ---------------------------------------------------------------------------------------------
// Class 6: evidence was trusted by the merge base's signers.
// ---------------------------------------------------------------------------------------------

/// Publish `entry` on the forge's evidence ref, signed by `key` for [`REPOSITORY`]: what a
/// holder of a CI key with push access can do.
fn plant_signed(forge: &Forge, key: &Path, entry: &Value) {
    use discern::testing::commit::shared_refs::{edit_tree, set_ref, write_commit};
    use discern::testing::evidence::bundle::{Bundle, NAMESPACE};
    use discern::testing::evidence::shared::tree;
    let bytes = serde_json::to_vec(entry).unwrap();
    let manifest = Bundle::manifest(REPOSITORY, &bytes, None);
    let signature = discern::testing::approval::sign_for(
        NAMESPACE,
        key,
        std::str::from_utf8(&manifest).unwrap(),
    )
    .unwrap();
    let bundle = Bundle {
        entry: bytes,
        findings: None,
        signature: signature.into_bytes(),
    };
    let repo = discern::Repo::discover(&forge.contributor).unwrap();
    let commit: gix::ObjectId = entry["commit"].as_str().unwrap().parse().unwrap();
    let dir = tree::dir(commit, entry["identity"].as_str().unwrap());
    let files: Vec<(String, Vec<u8>)> = tree::files(&bundle, 1)
        .into_iter()
        .map(|(name, bytes)| (format!("{dir}/{name}"), bytes))
        .collect();
    let tree_id = edit_tree(&repo, None, &files, &[]).unwrap();
    let planted = write_commit(&repo, tree_id, &[], "planted").unwrap();
    let old = repo.resolve_ref(tree::REF).unwrap().map(|r| r.commit);
    set_ref(&repo, tree::REF, old, planted, "plant").unwrap();
    forge.git(
        &forge.contributor,
        &[
            "push",
            "-q",
            "-f",
            "origin",
            &format!("{}:{}", tree::REF, tree::REF),
        ],
    );
}

#[test]
fn a_branch_forked_before_a_ci_key_was_rotated_out_reuses_nothing_the_old_key_signed() {
    let config = evidence_config("");
    let (identity, _) = todo_identity(&config);
    let forge = forge("", &[]);
    let old = forge.main();
    // The leaked CI key signs 0 TODOs for the trunk's commit, having read a file no pull
    // request touches, and its holder pushes it to the forge's evidence ref.
    plant_signed(
        &forge,
        &forge.keys.second,
        &forged_entry(&identity, &old, 0.0, "README.md"),
    );
    let todos = format!("{TODOS}pub fn c() {{}}\n");
    let pull_request = [("src/extra.rs", todos.as_bytes())];
    // Control: while the key is listed, a pull request reuses it (what evidence is for).
    forge.sync_main(&forge.contributor);
    forge.pull_request_from(&old, "agent/before", &pull_request, &[], false);
    let (_, run) = measure_step(&forge, "agent/before", None);
    let json = passed(&run, "control: the listed key's bundle is reused");
    assert_eq!(standard(&json, "todo")["measurement"], "reused", "{json}");

    // The owner rotates the key out, approved, and it lands.
    let only_owner = forge.keys.owner_line();
    forge.pull_request(
        "owner/rotate",
        &[(SIGNERS, only_owner.as_bytes())],
        &[],
        false,
    );
    forge.owner_approves("owner/rotate");
    let before = forge.main();
    forge.git(&forge.contributor, &["fetch", "-q", "origin"]);
    let rotated = forge.out(&forge.contributor, &["rev-parse", "origin/owner/rotate"]);
    forge.push_commit(&rotated);
    passed(&forge.push_ci(&before), "control: the rotation lands");

    // The attack: the same pull request, forked before the rotation.
    forge.sync_main(&forge.contributor);
    forge.pull_request_from(&old, "agent/old", &pull_request, &[], false);
    let (_, run) = measure_step(&forge, "agent/old", None);
    let json = refused(&run, "PR CI reusing a bundle of the rotated-out key");
    assert_eq!(
        standard(&json, "todo")["value"].as_f64(),
        Some(6.0),
        "{json}"
    );
}

// ---------------------------------------------------------------------------------------------
// The README's publish job, and what a sealed sync refuses.
// ---------------------------------------------------------------------------------------------

#[test]
fn the_readmes_publish_job_publishes_from_a_fresh_clone_and_a_local_forge_is_refused() {
    let forge = forge(TEST_JOB, &[("scripts/test.sh", PASSING.as_bytes())]);
    let (before, _) = forge.push_main(&[("NEWS.md", b"news\n")], &[], "news");
    let (_, run) = measure_step(&forge, "main", Some(&before));
    passed(&run, "the push check");
    // The publish job: its own fresh clone, nothing measured or run there before, the key
    // given as the secret's text.
    let clone = forge.ci_clone("main");
    let key = std::fs::read_to_string(&forge.keys.second).unwrap();
    let env = [("DISCERN_EVIDENCE_KEY", key.as_str())];
    let run = ci(&forge, &clone, &["sync", "--push", "--json"], &env);
    let json = passed(&run, "the publish job");
    assert_eq!(json["data"]["publish"]["published"], 1, "{json}");
    let not_measured = json["data"]["publish"]["not_measured"].to_string();
    assert!(
        not_measured.contains("tests (it needs a job"),
        "the run Standard is named as not published: {json}"
    );
    let text = ci(&forge, &clone, &["sync", "--push"], &env).stdout;
    assert!(text.contains("evidence: published"), "{text}");

    // A clone whose config sends the forge's address to a local repository (where `main` could
    // be anything) is refused while the key is held, naming the key and the fix.
    let url = forge.url();
    let fake = forge.fixture.repo.parent().join("fake.git");
    forge.git(
        forge.fixture.repo.parent(),
        &["clone", "-q", "--bare", &url, fake.to_str().unwrap()],
    );
    forge.git(
        &clone,
        &["config", &format!("url.{}.insteadOf", fake.display()), &url],
    );
    let json = refused(
        &ci(&forge, &clone, &["sync", "--push", "--json"], &env),
        "a sealed sync with the forge rewritten to a local path",
    );
    let message = json["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("DISCERN_EVIDENCE_KEY") && message.contains("insteadof"),
        "{json}"
    );
    // Without the key, the same clone syncs as the user's git would.
    passed(
        &ci(&forge, &clone, &["sync", "--json"], &[]),
        "a sync without the key",
    );
}
