//! What a branch cannot change for itself before it lands: its approval policy or grant, the
//! gate's definition, the trunk it lands on, its proof, the repository settings; a weakened
//! definition is judged by the trunk's too.

use std::path::PathBuf;

use crate::approval::{effort, keys_of, signed_fixture, trunk};
use crate::support::Fixture;
use crate::support::config::{Config, Standard, quoted, strings};

#[test]
fn a_branch_cannot_change_its_own_approval_policy_or_grant() {
    let (fixture, _keys) = signed_fixture();
    let config = Config::landing()
        .acceptance("approval", quoted("interactive"))
        .acceptance("pre_authorized", strings(&["**"]))
        .to_string();
    let path = effort(&fixture, "policy", &[("discern.toml", &config)]);
    let done = fixture.run_in(&path, &["done", "--json"], &[]).json();
    assert_eq!(done["ok"], true, "{done}");
    let keys = keys_of(&done["data"]["proof"]["protected"]);
    assert_eq!(
        keys,
        [
            "acceptance.allowed_signers",
            "acceptance.approval",
            "acceptance.pre_authorized",
            "acceptance.repository"
        ]
    );
    let line = done["data"]["proof_line"].as_str().unwrap();
    assert!(
        line.contains(
            "protected change(s) awaiting exact owner approval: acceptance.allowed_signers"
        ),
        "{line}"
    );
    // The trunk's grant and policy decide, not the branch's.
    let json = fixture.run_in(&path, &["accept", "--json"], &[]).json();
    assert_eq!(json["error"], "awaiting_consent", "{json}");
    let run = fixture.on_terminal(&path, &["accept", "--confirmed"], "yes\nyes\nyes\n");
    assert_ne!(run.code, 0, "{}", run.stdout);
    let json = fixture
        .run_in(&path, &["accept", "--confirmed", "--json"], &[])
        .json();
    assert_eq!(json["error"], "awaiting_standard_approval", "{json}");
    assert_eq!(json["data"]["approval"], "signed");
    assert_eq!(
        json["data"]["protected_changes"].as_array().unwrap().len(),
        4
    );
}

#[test]
fn every_change_to_the_gate_definition_is_a_protected_change() {
    let component = Standard::new("component", "tools/x.wasm").limit(1);
    let fixture = Fixture::new(Config::landing().standard(component));
    fixture.repo.write("tools/x.wasm", "one component");
    fixture.repo.commit("a repository component");
    let config = std::fs::read_to_string(fixture.path().join("discern.toml"))
        .unwrap()
        .replace("test = \"true\"", "test = \"exit 0\"")
        .replace("metric = \"matches\"", "metric = \"matches\"\nmargin = 1e9")
        .replace("pattern = \"TODO\"", "pattern = \"NEVER\"")
        .replace(
            "pin_on_done = false",
            "pin_on_done = false\nrequire_trunk = true",
        );
    let path = effort(
        &fixture,
        "gate",
        &[
            ("discern.toml", &config),
            ("tools/x.wasm", "another component"),
        ],
    );
    let json = fixture
        .run_in(&path, &["approve", "--dry-run", "--json"], &[])
        .json();
    assert_eq!(json["ok"], true, "{json}");
    let keys = keys_of(&json["data"]["required"]["protected"]);
    assert_eq!(
        keys,
        [
            "standards.todo.config",
            "standards.todo.margin",
            "standards.component.producer_blob",
            "jobs.test",
            "repository.require_trunk",
        ],
        "{json}"
    );
    assert_eq!(json["data"]["approval"], "interactive");
    // What the owner reads: one line an item, old → new, with its token.
    let text = fixture.run_in(&path, &["approve", "--dry-run"], &[]).stdout;
    insta::with_settings!({ filters => vec![(r"\b[0-9a-f]{12,64}\b", "[hex]")] }, {
        insta::assert_snapshot!("approve_listing", text);
    });
    // Without a terminal, `approve` asks nobody and approves nothing.
    let json = fixture.run_in(&path, &["approve", "--json"], &[]).json();
    assert_eq!(json["error"], "awaiting_standard_approval", "{json}");
}

#[test]
fn a_branch_cannot_point_the_landing_at_a_trunk_it_controls() {
    let fixture = Fixture::new(Config::landing());
    let config = Config::landing()
        .repository("trunk", quoted("agent/self"))
        .to_string();
    let path = effort(&fixture, "self", &[("discern.toml", &config)]);
    let before = trunk(&fixture);
    let json = fixture
        .run_in(&path, &["accept", "--confirmed", "--json"], &[])
        .json();
    assert_eq!(json["ok"], false, "{json}");
    assert!(
        json["message"].as_str().unwrap().contains("own branch"),
        "{json}"
    );
    // DISCERN_TRUNK only redirects read-only measurement, never what a landing trusts.
    let (path, _) = fixture.proven_effort("env");
    let json = fixture
        .run_in(
            &path,
            &["accept", "--confirmed", "--json"],
            &[("DISCERN_TRUNK", "agent/env")],
        )
        .json();
    assert_eq!(json["ok"], true, "{json}");
    assert_eq!(json["data"]["trunk"], "main");
    assert_ne!(trunk(&fixture), before);
}

#[test]
fn a_gate_proof_written_by_hand_lands_nothing() {
    let fixture = Fixture::new(Config::landing());
    // The work breaches todo (2 + 4 = 6 > 5); the agent skips the gate and writes the Proof.
    let path = effort(
        &fixture,
        "forged",
        &[(
            "src/more.rs",
            "// TODO 1\n// TODO 2\n// TODO 3\n// TODO 4\n",
        )],
    );
    let head = fixture.git_out(&path, &["rev-parse", "HEAD"]);
    let git_dir = PathBuf::from(fixture.git_out(&path, &["rev-parse", "--absolute-git-dir"]));
    let before = trunk(&fixture);
    let proof = serde_json::json!({
        "version": 1, "commit": head, "branch": "agent/forged", "trunk": "main",
        "trunk_commit": before, "diffstat": "+4 −0 in 1 file",
        "standards": [{ "name": "todo", "value": 2.0, "limit": 5.0, "verdict": "held" }],
        "proposals": [], "line": "Proof: agent/forged; Standards: 1 pass.",
    });
    std::fs::create_dir_all(git_dir.join("discern")).unwrap();
    std::fs::write(git_dir.join("discern/gate-proof"), proof.to_string()).unwrap();
    let json = fixture
        .run_in(&path, &["accept", "--confirmed", "--json"], &[])
        .json();
    assert_eq!(json["error"], "gate_failed", "{json}");
    assert!(
        json["message"].as_str().unwrap().contains("proves nothing"),
        "{json}"
    );
    assert_eq!(trunk(&fixture), before);
}

#[test]
fn a_weakened_definition_is_judged_by_the_trunks_too_for_the_owner() {
    let fixture = Fixture::new(Config::landing());
    // The branch adds four TODOs (6 > 5) and weakens the pattern so that its own count is 0.
    let config = Config::landing()
        .standard(Standard::pattern("todo", "NEVER", &["src/**"]).limit(5))
        .to_string();
    let path = effort(
        &fixture,
        "weaken",
        &[
            ("discern.toml", &config),
            (
                "src/more.rs",
                "// TODO 1\n// TODO 2\n// TODO 3\n// TODO 4\n",
            ),
        ],
    );
    let done = fixture.run_in(&path, &["done", "--json"], &[]).json();
    assert_eq!(done["ok"], true, "{done}");
    let by_trunk = &done["data"]["proof"]["by_trunk"][0];
    assert_eq!(by_trunk["name"], "todo");
    assert_eq!(by_trunk["value"], 6.0);
    assert_eq!(by_trunk["verdict"], "regressed");
    let line = done["data"]["proof_line"].as_str().unwrap();
    assert!(
        line.contains("awaiting exact owner approval: standards.todo.config; by the trunk's definitions: todo regressed 6 vs 5"),
        "{line}"
    );
}

#[test]
fn a_branch_cannot_relax_the_trunks_repository_settings_before_landing() {
    let trunk_config = Config::landing()
        .unset("repository", "pin_on_done")
        .repository("require_trunk", "true")
        .to_string();
    let fixture = Fixture::new(&trunk_config);
    // The branch opts out of pinning and of requiring the trunk, and drops a TODO (a gain).
    let relaxed = trunk_config.replace(
        "require_trunk = true",
        "require_trunk = false\npin_on_done = false",
    );
    let path = effort(
        &fixture,
        "relax",
        &[
            ("discern.toml", &relaxed),
            ("src/lib.rs", "// TODO: one\npub fn a() {}\npub fn b() {}\n"),
        ],
    );
    let json = fixture.run_in(&path, &["done", "--json"], &[]).json();
    assert_eq!(json["ok"], true, "{json}");
    assert_eq!(
        json["steps"][0]["label"], "pin",
        "the trunk's pin_on_done decides: {json}"
    );
    let keys = keys_of(&json["data"]["proof"]["protected"]);
    assert_eq!(keys, ["repository.pin_on_done", "repository.require_trunk"]);
}
