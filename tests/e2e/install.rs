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
/// "release" whose binary is a script that prints its version. They are made under the
/// target's folder for tests, afresh each run: a static is never dropped, so a temporary
/// folder held by one was left behind (about 110 MB a run).
struct Packaged {
    current: PathBuf,
    old: PathBuf,
}

fn packaged() -> &'static Packaged {
    static PACKAGED: OnceLock<Packaged> = OnceLock::new();
    PACKAGED.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("install-packaged");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a folder for the tarballs");
        let binary = dir.join("discern");
        std::fs::copy(env!("CARGO_BIN_EXE_discern"), &binary).expect("copy the binary");
        let _ = Command::new("strip").arg(&binary).status();
        let current = dir.join("current");
        // The version comes from the workspace, as in a release.
        package(&binary, None, &current);

        let stub = dir.join("stub/discern");
        std::fs::create_dir_all(stub.parent().expect("a parent")).expect("a folder");
        std::fs::write(&stub, format!("#!/bin/sh\necho 'discern {OLD}'\n")).expect("the stub");
        set_executable(&stub);
        let old = dir.join("old");
        package(&stub, Some(OLD), &old);
        Packaged { current, old }
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

mod action;
