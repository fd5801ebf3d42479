//! The attacker suite (issue 28): a pull-request author, a pusher or an agent with a shell who
//! wants a looser limit landed. Each test builds a small forge of real git repositories — a
//! bare `origin`, the owner's clone, the attacker's clone, and CI clones made the way
//! `actions/checkout` makes them, followed by the README's fetch — and asserts the secure
//! outcome: the CI run fails (`ok: false`, a non-zero exit), `accept` lands nothing, `done`
//! proves nothing. The `baseline_passes_*` tests run the same forge shapes without the attack
//! and pass, so a failing `class_*` test means the attack got through, not a broken setup.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::{Fixture, LANDING_CONFIG, Run, standard};

const SIGNERS: &str = ".discern/allowed_signers";
const REASON: &str = "The new module lists four planned extension points.";
/// Four more TODOs: with the fixture's two, 6 against the limit of 5.
const TODOS: &str = "// TODO 1\n// TODO 2\n// TODO 3\n// TODO 4\n";

// ---------------------------------------------------------------------------------------------
// The forge: origin, the owner's clone, the attacker's clone, CI clones.
// ---------------------------------------------------------------------------------------------

/// The trunk's config: [`LANDING_CONFIG`], then `standards` (more tables), then an
/// `[acceptance]` that requires signed approvals by the owner's key, with `acceptance` (more
/// keys of that table).
fn signed_config(standards: &str, acceptance: &str) -> String {
    format!(
        "{LANDING_CONFIG}{standards}\n[acceptance]\nallowed_signers = \"{SIGNERS}\"\n{acceptance}"
    )
}

/// The owner's key and the attacker's, made with ssh-keygen beside the repository.
struct Keys {
    owner: PathBuf,
    attacker: PathBuf,
}

impl Keys {
    fn new(dir: &Path) -> Self {
        discern_tests::ensure_debian_tool("ssh-keygen", "openssh-client");
        let make = |name: &str| {
            let path = dir.join(format!("{name}-key"));
            let status = std::process::Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
                .arg(&path)
                .status()
                .expect("ssh-keygen (Debian: openssh-client) runs");
            assert!(status.success());
            path
        };
        Self {
            owner: make("owner"),
            attacker: make("attacker"),
        }
    }

    /// The allowed-signers line of `key` for `principal`.
    fn line(key: &Path, principal: &str) -> String {
        let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
        let mut fields = public.split_whitespace();
        let (kind, data) = (fields.next().unwrap(), fields.next().unwrap());
        format!("{principal} {kind} {data}\n")
    }

    fn owner_line(&self) -> String {
        Self::line(&self.owner, "owner@example.com")
    }

    fn attacker_line(&self) -> String {
        Self::line(&self.attacker, "attacker@example.com")
    }
}

/// A file to write: its path and content.
type File<'a> = (&'a str, &'a [u8]);

struct Forge {
    /// The owner's clone (`fixture.path()`), with the hermetic environment every run uses.
    fixture: Fixture,
    keys: Keys,
    origin: PathBuf,
    attacker: PathBuf,
}

impl Forge {
    /// `origin` with `config` and `files` on `main` (plus the owner's key in the signers file),
    /// the owner's clone pushing to it, and the attacker's clone of it.
    fn new(config: &str, files: &[File]) -> Self {
        let fixture = Fixture::new(config);
        let keys = Keys::new(fixture.repo.parent());
        fixture.repo.write(SIGNERS, keys.owner_line());
        for (path, content) in files {
            fixture.repo.write(path, content);
        }
        // In the first commit, beside the config that names them: the gate's start (added later,
        // they would be changes no approval anchors).
        fixture.repo.git(&["add", "-A"]);
        fixture.repo.git(&["commit", "-q", "--amend", "--no-edit"]);
        let parent = fixture.repo.parent().to_owned();
        let origin = parent.join("origin.git");
        fixture.git_in(
            &parent,
            &["init", "-q", "--bare", "-b", "main", "origin.git"],
        );
        let url = format!("file://{}", origin.display());
        fixture.git_in(fixture.path(), &["remote", "add", "origin", &url]);
        fixture.git_in(fixture.path(), &["push", "-q", "origin", "main"]);
        fixture.git_in(&parent, &["clone", "-q", &url, "attacker"]);
        Self {
            fixture,
            keys,
            origin,
            attacker: parent.join("attacker"),
        }
    }

    fn owner(&self) -> &Path {
        self.fixture.path()
    }

    fn url(&self) -> String {
        format!("file://{}", self.origin.display())
    }

    /// `git` in `dir`, hermetically and quietly; panics with its stderr when it fails.
    fn git(&self, dir: &Path, args: &[&str]) {
        let mut cmd = std::process::Command::new("git");
        cmd.args(args).current_dir(dir);
        discern_tests::hermetic(&mut cmd, self.fixture.repo.home());
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn out(&self, dir: &Path, args: &[&str]) -> String {
        self.fixture.git_out(dir, args)
    }

    /// origin's `main`.
    fn main(&self) -> String {
        self.out(&self.origin, &["rev-parse", "refs/heads/main"])
    }

    /// Write `files`, delete `removed`, commit everything in `dir`: the new HEAD.
    fn commit(&self, dir: &Path, files: &[File], removed: &[&str], message: &str) -> String {
        for (path, content) in files {
            let full = dir.join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, content).unwrap();
        }
        for path in removed {
            std::fs::remove_file(dir.join(path)).unwrap();
        }
        self.git(dir, &["add", "-A"]);
        self.git(dir, &["commit", "-q", "--allow-empty", "-m", message]);
        self.out(dir, &["rev-parse", "HEAD"])
    }

    /// The attacker's branch `branch` off origin's `main` with one commit, pushed: its head.
    fn pull_request(&self, branch: &str, files: &[File], removed: &[&str]) -> String {
        self.git(&self.attacker, &["fetch", "-q", "origin"]);
        self.git(
            &self.attacker,
            &["checkout", "-q", "-B", branch, "origin/main"],
        );
        let head = self.commit(&self.attacker, files, removed, &format!("work on {branch}"));
        self.git(
            &self.attacker,
            &[
                "push",
                "-q",
                "-f",
                "origin",
                &format!("HEAD:refs/heads/{branch}"),
            ],
        );
        head
    }

    /// The attacker's commit straight on origin's `main`: `(before, after)`.
    fn push_main(&self, files: &[File], removed: &[&str], message: &str) -> (String, String) {
        self.git(&self.attacker, &["fetch", "-q", "origin"]);
        self.git(
            &self.attacker,
            &["checkout", "-q", "-B", "main", "origin/main"],
        );
        let before = self.main();
        let after = self.commit(&self.attacker, files, removed, message);
        self.git(&self.attacker, &["push", "-q", "origin", "main"]);
        (before, after)
    }

    /// Move origin's `main` to `commit` (made in the attacker's clone): a push.
    fn push_commit(&self, commit: &str) {
        self.git(&self.attacker, &["checkout", "-q", "-B", "main", commit]);
        self.git(&self.attacker, &["push", "-q", "-f", "origin", "main"]);
    }

    /// The attacker's Proof notes, pushed to origin.
    fn push_notes(&self) {
        self.git(
            &self.attacker,
            &[
                "push",
                "-q",
                "-f",
                "origin",
                "refs/notes/discern:refs/notes/discern",
            ],
        );
    }

    /// A clone shaped like `actions/checkout`'s of `branch` (depth 1, one branch, detached
    /// HEAD), followed by the README's fetch: the trunk and its history, and the Proof notes.
    fn ci_clone(&self, branch: &str) -> PathBuf {
        let parent = self.fixture.repo.parent();
        let mut n = 0;
        while parent.join(format!("ci-{n}")).exists() {
            n += 1;
        }
        let clone = parent.join(format!("ci-{n}"));
        let url = self.url();
        self.git(
            parent,
            &[
                "clone",
                "-q",
                "--depth",
                "1",
                "--single-branch",
                "--branch",
                branch,
                &url,
                clone.to_str().unwrap(),
            ],
        );
        self.git(&clone, &["checkout", "-q", "--detach"]);
        self.readme_fetch(&clone);
        clone
    }

    /// The forge's merge of the pull request `head` into origin's main, published as
    /// `refs/pull/1/merge`, and a CI clone of it the way `actions/checkout` makes one for a
    /// pull request (an empty repository, that ref fetched at depth 1, checked out detached),
    /// followed by the README's fetch.
    fn merge_ref_clone(&self, head: &str) -> PathBuf {
        // The trunk moves on first, so that the forge's merge is a real merge.
        self.commit(
            self.owner(),
            &[("NEWS.md", b"the trunk moves on\n")],
            &[],
            "news",
        );
        self.git(self.owner(), &["push", "-q", "origin", "main"]);
        self.git(&self.attacker, &["fetch", "-q", "origin"]);
        self.git(
            &self.attacker,
            &["checkout", "-q", "--detach", "origin/main"],
        );
        self.git(
            &self.attacker,
            &["merge", "-q", "--no-ff", "--no-edit", head],
        );
        self.git(
            &self.attacker,
            &["push", "-q", "-f", "origin", "HEAD:refs/pull/1/merge"],
        );
        let clone = self.fixture.repo.parent().join("ci-merge");
        std::fs::create_dir_all(&clone).unwrap();
        self.git(&clone, &["init", "-q"]);
        self.git(&clone, &["remote", "add", "origin", &self.url()]);
        self.git(
            &clone,
            &[
                "fetch",
                "-q",
                "--depth",
                "1",
                "origin",
                "+refs/pull/1/merge:refs/remotes/pull/1/merge",
            ],
        );
        self.git(
            &clone,
            &["checkout", "-q", "--detach", "refs/remotes/pull/1/merge"],
        );
        self.readme_fetch(&clone);
        clone
    }

    /// The README's fetch, with full refspecs, deepened until the clone is complete.
    fn readme_fetch(&self, clone: &Path) {
        self.git(
            clone,
            &[
                "fetch",
                "-q",
                "--unshallow",
                "origin",
                "+refs/heads/main:refs/remotes/origin/main",
            ],
        );
        if self.out(clone, &["rev-parse", "--is-shallow-repository"]) == "true" {
            self.git(clone, &["fetch", "-q", "--unshallow", "origin"]);
        }
        let mut ls = std::process::Command::new("git");
        ls.args(["ls-remote", "--exit-code", "origin", "refs/notes/discern"])
            .current_dir(clone);
        discern_tests::hermetic(&mut ls, self.fixture.repo.home());
        if ls.output().unwrap().status.success() {
            self.git(
                clone,
                &[
                    "fetch",
                    "-q",
                    "origin",
                    "+refs/notes/discern:refs/notes/discern",
                ],
            );
        }
    }

    /// `discern <args>` in `dir` as CI runs it (`CI=true`), with `env` besides.
    fn ci(&self, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut all = vec![("CI", "true")];
        all.extend_from_slice(env);
        self.fixture.run_in(dir, args, &all)
    }

    /// The pull-request job: `discern standards --json` in a CI clone of `branch`.
    fn pr_ci(&self, branch: &str) -> Run {
        let clone = self.ci_clone(branch);
        self.ci(&clone, &["standards", "--json"], &[])
    }

    /// The push job: `discern standards --baseline BEFORE --json` in a CI clone of `main`.
    fn push_ci(&self, before: &str) -> Run {
        let clone = self.ci_clone("main");
        self.ci(&clone, &["standards", "--baseline", before, "--json"], &[])
    }
}

// ---------------------------------------------------------------------------------------------
// Reading results.
// ---------------------------------------------------------------------------------------------

/// The run failed the way a CI step fails: a non-zero exit and `ok: false`. Its envelope.
#[track_caller]
fn refused(run: &Run, what: &str) -> Value {
    let json = run.json();
    assert_ne!(
        run.code, 0,
        "{what}: the attack got through:\n{}",
        run.stdout
    );
    assert_eq!(
        json["ok"], false,
        "{what}: the attack got through:\n{}",
        run.stdout
    );
    json
}

/// The run passed: exit 0 and `ok: true`. Its envelope.
#[track_caller]
fn passed(run: &Run, what: &str) -> Value {
    let json = run.json();
    assert_eq!(run.code, 0, "{what}:\n{}\n{}", run.stdout, run.stderr);
    assert_eq!(json["ok"], true, "{what}:\n{}", run.stdout);
    json
}

/// Everything a result says in words: its message, its diagnostics, its advisories and the
/// limits check's reason.
fn said(json: &Value) -> String {
    let mut text = vec![json["message"].as_str().unwrap_or_default().to_owned()];
    for list in ["diagnostics", "advisories"] {
        for item in json[list].as_array().into_iter().flatten() {
            let line = item["message"]
                .as_str()
                .or(item.as_str())
                .unwrap_or_default();
            text.push(line.to_owned());
        }
    }
    text.push(
        json["data"]["limits"]["reason"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    );
    text.join("\n")
}

/// The result names `key` in what it says: as written, or — a field of a Standard,
/// `standards.<name>.<field>` — as "Standard <name> is redefined (<field> …".
#[track_caller]
fn names(json: &Value, key: &str) {
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
fn refused_naming(run: &Run, what: &str, key: &str) -> Value {
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
fn approved_limit(standard: &str, from: f64, to: f64) -> Value {
    json!({
        "standard": standard,
        "trunk_limit": from,
        "proposed_limit": to,
        "token": discern::testing::proposals::approval_token(standard, to, REASON),
    })
}

/// An approved protected change as a Proof note lists it, with the token discern derives.
fn approved_change(kind: &str, key: &str, old: Value, new: Value) -> Value {
    let token = discern::testing::protected::token(kind, key, &old, &new);
    json!({ "kind": kind, "key": key, "old": old, "new": new, "token": token })
}

/// The subject an approval signs: `commit` landed on the trunk `main` at `before`, with the
/// tokens of every item of `items`.
fn payload(before: &str, commit: &str, items: &[&Value]) -> String {
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
fn signed_approval(key: &Path, principal: &str, payload: &str) -> Value {
    let mut child = std::process::Command::new("ssh-keygen")
        .args(["-Y", "sign", "-n", "discern-approval", "-f"])
        .arg(key)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), payload.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let fingerprint = std::process::Command::new("ssh-keygen")
        .args(["-l", "-E", "sha256", "-f"])
        .arg(key.with_extension("pub"))
        .output()
        .unwrap();
    let fingerprint = String::from_utf8(fingerprint.stdout).unwrap();
    json!({
        "version": 1,
        "payload": payload,
        "channel": "signed",
        "principal": principal,
        "fingerprint": fingerprint.split_whitespace().nth(1).unwrap(),
        "signature": String::from_utf8(out.stdout).unwrap(),
    })
}

/// An approval "answered on a terminal": what anyone can write.
fn terminal_approval(payload: &str) -> Value {
    json!({ "version": 1, "payload": payload, "channel": "terminal" })
}

/// A Proof note as `accept` writes it for `commit` landed on `before`.
fn proof_note(
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
fn add_note(forge: &Forge, dir: &Path, commit: &str, note: &Value) {
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
fn effort(fixture: &Fixture, name: &str, files: &[File]) -> PathBuf {
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
fn pattern_wasm() -> Vec<u8> {
    let builtin = discern::testing::builtins::BUILTINS
        .iter()
        .find(|b| b.name == "pattern")
        .unwrap();
    builtin.wasm.to_vec()
}

/// The same component with a custom section appended: another blob that behaves exactly alike.
fn pattern_wasm_renamed() -> Vec<u8> {
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
const COMPONENT: &str = r#"
[standards.component]
direction = "down"
limit = 5
producer = "tools/p.wasm"
config = { pattern = "TODO", paths = ["src/**"] }
metric = "matches"
"#;

/// A Standard fed by a job that counts `HACK` lines in `src/`.
const JOB: &str = r#"
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
const SCRIPT: &str = r#"
[standards.count]
direction = "down"
limit = 1
run = "sh scripts/count.sh"
"#;
const COUNT_SH: &str = "printf 'DISCERN_METRIC count %s\\n' \"$(cat src/*.rs | grep -c HACK)\"\n";

// ---------------------------------------------------------------------------------------------
// The same forges without an attack: green.
// ---------------------------------------------------------------------------------------------

/// An innocuous pull request and an innocuous push on the signed forge pass CI.
#[test]
fn baseline_passes_pr_and_push_ci_on_the_signed_forge() {
    let forge = Forge::new(&signed_config("", ""), &[]);
    forge.pull_request("agent/ok", &[("src/ok.rs", b"pub fn ok() {}\n")], &[]);
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
    let side = forge.out(&forge.attacker, &["rev-parse", "HEAD~1"]);
    forge.git(&forge.attacker, &["checkout", "-q", "-B", "side", &side]);
    let side = forge.commit(
        &forge.attacker,
        &[("src/side.rs", b"pub fn side() {}\n")],
        &[],
        "side work",
    );
    forge.git(&forge.attacker, &["checkout", "-q", "main"]);
    forge.git(&forge.attacker, &["merge", "-q", "--no-edit", &side]);
    let before = forge.main();
    let merge = forge.out(&forge.attacker, &["rev-parse", "HEAD"]);
    forge.push_commit(&merge);
    passed(&forge.push_ci(&before), "a merge that keeps the limits");
}

/// An innocuous pull request checked out as the forge's merge ref passes CI, judged against
/// its merge base with `origin/main`.
#[test]
fn baseline_passes_pr_ci_on_the_forges_merge_ref() {
    let forge = Forge::new(&signed_config("", ""), &[]);
    let head = forge.pull_request("agent/ok", &[("src/ok.rs", b"pub fn ok() {}\n")], &[]);
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
        &signed_config(
            &format!("{COMPONENT}{JOB}{SCRIPT}"),
            "protected = [\"scripts/**\"]\n",
        ),
        &[
            ("tools/p.wasm", &wasm),
            ("scripts/count.sh", COUNT_SH.as_bytes()),
        ],
    );
    forge.pull_request("agent/ok", &[("src/ok.rs", b"pub fn ok() {}\n")], &[]);
    let json = passed(&forge.pr_ci("agent/ok"), "an innocuous pull request");
    assert_eq!(json["data"]["limits"]["status"], "verified", "{json}");
    assert_eq!(standard(&json, "component")["value"], 2.0, "{json}");
    assert_eq!(standard(&json, "hacks")["value"], 0.0, "{json}");
    assert_eq!(standard(&json, "count")["value"], 0.0, "{json}");
    // The same component under another blob id measures the same: only its identity differs.
    let renamed = pattern_wasm_renamed();
    let run = forge.fixture.run_in(
        forge.owner(),
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
    std::fs::write(forge.owner().join("tools/q.wasm"), &renamed).unwrap();
    let run = forge.fixture.run_in(
        forge.owner(),
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
    let forge = Forge::new(&signed_config("", ""), &[]);
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
    add_note(&forge, &forge.attacker, &landed, &note);
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

    let forge = Forge::new(LANDING_CONFIG, &[]);
    let loose = format!(
        "{}\n[acceptance]\npre_authorized = [\"docs/**\"]\n",
        LANDING_CONFIG.replace("limit = 5", "limit = 9")
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
    add_note(&forge, &forge.attacker, &landed, &note);
    forge.push_notes();
    passed(&forge.push_ci(&before), "an interactive landing");
}

// ---------------------------------------------------------------------------------------------
// 1. PR CI judges the whole protected set, not only a Standard's definition.
// ---------------------------------------------------------------------------------------------

/// Class 1a: the pull request replaces the committed component `tools/p.wasm` — with the same
/// component under another blob id, and with another component — leaving discern.toml alone.
#[test]
fn class_01a_a_replaced_repository_component_fails_pr_ci() {
    let forge = Forge::new(
        &signed_config(COMPONENT, ""),
        &[("tools/p.wasm", &pattern_wasm())],
    );
    let key = "standards.component.producer_blob";
    // The same component under another blob id: it measures exactly as before.
    forge.pull_request(
        "agent/renamed",
        &[("tools/p.wasm", &pattern_wasm_renamed())],
        &[],
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
    );
    let json = refused(&forge.pr_ci("agent/legacy"), "another component");
    names(&json, key);
    assert_ne!(json["data"]["limits"]["status"], "verified", "{json}");
}

/// Class 1b: the pull request rewrites the job a Standard `needs` so that it reports 0, while
/// adding the lines that job counts.
#[test]
fn class_01b_a_rewritten_job_a_standard_needs_fails_pr_ci() {
    let forge = Forge::new(&signed_config(JOB, ""), &[]);
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
    );
    refused_naming(&forge.pr_ci("agent/job"), "a rewritten job", "jobs.count");
}

/// Class 1c: the pull request adds `findings = "count"` to a Standard (the swap check off).
#[test]
fn class_01c_a_new_findings_key_on_a_standard_fails_pr_ci() {
    let forge = Forge::new(&signed_config("", ""), &[]);
    let config = signed_config("", "").replace(
        "metric = \"matches\"",
        "metric = \"matches\"\nfindings = \"count\"",
    );
    forge.pull_request(
        "agent/findings",
        &[("discern.toml", config.as_bytes())],
        &[],
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
    let forge = Forge::new(&signed_config("", ""), &[]);
    let granted = signed_config("", "pre_authorized = [\"**\"]\n");
    forge.pull_request("agent/grant", &[("discern.toml", granted.as_bytes())], &[]);
    refused_naming(
        &forge.pr_ci("agent/grant"),
        "a standing grant",
        "acceptance.pre_authorized",
    );
    let pinning = signed_config("", "").replace("pin_on_done = false", "pin_on_done = true");
    forge.pull_request("agent/repo", &[("discern.toml", pinning.as_bytes())], &[]);
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
    let forge = Forge::new(&signed_config("", ""), &[]);
    let signers = format!("{}{}", forge.keys.owner_line(), forge.keys.attacker_line());
    forge.pull_request("agent/signers", &[(SIGNERS, signers.as_bytes())], &[]);
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
    add_note(&forge, &forge.attacker, &landed, &note);
    forge.push_notes();
    refused(&forge.push_ci(&first), "both pushes judged together");
    refused(&forge.push_ci(&before), "the second push, judged alone");
}

/// Class 2b: a rebase-shaped landing pushed in one go: a first commit adds the attacker's key
/// to the signers file, a second loosens the limit and carries a Proof note signed by the
/// attacker's key that says it landed on the first commit — whose signers file lists that key.
#[test]
fn class_02b_a_landing_cannot_be_approved_by_signers_it_brought_itself() {
    let forge = Forge::new(&signed_config("", ""), &[]);
    let signers = format!("{}{}", forge.keys.owner_line(), forge.keys.attacker_line());
    let loose = signed_config("", "").replace("limit = 5", "limit = 9");
    forge.git(&forge.attacker, &["checkout", "-q", "main"]);
    let before = forge.main();
    let listed = forge.commit(
        &forge.attacker,
        &[(SIGNERS, signers.as_bytes())],
        &[],
        "signers",
    );
    let landed = forge.commit(
        &forge.attacker,
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
    add_note(&forge, &forge.attacker, &landed, &note);
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
    let forge = Forge::new(&signed_config("", ""), &[]);
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
        forge.pull_request(branch, &[("discern.toml", config.as_bytes())], &[]);
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
    let forge = Forge::new(&signed_config("", ""), &[]);
    let loose = signed_config("", "").replace("limit = 5", "limit = 500");
    forge.git(
        &forge.attacker,
        &["checkout", "-q", "--detach", "origin/main"],
    );
    let tagged = forge.commit(
        &forge.attacker,
        &[("discern.toml", loose.as_bytes())],
        &[],
        "a loose limit",
    );
    forge.git(&forge.attacker, &["tag", "main", &tagged]);
    forge.git(&forge.attacker, &["push", "-q", "origin", "refs/tags/main"]);
    forge.git(&forge.attacker, &["checkout", "-q", "-b", "agent/tag"]);
    forge.commit(
        &forge.attacker,
        &[("src/ok.rs", b"pub fn ok() {}\n")],
        &[],
        "work",
    );
    forge.git(&forge.attacker, &["push", "-q", "origin", "agent/tag"]);

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
    forge.git(&forge.attacker, &["checkout", "-q", "agent/tag"]);
    assert_eq!(forge.out(&forge.attacker, &["rev-parse", "main"]), tagged);
    let run = forge
        .fixture
        .run_in(&forge.attacker, &["standards", "--json"], &[]);
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
    let forge = Forge::new(&signed_config("", ""), &[]);
    let before = forge.main();
    let loose = signed_config("", "").replace("limit = 5", "limit = 500");
    forge.git(&forge.attacker, &["checkout", "-q", "--orphan", "root"]);
    let root = forge.commit(
        &forge.attacker,
        &[("discern.toml", loose.as_bytes())],
        &[],
        "an unrelated root",
    );
    assert_eq!(
        forge.out(&forge.attacker, &["rev-list", "--count", &root]),
        "1"
    );
    let tree = format!("{root}^{{tree}}");
    let merge = forge.out(
        &forge.attacker,
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
    let forge = Forge::new(&signed_config("", ""), &[]);
    let before = forge.main();
    forge.git(&forge.attacker, &["checkout", "-q", "--orphan", "root"]);
    let root = forge.commit(
        &forge.attacker,
        &[("discern.toml", loose.as_bytes())],
        &[],
        "an unrelated root",
    );
    let tree = format!("{root}^{{tree}}");
    let merge = forge.out(
        &forge.attacker,
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
        &forge.attacker,
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
    let forge = Forge::new(&signed_config("", ""), &[]);
    let loose = format!(
        "{}\n[acceptance]\napproval = \"interactive\"\n",
        LANDING_CONFIG.replace("limit = 5", "limit = 9")
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
    add_note(&forge, &forge.attacker, &landed, &note);
    forge.push_notes();
    refused(
        &forge.push_ci(&before),
        "the policy switched to interactive",
    );

    // The signers file deleted.
    let forge = Forge::new(&signed_config("", ""), &[]);
    let loose = signed_config("", "").replace("limit = 5", "limit = 9");
    let signers_blob = forge.out(forge.owner(), &["rev-parse", &format!("main:{SIGNERS}")]);
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
    add_note(&forge, &forge.attacker, &landed, &note);
    forge.push_notes();
    refused(&forge.push_ci(&before), "the signers file deleted");

    // Another signers file, listing the attacker, named by the pushed config; the note is
    // signed by the attacker's key and approves every item.
    let forge = Forge::new(&signed_config("", ""), &[]);
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
    let own_blob = forge.out(&forge.attacker, &["rev-parse", &format!("HEAD:{own}")]);
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
    add_note(&forge, &forge.attacker, &landed, &note);
    forge.push_notes();
    refused(
        &forge.push_ci(&before),
        "a signers file of the attacker's own",
    );
}

// ---------------------------------------------------------------------------------------------
// 7. Files under `[acceptance].protected`.
// ---------------------------------------------------------------------------------------------

/// Class 7: a Standard runs `sh scripts/count.sh`, and `scripts/**` is protected: a pull
/// request edits only the script so that it reports less (while adding what it counts), or
/// also drops the path from the protected list.
#[test]
fn class_07_an_edited_protected_script_fails_pr_ci() {
    let forge = Forge::new(
        &signed_config(SCRIPT, "protected = [\"scripts/**\"]\n"),
        &[("scripts/count.sh", COUNT_SH.as_bytes())],
    );
    let lie = b"echo 'DISCERN_METRIC count 0'\n" as &[u8];
    let hacks = b"// HACK 1\n// HACK 2\n// HACK 3\n" as &[u8];
    forge.pull_request(
        "agent/script",
        &[("scripts/count.sh", lie), ("src/hack.rs", hacks)],
        &[],
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
    let fixture = Fixture::new(LANDING_CONFIG);
    fixture.repo.write("README.md", "# second\n");
    fixture.repo.commit("a second trunk commit");
    let loose = LANDING_CONFIG.replace("limit = 5", "limit = 500");
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
    let fixture = Fixture::new(LANDING_CONFIG);
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
    let fixture = Fixture::new(LANDING_CONFIG);
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
    let fixture = Fixture::new(LANDING_CONFIG);
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
    let fixture = Fixture::new(&format!("{LANDING_CONFIG}{LEGACY}"));
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
    let fixture = Fixture::new(&format!("{LANDING_CONFIG}{COMPONENT}"));
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
    let fixture = Fixture::new(&format!("{LANDING_CONFIG}{COMPONENT}"));
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
    let forge = Forge::new(&signed_config("", ""), &[]);
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
    add_note(&forge, &forge.attacker, &landed, &note);
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
        &signed_config(COMPONENT, ""),
        &[("tools/p.wasm", &pattern_wasm())],
    );
    forge.pull_request(
        "agent/git",
        &[("tools/p.wasm", &pattern_wasm_renamed())],
        &[],
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
    let forge = Forge::new(&signed_config("", ""), &[]);
    let loose = signed_config("", "").replace("limit = 5", "limit = 9");
    let (before, landed) = forge.push_main(&[("discern.toml", loose.as_bytes())], &[], "relax");
    let limit = approved_limit("todo", 5.0, 9.0);
    let approval = terminal_approval(&payload(&before, &landed, &[&limit]));
    let note = proof_note(&before, &landed, &[limit], &[], approval);
    add_note(&forge, &forge.attacker, &landed, &note);
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
    let forge = Forge::new(&signed_config("", ""), &[]);
    let loose = signed_config("", "").replace("limit = 5", "limit = 9");
    let (before, loosening) = forge.push_main(&[("discern.toml", loose.as_bytes())], &[], "relax");
    let (_, claimed) = forge.push_main(&[("README.md", b"# claimed\n")], &[], "a landing");
    let approval = terminal_approval(&payload(&loosening, &claimed, &[]));
    let note = proof_note(&loosening, &claimed, &[], &[], approval);
    add_note(&forge, &forge.attacker, &claimed, &note);
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
    let forge = Forge::new(&signed_config("", ""), &[]);
    let loose = signed_config("", "").replace("limit = 5", "limit = 9");
    let head = forge.pull_request("agent/merged", &[("discern.toml", loose.as_bytes())], &[]);
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
    let forge = Forge::new(&signed_config("", ""), &[]);
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
    add_note(&forge, &forge.attacker, &landed, &note);
    forge.push_main(
        &[("discern.toml", tight.as_bytes())],
        &[],
        "pin todo 9 -> 5",
    );
    let (before, again) = forge.push_main(&[("discern.toml", loose.as_bytes())], &[], "relax todo");
    forge.git(
        &forge.attacker,
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
    let forge = Forge::new(&signed_config("", ""), &[]);
    let loose = signed_config("", "").replace("limit = 5", "limit = 500");
    forge.git(&forge.attacker, &["fetch", "-q", "origin"]);
    forge.git(
        &forge.attacker,
        &["checkout", "-q", "-B", "agent/link", "origin/main"],
    );
    std::fs::write(forge.attacker.join("loose.toml"), &loose).unwrap();
    std::fs::remove_file(forge.attacker.join("discern.toml")).unwrap();
    std::os::unix::fs::symlink("loose.toml", forge.attacker.join("discern.toml")).unwrap();
    forge.git(&forge.attacker, &["add", "-A"]);
    forge.git(&forge.attacker, &["commit", "-q", "-m", "a linked config"]);
    forge.git(&forge.attacker, &["push", "-q", "origin", "agent/link"]);
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
    let fixture = Fixture::new(LANDING_CONFIG);
    let loose = LANDING_CONFIG.replace("limit = 5", "limit = 9");
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
    let fixture = Fixture::new(LANDING_CONFIG);
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
    let mut child = std::process::Command::new("ssh-keygen")
        .args(["-Y", "sign", "-n", namespace, "-f"])
        .arg(key)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), payload.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut approval = signed_approval(key, principal, payload);
    approval["signature"] = json!(String::from_utf8(out.stdout).unwrap());
    approval
}

/// Class 18: the owner's key signs the approval subject, but not as an approval: made for
/// another signature namespace (`git`, as a signed commit is), or by a key the trunk's signers
/// file allows only for `git`.
#[test]
fn class_18_a_signature_for_another_namespace_approves_nothing() {
    for (restricted, namespace) in [(false, "git"), (true, "discern-approval")] {
        let forge = Forge::new(&signed_config("", ""), &[]);
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
        add_note(&forge, &forge.attacker, &landed, &note);
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
    let forge = Forge::new(&signed_config("", ""), &[]);
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
        forge.pull_request(&branch, &[("discern.toml", config.as_bytes())], &[]);
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
