//! The installer end to end (issue 45): `scripts/package` packages the suite's own discern
//! binary into a release folder, Debian's nginx serves it on 127.0.0.1 in GitHub's
//! `releases/download/v<version>/` layout, and `sh scripts/install.sh` runs with a HOME, PATH
//! and TMPDIR of its own: a good install runs, a corrupted tarball, an unsupported platform and a
//! release without this platform are refused with nothing installed, and a newer release
//! replaces an older one.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use crate::nginx::Nginx;

const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The version of the stand-in older release.
const OLD: &str = "0.0.1";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("host/ is inside the workspace")
        .to_path_buf()
}

/// The target the installer picks on this machine.
fn target() -> String {
    let os = match std::env::consts::OS {
        "macos" => "apple-darwin",
        _ => "unknown-linux-musl",
    };
    format!("{}-{os}", std::env::consts::ARCH)
}

/// The tarballs `scripts/package` made, once for every test: this discern (its symbols
/// stripped first where `strip` exists, so that packaging takes seconds), and an older
/// "release" whose binary is a script that prints its version.
struct Packaged {
    _dir: tempfile::TempDir,
    current: PathBuf,
    old: PathBuf,
}

fn packaged() -> &'static Packaged {
    static PACKAGED: OnceLock<Packaged> = OnceLock::new();
    PACKAGED.get_or_init(|| {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let binary = dir.path().join("discern");
        std::fs::copy(env!("CARGO_BIN_EXE_discern"), &binary).expect("copy the binary");
        let _ = Command::new("strip").arg(&binary).status();
        let current = dir.path().join("current");
        // The version comes from the workspace, as in a release.
        package(&binary, None, &current);

        let stub = dir.path().join("stub/discern");
        std::fs::create_dir_all(stub.parent().expect("a parent")).expect("a folder");
        std::fs::write(&stub, format!("#!/bin/sh\necho 'discern {OLD}'\n")).expect("the stub");
        set_executable(&stub);
        let old = dir.path().join("old");
        package(&stub, Some(OLD), &old);
        Packaged {
            _dir: dir,
            current,
            old,
        }
    })
}

fn package(binary: &Path, version: Option<&str>, out: &Path) {
    let mut cmd = Command::new("bash");
    cmd.arg(workspace().join("scripts/package"))
        .arg("--binary")
        .arg(binary)
        .args(["--target", &target()])
        .arg("--out-dir")
        .arg(out);
    if let Some(version) = version {
        cmd.args(["--version", version]);
    }
    let output = cmd.output().expect("run scripts/package");
    assert!(
        output.status.success(),
        "scripts/package failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let version = version.unwrap_or(VERSION);
    let name = format!("discern-{version}-{}.tar.gz", target());
    let sum = std::fs::read_to_string(out.join(format!("{name}.sha256"))).expect("the .sha256");
    let (hash, file) = sum.trim_end().split_once("  ").expect("sha256sum format");
    assert_eq!((hash.len(), file), (64, name.as_str()), "{sum}");
}

fn set_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// A release folder served by nginx: `<url>/v<version>/…` and `<url>/latest`.
struct Release {
    nginx: Nginx,
}

impl Release {
    fn serve() -> Self {
        Release {
            nginx: Nginx::start(),
        }
    }

    fn url(&self) -> String {
        self.nginx.url()
    }

    /// The folder nginx serves at [`Release::url`].
    fn root(&self) -> PathBuf {
        let file = self.nginx.file("kind", "name");
        let root = file
            .parent()
            .and_then(Path::parent)
            .expect("the cache folder");
        std::fs::create_dir_all(root).expect("the cache folder");
        root.to_path_buf()
    }

    /// Publish every file of `from` (one packaged version) as release `v<version>`.
    fn publish(&self, version: &str, from: &Path) -> PathBuf {
        let dir = self.root().join(format!("v{version}"));
        std::fs::create_dir_all(&dir).expect("the release folder");
        for entry in std::fs::read_dir(from).expect("the packaged files") {
            let entry = entry.expect("an entry");
            std::fs::copy(entry.path(), dir.join(entry.file_name())).expect("copy");
        }
        dir
    }

    fn set_latest(&self, version: &str) {
        std::fs::write(self.root().join("latest"), format!("{version}\n")).expect("latest");
    }
}

/// A machine of its own for one run of the installer: HOME, TMPDIR, and a PATH of the system's
/// folders behind one of fake commands (none by default).
struct Machine {
    dir: tempfile::TempDir,
}

impl Machine {
    fn new() -> Self {
        let machine = Machine {
            dir: tempfile::tempdir().expect("a temporary folder"),
        };
        for sub in ["home", "tmp", "fake-bin"] {
            std::fs::create_dir_all(machine.dir.path().join(sub)).expect("a folder");
        }
        machine
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn bin_dir(&self) -> PathBuf {
        self.home().join(".local/bin")
    }

    /// A command on the front of PATH that prints `text` whatever it is asked.
    fn fake(&self, name: &str, script: &str) {
        let path = self.dir.path().join("fake-bin").join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).expect("a fake command");
        set_executable(&path);
    }

    fn install(&self, release: &Release, env: &[(&str, &str)]) -> Output {
        let path = format!(
            "{}:/usr/bin:/bin",
            self.dir.path().join("fake-bin").display()
        );
        let started = std::time::Instant::now();
        let output = Command::new("sh")
            .arg(workspace().join("scripts/install.sh"))
            .env_clear()
            .env("HOME", self.home())
            .env("PATH", path)
            .env("TMPDIR", self.dir.path().join("tmp"))
            .env("DISCERN_INSTALL_BASE", release.url())
            .envs(env.iter().copied())
            .current_dir(self.dir.path())
            .output()
            .expect("run sh scripts/install.sh");
        eprintln!(
            "install.sh ({:.1} s): {}",
            started.elapsed().as_secs_f64(),
            String::from_utf8_lossy(&output.stderr)
        );
        // Whatever happened, the temporary folder is gone.
        let left: Vec<_> = std::fs::read_dir(self.dir.path().join("tmp"))
            .expect("TMPDIR")
            .collect();
        assert!(left.is_empty(), "install.sh left {left:?} in TMPDIR");
        output
    }

    /// The installed binary's `--version`.
    fn installed_version(&self, bin_dir: &Path) -> String {
        let output = Command::new(bin_dir.join("discern"))
            .arg("--version")
            .output()
            .expect("run the installed discern");
        assert!(output.status.success(), "{output:?}");
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    }

    /// What the bin folder holds (file names), or `None` when it was not created.
    fn bin_files(&self, bin_dir: &Path) -> Option<Vec<String>> {
        let entries = std::fs::read_dir(bin_dir).ok()?;
        let mut names: Vec<String> = entries
            .map(|e| {
                e.expect("an entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        names.sort();
        Some(names)
    }
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn the_latest_release_installs_and_runs() {
    let release = Release::serve();
    release.publish(VERSION, &packaged().current);
    release.set_latest(VERSION);
    let machine = Machine::new();

    let output = machine.install(&release, &[]);
    let said = stderr(&output);
    assert!(output.status.success(), "{said}");
    let bin_dir = machine.bin_dir();
    assert_eq!(
        machine.bin_files(&bin_dir),
        Some(vec!["discern".to_owned()]),
        "only the binary is installed"
    );
    assert!(
        machine
            .installed_version(&bin_dir)
            .starts_with(&format!("discern {VERSION} ")),
        "{said}"
    );
    for expected in [
        format!("/v{VERSION}/discern-{VERSION}-{}.tar.gz", target()),
        "checksum verified (sha256 ".to_owned(),
        format!(
            "installed discern {VERSION} ({}) at {}",
            target(),
            bin_dir.join("discern").display()
        ),
        // HOME's bin folder is not on this PATH: say how to put it there.
        format!("export PATH=\"{}:$PATH\"", bin_dir.display()),
    ] {
        assert!(said.contains(&expected), "{expected:?} not in:\n{said}");
    }
}

#[test]
fn a_corrupted_tarball_is_refused_and_nothing_is_installed() {
    let release = Release::serve();
    let dir = release.publish(VERSION, &packaged().current);
    let tarball = dir.join(format!("discern-{VERSION}-{}.tar.gz", target()));
    let mut bytes = std::fs::read(&tarball).expect("the tarball");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x01;
    std::fs::write(&tarball, bytes).expect("corrupt it");
    let machine = Machine::new();

    let output = machine.install(&release, &[("DISCERN_VERSION", VERSION)]);
    let said = stderr(&output);
    assert!(!output.status.success(), "{said}");
    assert!(said.contains("checksum mismatch for discern-"), "{said}");
    assert!(said.contains("nothing was installed"), "{said}");
    assert_eq!(machine.bin_files(&machine.bin_dir()), None, "{said}");
}

#[test]
fn an_unsupported_platform_or_a_missing_tarball_is_refused() {
    let release = Release::serve();
    release.publish(VERSION, &packaged().current);
    release.set_latest(VERSION);

    // A platform no release is built for.
    let machine = Machine::new();
    machine.fake(
        "uname",
        r#"case "$1" in -s) echo FreeBSD ;; -m) echo riscv64 ;; *) echo FreeBSD ;; esac"#,
    );
    let output = machine.install(&release, &[]);
    let said = stderr(&output);
    assert!(!output.status.success(), "{said}");
    assert!(
        said.contains("no prebuilt discern for FreeBSD on riscv64"),
        "{said}"
    );
    assert_eq!(machine.bin_files(&machine.bin_dir()), None, "{said}");

    // A supported platform this release has no tarball for.
    let machine = Machine::new();
    let arch = if std::env::consts::ARCH == "aarch64" {
        "x86_64"
    } else {
        "aarch64"
    };
    machine.fake(
        "uname",
        &format!(r#"case "$1" in -m) echo {arch} ;; *) echo Linux ;; esac"#),
    );
    let output = machine.install(&release, &[]);
    let said = stderr(&output);
    assert!(!output.status.success(), "{said}");
    assert!(
        said.contains(&format!(
            "cannot download {}/v{VERSION}/discern-{VERSION}-{arch}-unknown-linux-musl.tar.gz",
            release.url()
        )),
        "{said}"
    );
    assert_eq!(machine.bin_files(&machine.bin_dir()), None, "{said}");
}

#[test]
fn a_newer_release_replaces_an_older_one() {
    let release = Release::serve();
    release.publish(OLD, &packaged().old);
    release.publish(VERSION, &packaged().current);
    release.set_latest(VERSION);
    let machine = Machine::new();
    let bin_dir = machine.dir.path().join("tools/bin");
    let bin = bin_dir.display().to_string();

    let output = machine.install(
        &release,
        &[("DISCERN_VERSION", OLD), ("DISCERN_BIN_DIR", &bin)],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(
        machine.installed_version(&bin_dir),
        format!("discern {OLD}")
    );

    // The latest release, over it; the folder is on PATH this time, so no hint is printed.
    let path = format!("{bin}:/usr/bin:/bin");
    let output = machine.install(&release, &[("DISCERN_BIN_DIR", &bin), ("PATH", &path)]);
    let said = stderr(&output);
    assert!(output.status.success(), "{said}");
    assert!(
        machine
            .installed_version(&bin_dir)
            .starts_with(&format!("discern {VERSION} ")),
        "{said}"
    );
    assert!(!said.contains("is not on your PATH"), "{said}");
    assert_eq!(
        machine.bin_files(&bin_dir),
        Some(vec!["discern".to_owned()])
    );
    assert_eq!(
        machine.bin_files(&machine.bin_dir()),
        None,
        "HOME untouched"
    );
}

/// One step of `action.yml` as a composite action's runner sees it.
struct Step {
    name: String,
    id: Option<String>,
    env: Vec<(String, String)>,
    run: String,
}

/// The steps of the repository's `action.yml`: its `name`, `id`, `env` and `run` keys (every
/// step is a `shell: bash` run step; a key this reader does not know fails the test).
fn action_steps() -> Vec<Step> {
    let text = std::fs::read_to_string(workspace().join("action.yml")).expect("action.yml");
    let after = text.split("\n  steps:\n").nth(1).expect("runs.steps");
    let mut steps: Vec<Step> = Vec::new();
    let mut lines = after.lines().peekable();
    while let Some(line) = lines.next() {
        if line.trim().is_empty() {
            continue;
        }
        if let Some(name) = line.strip_prefix("    - name: ") {
            steps.push(Step {
                name: name.to_owned(),
                id: None,
                env: Vec::new(),
                run: String::new(),
            });
            continue;
        }
        let step = steps.last_mut().expect("a step starts with its name");
        let (key, value) = line
            .strip_prefix("      ")
            .and_then(|l| l.split_once(':'))
            .unwrap_or_else(|| panic!("unexpected line in action.yml: {line:?}"));
        let value = value.trim();
        match key {
            "id" => step.id = Some(value.to_owned()),
            "shell" => assert_eq!(value, "bash", "{}", step.name),
            "env" => {
                while let Some(entry) = lines.next_if(|l| l.starts_with("        ")) {
                    let (k, v) = entry.trim().split_once(": ").expect("KEY: value");
                    step.env.push((k.to_owned(), v.to_owned()));
                }
            }
            "run" if value == "|" => {
                while let Some(body) =
                    lines.next_if(|l| l.starts_with("        ") || l.trim().is_empty())
                {
                    step.run
                        .push_str(body.strip_prefix("        ").unwrap_or(""));
                    step.run.push('\n');
                }
            }
            "run" => step.run = value.trim_matches('\'').to_owned(),
            _ => panic!("action.yml: a step key this test does not run: {key}"),
        }
    }
    steps
}

/// What a GitHub runner knows when it runs the action: the event and the step outputs so far.
struct Runner<'a> {
    workspace: &'a Path,
    temp: PathBuf,
    home: &'a Path,
    event: &'a str,
    before: &'a str,
    release: &'a Release,
    outputs: std::collections::BTreeMap<String, String>,
}

impl Runner<'_> {
    /// `${{ … }}` in an `env` value, for the expressions action.yml uses (another fails).
    fn expand(&self, value: &str) -> String {
        let mut out = String::new();
        let mut rest = value;
        while let Some(start) = rest.find("${{") {
            out.push_str(&rest[..start]);
            let end = rest[start..].find("}}").expect("a closed expression") + start;
            let expression = rest[start + 3..end].trim();
            let expanded = match expression {
                "inputs.version" => VERSION.to_owned(),
                "inputs.install-base" => self.release.url(),
                "inputs.output-format" => "github".to_owned(),
                "inputs.trunk || github.event.repository.default_branch" => "main".to_owned(),
                "runner.temp" => self.temp.display().to_string(),
                "github.event_name" => self.event.to_owned(),
                "github.event.before" => self.before.to_owned(),
                other => match other.strip_prefix("steps.") {
                    Some(output) => self.outputs.get(output).cloned().unwrap_or_default(),
                    None => panic!("action.yml uses `{other}`, which this test does not know"),
                },
            };
            out.push_str(&expanded);
            rest = &rest[end + 2..];
        }
        out.push_str(rest);
        out
    }

    /// Run every step as the runner does (`bash -e`, GITHUB_* and RUNNER_* set, PATH without
    /// cargo or discern); stop at the first that fails. Each step's exit code and stdout.
    fn run_action(&mut self) -> Vec<(String, i32, String)> {
        let mut results = Vec::new();
        for step in action_steps() {
            let output_file = self.temp.join(format!("output-{}", results.len()));
            std::fs::write(&output_file, "").expect("GITHUB_OUTPUT");
            let mut cmd = Command::new("bash");
            cmd.args(["--noprofile", "--norc", "-eo", "pipefail", "-c", &step.run])
                .current_dir(self.workspace);
            discern_tests::hermetic(&mut cmd, self.home);
            cmd.env("PATH", "/usr/bin:/bin")
                .env("CI", "true")
                .env("GITHUB_ACTIONS", "true")
                .env("GITHUB_ACTION_PATH", workspace())
                .env("GITHUB_WORKSPACE", self.workspace)
                .env("GITHUB_EVENT_NAME", self.event)
                .env("GITHUB_OUTPUT", &output_file)
                .env("GITHUB_STEP_SUMMARY", self.temp.join("summary.md"))
                .env("RUNNER_TEMP", &self.temp)
                .env("RUNNER_OS", "Linux")
                .env("RUNNER_ARCH", "X64");
            for (key, value) in &step.env {
                cmd.env(key, self.expand(value));
            }
            let output = cmd.output().expect("run a step");
            let code = output.status.code().unwrap_or(-1);
            let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
            eprintln!(
                "step {:?}: exit {code}\n{stdout}{}",
                step.name,
                String::from_utf8_lossy(&output.stderr)
            );
            if let Some(id) = &step.id {
                let written = std::fs::read_to_string(&output_file).expect("GITHUB_OUTPUT");
                for line in written.lines() {
                    if let Some((k, v)) = line.split_once('=') {
                        self.outputs
                            .insert(format!("{id}.outputs.{k}"), v.to_owned());
                    }
                }
            }
            results.push((step.name, code, stdout));
            if code != 0 {
                break;
            }
        }
        results
    }
}

/// A forge (a bare repository) whose trunk holds the fixture's Standards, and a clone to push
/// from.
struct ActionForge {
    fixture: crate::support::Fixture,
    origin: PathBuf,
    work: PathBuf,
}

impl ActionForge {
    fn new() -> Self {
        let fixture = crate::support::Fixture::new(crate::support::LANDING_CONFIG);
        let origin = fixture.repo.parent().join("origin.git");
        let work = fixture.repo.parent().join("work");
        let parent = fixture.repo.parent().to_path_buf();
        fixture.git_in(
            &parent,
            &["init", "-q", "--bare", "-b", "main", "origin.git"],
        );
        fixture.git_in(fixture.path(), &["push", "-q", path_str(&origin), "main"]);
        fixture.git_in(&parent, &["clone", "-q", path_str(&origin), "work"]);
        ActionForge {
            fixture,
            origin,
            work,
        }
    }

    fn commit_and_push(&self, branch: &str, file: &str, content: &str) -> String {
        let w = &self.work;
        std::fs::write(w.join(file), content).expect("a file");
        self.fixture.git_in(w, &["add", "-A"]);
        self.fixture.git_in(w, &["commit", "-q", "-m", "work"]);
        self.fixture
            .git_in(w, &["push", "-q", "origin", &format!("HEAD:{branch}")]);
        self.fixture.git_out(w, &["rev-parse", "HEAD"])
    }

    /// A checkout as `actions/checkout` makes it: depth 1, one ref, detached; nothing more.
    fn checkout(&self, name: &str, rev: &str) -> PathBuf {
        let clone = self.fixture.repo.parent().join(name);
        std::fs::create_dir_all(&clone).expect("the clone");
        let url = format!("file://{}", self.origin.display());
        for args in [
            &["init", "-q"][..],
            &["remote", "add", "origin", &url],
            &["fetch", "-q", "--depth", "1", "origin", rev],
            &["checkout", "-q", "--detach", "FETCH_HEAD"],
        ] {
            self.fixture.git_in(&clone, args);
        }
        clone
    }
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

fn run_action_on(
    clone: &Path,
    release: &Release,
    event: &str,
    before: &str,
) -> Vec<(String, i32, String)> {
    let temp = tempfile::tempdir().expect("RUNNER_TEMP");
    let home = tempfile::tempdir().expect("HOME");
    let mut runner = Runner {
        workspace: clone,
        temp: temp.path().to_path_buf(),
        home: home.path(),
        event,
        before,
        release,
        outputs: Default::default(),
    };
    runner.run_action()
}

#[test]
fn the_action_measures_a_pull_request_and_a_push_with_the_prebuilt_binary() {
    let release = Release::serve();
    release.publish(VERSION, &packaged().current);
    let forge = ActionForge::new();

    // A pull request that adds four TODOs to a Standard held at 5 (the trunk has 2): it fails,
    // annotated on the lines it added.
    forge
        .fixture
        .git_in(&forge.work, &["checkout", "-q", "-b", "more-todos"]);
    let todos = "// TODO: a\n// TODO: b\n// TODO: c\n// TODO: d\npub fn c() {}\n";
    forge.commit_and_push("more-todos", "src/more.rs", todos);
    let clone = forge.checkout("pr", "refs/heads/more-todos");
    let steps = run_action_on(&clone, &release, "pull_request", "");
    let names: Vec<&str> = steps.iter().map(|(name, _, _)| name.as_str()).collect();
    assert_eq!(names.len(), 4, "every step ran: {names:?}");
    let (_, code, stdout) = steps.last().expect("the measurement");
    assert_eq!(*code, 1, "the regression fails the step: {stdout}");
    assert!(
        stdout.contains("::error file=src/more.rs,line="),
        "{stdout}"
    );
    assert!(steps[..3].iter().all(|(_, code, _)| *code == 0));

    // A push to the trunk with one TODO fewer: measured against the tip it replaced; passes.
    forge
        .fixture
        .git_in(&forge.work, &["checkout", "-q", "main"]);
    let before = forge.fixture.git_out(&forge.work, &["rev-parse", "HEAD"]);
    forge.commit_and_push(
        "main",
        "src/lib.rs",
        "// TODO: one\npub fn a() {}\npub fn b() {}\n",
    );
    let clone = forge.checkout("push", "refs/heads/main");
    let steps = run_action_on(&clone, &release, "push", &before);
    assert_eq!(steps.len(), 4, "every step ran");
    assert!(
        steps.iter().all(|(_, code, _)| *code == 0),
        "the push passes: {:?}",
        steps.iter().map(|(n, c, _)| (n, c)).collect::<Vec<_>>()
    );
}
