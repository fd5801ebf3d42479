//! Shared pieces of the end-to-end tests.

pub mod config;
pub mod forge;

use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};

use discern::testing::runtime::{
    Artifacts, Limits, ProducerComponent, ProducerError, RunOutput, Runtime,
};
use discern::testing::snapshot::Snapshot;
use discern_tests::TestRepo;
use serde_json::Value;

/// The compile cache every test shares (the cache tests use their own).
pub fn cache_dir() -> PathBuf {
    discern_tests::shared_dir(env!("CARGO_TARGET_TMPDIR"), "discern-compile-cache")
}

/// One runtime for the whole test binary, as one `discern` process would have.
pub static RUNTIME: LazyLock<Runtime> =
    LazyLock::new(|| Runtime::with_cache_dir(Some(cache_dir())).expect("runtime starts"));

pub fn builtin(name: &str) -> ProducerComponent {
    discern::testing::builtins::component(name).expect("a built-in")
}

pub fn hostile() -> ProducerComponent {
    ProducerComponent::new("tests/hostile.wasm", discern_tests::HOSTILE_WASM)
}

pub fn run(
    component: &ProducerComponent,
    config: serde_json::Value,
    snapshot: &Snapshot,
    limits: &Limits,
) -> Result<RunOutput, ProducerError> {
    RUNTIME.run(
        component,
        &config.to_string(),
        snapshot,
        Arc::new(Artifacts::new()),
        limits,
    )
}

pub fn value(output: &RunOutput, metric: &str) -> f64 {
    output
        .metrics
        .iter()
        .find(|m| m.name == metric)
        .unwrap_or_else(|| panic!("no metric {metric} in {:?}", output.metrics))
        .value
}

/// The name a signed approval is bound to in the fixtures that require signed approvals
/// (`[acceptance].repository`).
pub const APPROVAL_REPOSITORY: &str = "example.com/acme/app";

/// A repository with a `discern.toml`, run through the real binary.
pub struct Fixture {
    pub repo: TestRepo,
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}\n{}", self.stdout, self.stderr))
    }
}

impl Fixture {
    pub fn new(config: impl Display) -> Self {
        let repo = TestRepo::new();
        repo.write(
            "src/lib.rs",
            "// TODO: one\npub fn a() {}\n// TODO: two\npub fn b() {}\n",
        )
        .write("src/main.rs", "fn main() {\n    lib::a();\n}\n")
        .write("README.md", "# fixture\n")
        .write(".gitignore", "target/\n")
        .write("discern.toml", config.to_string());
        repo.commit("fixture");
        Self { repo }
    }

    pub fn path(&self) -> &Path {
        self.repo.path()
    }

    pub fn run(&self, args: &[&str]) -> Run {
        self.run_with(args, &[])
    }

    pub fn run_with(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        self.run_in(self.path(), args, env)
    }

    /// Run the binary in `dir` (an effort's worktree, say) with this fixture's environment.
    pub fn run_in(&self, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_discern"));
        cmd.args(args).current_dir(dir);
        discern_tests::hermetic(&mut cmd, self.repo.home());
        cmd.env("DISCERN_CACHE_DIR", cache_dir());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8(out.stdout).unwrap(),
            stderr: String::from_utf8(out.stderr).unwrap(),
        }
    }

    /// The binary on a pseudo-terminal (util-linux `script`) in `dir`, `answers` typed in:
    /// how the owner answers a prompt. Its output mixes stdout and stderr, as a terminal does.
    pub fn on_terminal(&self, dir: &Path, args: &[&str], answers: &str) -> Run {
        discern_tests::ensure_debian_tool("script", "bsdutils");
        let bin = env!("CARGO_BIN_EXE_discern");
        let quoted: Vec<String> = std::iter::once(bin)
            .chain(args.iter().copied())
            .map(|a| format!("'{}'", a.replace('\'', "'\\''")))
            .collect();
        let mut cmd = std::process::Command::new("script");
        cmd.args(["-qec", &quoted.join(" "), "/dev/null"])
            .current_dir(dir)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        discern_tests::hermetic(&mut cmd, self.repo.home());
        cmd.env("DISCERN_CACHE_DIR", cache_dir());
        let mut child = cmd.spawn().expect("util-linux script runs");
        let mut stdin = child.stdin.take().unwrap();
        std::io::Write::write_all(&mut stdin, answers.as_bytes()).unwrap();
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// The main checkout after a transaction settled: a clean tree and no journal left.
    pub fn assert_settled(&self, round: &str) {
        assert_eq!(
            self.git_out(self.path(), &["status", "--porcelain"]),
            "",
            "{round}"
        );
        assert!(
            !self
                .path()
                .join(".git/discern/config-transaction.json")
                .exists(),
            "{round}: the journal is gone"
        );
    }

    /// `git` in `dir` (an effort's worktree, say), hermetically; panics when it fails.
    pub fn git_in(&self, dir: &Path, args: &[&str]) {
        let mut cmd = std::process::Command::new("git");
        cmd.args(args).current_dir(dir);
        discern_tests::hermetic(&mut cmd, self.repo.home());
        assert!(cmd.status().unwrap().success(), "git {args:?}");
    }

    /// CI on a fresh clone as `actions/checkout` makes it — depth 1, one ref (`rev`), detached —
    /// in `clone` (replaced), then the README's fetch of the trunk with its history from `url`.
    pub fn ci_checkout(&self, clone: &Path, url: &str, rev: &str) {
        let _ = std::fs::remove_dir_all(clone);
        std::fs::create_dir_all(clone).unwrap();
        self.git_in(clone, &["init", "-q"]);
        self.git_in(clone, &["remote", "add", "origin", url]);
        self.git_in(clone, &["fetch", "-q", "--depth", "1", "origin", rev]);
        self.git_in(clone, &["checkout", "-q", "--detach", "FETCH_HEAD"]);
        let trunk = "+refs/heads/main:refs/remotes/origin/main";
        self.git_in(clone, &["fetch", "-q", "--unshallow", "origin", trunk]);
    }

    /// `git` in `dir`, hermetically: its trimmed stdout (empty when it fails).
    pub fn git_out(&self, dir: &Path, args: &[&str]) -> String {
        let mut cmd = std::process::Command::new("git");
        cmd.args(args).current_dir(dir);
        discern_tests::hermetic(&mut cmd, self.repo.home());
        let out = cmd.output().unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }

    /// Start an effort `name` that adds `src/<name>.rs`, commit, and prove it with `done`: its
    /// worktree and head.
    pub fn proven_effort(&self, name: &str) -> (PathBuf, String) {
        let run = self.run(&["start", "--name", name, "--title", "Proven", "--json"]);
        let json = run.json();
        assert_eq!(json["ok"], true, "{}", run.stdout);
        let path = PathBuf::from(json["data"]["path"].as_str().unwrap());
        std::fs::write(path.join(format!("src/{name}.rs")), "pub fn x() {}\n").unwrap();
        self.git_in(&path, &["add", "-A"]);
        self.git_in(&path, &["commit", "-q", "-m", &format!("add {name}")]);
        let done = self.run_in(&path, &["done", "--json"], &[]).json();
        assert_eq!(done["ok"], true, "{done}");
        let head = self.git_out(&path, &["rev-parse", "HEAD"]);
        (path, head)
    }

    /// Branch off main, apply `config`, commit.
    pub fn branch_with(&self, config: impl Display) {
        self.repo.git(&["checkout", "-q", "-b", "agent/work"]);
        self.repo.write("discern.toml", config.to_string());
        self.repo.commit("change the config");
    }
}

pub fn standard<'a>(json: &'a Value, name: &str) -> &'a Value {
    json["data"]["standards"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {json}"))
}
