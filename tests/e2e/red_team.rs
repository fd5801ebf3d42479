//! Red team (approvals in the tree, the anchored policy, the trunk's segments): attacks by a
//! pull-request author, a pusher and an agent with a shell that the attacker suite does not
//! cover. Each `hole_*` test asserts the SECURE outcome — CI fails (`ok: false`, non-zero), or
//! `accept` lands nothing — so a failing `hole_*` test means discern let the attack through.
//! The `control_*` tests run the same shapes without the attack and pass, so a failing
//! `hole_*` test is not a broken setup.

use std::path::Path;

use serde_json::Value;

use crate::attacks::{add_note, payload, proof_note, signed_config, terminal_approval};
use crate::support::APPROVAL_REPOSITORY;
use crate::support::config::SIGNERS;
use crate::support::forge::{Forge, Keys, REASON, passed, refused, said};

/// Four more TODOs: with the fixture's two, 6 against the limit of 5.
pub(crate) const TODOS: &str = "// TODO 1\n// TODO 2\n// TODO 3\n// TODO 4\n";
const WORKFLOW: &str = ".github/workflows/ci.yml";
const WORKFLOW_BODY: &str = "on: [push, pull_request]\njobs:\n  standards:\n    runs-on: ubuntu-latest\n    steps:\n      - run: discern standards --baseline \"${{ github.event.before }}\"\n";

#[track_caller]
fn names(json: &Value, what: &str) {
    let text = said(json);
    assert!(
        text.contains(what),
        "{what} is not named in:\n{text}\n{json}"
    );
}

/// A Proof note as `accept` writes it for `commit` landed on `landed_on`, approving nothing:
/// what anyone who can push `refs/notes/discern` can write.
fn hand_written_note(landed_on: &str, commit: &str) -> Value {
    let approval = terminal_approval(&payload(landed_on, commit, &[]));
    proof_note(landed_on, commit, &[], &[], approval)
}

/// A tree approval of `items` signed with `key` (`ssh-keygen -Y sign -n discern-approval`),
/// as `discern approve` writes it: its path and its bytes.
fn tree_approval(
    key: &Path,
    principal: &str,
    items: discern::testing::approval::tree::Items,
) -> (String, Vec<u8>) {
    let (fingerprint, signature) = Keys::sign(key, &items.payload());
    let approval = discern::testing::approval::tree::TreeApproval {
        version: discern::testing::approval::tree::VERSION,
        items,
        principal: principal.to_owned(),
        fingerprint,
        signature,
    };
    (approval.path(), approval.to_bytes().unwrap())
}

// ---------------------------------------------------------------------------------------------
// Controls: the shapes below, without the attack.
// ---------------------------------------------------------------------------------------------

/// An owner-approved loosening (a PR, `discern approve`, fast-forwarded onto main) passes the
/// push check, also with a hand-written note on the landed commit; a plain tightening passes.
#[test]
fn control_an_approved_landing_with_a_note_and_a_tightening_pass_the_push_check() {
    let config = signed_config("", &format!("protected = [\"{WORKFLOW}\"]\n"));
    let forge = Forge::new(&config, &[(WORKFLOW, WORKFLOW_BODY.as_bytes())]);
    let head = forge.pull_request(
        "agent/more",
        &[("src/more.rs", TODOS.as_bytes())],
        &[],
        true,
    );
    refused(&forge.pr_ci("agent/more"), "PR CI before the approval");
    forge.owner_approves("agent/more");
    let json = passed(&forge.pr_ci("agent/more"), "PR CI with the approval");
    assert_eq!(json["data"]["limits"]["status"], "approved", "{json}");
    let before = forge.main();
    forge.git(&forge.contributor, &["fetch", "-q", "origin"]);
    let landed = forge.out(&forge.contributor, &["rev-parse", "origin/agent/more"]);
    assert_ne!(landed, head, "the approval commit is on top");
    forge.push_commit(&landed);
    passed(&forge.push_ci(&before), "the push of an approved PR");
    add_note(
        &forge,
        &forge.contributor,
        &landed,
        &hand_written_note(&before, &landed),
    );
    forge.push_notes();
    passed(
        &forge.push_ci(&before),
        "the push of an approved PR, with a note",
    );

    // A tightening pushed straight to main needs nothing.
    let tight = config.replace("limit = 5", "limit = 4");
    let forge = Forge::new(&config, &[(WORKFLOW, WORKFLOW_BODY.as_bytes())]);
    let (before, _) = forge.push_main(&[("discern.toml", tight.as_bytes())], &[], "pin");
    passed(&forge.push_ci(&before), "a tightening");
}

// ---------------------------------------------------------------------------------------------
// Hole 1 (a pusher): a hand-written note saying the pushed commit "landed on" a trunk commit
// from before the baseline makes the segment start there, so the net change is measured from
// an old state the attacker picks, and the stretch baseline..commit is never judged.
// ---------------------------------------------------------------------------------------------

#[test]
fn hole_1_a_note_claiming_a_landing_before_the_baseline_hides_a_loosening_from_the_push_check() {
    // The trunk started at 10 and the owner tightened it to 5.
    let loose = signed_config("", "").replace("limit = 5", "limit = 10");
    let forge = Forge::new(&loose, &[]);
    let old = forge.main();
    let tight = signed_config("", "");
    forge.push_main_from(
        forge.owner.as_path(),
        &[("discern.toml", tight.as_bytes())],
        &[],
        "pin todo 10 -> 5",
    );
    // Control: the loosening pushed alone fails the push check.
    let (before, relaxed) = forge.push_main(&[("discern.toml", loose.as_bytes())], &[], "relax");
    let json = refused(&forge.push_ci(&before), "the loosening without a note");
    names(&json, "5 -> 10");
    // The attack: a note on the loosening claiming it landed on the trunk's first commit.
    add_note(
        &forge,
        &forge.contributor,
        &relaxed,
        &hand_written_note(&old, &relaxed),
    );
    forge.push_notes();
    let json = refused(
        &forge.push_ci(&before),
        "a note claiming a landing on a commit before the baseline",
    );
    names(&json, "5 -> 10");
}

// ---------------------------------------------------------------------------------------------
// Hole 2 (a pusher): one segment approved in the tree marks the whole check `approved`, and
// `conclude` returns before counting what other segments changed without an approval: a
// deleted Standard or a protected table/file change elsewhere then passes.
// ---------------------------------------------------------------------------------------------

#[test]
fn hole_2a_an_approved_segment_hides_an_unapproved_protected_change_in_the_next() {
    let config = signed_config("", &format!("protected = [\"{WORKFLOW}\"]\n"));
    let forge = Forge::new(&config, &[(WORKFLOW, WORKFLOW_BODY.as_bytes())]);
    forge.pull_request(
        "agent/more",
        &[("src/more.rs", TODOS.as_bytes())],
        &[],
        true,
    );
    forge.owner_approves("agent/more");
    let before = forge.main();
    forge.git(&forge.contributor, &["fetch", "-q", "origin"]);
    let landed = forge.out(&forge.contributor, &["rev-parse", "origin/agent/more"]);
    forge.push_commit(&landed);
    passed(&forge.push_ci(&before), "control: the approved PR alone");
    // The pusher adds a commit that drops discern from the protected CI definition, and cuts
    // the push with a hand-written note on the approved commit.
    let gutted = "on: [push]\njobs: {}\n";
    forge.push_main(&[(WORKFLOW, gutted.as_bytes())], &[], "tidy CI");
    let json = refused(
        &forge.push_ci(&before),
        "control: the same push without the note",
    );
    names(&json, &format!("file:{WORKFLOW}"));
    add_note(
        &forge,
        &forge.contributor,
        &landed,
        &hand_written_note(&before, &landed),
    );
    forge.push_notes();
    let json = refused(
        &forge.push_ci(&before),
        "an unapproved protected file change after an approved segment",
    );
    names(&json, &format!("file:{WORKFLOW}"));
}

#[test]
fn hole_2b_an_approved_segment_hides_an_unapproved_standard_deletion_in_the_next() {
    let two = signed_config(
        "\n[standards.fixme]\ndirection = \"down\"\nlimit = 5\nproducer = \"builtin:pattern\"\nconfig = { pattern = \"FIXME\", paths = [\"src/**\"] }\nmetric = \"matches\"\n",
        "",
    );
    let forge = Forge::new(&two, &[]);
    forge.pull_request(
        "agent/more",
        &[("src/more.rs", TODOS.as_bytes())],
        &[],
        true,
    );
    forge.owner_approves("agent/more");
    let before = forge.main();
    forge.git(&forge.contributor, &["fetch", "-q", "origin"]);
    let landed = forge.out(&forge.contributor, &["rev-parse", "origin/agent/more"]);
    forge.push_commit(&landed);
    passed(&forge.push_ci(&before), "control: the approved PR alone");
    let on_main = std::fs::read_to_string(forge.contributor.join("discern.toml")).unwrap();
    let cut = on_main
        .split("\n[standards.fixme]")
        .next()
        .unwrap()
        .to_owned()
        + &format!(
            "\n[acceptance]\nallowed_signers = \"{SIGNERS}\"\nrepository = \"{APPROVAL_REPOSITORY}\"\n"
        );
    forge.push_main(&[("discern.toml", cut.as_bytes())], &[], "drop fixme");
    add_note(
        &forge,
        &forge.contributor,
        &landed,
        &hand_written_note(&before, &landed),
    );
    forge.push_notes();
    let json = refused(
        &forge.push_ci(&before),
        "an unapproved Standard deletion after an approved segment",
    );
    names(&json, "fixme");
}

// ---------------------------------------------------------------------------------------------
// Hole 3 (a PR author): an approval in the tree is bound to its items and base blob only, so
// after the trunk returns to the same discern.toml (a revert, a tightening back), the owner's
// old approval — still in the tree — approves the same loosening again, forever.
// ---------------------------------------------------------------------------------------------

/// The trunk at todo 5; the owner once approved 5 -> 6 (landed), then tightened back to
/// exactly the same discern.toml; the attacker's PR `agent/again` loosens 5 -> 6 again and
/// carries a copy of the old approval file under another name.
fn replayed_pull_request() -> Forge {
    let forge = Forge::new(signed_config("", ""), &[]);
    let start = forge.main();
    let original = signed_config("", "");
    // 1. The owner approves a loosening once; it lands (the push check passes).
    forge.pull_request(
        "agent/once",
        &[("src/more.rs", TODOS.as_bytes())],
        &[],
        true,
    );
    let file = forge.owner_approves("agent/once");
    forge.git(&forge.contributor, &["fetch", "-q", "origin"]);
    let landed = forge.out(&forge.contributor, &["rev-parse", "origin/agent/once"]);
    let before = forge.main();
    forge.push_commit(&landed);
    passed(
        &forge.push_ci(&before),
        "control: the approved loosening lands",
    );
    // 2. The owner tightens back: the TODOs gone, discern.toml byte for byte as it was.
    let (before, _) = forge.push_main_from(
        forge.owner.as_path(),
        &[("discern.toml", original.as_bytes())],
        &["src/more.rs"],
        "back to 5",
    );
    passed(&forge.push_ci(&before), "control: the tightening back");
    let tightened = forge.main();
    assert_eq!(
        forge.out(
            forge.owner.as_path(),
            &["rev-parse", &format!("{tightened}:discern.toml")]
        ),
        forge.out(
            forge.owner.as_path(),
            &["rev-parse", &format!("{start}:discern.toml")]
        ),
        "the trunk's discern.toml is back to the blob the approval names"
    );
    // 3. A later PR loosens the same way and copies the approval (still in the tree) under
    //    another name.
    let approval = forge.out(
        forge.owner.as_path(),
        &["show", &format!("{tightened}:{file}")],
    ) + "\n";
    forge.pull_request(
        "agent/again",
        &[
            ("src/more.rs", TODOS.as_bytes()),
            (".discern/approvals/replayed.json", approval.as_bytes()),
        ],
        &[],
        true,
    );
    forge
}

/// The same replay under the approval's own name, after a push deleted it from the trunk: it
/// landed once on this history, so it approves nothing again.
#[test]
fn hole_3c_an_old_approval_deleted_and_added_back_under_its_own_name_approves_nothing() {
    let forge = replayed_pull_request();
    let tightened = forge.main();
    let listed = forge.out(
        forge.owner.as_path(),
        &["ls-tree", "--name-only", &tightened, ".discern/approvals/"],
    );
    let file = listed
        .lines()
        .next()
        .expect("the landed approval")
        .to_owned();
    let approval = forge.out(
        forge.owner.as_path(),
        &["show", &format!("{tightened}:{file}")],
    ) + "\n";
    let (before, _) = forge.push_main_from(forge.owner.as_path(), &[], &[file.as_str()], "tidy up");
    passed(&forge.push_ci(&before), "control: deleting an old approval");
    forge.pull_request(
        "agent/readded",
        &[
            ("src/more.rs", TODOS.as_bytes()),
            (file.as_str(), approval.as_bytes()),
        ],
        &[],
        true,
    );
    let json = refused(
        &forge.pr_ci("agent/readded"),
        "PR CI with a re-added approval",
    );
    assert_ne!(json["data"]["limits"]["status"], "approved", "{json}");
}

#[test]
fn hole_3a_an_old_approval_replayed_after_the_trunk_tightened_back_fails_pr_ci() {
    let forge = replayed_pull_request();
    let json = refused(
        &forge.pr_ci("agent/again"),
        "PR CI with a replayed approval",
    );
    assert_ne!(json["data"]["limits"]["status"], "approved", "{json}");
}

#[test]
fn hole_3b_an_old_approval_replayed_after_the_trunk_tightened_back_fails_the_push_check() {
    let forge = replayed_pull_request();
    let before = forge.main();
    forge.git(&forge.contributor, &["fetch", "-q", "origin"]);
    let again = forge.out(&forge.contributor, &["rev-parse", "origin/agent/again"]);
    forge.push_commit(&again);
    refused(
        &forge.push_ci(&before),
        "the push check with a replayed approval",
    );
}

// ---------------------------------------------------------------------------------------------
// Hole 4 (a PR author holding a revoked key): PR CI verifies an approval under the merge
// base's signers, and the author picks the merge base: a PR forked from before the owner
// removed a leaked key is approved by that key.
// ---------------------------------------------------------------------------------------------

#[test]
fn hole_4_a_revoked_key_approves_a_pull_request_forked_before_its_removal() {
    let forge = Forge::with_second_signer(signed_config("", ""), &[]);
    let old = forge.main();
    // The owner removes the leaked second key, with their own approval (a PR they approve).
    let only_owner = forge.keys.owner_line();
    forge.pull_request(
        "owner/revoke",
        &[(SIGNERS, only_owner.as_bytes())],
        &[],
        false,
    );
    forge.owner_approves("owner/revoke");
    let before = forge.main();
    forge.git(&forge.contributor, &["fetch", "-q", "origin"]);
    let revoked = forge.out(&forge.contributor, &["rev-parse", "origin/owner/revoke"]);
    forge.push_commit(&revoked);
    passed(&forge.push_ci(&before), "control: the revocation lands");

    // Control: a PR off the current trunk approved by the revoked key fails.
    let loose = signed_config("", "").replace("limit = 5", "limit = 9");
    // What the loosening does to the tree, from the commit before the revocation (the PRs
    // below change the same file the same way).
    let a = &forge.contributor;
    forge.git(a, &["checkout", "-q", "-B", "probe", &old]);
    let probe = forge.commit(a, &[("discern.toml", loose.as_bytes())], &[], "probe");
    let change = discern::testing::approval::net_change(a, &old, &probe).unwrap();
    let items = || discern::testing::approval::tree::Items {
        repository: APPROVAL_REPOSITORY.to_owned(),
        base_commit: old.clone(),
        change: change.clone(),
        change_outside: None,
        limits: vec![discern::testing::approval::tree::LimitItem {
            standard: "todo".to_owned(),
            trunk_limit: 5.0,
            proposed_limit: 9.0,
            reason: REASON.to_owned(),
            token: discern::testing::protected::limit_token("todo", 9.0, REASON),
        }],
        protected: vec![],
    };
    let (path, signed) = tree_approval(&forge.keys.second, "second@example.com", items());
    forge.pull_request(
        "agent/now",
        &[("discern.toml", loose.as_bytes()), (path.as_str(), &signed)],
        &[],
        false,
    );
    refused(
        &forge.pr_ci("agent/now"),
        "control: the revoked key on a current PR",
    );

    // The attack: the same PR forked from the commit before the revocation.
    forge.sync_main(&forge.contributor);
    forge.pull_request_from(
        &old,
        "agent/old",
        &[("discern.toml", loose.as_bytes()), (path.as_str(), &signed)],
        &[],
        false,
    );
    let json = refused(
        &forge.pr_ci("agent/old"),
        "PR CI approved by a key the trunk revoked",
    );
    assert_ne!(json["data"]["limits"]["status"], "approved", "{json}");
}
