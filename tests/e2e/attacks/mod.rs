//! The attacker suite (issue 28): a pull-request author, a pusher or an agent with a shell who
//! wants a looser limit landed. Each test builds a small forge of real git repositories — a
//! bare `origin`, the owner's clone, the attacker's clone, and CI clones made the way
//! `actions/checkout` makes them, followed by the README's fetch — and asserts the secure
//! outcome: the CI run fails (`ok: false`, a non-zero exit), `accept` lands nothing, `done`
//! proves nothing. The `baseline_passes_*` tests run the same forge shapes without the attack
//! and pass, so a failing `class_*` test means the attack got through, not a broken setup.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::{APPROVAL_REPOSITORY, Fixture, LANDING_CONFIG, Run};

mod baselines;
mod ci_protected;
mod local;
mod measured_first;
mod notes_and_refs;
mod release_lines;
mod trunk_names;

pub(crate) const SIGNERS: &str = ".discern/allowed_signers";
pub(crate) const REASON: &str = "The new module lists four planned extension points.";
/// Four more TODOs: with the fixture's two, 6 against the limit of 5.
pub(crate) const TODOS: &str = "// TODO 1\n// TODO 2\n// TODO 3\n// TODO 4\n";

// ---------------------------------------------------------------------------------------------
// The forge: origin, the owner's clone, the attacker's clone, CI clones.
// ---------------------------------------------------------------------------------------------

/// The trunk's config: [`LANDING_CONFIG`], then `standards` (more tables), then an
/// `[acceptance]` that requires signed approvals by the owner's key, with `acceptance` (more
/// keys of that table).
pub(crate) fn signed_config(standards: &str, acceptance: &str) -> String {
    format!(
        "{LANDING_CONFIG}{standards}\n[acceptance]\nallowed_signers = \"{SIGNERS}\"\nrepository = \"{APPROVAL_REPOSITORY}\"\n{acceptance}"
    )
}

/// The owner's key and the attacker's, made with ssh-keygen beside the repository.
pub(crate) struct Keys {
    pub(crate) owner: PathBuf,
    pub(crate) attacker: PathBuf,
}

impl Keys {
    pub(crate) fn new(dir: &Path) -> Self {
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
    pub(crate) fn line(key: &Path, principal: &str) -> String {
        let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
        let mut fields = public.split_whitespace();
        let (kind, data) = (fields.next().unwrap(), fields.next().unwrap());
        format!("{principal} {kind} {data}\n")
    }

    pub(crate) fn owner_line(&self) -> String {
        Self::line(&self.owner, "owner@example.com")
    }

    pub(crate) fn attacker_line(&self) -> String {
        Self::line(&self.attacker, "attacker@example.com")
    }
}

/// A file to write: its path and content.
pub(crate) type File<'a> = (&'a str, &'a [u8]);

pub(crate) struct Forge {
    /// The owner's clone (`fixture.path()`), with the hermetic environment every run uses.
    pub(crate) fixture: Fixture,
    pub(crate) keys: Keys,
    pub(crate) origin: PathBuf,
    pub(crate) attacker: PathBuf,
}

impl Forge {
    /// `origin` with `config` and `files` on `main` (plus the owner's key in the signers file),
    /// the owner's clone pushing to it, and the attacker's clone of it.
    pub(crate) fn new(config: &str, files: &[File]) -> Self {
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

    pub(crate) fn owner(&self) -> &Path {
        self.fixture.path()
    }

    pub(crate) fn url(&self) -> String {
        format!("file://{}", self.origin.display())
    }

    /// `git` in `dir`, hermetically and quietly; panics with its stderr when it fails.
    pub(crate) fn git(&self, dir: &Path, args: &[&str]) {
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

    pub(crate) fn out(&self, dir: &Path, args: &[&str]) -> String {
        self.fixture.git_out(dir, args)
    }

    /// origin's `main`.
    pub(crate) fn main(&self) -> String {
        self.out(&self.origin, &["rev-parse", "refs/heads/main"])
    }

    /// Write `files`, delete `removed`, commit everything in `dir`: the new HEAD.
    pub(crate) fn commit(
        &self,
        dir: &Path,
        files: &[File],
        removed: &[&str],
        message: &str,
    ) -> String {
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
    pub(crate) fn pull_request(&self, branch: &str, files: &[File], removed: &[&str]) -> String {
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
    pub(crate) fn push_main(
        &self,
        files: &[File],
        removed: &[&str],
        message: &str,
    ) -> (String, String) {
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
    pub(crate) fn push_commit(&self, commit: &str) {
        self.git(&self.attacker, &["checkout", "-q", "-B", "main", commit]);
        self.git(&self.attacker, &["push", "-q", "-f", "origin", "main"]);
    }

    /// The attacker's Proof notes, pushed to origin.
    pub(crate) fn push_notes(&self) {
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
    pub(crate) fn ci_clone(&self, branch: &str) -> PathBuf {
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
    pub(crate) fn merge_ref_clone(&self, head: &str) -> PathBuf {
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
    pub(crate) fn readme_fetch(&self, clone: &Path) {
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
    pub(crate) fn ci(&self, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut all = vec![("CI", "true")];
        all.extend_from_slice(env);
        self.fixture.run_in(dir, args, &all)
    }

    /// The pull-request job: `discern standards --json` in a CI clone of `branch`.
    pub(crate) fn pr_ci(&self, branch: &str) -> Run {
        let clone = self.ci_clone(branch);
        self.ci(&clone, &["standards", "--json"], &[])
    }

    /// The push job: `discern standards --baseline BEFORE --json` in a CI clone of `main`.
    pub(crate) fn push_ci(&self, before: &str) -> Run {
        let clone = self.ci_clone("main");
        self.ci(&clone, &["standards", "--baseline", before, "--json"], &[])
    }
}

// ---------------------------------------------------------------------------------------------
// Reading results.
// ---------------------------------------------------------------------------------------------

/// The run failed the way a CI step fails: a non-zero exit and `ok: false`. Its envelope.
#[track_caller]
pub(crate) fn refused(run: &Run, what: &str) -> Value {
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
pub(crate) fn passed(run: &Run, what: &str) -> Value {
    let json = run.json();
    assert_eq!(run.code, 0, "{what}:\n{}\n{}", run.stdout, run.stderr);
    assert_eq!(json["ok"], true, "{what}:\n{}", run.stdout);
    json
}

/// Everything a result says in words: its message, its diagnostics, its advisories and the
/// limits check's reason.
pub(crate) fn said(json: &Value) -> String {
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
