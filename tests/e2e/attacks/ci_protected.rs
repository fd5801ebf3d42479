//! Classes 1–6: what pull-request CI and the trunk's push check judge.

use serde_json::{Value, json};

use super::*;
use crate::support::config::{Config, Standard};

// ---------------------------------------------------------------------------------------------
// 1. PR CI judges the whole protected set, not only a Standard's definition.
// ---------------------------------------------------------------------------------------------

/// Class 1a: the pull request replaces the committed component `tools/p.wasm` — with the same
/// component under another blob id, and with another component — leaving discern.toml alone.
#[test]
fn class_01a_a_replaced_repository_component_fails_pr_ci() {
    let forge = Forge::new(
        signed_config(COMPONENT, ""),
        &[("tools/p.wasm", &pattern_wasm())],
    );
    let key = "standards.component.producer_blob";
    // The same component under another blob id: it measures exactly as before.
    forge.pull_request(
        "agent/renamed",
        &[("tools/p.wasm", &pattern_wasm_renamed())],
        &[],
        false,
    );
    refused_naming(
        &forge.pr_ci("agent/renamed"),
        "the same component renamed",
        key,
    );
    // Another component (which does not even report the metric): whatever the slug, the
    // replacement itself is named.
    forge.pull_request(
        "agent/legacy",
        &[("tools/p.wasm", discern_tests::LEGACY_V01_WASM)],
        &[],
        false,
    );
    let json = refused(&forge.pr_ci("agent/legacy"), "another component");
    names(&json, key);
    assert_ne!(json["data"]["limits"]["status"], "verified", "{json}");
}

/// Class 1b: the pull request rewrites the job a Standard `needs` so that it reports 0, while
/// adding the lines that job counts.
#[test]
fn class_01b_a_rewritten_job_a_standard_needs_fails_pr_ci() {
    let forge = Forge::new(signed_config(JOB, ""), &[]);
    let config = signed_config(JOB, "").replace(
        r#"run = 'printf "DISCERN_METRIC hacks %s\n" "$(cat src/*.rs | grep -c HACK)"'"#,
        r#"run = 'echo "DISCERN_METRIC hacks 0"'"#,
    );
    assert_ne!(config, signed_config(JOB, ""));
    forge.pull_request(
        "agent/job",
        &[
            ("discern.toml", config.as_bytes()),
            ("src/hack.rs", b"// HACK 1\n// HACK 2\n// HACK 3\n"),
        ],
        &[],
        false,
    );
    refused_naming(&forge.pr_ci("agent/job"), "a rewritten job", "jobs.count");
}

/// Class 1c: the pull request adds `findings = "count"` to a Standard (the swap check off).
#[test]
fn class_01c_a_new_findings_key_on_a_standard_fails_pr_ci() {
    let forge = Forge::new(signed_config("", ""), &[]);
    let config = signed_config("", "").replace(
        "metric = \"matches\"",
        "metric = \"matches\"\nfindings = \"count\"",
    );
    forge.pull_request(
        "agent/findings",
        &[("discern.toml", config.as_bytes())],
        &[],
        false,
    );
    refused_naming(
        &forge.pr_ci("agent/findings"),
        "a new findings key",
        "standards.todo.findings",
    );
}

/// Class 1d: the pull request widens `[acceptance]` (a standing grant for everything) or
/// changes `[repository]` (`pin_on_done`).
#[test]
fn class_01d_a_change_to_acceptance_or_repository_fails_pr_ci() {
    let forge = Forge::new(signed_config("", ""), &[]);
    let granted = signed_config("", "pre_authorized = [\"**\"]\n");
    forge.pull_request(
        "agent/grant",
        &[("discern.toml", granted.as_bytes())],
        &[],
        false,
    );
    refused_naming(
        &forge.pr_ci("agent/grant"),
        "a standing grant",
        "acceptance.pre_authorized",
    );
    let pinning = signed_config("", "").replace("pin_on_done = false", "pin_on_done = true");
    forge.pull_request(
        "agent/repo",
        &[("discern.toml", pinning.as_bytes())],
        &[],
        false,
    );
    refused_naming(
        &forge.pr_ci("agent/repo"),
        "a repository setting",
        "repository.pin_on_done",
    );
}

// ---------------------------------------------------------------------------------------------
// 2. The signers file.
// ---------------------------------------------------------------------------------------------

/// Class 2a: a pull request appends the attacker's key to the allowed-signers file; pushed
/// straight to main anyway, a second push lands a loosening with a Proof note the attacker's
/// key signed.
#[test]
fn class_02a_the_attackers_key_in_the_signers_file_approves_nothing() {
    let forge = Forge::new(signed_config("", ""), &[]);
    let signers = format!("{}{}", forge.keys.owner_line(), forge.keys.attacker_line());
    forge.pull_request(
        "agent/signers",
        &[(SIGNERS, signers.as_bytes())],
        &[],
        false,
    );
    refused_naming(
        &forge.pr_ci("agent/signers"),
        "a new signer",
        "file:.discern/allowed_signers",
    );

    // Landed anyway by a push (CI is a check, not a gate), then the loosening.
    let (first, listed) = forge.push_main(&[(SIGNERS, signers.as_bytes())], &[], "add a signer");
    let loose = signed_config("", "").replace("limit = 5", "limit = 9");
    let (before, landed) =
        forge.push_main(&[("discern.toml", loose.as_bytes())], &[], "relax todo");
    assert_eq!(before, listed);
    let limit = approved_limit("todo", 5.0, 9.0);
    let approval = signed_approval(
        &forge.keys.attacker,
        "attacker@example.com",
        &payload(&before, &landed, &[&limit]),
    );
    let note = proof_note(&before, &landed, &[limit], &[], approval);
    add_note(&forge, &forge.contributor, &landed, &note);
    forge.push_notes();
    refused(&forge.push_ci(&first), "both pushes judged together");
    refused(&forge.push_ci(&before), "the second push, judged alone");
}

/// Class 2b: a rebase-shaped landing pushed in one go: a first commit adds the attacker's key
/// to the signers file, a second loosens the limit and carries a Proof note signed by the
/// attacker's key that says it landed on the first commit — whose signers file lists that key.
#[test]
fn class_02b_a_landing_cannot_be_approved_by_signers_it_brought_itself() {
    let forge = Forge::new(signed_config("", ""), &[]);
    let signers = format!("{}{}", forge.keys.owner_line(), forge.keys.attacker_line());
    let loose = signed_config("", "").replace("limit = 5", "limit = 9");
    forge.git(&forge.contributor, &["checkout", "-q", "main"]);
    let before = forge.main();
    let listed = forge.commit(
        &forge.contributor,
        &[(SIGNERS, signers.as_bytes())],
        &[],
        "signers",
    );
    let landed = forge.commit(
        &forge.contributor,
        &[("discern.toml", loose.as_bytes())],
        &[],
        "relax todo",
    );
    let limit = approved_limit("todo", 5.0, 9.0);
    let approval = signed_approval(
        &forge.keys.attacker,
        "attacker@example.com",
        &payload(&listed, &landed, &[&limit]),
    );
    let note = proof_note(&listed, &landed, &[limit], &[], approval);
    add_note(&forge, &forge.contributor, &landed, &note);
    forge.push_commit(&landed);
    forge.push_notes();
    refused(&forge.push_ci(&before), "the push check");
    let clone = forge.ci_clone("main");
    let run = forge.ci(&clone, &["standards", "--json"], &[]);
    refused(&run, "the trunk's own check");
}

// ---------------------------------------------------------------------------------------------
// 3. The branch names its own trunk.
// ---------------------------------------------------------------------------------------------

/// Class 3: a pull request sets `[repository].trunk` to `HEAD` (or to its own branch) together
/// with a loosening.
#[test]
fn class_03_a_pull_request_naming_its_own_trunk_fails_pr_ci() {
    let forge = Forge::new(signed_config("", ""), &[]);
    for (branch, trunk) in [
        ("agent/head", "HEAD"),
        ("agent/own", "agent/own"),
        ("agent/full", "refs/remotes/origin/agent/full"),
        ("agent/at", "@"),
    ] {
        let config = signed_config("", "")
            .replace("limit = 5", "limit = 9")
            .replace(
                "pin_on_done = false",
                &format!("pin_on_done = false\ntrunk = \"{trunk}\""),
            );
        forge.pull_request(branch, &[("discern.toml", config.as_bytes())], &[], false);
        let json = refused(&forge.pr_ci(branch), trunk);
        let trunk_ref = &json["data"]["limits"]["trunk_ref"];
        assert!(
            trunk_ref.is_null() || trunk_ref == "refs/remotes/origin/main",
            "{trunk}: {json}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// 4. A tag named like the trunk.
// ---------------------------------------------------------------------------------------------

/// Class 4: a tag `main` on origin points at an attacker commit with a loose limit, and the
/// pull request builds on it: CI (which fetched tags too) and a local clone with the tag judge
/// against the branch `main`.
#[test]
fn class_04_a_tag_named_main_is_never_the_trunk() {
    let forge = Forge::new(signed_config("", ""), &[]);
    let loose = signed_config("", "").replace("limit = 5", "limit = 500");
    forge.git(
        &forge.contributor,
        &["checkout", "-q", "--detach", "origin/main"],
    );
    let tagged = forge.commit(
        &forge.contributor,
        &[("discern.toml", loose.as_bytes())],
        &[],
        "a loose limit",
    );
    forge.git(&forge.contributor, &["tag", "main", &tagged]);
    forge.git(
        &forge.contributor,
        &["push", "-q", "origin", "refs/tags/main"],
    );
    forge.git(&forge.contributor, &["checkout", "-q", "-b", "agent/tag"]);
    forge.commit(
        &forge.contributor,
        &[("src/ok.rs", b"pub fn ok() {}\n")],
        &[],
        "work",
    );
    forge.git(&forge.contributor, &["push", "-q", "origin", "agent/tag"]);

    let clone = forge.ci_clone("agent/tag");
    forge.git(
        &clone,
        &["fetch", "-q", "origin", "+refs/tags/*:refs/tags/*"],
    );
    // git itself would take the tag for `main` here.
    assert_eq!(forge.out(&clone, &["rev-parse", "refs/tags/main"]), tagged);
    let json = refused(&forge.ci(&clone, &["standards", "--json"], &[]), "PR CI");
    assert_eq!(
        json["data"]["limits"]["trunk_ref"], "refs/remotes/origin/main",
        "{json}"
    );
    names(&json, "5 -> 500");

    // The attacker's own clone has the tag and a branch `main`: the branch is the trunk.
    forge.git(&forge.contributor, &["checkout", "-q", "agent/tag"]);
    assert_eq!(
        forge.out(&forge.contributor, &["rev-parse", "main"]),
        tagged
    );
    let run = forge
        .fixture
        .run_in(&forge.contributor, &["standards", "--json"], &[]);
    let json = refused(&run, "a local clone with the tag");
    let trunk_ref = json["data"]["limits"]["trunk_ref"]
        .as_str()
        .unwrap_or_default();
    assert!(
        ["refs/heads/main", "refs/remotes/origin/main"].contains(&trunk_ref),
        "{json}"
    );
    names(&json, "5 -> 500");
}

// ---------------------------------------------------------------------------------------------
// 5. The trunk push check judges everything it admits.
// ---------------------------------------------------------------------------------------------

/// Class 5a: a merge onto main whose second parent is a parentless root commit carrying the
/// loosened discern.toml, the merge taking its tree.
#[test]
fn class_05a_a_merged_root_commit_with_a_loose_config_fails_the_push_check() {
    let forge = Forge::new(signed_config("", ""), &[]);
    let before = forge.main();
    let loose = signed_config("", "").replace("limit = 5", "limit = 500");
    forge.git(&forge.contributor, &["checkout", "-q", "--orphan", "root"]);
    let root = forge.commit(
        &forge.contributor,
        &[("discern.toml", loose.as_bytes())],
        &[],
        "an unrelated root",
    );
    assert_eq!(
        forge.out(&forge.contributor, &["rev-list", "--count", &root]),
        "1"
    );
    let tree = format!("{root}^{{tree}}");
    let merge = forge.out(
        &forge.contributor,
        &[
            "commit-tree",
            &tree,
            "-p",
            &before,
            "-p",
            &root,
            "-m",
            "merge root",
        ],
    );
    forge.push_commit(&merge);
    let json = refused(&forge.push_ci(&before), "a merged root");
    names(&json, "5 -> 500");

    // The same merge made from the root's side: the old trunk is only the second parent, so
    // `before` is not on the first-parent chain at all.
    let forge = Forge::new(signed_config("", ""), &[]);
    let before = forge.main();
    forge.git(&forge.contributor, &["checkout", "-q", "--orphan", "root"]);
    let root = forge.commit(
        &forge.contributor,
        &[("discern.toml", loose.as_bytes())],
        &[],
        "an unrelated root",
    );
    let tree = format!("{root}^{{tree}}");
    let merge = forge.out(
        &forge.contributor,
        &[
            "commit-tree",
            &tree,
            "-p",
            &root,
            "-p",
            &before,
            "-m",
            "merge main into root",
        ],
    );
    forge.push_commit(&merge);
    let json = refused(&forge.push_ci(&before), "a merge from the root's side");
    names(&json, "5 -> 500");
}

/// Class 5b: main had limit 10 and was tightened to 5; a merge whose second parent is main's
/// own old commit takes that commit's discern.toml.
#[test]
fn class_05b_a_merge_of_the_trunks_own_older_commit_fails_the_push_check() {
    let config = signed_config("", "").replace("limit = 5", "limit = 10");
    let forge = Forge::new(&config, &[]);
    let old = forge.main();
    let tight = signed_config("", "");
    let (_, before) = forge.push_main(
        &[("discern.toml", tight.as_bytes())],
        &[],
        "pin todo 10 -> 5",
    );
    let tree = format!("{old}^{{tree}}");
    let merge = forge.out(
        &forge.contributor,
        &[
            "commit-tree",
            &tree,
            "-p",
            &before,
            "-p",
            &old,
            "-m",
            "merge the old trunk",
        ],
    );
    forge.push_commit(&merge);
    let json = refused(&forge.push_ci(&before), "a merge of the old trunk");
    names(&json, "5 -> 10");
}

// ---------------------------------------------------------------------------------------------
// 6. The approval policy comes from the trust root.
// ---------------------------------------------------------------------------------------------

/// Class 6: a push switches to `approval = "interactive"` (dropping `allowed_signers`) — or
/// deletes the signers file — together with a loosening, and carries a hand-written Proof note
/// approving every item with the tokens discern derives.
#[test]
fn class_06_a_push_cannot_choose_its_own_approval_policy() {
    // The policy switched in the pushed config.
    let forge = Forge::new(signed_config("", ""), &[]);
    let loose = format!(
        "{}\n[acceptance]\napproval = \"interactive\"\n",
        Config::landing().standard(Standard::todo(9))
    );
    let (before, landed) = forge.push_main(&[("discern.toml", loose.as_bytes())], &[], "relax");
    let limit = approved_limit("todo", 5.0, 9.0);
    let changes = [
        approved_change(
            "acceptance",
            "acceptance.allowed_signers",
            json!(SIGNERS),
            Value::Null,
        ),
        approved_change(
            "acceptance",
            "acceptance.approval",
            Value::Null,
            json!("interactive"),
        ),
    ];
    let approval = terminal_approval(&payload(
        &before,
        &landed,
        &[&limit, &changes[0], &changes[1]],
    ));
    let note = proof_note(&before, &landed, &[limit], &changes, approval);
    add_note(&forge, &forge.contributor, &landed, &note);
    forge.push_notes();
    refused(
        &forge.push_ci(&before),
        "the policy switched to interactive",
    );

    // The signers file deleted.
    let forge = Forge::new(signed_config("", ""), &[]);
    let loose = signed_config("", "").replace("limit = 5", "limit = 9");
    let signers_blob = forge.out(
        forge.owner.as_path(),
        &["rev-parse", &format!("main:{SIGNERS}")],
    );
    let (before, landed) = forge.push_main(
        &[("discern.toml", loose.as_bytes())],
        &[SIGNERS],
        "relax, no signers",
    );
    let limit = approved_limit("todo", 5.0, 9.0);
    let change = approved_change(
        "file",
        &format!("file:{SIGNERS}"),
        json!(signers_blob),
        Value::Null,
    );
    let approval = terminal_approval(&payload(&before, &landed, &[&limit, &change]));
    let note = proof_note(&before, &landed, &[limit], &[change], approval);
    add_note(&forge, &forge.contributor, &landed, &note);
    forge.push_notes();
    refused(&forge.push_ci(&before), "the signers file deleted");

    // Another signers file, listing the attacker, named by the pushed config; the note is
    // signed by the attacker's key and approves every item.
    let forge = Forge::new(signed_config("", ""), &[]);
    let own = ".discern/attacker_signers";
    let loose = signed_config("", "")
        .replace("limit = 5", "limit = 9")
        .replace(SIGNERS, own);
    let line = forge.keys.attacker_line();
    let (before, landed) = forge.push_main(
        &[("discern.toml", loose.as_bytes()), (own, line.as_bytes())],
        &[],
        "relax, my signers",
    );
    let own_blob = forge.out(&forge.contributor, &["rev-parse", &format!("HEAD:{own}")]);
    let limit = approved_limit("todo", 5.0, 9.0);
    let changes = [
        approved_change(
            "acceptance",
            "acceptance.allowed_signers",
            json!(SIGNERS),
            json!(own),
        ),
        approved_change("file", &format!("file:{own}"), Value::Null, json!(own_blob)),
    ];
    let approval = signed_approval(
        &forge.keys.attacker,
        "attacker@example.com",
        &payload(&before, &landed, &[&limit, &changes[0], &changes[1]]),
    );
    let note = proof_note(&before, &landed, &[limit], &changes, approval);
    add_note(&forge, &forge.contributor, &landed, &note);
    forge.push_notes();
    refused(
        &forge.push_ci(&before),
        "a signers file of the attacker's own",
    );
}
