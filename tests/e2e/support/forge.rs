//! The forge every forge-shaped test uses: a bare `origin` plays the forge, one clone per
//! actor — the owner (the fixture's repository, with an SSH key listed in the signers file), a
//! contributor (the attacker, in the attack suites), CI clones made the way `actions/checkout`
//! makes them, a bot for the merge button — and the three merge strategies.
//!
//! CI runs two ways, and tests rely on the difference: [`Forge::ci_clone`] (and `pr_ci`,
//! `push_ci`) follows the README's fetch, Proof notes included; [`Forge::ci_checkout`] (and
//! `pr_ci_no_notes`, `merge_ref_ci`, `trunk_ci`) fetches no notes, so what passes there passed
//! on approvals that travel in the tree.

use std::fmt::Display;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::config::SIGNERS;
use super::{Fixture, Run};

/// The reason every proposal on the forge gives.
pub const REASON: &str = "The new module lists four planned extension points.";

/// A file to write: its path and content.
pub type File<'a> = (&'a str, &'a [u8]);

/// How the merge button lands a pull request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Strategy {
    MergeCommit,
    Squash,
    Rebase,
}

pub const STRATEGIES: [Strategy; 3] = [Strategy::MergeCommit, Strategy::Squash, Strategy::Rebase];

/// The actors' keys, made with ssh-keygen beside the repository: the owner's (always listed),
/// a second one (a CI key, a second maintainer: listed when the forge says so) and the
/// attacker's (never listed).
pub struct Keys {
    pub owner: PathBuf,
    pub second: PathBuf,
    pub attacker: PathBuf,
}

impl Keys {
    pub fn new(dir: &Path) -> Self {
        discern_tests::ensure_debian_tool("ssh-keygen", "openssh-client");
        Self {
            owner: keygen(dir, "owner"),
            second: keygen(dir, "second"),
            attacker: keygen(dir, "attacker"),
        }
    }

    /// The allowed-signers line of `key` for `principal`.
    pub fn line(key: &Path, principal: &str) -> String {
        let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
        let mut fields = public.split_whitespace();
        let (kind, data) = (fields.next().unwrap(), fields.next().unwrap());
        format!("{principal} {kind} {data}\n")
    }

    pub fn owner_line(&self) -> String {
        Self::line(&self.owner, "owner@example.com")
    }

    pub fn second_line(&self) -> String {
        Self::line(&self.second, "second@example.com")
    }

    pub fn attacker_line(&self) -> String {
        Self::line(&self.attacker, "attacker@example.com")
    }

    /// `payload` signed with `key` by `ssh-keygen -Y sign -n discern-approval`, as an
    /// approval carries it: the key's SHA256 fingerprint and the armored signature.
    pub fn sign(key: &Path, payload: &str) -> (String, String) {
        Self::sign_in("discern-approval", key, payload)
    }

    /// [`Keys::sign`] for the signature namespace `namespace`.
    pub fn sign_in(namespace: &str, key: &Path, payload: &str) -> (String, String) {
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
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        let fingerprint = std::process::Command::new("ssh-keygen")
            .args(["-l", "-E", "sha256", "-f"])
            .arg(key.with_extension("pub"))
            .output()
            .unwrap();
        let fingerprint = String::from_utf8(fingerprint.stdout).unwrap();
        let fingerprint = fingerprint.split_whitespace().nth(1).unwrap().to_owned();
        (fingerprint, String::from_utf8(out.stdout).unwrap())
    }
}

/// A fresh ed25519 key `<name>-key` in `dir` (`ssh-keygen`, Debian's openssh-client).
pub fn keygen(dir: &Path, name: &str) -> PathBuf {
    discern_tests::ensure_debian_tool("ssh-keygen", "openssh-client");
    let path = dir.join(format!("{name}-key"));
    let status = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
        .arg(&path)
        .status()
        .expect("ssh-keygen (Debian: openssh-client) runs");
    assert!(status.success());
    path
}

/// The forge and its actors' clones.
pub struct Forge {
    /// The owner's clone (`owner`), with the hermetic environment every run uses.
    pub fixture: Fixture,
    pub keys: Keys,
    /// Where the forge's repositories live (origin, the clones, the keys).
    pub dir: PathBuf,
    pub origin: PathBuf,
    pub owner: PathBuf,
    pub contributor: PathBuf,
}

impl Forge {
    /// `origin` with `config` and `files` on `main` (and the owner's key in the signers file),
    /// the owner's clone pushing to it, and the contributor's clone of it.
    pub fn new(config: impl Display, files: &[File]) -> Self {
        Self::create(&config.to_string(), files, Keys::owner_line)
    }

    /// [`Forge::new`] with the second key listed too.
    pub fn with_second_signer(config: impl Display, files: &[File]) -> Self {
        Self::with_signers(config, files, |keys| {
            keys.owner_line() + &keys.second_line()
        })
    }

    /// [`Forge::new`] with the signers file `signers` writes for the keys.
    pub fn with_signers(
        config: impl Display,
        files: &[File],
        signers: impl FnOnce(&Keys) -> String,
    ) -> Self {
        Self::create(&config.to_string(), files, signers)
    }

    fn create(config: &str, files: &[File], signers: impl FnOnce(&Keys) -> String) -> Self {
        let fixture = Fixture::new(config);
        let dir = fixture.repo.parent().to_owned();
        let keys = Keys::new(&dir);
        fixture.repo.write(SIGNERS, signers(&keys));
        for (path, content) in files {
            fixture.repo.write(path, content);
        }
        // In the first commit, beside the config that names them: the gate's start (added
        // later, they would be changes no approval anchors).
        fixture.repo.git(&["add", "-A"]);
        fixture.repo.git(&["commit", "-q", "--amend", "--no-edit"]);
        let origin = dir.join("origin.git");
        fixture.git_in(&dir, &["init", "-q", "--bare", "-b", "main", "origin.git"]);
        let url = format!("file://{}", origin.display());
        fixture.git_in(fixture.path(), &["remote", "add", "origin", &url]);
        fixture.git_in(fixture.path(), &["push", "-q", "origin", "main"]);
        fixture.git_in(&dir, &["clone", "-q", &url, "contributor"]);
        Self {
            owner: fixture.path().to_owned(),
            contributor: dir.join("contributor"),
            origin,
            dir,
            keys,
            fixture,
        }
    }

    pub fn url(&self) -> String {
        format!("file://{}", self.origin.display())
    }

    /// `git` in `dir`, hermetically and quietly; panics with its stderr when it fails.
    pub fn git(&self, dir: &Path, args: &[&str]) {
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

    pub fn out(&self, dir: &Path, args: &[&str]) -> String {
        self.fixture.git_out(dir, args)
    }

    /// `discern <args> --json`-style run in `dir` (as CI when `ci`): exit code and envelope.
    pub fn discern(&self, dir: &Path, args: &[&str], ci: bool) -> (i32, Value) {
        let env: &[(&str, &str)] = if ci { &[("CI", "true")] } else { &[] };
        let run = self.fixture.run_in(dir, args, env);
        (run.code, run.json())
    }

    /// origin's `main`.
    pub fn main(&self) -> String {
        self.out(&self.origin, &["rev-parse", "refs/heads/main"])
    }

    /// Write `files`, delete `removed`, commit everything in `dir`: the new HEAD.
    pub fn commit(&self, dir: &Path, files: &[File], removed: &[&str], message: &str) -> String {
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
    pub fn sync_main(&self, dir: &Path) {
        self.git(dir, &["fetch", "-q", "origin"]);
        self.git(dir, &["checkout", "-q", "-B", "main", "origin/main"]);
    }

    /// A commit in `dir` straight on origin's main, pushed: `(before, after)`.
    pub fn push_main_from(
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

    /// The contributor's commit straight on origin's `main`: `(before, after)`.
    pub fn push_main(&self, files: &[File], removed: &[&str], message: &str) -> (String, String) {
        self.push_main_from(&self.contributor, files, removed, message)
    }

    /// Move origin's `main` to `commit` (made in the contributor's clone): a push.
    pub fn push_commit(&self, commit: &str) {
        self.git(&self.contributor, &["checkout", "-q", "-B", "main", commit]);
        self.git(&self.contributor, &["push", "-q", "-f", "origin", "main"]);
    }

    /// The contributor's Proof notes, pushed to origin.
    pub fn push_notes(&self) {
        let notes = "refs/notes/discern:refs/notes/discern";
        self.git(&self.contributor, &["push", "-q", "-f", "origin", notes]);
    }

    /// The contributor's pull request `branch` off `from` (a commit or ref their clone has, not
    /// fetched again: `origin/main` is the trunk as they last saw it): `files` written and
    /// `removed` deleted, committed, then (when `propose`) the breach of `todo` proposed;
    /// pushed. Its head.
    pub fn pull_request_from(
        &self,
        from: &str,
        branch: &str,
        files: &[File],
        removed: &[&str],
        propose: bool,
    ) -> String {
        let c = &self.contributor;
        self.git(c, &["checkout", "-q", "-B", branch, from]);
        self.commit(c, files, removed, &format!("work on {branch}"));
        if propose {
            let args = ["standards", "propose", "todo", "--reason", REASON, "--json"];
            let run = self.fixture.run_in(c, &args, &[]);
            assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
        }
        let to = format!("HEAD:refs/heads/{branch}");
        self.git(c, &["push", "-q", "-f", "origin", &to]);
        self.out(c, &["rev-parse", "HEAD"])
    }

    /// [`Forge::pull_request_from`] origin's `main` as it is now (fetched first).
    pub fn pull_request(
        &self,
        branch: &str,
        files: &[File],
        removed: &[&str],
        propose: bool,
    ) -> String {
        self.git(&self.contributor, &["fetch", "-q", "origin"]);
        self.pull_request_from("origin/main", branch, files, removed, propose)
    }

    /// The owner approves the pull request `branch` from their clone: fetch, check it out,
    /// `discern approve` with their key, push. The approval file's path.
    pub fn approve(&self, branch: &str) -> String {
        let o = &self.owner;
        self.git(o, &["fetch", "-q", "origin"]);
        let pr = format!("origin/{branch}");
        self.git(o, &["checkout", "-q", "-B", branch, &pr]);
        let key = self.keys.owner.to_str().unwrap();
        let reviewed = self.out(o, &["rev-parse", "HEAD"]);
        let args = ["approve", "--head", &reviewed, "--key", key, "--json"];
        let run = self.fixture.run_in(o, &args, &[]);
        let json = run.json();
        assert_eq!(run.code, 0, "{json}\n{}", run.stderr);
        let file = json["data"]["approval_file"].as_str().unwrap().to_owned();
        self.git(o, &["push", "-q", "-f", "origin", branch]);
        self.git(o, &["checkout", "-q", "main"]);
        file
    }

    /// [`Forge::approve`] with the owner's `main` brought up to origin's first.
    pub fn owner_approves(&self, branch: &str) -> String {
        self.sync_main(&self.owner);
        self.approve(branch)
    }

    /// `discern <args>` in `dir` as CI runs it (`CI=true`), with `env` besides.
    pub fn ci(&self, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut all = vec![("CI", "true")];
        all.extend_from_slice(env);
        self.fixture.run_in(dir, args, &all)
    }
}

mod ci;

pub use ci::{fails, passed, passes, refused, said};
