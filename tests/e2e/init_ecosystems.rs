//! `discern init` on real repositories of each kind (issue 46): the install step it writes as
//! `[worktree].setup` and the jobs it proposes run in a fresh worktree of the committed tree,
//! the config validates, and `--owner-key` writes signed approval into the first commit.

use std::path::{Path, PathBuf};
use std::process::Command;

use discern_tests::TestRepo;
use serde_json::Value;

use crate::support::cache_dir;

/// `PATH` without the folders that hold `tool`: init on a machine without it.
fn path_without(tool: &str) -> std::ffi::OsString {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let kept: Vec<PathBuf> = std::env::split_paths(&path)
        .filter(|dir| !dir.join(tool).exists())
        .collect();
    std::env::join_paths(kept).unwrap()
}

fn discern(repo: &TestRepo, args: &[&str], path: Option<&std::ffi::OsStr>) -> Value {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_discern"));
    cmd.args(args).current_dir(repo.path());
    discern_tests::hermetic(&mut cmd, repo.home());
    cmd.env("DISCERN_CACHE_DIR", cache_dir());
    if let Some(path) = path {
        cmd.env("PATH", path);
    }
    let out = cmd.output().unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// The generated config with its first line's commit id masked, and the config it parses to.
fn generated(repo: &TestRepo) -> (String, discern::testing::config::Config) {
    let text = std::fs::read_to_string(repo.path().join("discern.toml")).unwrap();
    let config = discern::testing::config::Config::parse(&text)
        .unwrap_or_else(|e| panic!("the generated config is invalid: {e}\n{text}"));
    let masked = text
        .lines()
        .map(
            |l| match l.starts_with("# discern.toml: this repository's Standards") {
                true => "# discern.toml: [header with the commit]".to_owned(),
                false => l.to_owned(),
            },
        )
        .map(|l| format!("{l}\n"))
        .collect::<String>();
    (masked, config)
}

/// `sh -c command` in `dir`, hermetically; panics with its output when it fails.
fn runs(repo: &TestRepo, dir: &Path, command: &str) {
    let mut cmd = Command::new("sh");
    cmd.args(["-c", command]).current_dir(dir);
    discern_tests::hermetic(&mut cmd, repo.home());
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{command} failed in {}:\n{}{}",
        dir.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

const LOCK: &str = r#"{
  "name": "app",
  "version": "1.0.0",
  "lockfileVersion": 3,
  "requires": true,
  "packages": {
    "": {
      "name": "app",
      "version": "1.0.0",
      "dependencies": {
        "helper": "file:./helper"
      }
    },
    "helper": {
      "version": "1.0.0"
    },
    "node_modules/helper": {
      "resolved": "helper",
      "link": true
    }
  }
}
"#;

/// A JavaScript project whose test needs `node_modules` (a local package, so no network),
/// with both a bun and an npm lockfile, committed.
fn javascript_project() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"name": "app", "version": "1.0.0", "dependencies": {"helper": "file:./helper"},
 "scripts": {"build": "node build.js", "test": "node test.js"}}
"#,
    )
    .write("package-lock.json", LOCK)
    .write("bun.lock", "{\n  \"lockfileVersion\": 1\n}\n")
    .write(
        "helper/package.json",
        r#"{"name": "helper", "version": "1.0.0", "main": "index.js"}"#,
    )
    .write("helper/index.js", "module.exports = 42;\n")
    .write("build.js", "require('helper');\n")
    .write(
        "test.js",
        "if (require('helper') !== 42) process.exit(1);\n",
    )
    .write("src/a.js", "// TODO one\nexports.a = 1;\n")
    .write(".gitignore", "node_modules/\n");
    repo.commit("a JavaScript project");
    repo
}

/// A JavaScript project whose test needs `node_modules` (a local package, so no network),
/// with both a bun and an npm lockfile: on a machine without bun, init writes `npm ci`, and
/// the setup and every job it wrote pass in a fresh worktree of the commit.
#[test]
fn init_on_bun_and_npm_lockfiles_writes_a_setup_its_jobs_pass_after_in_a_fresh_worktree() {
    let repo = javascript_project();
    let path = path_without("bun");
    let init = discern(&repo, &["init", "--json"], Some(&path));
    assert_eq!(init["ok"], true, "{init}");
    let (text, config) = generated(&repo);
    insta::assert_snapshot!(text);
    assert_eq!(config.worktree.setup, ["npm ci"], "{text}");
    // Without --owner-key, init says how signed approval is added; node_modules/ is ignored.
    assert!(init["hints"].to_string().contains("--owner-key"), "{init}");
    assert!(!init["hints"].to_string().contains("Ignore what"), "{init}");

    repo.commit("add discern.toml");
    let fresh = repo.parent().join("fresh");
    repo.git(&[
        "worktree",
        "add",
        "-q",
        "--detach",
        fresh.to_str().unwrap(),
        "HEAD",
    ]);
    assert!(!fresh.join("node_modules").exists());
    for step in &config.worktree.setup {
        runs(&repo, &fresh, step);
    }
    assert!(config.jobs.len() >= 2, "{text}");
    for job in &config.jobs {
        runs(&repo, &fresh, &job.run);
    }
    let run = discern(&repo, &["standards", "--json"], None);
    assert_eq!(run["ok"], true, "{run}");
}

/// The newcomer's path end to end, with nothing edited by hand: init on the JavaScript project
/// above, `doctor` proves the gate in a provisioned throwaway worktree, the config is
/// committed, `start` provisions an effort (its `npm ci` ran: `node_modules` is there), and
/// the agent's first change passes `done` there with the jobs init wrote.
#[test]
fn a_newcomer_reaches_a_passing_done_with_what_init_wrote() {
    let repo = javascript_project();
    let path = path_without("bun");
    let init = discern(&repo, &["init", "--json"], Some(&path));
    assert_eq!(init["ok"], true, "{init}");
    let doctor = discern(&repo, &["doctor", "--json"], Some(&path));
    assert_eq!(doctor["ok"], true, "doctor proves the gate first: {doctor}");
    repo.commit("add discern.toml");
    let start = discern(
        &repo,
        &[
            "start",
            "--name",
            "first",
            "--title",
            "First change",
            "--json",
        ],
        Some(&path),
    );
    assert_eq!(start["ok"], true, "{start}");
    let effort = PathBuf::from(start["data"]["path"].as_str().unwrap());
    assert!(
        effort.join("node_modules/helper").exists(),
        "setup ran: {start}"
    );
    std::fs::write(effort.join("src/b.js"), "exports.b = 2;\n").unwrap();
    runs(
        &repo,
        &effort,
        "git add -A && git commit -q -m 'a second module'",
    );
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_discern"));
    cmd.args(["done", "--json"]).current_dir(&effort);
    discern_tests::hermetic(&mut cmd, repo.home());
    cmd.env("DISCERN_CACHE_DIR", cache_dir()).env("PATH", &path);
    let out = cmd.output().unwrap();
    let done: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(done["ok"], true, "the first done passes: {done}");
}

/// A bun project alone writes bun's frozen install whether bun is here or not.
#[test]
fn init_on_a_bun_repository_installs_with_bun() {
    let repo = TestRepo::new();
    repo.write(
        "package.json",
        r#"{"scripts": {"build": "tsc", "test": "vitest run"}}"#,
    )
    .write("bun.lock", "{}\n")
    .write("src/a.ts", "export const a = 1;\n");
    repo.commit("a bun project");
    let init = discern(&repo, &["init", "--json"], None);
    assert_eq!(init["ok"], true, "{init}");
    // No .gitignore: the install would leave every worktree dirty, and init says so.
    assert!(
        init["hints"]
            .to_string()
            .contains("Ignore what the setup installs (node_modules/"),
        "{init}"
    );
    let (text, config) = generated(&repo);
    assert_eq!(
        config.worktree.setup,
        ["bun install --frozen-lockfile"],
        "{text}"
    );
    let runs: Vec<&str> = config.jobs.iter().map(|j| j.run.as_str()).collect();
    assert_eq!(runs, ["bun run build", "bun run test"], "{text}");
}

/// A JavaScript frontend beside a Go service: each gets its own install and jobs, named by
/// its folder; the file-size Standard leaves `.discern/` out.
#[test]
fn init_on_a_frontend_and_a_service_names_each_ones_jobs() {
    let repo = TestRepo::new();
    repo.write(
        "web/package.json",
        r#"{"scripts": {"build": "vite build", "test": "vitest run"}}"#,
    )
    .write("web/pnpm-lock.yaml", "lockfileVersion: '9.0'\n")
    .write("web/src/main.ts", "export const a = 1;\n")
    .write("service/go.mod", "module example.com/service\n\ngo 1.22\n")
    .write("service/main.go", "package main\n\nfunc main() {}\n")
    .write(".discern/allowed_signers", "# nobody yet\n");
    repo.commit("a frontend and a service");
    assert_eq!(discern(&repo, &["init", "--json"], None)["ok"], true);
    let (text, config) = generated(&repo);
    insta::assert_snapshot!(text);
    assert!(text.contains(":(exclude).discern/**"), "{text}");
    assert_eq!(
        config.worktree.setup,
        ["cd web && pnpm install --frozen-lockfile"],
        "{text}"
    );
}

fn keygen(dir: &Path) -> PathBuf {
    discern_tests::ensure_debian_tool("ssh-keygen", "openssh-client");
    let key = dir.join("owner");
    let status = Command::new("ssh-keygen")
        .args([
            "-q",
            "-N",
            "",
            "-t",
            "ed25519",
            "-C",
            "owner@example.com",
            "-f",
        ])
        .arg(&key)
        .status()
        .unwrap();
    assert!(status.success());
    key
}

/// `--owner-key` puts signed approval in the first commit: the signers line the owner's key
/// signs under (checked with a signature `ssh-keygen` makes), and `[acceptance]` with
/// `approval = "signed"` and the repository; the first commit passes its own check.
#[test]
fn init_with_the_owners_key_writes_signed_approval_from_the_first_commit() {
    let repo = TestRepo::new();
    repo.write("src/lib.rs", "pub fn a() {}\n");
    repo.commit("a crate");
    let keys = tempfile::tempdir().unwrap();
    let key = keygen(keys.path());
    let public = key.with_extension("pub");
    let public = public.to_str().unwrap();

    // No origin and no --repository: refused, naming the flag.
    let refused = discern(&repo, &["init", "--owner-key", public, "--json"], None);
    assert_eq!(refused["ok"], false, "{refused}");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("--repository"),
        "{refused}"
    );
    assert!(!repo.path().join("discern.toml").exists());
    assert!(!repo.path().join(".discern").exists());
    // The private key is no public key.
    let private = discern(
        &repo,
        &[
            "init",
            "--owner-key",
            key.to_str().unwrap(),
            "--repository",
            "x.org/a/b",
            "--json",
        ],
        None,
    );
    assert_eq!(private["error"], "invalid_arguments", "{private}");

    repo.git(&["remote", "add", "origin", "git@github.com:acme/app.git"]);
    let init = discern(&repo, &["init", "--owner-key", public, "--json"], None);
    assert_eq!(init["ok"], true, "{init}");
    let (text, config) = generated(&repo);
    assert!(text.contains("approval = \"signed\"\nallowed_signers = \".discern/allowed_signers\"\nrepository = \"github.com/acme/app\"\n"), "{text}");
    assert_eq!(
        config.approval_repository.as_deref(),
        Some("github.com/acme/app")
    );
    let signers = std::fs::read_to_string(repo.path().join(".discern/allowed_signers")).unwrap();
    assert!(
        signers.contains("namespaces=\"discern-approval\" ssh-ed25519 "),
        "{signers}"
    );

    // The line is one the owner's signature verifies under, for approvals only.
    let payload = keys.path().join("payload");
    std::fs::write(&payload, "an approval").unwrap();
    let status = Command::new("ssh-keygen")
        .args(["-Y", "sign", "-q", "-n", "discern-approval", "-f"])
        .arg(&key)
        .arg(&payload)
        .status()
        .unwrap();
    assert!(status.success());
    let signature = std::fs::read_to_string(payload.with_extension("sig")).unwrap();
    let signer = discern::testing::approval::verify(signers.as_bytes(), "an approval", &signature)
        .expect("the owner's signature verifies under the written line");
    assert_eq!(signer.principal, "owner@example.com");

    repo.commit("add discern.toml and the owner's key");
    let run = discern(&repo, &["standards", "--json"], None);
    assert_eq!(run["ok"], true, "{run}");
    let again = discern(&repo, &["init", "--owner-key", public, "--json"], None);
    assert_eq!(again["error"], "already_exists", "{again}");
}
