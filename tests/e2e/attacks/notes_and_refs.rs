//! Classes 11–19: programs on PATH, notes, the forge's merge ref, replays and namespaces.

use std::path::Path;

use serde_json::{Value, json};

use super::*;
use crate::support::Fixture;
use crate::support::config::{Config, Standard};

// 11. Programs on PATH.
// ---------------------------------------------------------------------------------------------

/// A folder `name` beside the repository holding `program`, a shell script: `PATH` with it
/// first.
fn fake_path(fixture: &Fixture, name: &str, program: &str, script: &str) -> String {
    let dir = fixture.repo.parent().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(program);
    std::fs::write(&file, script).unwrap();
    let mut mode = std::fs::metadata(&file).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut mode, 0o755);
    std::fs::set_permissions(&file, mode).unwrap();
    format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

const FAKE_SSH_KEYGEN: &str = r#"#!/bin/sh
case "$*" in
  *find-principals*) echo "owner@example.com" ;;
  *) echo 'Good "discern-approval" signature for owner@example.com with ED25519 key SHA256:x' ;;
esac
exit 0
"#;

/// Class 11a: a fake `ssh-keygen` first on PATH says every signature is good and names the
/// owner; signatures that do not verify — garbage, the attacker's key claiming to be the owner,
/// the owner's real signature over another subject — in the approvals note (and in a Proof
/// note on the trunk) approve nothing.
#[test]
fn class_11a_a_fake_ssh_keygen_on_path_approves_nothing() {
    let forge = Forge::new(signed_config("", ""), &[]);
    let fixture = &forge.fixture;
    let path_env = fake_path(fixture, "fake-ssh", "ssh-keygen", FAKE_SSH_KEYGEN);
    let env = [("PATH", path_env.as_str())];
    let path = effort(fixture, "forge", &[("src/more.rs", TODOS.as_bytes())]);
    let propose = fixture.run_in(
        &path,
        &["standards", "propose", "todo", "--reason", REASON, "--json"],
        &[],
    );
    passed(&propose, "the proposal");
    passed(&fixture.run_in(&path, &["done", "--json"], &[]), "the gate");
    let head = fixture.git_out(&path, &["rev-parse", "HEAD"]);
    let trunk = fixture.git_out(fixture.path(), &["rev-parse", "main"]);
    let token = discern::testing::proposals::approval_token("todo", 6.0, REASON);
    let subject = format!(
        "discern-approval-v1\ntrunk main\ntrunk-commit {trunk}\nhead {head}\ntoken {token}\n"
    );
    let owner = signed_approval(&forge.keys.owner, "owner@example.com", "anything\n");
    // The attacker's key, claiming to be the owner's.
    let impostor = |payload: &str| {
        let mut approval = signed_approval(&forge.keys.attacker, "owner@example.com", payload);
        approval["fingerprint"] = owner["fingerprint"].clone();
        approval
    };
    let garbage = json!({
        "version": 1,
        "payload": subject,
        "channel": "signed",
        "principal": "owner@example.com",
        "fingerprint": owner["fingerprint"],
        "signature": "-----BEGIN SSH SIGNATURE-----\nAAAA\n-----END SSH SIGNATURE-----\n",
    });
    // The owner's real signature, made for another subject (this HEAD on another trunk commit).
    let mut elsewhere = signed_approval(
        &forge.keys.owner,
        "owner@example.com",
        &subject.replace(
            &format!("trunk-commit {trunk}"),
            &format!("trunk-commit {head}"),
        ),
    );
    elsewhere["payload"] = json!(subject);
    for (what, forged) in [
        ("garbage", garbage),
        ("the attacker's key", impostor(&subject)),
        ("another subject's signature", elsewhere),
    ] {
        forge.git(
            &path,
            &[
                "notes",
                "--ref",
                "refs/notes/discern-approvals",
                "add",
                "-f",
                "-m",
                &forged.to_string(),
                &head,
            ],
        );
        let run = fixture.run_in(&path, &["accept", "--confirmed", "--json"], &env);
        refused(&run, &format!("accept with a fake ssh-keygen: {what}"));
        assert_eq!(
            fixture.git_out(fixture.path(), &["rev-parse", "main"]),
            trunk
        );
    }

    // On the trunk: a loosening pushed with a Proof note the attacker's key signed as the
    // owner.
    let loose = signed_config("", "").replace("limit = 5", "limit = 9");
    let (before, landed) = forge.push_main(&[("discern.toml", loose.as_bytes())], &[], "relax");
    let limit = approved_limit("todo", 5.0, 9.0);
    let approval = impostor(&payload(&before, &landed, &[&limit]));
    let note = proof_note(&before, &landed, &[limit], &[], approval);
    add_note(&forge, &forge.contributor, &landed, &note);
    forge.push_notes();
    let clone = forge.ci_clone("main");
    let run = forge.ci(
        &clone,
        &["standards", "--baseline", &before, "--json"],
        &env,
    );
    refused(&run, "the push check with a fake ssh-keygen");
}

/// Class 11b: a fake `git` first on PATH answers everything with a fixed string; a pull
/// request that replaces the repository component does not look unchanged.
#[test]
fn class_11b_a_fake_git_on_path_does_not_hide_a_replaced_component() {
    let forge = Forge::new(
        signed_config(COMPONENT, ""),
        &[("tools/p.wasm", &pattern_wasm())],
    );
    forge.pull_request(
        "agent/git",
        &[("tools/p.wasm", &pattern_wasm_renamed())],
        &[],
        false,
    );
    let clone = forge.ci_clone("agent/git");
    let path_env = fake_path(
        &forge.fixture,
        "fake-git",
        "git",
        "#!/bin/sh\necho ok\nexit 0\n",
    );
    let run = forge.ci(
        &clone,
        &["standards", "--json"],
        &[("PATH", path_env.as_str())],
    );
    let json = refused(&run, "PR CI with a fake git");
    assert_ne!(json["data"]["limits"]["status"], "verified", "{json}");
}

// ---------------------------------------------------------------------------------------------
// 12. A note is not a baseline by being there.
// ---------------------------------------------------------------------------------------------

/// Class 12a: a loosening pushed straight to main with a hand-written Proof note, then an
/// innocuous commit: the trunk's own check (no `--baseline`) in CI still fails.
#[test]
fn class_12a_a_hand_written_proof_note_is_not_a_baseline() {
    let forge = Forge::new(signed_config("", ""), &[]);
    let loose = signed_config("", "").replace("limit = 5", "limit = 9");
    let (before, landed) = forge.push_main(&[("discern.toml", loose.as_bytes())], &[], "relax");
    let limit = approved_limit("todo", 5.0, 9.0);
    let approval = terminal_approval(&payload(&before, &landed, &[&limit]));
    let note = proof_note(&before, &landed, &[limit], &[], approval);
    add_note(&forge, &forge.contributor, &landed, &note);
    forge.push_notes();
    forge.push_main(&[("README.md", b"# innocuous\n")], &[], "innocuous");
    let clone = forge.ci_clone("main");
    let run = forge.ci(&clone, &["standards", "--json"], &[]);
    // Where the trunk is required, a note or a first parent is no anchor: fail closed, naming
    // the flag that anchors the check; the push check names the loosening.
    let json = refused(&run, "the trunk's check after a hand-written note");
    names(&json, "--baseline");
    let json = refused(
        &forge.push_ci(&before),
        "the push check after a hand-written note",
    );
    names(&json, "5 -> 9");
}

/// Class 12b: a loosening pushed straight to main, then an innocuous commit carrying a
/// hand-written Proof note that says it landed on the loosening commit (so the landing it
/// claims changed nothing and needs no approval), then another innocuous commit: neither the
/// trunk's own check nor the push check takes that note as a baseline.
#[test]
fn class_12b_a_note_claiming_a_landing_on_the_loosening_is_not_a_baseline() {
    let forge = Forge::new(signed_config("", ""), &[]);
    let loose = signed_config("", "").replace("limit = 5", "limit = 9");
    let (before, loosening) = forge.push_main(&[("discern.toml", loose.as_bytes())], &[], "relax");
    let (_, claimed) = forge.push_main(&[("README.md", b"# claimed\n")], &[], "a landing");
    let approval = terminal_approval(&payload(&loosening, &claimed, &[]));
    let note = proof_note(&loosening, &claimed, &[], &[], approval);
    add_note(&forge, &forge.contributor, &claimed, &note);
    forge.push_notes();
    forge.push_main(&[("README.md", b"# innocuous\n")], &[], "innocuous");
    let clone = forge.ci_clone("main");
    let run = forge.ci(&clone, &["standards", "--json"], &[]);
    let json = refused(&run, "the trunk's check after a claimed landing");
    names(&json, "--baseline");
    refused(
        &forge.push_ci(&before),
        "the push check across a claimed landing",
    );
}

// ---------------------------------------------------------------------------------------------
// 13. The forge's own pull-request checkout.
// ---------------------------------------------------------------------------------------------

/// Class 13: CI checks out the forge's merge of the pull request into main (GitHub's
/// `refs/pull/N/merge`, a detached merge commit, as `actions/checkout` does by default) and
/// the pull request loosens the limit.
#[test]
fn class_13_a_loosening_checked_out_as_the_forges_merge_ref_fails_pr_ci() {
    let forge = Forge::new(signed_config("", ""), &[]);
    let loose = signed_config("", "").replace("limit = 5", "limit = 9");
    let head = forge.pull_request(
        "agent/merged",
        &[("discern.toml", loose.as_bytes())],
        &[],
        false,
    );
    let clone = forge.merge_ref_clone(&head);
    let json = refused(
        &forge.ci(&clone, &["standards", "--json"], &[]),
        "the merge ref",
    );
    names(&json, "5 -> 9");
}

// ---------------------------------------------------------------------------------------------
// 14. A replayed approval.
// ---------------------------------------------------------------------------------------------

/// Class 14: the owner once approved todo 5 -> 9 (a signed landing) and later tightened it back
/// to 5; the attacker pushes the same loosening again and copies the old Proof note, with its
/// valid signature, onto the new commit.
#[test]
fn class_14_a_replayed_owner_signature_approves_nothing() {
    let forge = Forge::new(signed_config("", ""), &[]);
    let loose = signed_config("", "").replace("limit = 5", "limit = 9");
    let tight = signed_config("", "");
    let (before, landed) =
        forge.push_main(&[("discern.toml", loose.as_bytes())], &[], "relax todo");
    let limit = approved_limit("todo", 5.0, 9.0);
    let approval = signed_approval(
        &forge.keys.owner,
        "owner@example.com",
        &payload(&before, &landed, &[&limit]),
    );
    let note = proof_note(&before, &landed, &[limit], &[], approval);
    add_note(&forge, &forge.contributor, &landed, &note);
    forge.push_main(
        &[("discern.toml", tight.as_bytes())],
        &[],
        "pin todo 9 -> 5",
    );
    let (before, again) = forge.push_main(&[("discern.toml", loose.as_bytes())], &[], "relax todo");
    forge.git(
        &forge.contributor,
        &[
            "notes",
            "--ref",
            "refs/notes/discern",
            "copy",
            &landed,
            &again,
        ],
    );
    forge.push_notes();
    refused(&forge.push_ci(&before), "a replayed note, the push check");
    let clone = forge.ci_clone("main");
    refused(
        &forge.ci(&clone, &["standards", "--json"], &[]),
        "a replayed note, the trunk's own check",
    );
}

// ---------------------------------------------------------------------------------------------
// 15. A config that is not a file.
// ---------------------------------------------------------------------------------------------

/// Class 15: the pull request turns `discern.toml` into a symlink to a file with a loose limit.
#[test]
fn class_15_a_symlinked_config_fails_pr_ci() {
    let forge = Forge::new(signed_config("", ""), &[]);
    let loose = signed_config("", "").replace("limit = 5", "limit = 500");
    forge.git(&forge.contributor, &["fetch", "-q", "origin"]);
    forge.git(
        &forge.contributor,
        &["checkout", "-q", "-B", "agent/link", "origin/main"],
    );
    std::fs::write(forge.contributor.join("loose.toml"), &loose).unwrap();
    std::fs::remove_file(forge.contributor.join("discern.toml")).unwrap();
    std::os::unix::fs::symlink("loose.toml", forge.contributor.join("discern.toml")).unwrap();
    forge.git(&forge.contributor, &["add", "-A"]);
    forge.git(
        &forge.contributor,
        &["commit", "-q", "-m", "a linked config"],
    );
    forge.git(&forge.contributor, &["push", "-q", "origin", "agent/link"]);
    refused(&forge.pr_ci("agent/link"), "a symlinked config");
}

// ---------------------------------------------------------------------------------------------
// 16. The agent's own trunk override.
// ---------------------------------------------------------------------------------------------

/// Class 16: an agent proves a loosening with `DISCERN_TRUNK` pointing at its own branch (so
/// the branch would be compared with itself), then — the gate having refused — writes the
/// gate's Proof by hand and asks to land it, with and without the override: nothing lands.
#[test]
fn class_16_a_proof_made_against_its_own_branch_lands_nothing() {
    let fixture = Fixture::new(Config::landing());
    let loose = Config::landing().standard(Standard::todo(9)).to_string();
    let path = effort(
        &fixture,
        "self",
        &[
            ("discern.toml", loose.as_bytes()),
            ("src/more.rs", TODOS.as_bytes()),
        ],
    );
    let head = fixture.git_out(&path, &["rev-parse", "HEAD"]);
    let before = fixture.git_out(fixture.path(), &["rev-parse", "main"]);
    let git_dir = PathBuf::from(fixture.git_out(&path, &["rev-parse", "--absolute-git-dir"]));
    for trunk in ["agent/self", "HEAD", "refs/heads/agent/self"] {
        let env = [("DISCERN_TRUNK", trunk)];
        // Each round starts without the previous round's hand-written Proof (class 17).
        let _ = std::fs::remove_file(git_dir.join("discern/gate-proof"));
        let run = fixture.run_in(&path, &["done", "--json"], &env);
        refused(&run, &format!("done with DISCERN_TRUNK={trunk}"));
        let proof = json!({
            "version": 1, "commit": head, "branch": "agent/self", "trunk": "main",
            "trunk_commit": before, "diffstat": "+4 −0 in 2 files",
            "standards": [{ "name": "todo", "value": 6.0, "limit": 9.0, "verdict": "held" }],
            "proposals": [], "line": "Proof: agent/self; Standards: 1 pass.",
        });
        std::fs::create_dir_all(git_dir.join("discern")).unwrap();
        std::fs::write(git_dir.join("discern/gate-proof"), proof.to_string()).unwrap();
        let run = fixture.run_in(&path, &["accept", "--confirmed", "--json"], &env);
        refused(&run, &format!("accept with DISCERN_TRUNK={trunk}"));
        let run = fixture.run_in(&path, &["accept", "--confirmed", "--json"], &[]);
        refused(&run, &format!("accept after DISCERN_TRUNK={trunk}"));
        assert_eq!(
            fixture.git_out(fixture.path(), &["rev-parse", "main"]),
            before
        );
    }
}

// ---------------------------------------------------------------------------------------------
// 17. A Proof the gate did not write.
// ---------------------------------------------------------------------------------------------

/// Class 17: the agent writes the gate's Proof by hand for a breaching HEAD (6 TODOs against a
/// ceiling of 5) and runs `done`: it must not hand back that Proof, with its Proof line to relay
/// to the owner, as if the gate had passed.
#[test]
fn class_17_done_does_not_relay_a_hand_written_proof() {
    let fixture = Fixture::new(Config::landing());
    let path = effort(&fixture, "relay", &[("src/more.rs", TODOS.as_bytes())]);
    let head = fixture.git_out(&path, &["rev-parse", "HEAD"]);
    let before = fixture.git_out(fixture.path(), &["rev-parse", "main"]);
    let git_dir = PathBuf::from(fixture.git_out(&path, &["rev-parse", "--absolute-git-dir"]));
    let proof = json!({
        "version": 1, "commit": head, "branch": "agent/relay", "trunk": "main",
        "trunk_commit": before, "diffstat": "+4 −0 in 1 file",
        "standards": [{ "name": "todo", "value": 2.0, "limit": 5.0, "verdict": "held" }],
        "proposals": [], "line": "Proof: agent/relay; Standards: 1 pass.",
    });
    std::fs::create_dir_all(git_dir.join("discern")).unwrap();
    std::fs::write(git_dir.join("discern/gate-proof"), proof.to_string()).unwrap();
    let run = fixture.run_in(&path, &["done", "--json"], &[]);
    refused(&run, "done with a hand-written Proof");
}

// ---------------------------------------------------------------------------------------------
// 18. Signatures for something else.
// ---------------------------------------------------------------------------------------------

/// `payload` signed with `key` for the signature namespace `namespace`, as the channel of a
/// recorded approval by `principal`.
fn signed_for(namespace: &str, key: &Path, principal: &str, payload: &str) -> Value {
    let mut approval = signed_approval(key, principal, payload);
    approval["signature"] = json!(Keys::sign_in(namespace, key, payload).1);
    approval
}

/// Class 18: the owner's key signs the approval subject, but not as an approval: made for
/// another signature namespace (`git`, as a signed commit is), or by a key the trunk's signers
/// file allows only for `git`.
#[test]
fn class_18_a_signature_for_another_namespace_approves_nothing() {
    for (restricted, namespace) in [(false, "git"), (true, "discern-approval")] {
        let forge = Forge::new(signed_config("", ""), &[]);
        if restricted {
            let line = forge
                .keys
                .owner_line()
                .replacen(' ', " namespaces=\"git\" ", 1);
            forge.push_main(
                &[(SIGNERS, line.as_bytes())],
                &[],
                "the key signs commits only",
            );
        }
        let loose = signed_config("", "").replace("limit = 5", "limit = 9");
        let (before, landed) =
            forge.push_main(&[("discern.toml", loose.as_bytes())], &[], "relax todo");
        let limit = approved_limit("todo", 5.0, 9.0);
        let approval = signed_for(
            namespace,
            &forge.keys.owner,
            "owner@example.com",
            &payload(&before, &landed, &[&limit]),
        );
        let note = proof_note(&before, &landed, &[limit], &[], approval);
        add_note(&forge, &forge.contributor, &landed, &note);
        forge.push_notes();
        let what = format!("namespace {namespace}, key restricted to git: {restricted}");
        refused(&forge.push_ci(&before), &what);
    }
}

// ---------------------------------------------------------------------------------------------
// 19. The same loosening, spelled otherwise.
// ---------------------------------------------------------------------------------------------

/// Class 19: a pull request loosens `todo` in another TOML spelling — a float, a hex integer,
/// an exponent, infinity, NaN, a quoted table name, dotted keys, an inline table — and a push
/// sets a non-finite limit on main itself.
#[test]
fn class_19_a_loosening_spelled_otherwise_fails_ci() {
    let forge = Forge::new(signed_config("", ""), &[]);
    let table = "[standards.todo]\ndirection = \"down\"\nlimit = 5\nproducer = \"builtin:pattern\"\nconfig = { pattern = \"TODO\", paths = [\"src/**\"] }\nmetric = \"matches\"\n";
    let trunk = signed_config("", "");
    assert!(trunk.contains(table));
    let spellings = [
        ("float", table.replace("limit = 5", "limit = 9.0")),
        ("hex", table.replace("limit = 5", "limit = 0x9")),
        ("exponent", table.replace("limit = 5", "limit = 5e3")),
        ("inf", table.replace("limit = 5", "limit = inf")),
        ("nan", table.replace("limit = 5", "limit = nan")),
        ("negative-nan", table.replace("limit = 5", "limit = -nan")),
        (
            "quoted",
            table
                .replace("[standards.todo]", "[standards.\"todo\"]")
                .replace("limit = 5", "limit = 9"),
        ),
        (
            "dotted",
            "[standards]\ntodo.direction = \"down\"\ntodo.limit = 9\ntodo.producer = \"builtin:pattern\"\ntodo.config = { pattern = \"TODO\", paths = [\"src/**\"] }\ntodo.metric = \"matches\"\n".to_owned(),
        ),
        (
            "inline",
            "[standards]\ntodo = { direction = \"down\", limit = 9, producer = \"builtin:pattern\", config = { pattern = \"TODO\", paths = [\"src/**\"] }, metric = \"matches\" }\n".to_owned(),
        ),
    ];
    for (name, spelled) in spellings {
        let config = trunk.replace(table, &spelled);
        let branch = format!("agent/{name}");
        forge.pull_request(&branch, &[("discern.toml", config.as_bytes())], &[], false);
        refused(&forge.pr_ci(&branch), name);
    }
    // The non-finite limits pushed straight to main, where a trunk's config is read tolerantly.
    for limit in ["inf", "nan"] {
        let spelled = table.replace("limit = 5", &format!("limit = {limit}"));
        let config = trunk.replace(table, &spelled);
        let (before, _) = forge.push_main(&[("discern.toml", config.as_bytes())], &[], limit);
        refused(
            &forge.push_ci(&before),
            &format!("a push of limit = {limit}"),
        );
        forge.push_main(&[("discern.toml", trunk.as_bytes())], &[], "restore");
    }
}
