//! The attacker suite (issue 28): a pull-request author, a pusher or an agent with a shell who
//! wants a looser limit landed. Each test builds a small forge of real git repositories — a
//! bare `origin`, the owner's clone, the attacker's clone, and CI clones made the way
//! `actions/checkout` makes them, followed by the README's fetch — and asserts the secure
//! outcome: the CI run fails (`ok: false`, a non-zero exit), `accept` lands nothing, `done`
//! proves nothing. The `baseline_passes_*` tests run the same forge shapes without the attack
//! and pass, so a failing `class_*` test means the attack got through, not a broken setup.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::config::Config;
pub(crate) use crate::support::config::SIGNERS;
pub(crate) use crate::support::forge::{File, Forge, Keys, REASON, passed, refused, said};
use crate::support::{Fixture, Run};

mod baselines;
mod ci_protected;
mod local;
mod measured_first;
mod notes_and_refs;
mod release_lines;
mod trunk_names;

/// Four more TODOs: with the fixture's two, 6 against the limit of 5.
pub(crate) const TODOS: &str = "// TODO 1\n// TODO 2\n// TODO 3\n// TODO 4\n";

/// The trunk's config: the landing config, then `standards` (more tables, as written), and an
/// `[acceptance]` that requires signed approvals by the owner's key, with `acceptance` (more
/// `key = value` lines of that table).
pub(crate) fn signed_config(standards: &str, acceptance: &str) -> String {
    // In this order, as a trunk's file reads: an attack may cut the text at a table.
    let acceptance = Config::new().signed().lines("acceptance", acceptance);
    format!("{}{standards}\n{acceptance}", Config::landing())
}

/// The result names `key` in what it says: as written, or — a field of a Standard,
/// `standards.<name>.<field>` — as "Standard <name> is redefined (<field> …".
#[track_caller]
pub(crate) fn names(json: &Value, key: &str) {
    let text = said(json);
    let described = key
        .strip_prefix("standards.")
        .and_then(|rest| rest.split_once('.'))
        .map(|(name, field)| format!("Standard {name} is redefined ({field} "));
    let named = text.contains(key) || described.is_some_and(|d| text.contains(&d));
    assert!(named, "{key} is not named in:\n{text}\n{json}");
}

/// A failed CI run on a pull request: non-zero, `ok: false`, refused as awaiting the owner's
/// approval (or a failed precondition), naming `key`.
#[track_caller]
pub(crate) fn refused_naming(run: &Run, what: &str, key: &str) -> Value {
    let json = refused(run, what);
    assert!(
        ["awaiting_standard_approval", "precondition_failed"]
            .contains(&json["error"].as_str().unwrap_or_default()),
        "{what}: {json}"
    );
    names(&json, key);
    json
}

// ---------------------------------------------------------------------------------------------
// Notes as a landing writes them, and as an attacker writes them.
// ---------------------------------------------------------------------------------------------

/// An approved limit move as a Proof note lists it.
pub(crate) fn approved_limit(standard: &str, from: f64, to: f64) -> Value {
    json!({
        "standard": standard,
        "trunk_limit": from,
        "proposed_limit": to,
        "token": discern::testing::proposals::approval_token(standard, to, REASON),
    })
}

/// An approved protected change as a Proof note lists it, with the token discern derives.
pub(crate) fn approved_change(kind: &str, key: &str, old: Value, new: Value) -> Value {
    let token = discern::testing::protected::token(kind, key, &old, &new);
    json!({ "kind": kind, "key": key, "old": old, "new": new, "token": token })
}

/// The subject an approval signs: `commit` landed on the trunk `main` at `before`, with the
/// tokens of every item of `items`.
pub(crate) fn payload(before: &str, commit: &str, items: &[&Value]) -> String {
    let mut tokens: Vec<&str> = items.iter().map(|i| i["token"].as_str().unwrap()).collect();
    tokens.sort_unstable();
    tokens.dedup();
    let mut text =
        format!("discern-approval-v1\ntrunk main\ntrunk-commit {before}\nhead {commit}\n");
    for token in tokens {
        text.push_str(&format!("token {token}\n"));
    }
    text
}

/// `payload` signed with `key` by `ssh-keygen -Y sign -n discern-approval`, as the channel of
/// a recorded approval by `principal`.
pub(crate) fn signed_approval(key: &Path, principal: &str, payload: &str) -> Value {
    let (fingerprint, signature) = Keys::sign(key, payload);
    json!({
        "version": 1,
        "payload": payload,
        "channel": "signed",
        "principal": principal,
        "fingerprint": fingerprint,
        "signature": signature,
    })
}

/// An approval "answered on a terminal": what anyone can write.
pub(crate) fn terminal_approval(payload: &str) -> Value {
    json!({ "version": 1, "payload": payload, "channel": "terminal" })
}

/// A Proof note as `accept` writes it for `commit` landed on `before`.
pub(crate) fn proof_note(
    before: &str,
    commit: &str,
    limits: &[Value],
    changes: &[Value],
    approval: Value,
) -> Value {
    json!({
        "version": 1,
        "subject": { "commit": commit, "branch": "agent/landed", "trunk": "main" },
        "proof": {
            "version": 1,
            "commit": commit,
            "branch": "agent/landed",
            "trunk": "main",
            "trunk_commit": before,
            "diffstat": "1 file changed",
            "standards": [{ "name": "todo", "value": 2.0, "limit": 5.0, "verdict": "held" }],
            "proposals": [],
            "protected": [],
            "by_trunk": [],
            "tested": true,
            "line": "Proof: agent/landed; Standards: 1 pass.",
        },
        "consent": { "source": "confirmed" },
        "approved_proposals": limits,
        "approved_changes": changes,
        "approval": approval,
    })
}

/// Attach `note` to `commit` on `refs/notes/discern` in `dir`.
pub(crate) fn add_note(forge: &Forge, dir: &Path, commit: &str, note: &Value) {
    forge.git(
        dir,
        &[
            "notes",
            "--ref",
            "refs/notes/discern",
            "add",
            "-f",
            "-m",
            &note.to_string(),
            commit,
        ],
    );
}

// ---------------------------------------------------------------------------------------------
// Efforts in one repository (the local attacks).
// ---------------------------------------------------------------------------------------------

/// An effort `name` started from `fixture`'s main checkout with `files` committed: its worktree.
pub(crate) fn effort(fixture: &Fixture, name: &str, files: &[File]) -> PathBuf {
    let json = fixture
        .run(&["start", "--name", name, "--title", "Attack", "--json"])
        .json();
    assert_eq!(json["ok"], true, "{json}");
    let path = PathBuf::from(json["data"]["path"].as_str().unwrap());
    for (file, content) in files {
        let full = path.join(file);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, content).unwrap();
    }
    fixture.git_in(&path, &["add", "-A"]);
    fixture.git_in(
        &path,
        &[
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            &format!("work on {name}"),
        ],
    );
    path
}

/// The pattern built-in's component bytes, to commit as a repository component.
pub(crate) fn pattern_wasm() -> Vec<u8> {
    let builtin = discern::testing::builtins::BUILTINS
        .iter()
        .find(|b| b.name == "pattern")
        .unwrap();
    builtin.wasm.to_vec()
}

/// The same component with a custom section appended: another blob that behaves exactly alike.
pub(crate) fn pattern_wasm_renamed() -> Vec<u8> {
    let mut bytes = pattern_wasm();
    let name = b"attack";
    let body = b"x";
    bytes.push(0); // a custom section
    bytes.push((1 + name.len() + body.len()) as u8);
    bytes.push(name.len() as u8);
    bytes.extend_from_slice(name);
    bytes.extend_from_slice(body);
    bytes
}

/// A Standard measured by the repository component `tools/p.wasm` (the pattern built-in).
pub(crate) const COMPONENT: &str = r#"
[standards.component]
direction = "down"
limit = 5
producer = "tools/p.wasm"
config = { pattern = "TODO", paths = ["src/**"] }
metric = "matches"
"#;

/// A Standard fed by a job that counts `HACK` lines in `src/`.
pub(crate) const JOB: &str = r#"
[jobs.count]
stage = "test"
run = 'printf "DISCERN_METRIC hacks %s\n" "$(cat src/*.rs | grep -c HACK)"'

[standards.hacks]
direction = "down"
limit = 1
producer = "builtin:discern-metric"
needs = ["jobs.count"]
"#;

/// A compatibility Standard whose command is a script of the repository.
pub(crate) const SCRIPT: &str = r#"
[standards.count]
direction = "down"
limit = 1
run = "sh scripts/count.sh"
"#;
pub(crate) const COUNT_SH: &str =
    "printf 'DISCERN_METRIC count %s\\n' \"$(cat src/*.rs | grep -c HACK)\"\n";

// ---------------------------------------------------------------------------------------------
