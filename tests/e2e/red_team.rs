//! Red team (approvals in the tree, the anchored policy, the trunk's segments): attacks by a
//! pull-request author, a pusher and an agent with a shell that the attacker suite does not
//! cover. Each `hole_*` test asserts the SECURE outcome — CI fails (`ok: false`, non-zero), or
//! `accept` lands nothing — so a failing `hole_*` test means discern let the attack through.
//! The `control_*` tests run the same shapes without the attack and pass, so a failing
//! `hole_*` test is not a broken setup.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::{APPROVAL_REPOSITORY, Fixture, LANDING_CONFIG, Run};

pub(crate) const SIGNERS: &str = ".discern/allowed_signers";
const REASON: &str = "The new module lists four planned extension points.";
/// Four more TODOs: with the fixture's two, 6 against the limit of 5.
pub(crate) const TODOS: &str = "// TODO 1\n// TODO 2\n// TODO 3\n// TODO 4\n";
const WORKFLOW: &str = ".github/workflows/ci.yml";
const WORKFLOW_BODY: &str = "on: [push, pull_request]\njobs:\n  standards:\n    runs-on: ubuntu-latest\n    steps:\n      - run: discern standards --baseline \"${{ github.event.before }}\"\n";

pub(crate) fn signed_config(standards: &str, acceptance: &str) -> String {
    format!(
        "{LANDING_CONFIG}{standards}\n[acceptance]\nallowed_signers = \"{SIGNERS}\"\nrepository = \"{APPROVAL_REPOSITORY}\"\n{acceptance}"
    )
}

pub(crate) fn keygen(dir: &Path, name: &str) -> PathBuf {
    discern_tests::ensure_debian_tool("ssh-keygen", "openssh-client");
    let path = dir.join(format!("{name}-key"));
    let status = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
        .arg(&path)
        .status()
        .expect("ssh-keygen runs");
    assert!(status.success());
    path
}

pub(crate) fn signers_line(key: &Path, principal: &str) -> String {
    let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
    let mut fields = public.split_whitespace();
    let (kind, data) = (fields.next().unwrap(), fields.next().unwrap());
    format!("{principal} {kind} {data}\n")
}

pub(crate) type File<'a> = (&'a str, &'a [u8]);

/// origin (bare), the owner's clone (the fixture), the attacker's clone.
pub(crate) struct Forge {
    pub(crate) fixture: Fixture,
    pub(crate) owner_key: PathBuf,
    /// A second key the trunk lists at the start (a CI key, a second maintainer).
    pub(crate) second_key: PathBuf,
    pub(crate) origin: PathBuf,
    pub(crate) attacker: PathBuf,
}

impl Forge {
    /// `signers` decides which keys the first commit lists: the owner's always, the second
    /// key's too when `with_second`.
    pub(crate) fn new(config: &str, files: &[File], with_second: bool) -> Self {
        let fixture = Fixture::new(config);
        let owner_key = keygen(fixture.repo.parent(), "owner");
        let second_key = keygen(fixture.repo.parent(), "second");
        let mut signers = signers_line(&owner_key, "owner@example.com");
        if with_second {
            signers.push_str(&signers_line(&second_key, "second@example.com"));
        }
        fixture.repo.write(SIGNERS, signers);
        for (path, content) in files {
            fixture.repo.write(path, content);
        }
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
            owner_key,
            second_key,
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

    pub(crate) fn main(&self) -> String {
        self.out(&self.origin, &["rev-parse", "refs/heads/main"])
    }

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

    /// `dir`'s `main` = origin's.
    pub(crate) fn sync_main(&self, dir: &Path) {
        self.git(dir, &["fetch", "-q", "origin"]);
        self.git(dir, &["checkout", "-q", "-B", "main", "origin/main"]);
    }

    /// A commit in `dir` straight on origin's main, pushed: `(before, after)`.
    pub(crate) fn push_main_from(
        &self,
        dir: &Path,
        files: &[File],
        removed: &[&str],
        message: &str,
    ) -> (String, String) {
        self.sync_main(dir);
        let before = self.main();
        let after = self.commit(dir, files, removed, message);
        self.git(dir, &["push", "-q", "origin", "main"]);
        (before, after)
    }

    pub(crate) fn push_main(
        &self,
        files: &[File],
        removed: &[&str],
        message: &str,
    ) -> (String, String) {
        self.push_main_from(&self.attacker, files, removed, message)
    }

    /// Move origin's `main` to `commit` (in the attacker's clone).
    pub(crate) fn push_commit(&self, commit: &str) {
        self.git(&self.attacker, &["checkout", "-q", "-B", "main", commit]);
        self.git(&self.attacker, &["push", "-q", "-f", "origin", "main"]);
    }

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

    /// The contributor's (attacker's) pull request off `from` (a commit of origin), `files`
    /// committed, then (when `propose`) the breach proposed; pushed as `branch`.
    pub(crate) fn pull_request_from(
        &self,
        from: &str,
        branch: &str,
        files: &[File],
        removed: &[&str],
        propose: bool,
    ) -> String {
        let a = &self.attacker;
        self.sync_main(a);
        self.git(a, &["checkout", "-q", "-B", branch, from]);
        self.commit(a, files, removed, &format!("work on {branch}"));
        if propose {
            let run = self.fixture.run_in(
                a,
                &["standards", "propose", "todo", "--reason", REASON, "--json"],
                &[],
            );
            assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
        }
        self.git(
            a,
            &[
                "push",
                "-q",
                "-f",
                "origin",
                &format!("HEAD:refs/heads/{branch}"),
            ],
        );
        self.out(a, &["rev-parse", "HEAD"])
    }

    pub(crate) fn pull_request(
        &self,
        branch: &str,
        files: &[File],
        removed: &[&str],
        propose: bool,
    ) -> String {
        self.git(&self.attacker, &["fetch", "-q", "origin"]);
        self.pull_request_from("origin/main", branch, files, removed, propose)
    }

    /// The owner, in their clone (main up to date), checks `branch` out, runs `discern approve`
    /// with their key and pushes the branch: the approval file's path.
    pub(crate) fn owner_approves(&self, branch: &str) -> String {
        let o = self.owner().to_owned();
        self.sync_main(&o);
        self.git(
            &o,
            &["checkout", "-q", "-B", branch, &format!("origin/{branch}")],
        );
        let key = self.owner_key.to_str().unwrap().to_owned();
        let reviewed = self.out(&o, &["rev-parse", "HEAD"]);
        let run = self.fixture.run_in(
            &o,
            &["approve", "--head", &reviewed, "--key", &key, "--json"],
            &[],
        );
        let json = run.json();
        assert_eq!(run.code, 0, "{json}\n{}", run.stderr);
        let file = json["data"]["approval_file"].as_str().unwrap().to_owned();
        self.git(&o, &["push", "-q", "-f", "origin", branch]);
        self.git(&o, &["checkout", "-q", "main"]);
        file
    }

    /// A CI clone as `actions/checkout` makes it, then the README's fetch (trunk, history,
    /// Proof notes).
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
        self.git(
            &clone,
            &[
                "fetch",
                "-q",
                "--unshallow",
                "origin",
                "+refs/heads/main:refs/remotes/origin/main",
            ],
        );
        if self.out(&clone, &["rev-parse", "--is-shallow-repository"]) == "true" {
            self.git(&clone, &["fetch", "-q", "--unshallow", "origin"]);
        }
        let mut ls = std::process::Command::new("git");
        ls.args(["ls-remote", "--exit-code", "origin", "refs/notes/discern"])
            .current_dir(&clone);
        discern_tests::hermetic(&mut ls, self.fixture.repo.home());
        if ls.output().unwrap().status.success() {
            self.git(
                &clone,
                &[
                    "fetch",
                    "-q",
                    "origin",
                    "+refs/notes/discern:refs/notes/discern",
                ],
            );
        }
        clone
    }

    pub(crate) fn ci(&self, dir: &Path, args: &[&str]) -> Run {
        self.fixture.run_in(dir, args, &[("CI", "true")])
    }

    pub(crate) fn pr_ci(&self, branch: &str) -> Run {
        let clone = self.ci_clone(branch);
        self.ci(&clone, &["standards", "--json"])
    }

    pub(crate) fn push_ci(&self, before: &str) -> Run {
        let clone = self.ci_clone("main");
        self.ci(&clone, &["standards", "--baseline", before, "--json"])
    }
}

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

#[track_caller]
pub(crate) fn passed(run: &Run, what: &str) -> Value {
    let json = run.json();
    assert_eq!(run.code, 0, "{what}:\n{}\n{}", run.stdout, run.stderr);
    assert_eq!(json["ok"], true, "{what}:\n{}", run.stdout);
    json
}

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
    let payload =
        format!("discern-approval-v1\ntrunk main\ntrunk-commit {landed_on}\nhead {commit}\n");
    json!({
        "version": 1,
        "subject": { "commit": commit, "branch": "agent/landed", "trunk": "main" },
        "proof": {
            "version": 1,
            "commit": commit,
            "branch": "agent/landed",
            "trunk": "main",
            "trunk_commit": landed_on,
            "diffstat": "1 file changed",
            "standards": [{ "name": "todo", "value": 2.0, "limit": 5.0, "verdict": "held" }],
            "proposals": [],
            "protected": [],
            "by_trunk": [],
            "tested": true,
            "line": "Proof: agent/landed; Standards: 1 pass.",
        },
        "consent": { "source": "confirmed" },
        "approved_proposals": [],
        "approved_changes": [],
        "approval": { "version": 1, "payload": payload, "channel": "terminal" },
    })
}

fn add_note(forge: &Forge, commit: &str, note: &Value) {
    forge.git(
        &forge.attacker,
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

/// A tree approval of `items` signed with `key` (`ssh-keygen -Y sign -n discern-approval`),
/// as `discern approve` writes it: its path and its bytes.
fn tree_approval(
    key: &Path,
    principal: &str,
    items: discern::testing::approval::tree::Items,
) -> (String, Vec<u8>) {
    let payload = items.payload();
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
    let approval = discern::testing::approval::tree::TreeApproval {
        version: discern::testing::approval::tree::VERSION,
        items,
        principal: principal.to_owned(),
        fingerprint: fingerprint.split_whitespace().nth(1).unwrap().to_owned(),
        signature: String::from_utf8(out.stdout).unwrap(),
    };
    (approval.path(), approval.to_bytes())
}

// ---------------------------------------------------------------------------------------------
// Controls: the shapes below, without the attack.
// ---------------------------------------------------------------------------------------------

/// An owner-approved loosening (a PR, `discern approve`, fast-forwarded onto main) passes the
/// push check, also with a hand-written note on the landed commit; a plain tightening passes.
#[test]
fn control_an_approved_landing_with_a_note_and_a_tightening_pass_the_push_check() {
    let config = signed_config("", &format!("protected = [\"{WORKFLOW}\"]\n"));
    let forge = Forge::new(&config, &[(WORKFLOW, WORKFLOW_BODY.as_bytes())], false);
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
    forge.git(&forge.attacker, &["fetch", "-q", "origin"]);
    let landed = forge.out(&forge.attacker, &["rev-parse", "origin/agent/more"]);
    assert_ne!(landed, head, "the approval commit is on top");
    forge.push_commit(&landed);
    passed(&forge.push_ci(&before), "the push of an approved PR");
    add_note(&forge, &landed, &hand_written_note(&before, &landed));
    forge.push_notes();
    passed(
        &forge.push_ci(&before),
        "the push of an approved PR, with a note",
    );

    // A tightening pushed straight to main needs nothing.
    let tight = config.replace("limit = 5", "limit = 4");
    let forge = Forge::new(&config, &[(WORKFLOW, WORKFLOW_BODY.as_bytes())], false);
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
    let forge = Forge::new(&loose, &[], false);
    let old = forge.main();
    let tight = signed_config("", "");
    forge.push_main_from(
        forge.owner(),
        &[("discern.toml", tight.as_bytes())],
        &[],
        "pin todo 10 -> 5",
    );
    // Control: the loosening pushed alone fails the push check.
    let (before, relaxed) = forge.push_main(&[("discern.toml", loose.as_bytes())], &[], "relax");
    let json = refused(&forge.push_ci(&before), "the loosening without a note");
    names(&json, "5 -> 10");
    // The attack: a note on the loosening claiming it landed on the trunk's first commit.
    add_note(&forge, &relaxed, &hand_written_note(&old, &relaxed));
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
    let forge = Forge::new(&config, &[(WORKFLOW, WORKFLOW_BODY.as_bytes())], false);
    forge.pull_request(
        "agent/more",
        &[("src/more.rs", TODOS.as_bytes())],
        &[],
        true,
    );
    forge.owner_approves("agent/more");
    let before = forge.main();
    forge.git(&forge.attacker, &["fetch", "-q", "origin"]);
    let landed = forge.out(&forge.attacker, &["rev-parse", "origin/agent/more"]);
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
    add_note(&forge, &landed, &hand_written_note(&before, &landed));
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
    let forge = Forge::new(&two, &[], false);
    forge.pull_request(
        "agent/more",
        &[("src/more.rs", TODOS.as_bytes())],
        &[],
        true,
    );
    forge.owner_approves("agent/more");
    let before = forge.main();
    forge.git(&forge.attacker, &["fetch", "-q", "origin"]);
    let landed = forge.out(&forge.attacker, &["rev-parse", "origin/agent/more"]);
    forge.push_commit(&landed);
    passed(&forge.push_ci(&before), "control: the approved PR alone");
    let on_main = std::fs::read_to_string(forge.attacker.join("discern.toml")).unwrap();
    let cut = on_main
        .split("\n[standards.fixme]")
        .next()
        .unwrap()
        .to_owned()
        + &format!(
            "\n[acceptance]\nallowed_signers = \"{SIGNERS}\"\nrepository = \"{APPROVAL_REPOSITORY}\"\n"
        );
    forge.push_main(&[("discern.toml", cut.as_bytes())], &[], "drop fixme");
    add_note(&forge, &landed, &hand_written_note(&before, &landed));
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
    let forge = Forge::new(&signed_config("", ""), &[], false);
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
    forge.git(&forge.attacker, &["fetch", "-q", "origin"]);
    let landed = forge.out(&forge.attacker, &["rev-parse", "origin/agent/once"]);
    let before = forge.main();
    forge.push_commit(&landed);
    passed(
        &forge.push_ci(&before),
        "control: the approved loosening lands",
    );
    // 2. The owner tightens back: the TODOs gone, discern.toml byte for byte as it was.
    let (before, _) = forge.push_main_from(
        forge.owner(),
        &[("discern.toml", original.as_bytes())],
        &["src/more.rs"],
        "back to 5",
    );
    passed(&forge.push_ci(&before), "control: the tightening back");
    let tightened = forge.main();
    assert_eq!(
        forge.out(
            forge.owner(),
            &["rev-parse", &format!("{tightened}:discern.toml")]
        ),
        forge.out(
            forge.owner(),
            &["rev-parse", &format!("{start}:discern.toml")]
        ),
        "the trunk's discern.toml is back to the blob the approval names"
    );
    // 3. A later PR loosens the same way and copies the approval (still in the tree) under
    //    another name.
    let approval = forge.out(forge.owner(), &["show", &format!("{tightened}:{file}")]) + "\n";
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
        forge.owner(),
        &["ls-tree", "--name-only", &tightened, ".discern/approvals/"],
    );
    let file = listed
        .lines()
        .next()
        .expect("the landed approval")
        .to_owned();
    let approval = forge.out(forge.owner(), &["show", &format!("{tightened}:{file}")]) + "\n";
    let (before, _) = forge.push_main_from(forge.owner(), &[], &[file.as_str()], "tidy up");
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
    forge.git(&forge.attacker, &["fetch", "-q", "origin"]);
    let again = forge.out(&forge.attacker, &["rev-parse", "origin/agent/again"]);
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
    let forge = Forge::new(&signed_config("", ""), &[], true);
    let old = forge.main();
    // The owner removes the leaked second key, with their own approval (a PR they approve).
    let only_owner = signers_line(&forge.owner_key, "owner@example.com");
    forge.pull_request(
        "owner/revoke",
        &[(SIGNERS, only_owner.as_bytes())],
        &[],
        false,
    );
    forge.owner_approves("owner/revoke");
    let before = forge.main();
    forge.git(&forge.attacker, &["fetch", "-q", "origin"]);
    let revoked = forge.out(&forge.attacker, &["rev-parse", "origin/owner/revoke"]);
    forge.push_commit(&revoked);
    passed(&forge.push_ci(&before), "control: the revocation lands");

    // Control: a PR off the current trunk approved by the revoked key fails.
    let loose = signed_config("", "").replace("limit = 5", "limit = 9");
    // What the loosening does to the tree, from the commit before the revocation (the PRs
    // below change the same file the same way).
    let a = &forge.attacker;
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
    let (path, signed) = tree_approval(&forge.second_key, "second@example.com", items());
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
