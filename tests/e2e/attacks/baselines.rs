//! The forges without an attack: green, so a failing `class_*` test means the attack got
//! through, not a broken setup.

use serde_json::{Value, json};

use super::*;
use crate::support::config::{Config, Standard};
use crate::support::standard;

// The same forges without an attack: green.
// ---------------------------------------------------------------------------------------------

/// An innocuous pull request and an innocuous push on the signed forge pass CI.
#[test]
fn baseline_passes_pr_and_push_ci_on_the_signed_forge() {
    let forge = Forge::new(signed_config("", ""), &[]);
    forge.pull_request(
        "agent/ok",
        &[("src/ok.rs", b"pub fn ok() {}\n")],
        &[],
        false,
    );
    let json = passed(&forge.pr_ci("agent/ok"), "an innocuous pull request");
    let limits = &json["data"]["limits"];
    assert_eq!(limits["status"], "verified", "{json}");
    assert_eq!(limits["trunk_ref"], "refs/remotes/origin/main", "{json}");
    assert_eq!(limits["baseline_kind"], "merge_base", "{json}");
    assert_eq!(standard(&json, "todo")["value"], 2.0);

    let (before, _) = forge.push_main(&[("README.md", b"# more\n")], &[], "docs");
    let json = passed(&forge.push_ci(&before), "an innocuous push");
    assert_eq!(json["data"]["limits"]["baseline_kind"], "given", "{json}");
    // A merge that keeps the limits passes too.
    let side = forge.out(&forge.contributor, &["rev-parse", "HEAD~1"]);
    forge.git(&forge.contributor, &["checkout", "-q", "-B", "side", &side]);
    let side = forge.commit(
        &forge.contributor,
        &[("src/side.rs", b"pub fn side() {}\n")],
        &[],
        "side work",
    );
    forge.git(&forge.contributor, &["checkout", "-q", "main"]);
    forge.git(&forge.contributor, &["merge", "-q", "--no-edit", &side]);
    let before = forge.main();
    let merge = forge.out(&forge.contributor, &["rev-parse", "HEAD"]);
    forge.push_commit(&merge);
    passed(&forge.push_ci(&before), "a merge that keeps the limits");
}

/// An innocuous pull request checked out as the forge's merge ref passes CI, judged against
/// its merge base with `origin/main`.
#[test]
fn baseline_passes_pr_ci_on_the_forges_merge_ref() {
    let forge = Forge::new(signed_config("", ""), &[]);
    let head = forge.pull_request(
        "agent/ok",
        &[("src/ok.rs", b"pub fn ok() {}\n")],
        &[],
        false,
    );
    let clone = forge.merge_ref_clone(&head);
    let run = forge.ci(&clone, &["standards", "--json"], &[]);
    let json = passed(&run, "an innocuous merge ref");
    let limits = &json["data"]["limits"];
    assert_eq!(limits["status"], "verified", "{json}");
    assert_eq!(limits["trunk_ref"], "refs/remotes/origin/main", "{json}");
    assert_eq!(limits["baseline_kind"], "merge_base", "{json}");
}

/// The forges with a repository component, a job and a script pass CI on an innocuous pull
/// request, each Standard measured.
#[test]
fn baseline_passes_the_component_job_and_script_forges() {
    let wasm = pattern_wasm();
    let forge = Forge::new(
        signed_config(
            &format!("{COMPONENT}{JOB}{SCRIPT}"),
            "protected = [\"scripts/**\"]\n",
        ),
        &[
            ("tools/p.wasm", &wasm),
            ("scripts/count.sh", COUNT_SH.as_bytes()),
        ],
    );
    forge.pull_request(
        "agent/ok",
        &[("src/ok.rs", b"pub fn ok() {}\n")],
        &[],
        false,
    );
    let json = passed(&forge.pr_ci("agent/ok"), "an innocuous pull request");
    assert_eq!(json["data"]["limits"]["status"], "verified", "{json}");
    assert_eq!(standard(&json, "component")["value"], 2.0, "{json}");
    assert_eq!(standard(&json, "hacks")["value"], 0.0, "{json}");
    assert_eq!(standard(&json, "count")["value"], 0.0, "{json}");
    // The same component under another blob id measures the same: only its identity differs.
    let renamed = pattern_wasm_renamed();
    let run = forge.fixture.run_in(
        forge.owner.as_path(),
        &[
            "producers",
            "run",
            "tools/p.wasm",
            "--config",
            r#"{"pattern":"TODO","paths":["src/**"]}"#,
            "--json",
        ],
        &[],
    );
    passed(&run, "the committed component runs");
    std::fs::write(forge.owner.as_path().join("tools/q.wasm"), &renamed).unwrap();
    let run = forge.fixture.run_in(
        forge.owner.as_path(),
        &[
            "producers",
            "run",
            "tools/q.wasm",
            "--config",
            r#"{"pattern":"TODO","paths":["src/**"]}"#,
            "--force",
            "--json",
        ],
        &[],
    );
    passed(&run, "the component with a custom section runs");
}

/// A landing's Proof note signed by the owner's key approves the loosening it names, on the
/// push check and on the trunk's own check with an innocuous commit after it; and where the
/// trunk allows interactive approval, a hand-written note is an approval (README: not a
/// boundary). So the notes the attacks write below are well formed.
#[test]
fn baseline_passes_owner_signed_and_interactive_landing_notes() {
    let forge = Forge::new(signed_config("", ""), &[]);
    let loose = signed_config("", "").replace("limit = 5", "limit = 9");
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
    forge.push_notes();
    passed(&forge.push_ci(&before), "an owner-signed landing");
    forge.push_main(&[("README.md", b"# later\n")], &[], "later");
    let clone = forge.ci_clone("main");
    // Locally (not required), the trunk's own check takes the verified landing as its baseline.
    let json = passed(
        &forge.fixture.run_in(&clone, &["standards", "--json"], &[]),
        "after a landing",
    );
    assert_eq!(json["data"]["limits"]["baseline_kind"], "landing", "{json}");

    let forge = Forge::new(Config::landing(), &[]);
    let loose = format!(
        "{}\n[acceptance]\npre_authorized = [\"docs/**\"]\n",
        Config::landing().standard(Standard::todo(9))
    );
    let (before, landed) =
        forge.push_main(&[("discern.toml", loose.as_bytes())], &[], "relax todo");
    let limit = approved_limit("todo", 5.0, 9.0);
    let change = approved_change(
        "acceptance",
        "acceptance.pre_authorized",
        Value::Null,
        json!(["docs/**"]),
    );
    let approval = terminal_approval(&payload(&before, &landed, &[&limit, &change]));
    let note = proof_note(&before, &landed, &[limit], &[change], approval);
    add_note(&forge, &forge.contributor, &landed, &note);
    forge.push_notes();
    passed(&forge.push_ci(&before), "an interactive landing");
}
