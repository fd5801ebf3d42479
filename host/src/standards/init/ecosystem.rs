//! The ecosystems `init` recognises, at the repository's root and in its top-level folders (a
//! JavaScript frontend in `web/` beside a Go service in `service/`): each one's install step
//! (for `[worktree].setup`) and its build and test jobs, as they run in a fresh worktree. Cargo,
//! Go, Maven and Gradle fetch what they need while building; JavaScript and Python projects are
//! installed first, by the tool their lockfile names (`node`, `python`).

use super::jobs::{Job, Plan, job, unsure};
use super::{node, python};
use crate::snapshot::Snapshot;

/// What `init` reads of the committed tree: whether a file is there, and its content.
pub(super) struct Files<'a> {
    snapshot: &'a Snapshot,
}

impl<'a> Files<'a> {
    pub(super) fn new(snapshot: &'a Snapshot) -> Self {
        Self { snapshot }
    }

    pub(super) fn has(&self, path: &str) -> bool {
        self.snapshot.entry(path).is_some()
    }

    pub(super) fn executable(&self, path: &str) -> bool {
        self.snapshot.entry(path).is_some_and(|e| e.executable)
    }

    /// The committed content of `path`, if it is a readable file of at most 1 MiB.
    pub(super) fn read(&self, path: &str) -> Option<Vec<u8>> {
        self.snapshot.entry(path)?;
        let (_, bytes) = self.snapshot.reader().read(path).ok()?;
        (bytes.len() <= 1 << 20).then(|| bytes.as_ref().clone())
    }

    pub(super) fn text(&self, path: &str) -> Option<String> {
        self.read(path)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
    }

    /// Every tracked path.
    pub(super) fn paths(&self) -> impl Iterator<Item = &str> {
        self.snapshot.entries().iter().map(|e| e.path())
    }
}

/// One project folder: `""` (the root) or `"web/"`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Folder<'a> {
    pub(super) prefix: &'a str,
}

impl Folder<'_> {
    /// The path of `file` in this folder.
    pub(super) fn path(&self, file: &str) -> String {
        format!("{}{file}", self.prefix)
    }

    /// `command`, run in this folder from the worktree's root.
    pub(super) fn command(&self, command: &str) -> String {
        match self.prefix.strip_suffix('/') {
            Some(dir) => format!("cd {dir} && {command}"),
            None => command.to_owned(),
        }
    }

    /// A job name for `tool`'s `kind` here: `bun_test` at the root, `web_bun_test` in `web/`.
    pub(super) fn name(&self, tool: &str) -> String {
        let dir: String = self
            .prefix
            .trim_end_matches('/')
            .chars()
            .map(|c| match c.is_ascii_alphanumeric() || c == '-' {
                true => c,
                false => '_',
            })
            .collect();
        match dir.is_empty() {
            true => tool.to_owned(),
            false => format!("{dir}_{tool}"),
        }
    }
}

/// The families of ecosystems: a folder brings in a family the root does not already have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Cargo,
    Node,
    Go,
    Python,
    Maven,
    Gradle,
}

const FAMILIES: [Family; 6] = [
    Family::Cargo,
    Family::Node,
    Family::Go,
    Family::Python,
    Family::Maven,
    Family::Gradle,
];

/// Top-level folders that hold examples or someone else's code, never a project of ours.
const NOT_PROJECTS: &[&str] = &[
    "vendor",
    "third_party",
    "third-party",
    "node_modules",
    "fixtures",
    "testdata",
    "examples",
    "example",
    "samples",
    "sample",
];

/// Everything to run for the ecosystems found. `installed` says whether a tool is on this
/// machine's `PATH`: where two lockfiles disagree, the one whose tool is here wins.
pub(super) fn proposed(snapshot: &Snapshot, installed: &dyn Fn(&str) -> bool) -> Plan {
    let files = Files::new(snapshot);
    let root = Folder { prefix: "" };
    let mut plan = Plan::default();
    let at_root: Vec<Family> = FAMILIES
        .into_iter()
        .filter(|f| present(&files, root, *f))
        .collect();
    for family in &at_root {
        add(&mut plan, &files, root, *family, installed);
    }
    for prefix in folders(&files) {
        let folder = Folder { prefix: &prefix };
        for family in FAMILIES {
            if !at_root.contains(&family) && present(&files, folder, family) {
                add(&mut plan, &files, folder, family, installed);
            }
        }
    }
    // A root with no Python project of its own can still have pytest tests.
    if !at_root.contains(&Family::Python)
        && let Some(pytest) = python::bare_pytest(&files)
    {
        plan.jobs.push(pytest);
    }
    plan
}

/// The top-level folders that may be projects, sorted (`"web/"`).
fn folders(files: &Files) -> Vec<String> {
    let mut found: Vec<String> = files
        .paths()
        .filter_map(|p| p.split_once('/').map(|(dir, _)| dir))
        .filter(|dir| !dir.starts_with('.') && !NOT_PROJECTS.contains(dir))
        .map(|dir| format!("{dir}/"))
        .collect();
    found.sort();
    found.dedup();
    found
}

/// Whether `folder` holds a project of `family` (its manifest).
fn present(files: &Files, folder: Folder, family: Family) -> bool {
    let has = |file: &str| files.has(&folder.path(file));
    match family {
        Family::Cargo => has("Cargo.toml"),
        Family::Node => has("package.json"),
        Family::Go => has("go.mod"),
        Family::Python => python::present(files, folder),
        Family::Maven => has("pom.xml"),
        Family::Gradle => GRADLE_FILES.iter().any(|f| has(f)),
    }
}

const GRADLE_FILES: [&str; 4] = [
    "build.gradle",
    "build.gradle.kts",
    "settings.gradle",
    "settings.gradle.kts",
];

fn add(
    plan: &mut Plan,
    files: &Files,
    folder: Folder,
    family: Family,
    installed: &dyn Fn(&str) -> bool,
) {
    match family {
        Family::Cargo => plan.jobs.extend([
            job(
                &folder.name("cargo_build"),
                "build",
                &folder.command("cargo build --all-targets"),
            ),
            job(
                &folder.name("cargo_test"),
                "test",
                &folder.command("cargo test"),
            ),
        ]),
        Family::Go => plan.jobs.extend([
            job(
                &folder.name("go_build"),
                "build",
                &folder.command("go build ./..."),
            ),
            job(
                &folder.name("go_test"),
                "test",
                &folder.command("go test ./..."),
            ),
        ]),
        Family::Node => node::add(plan, files, folder, installed),
        Family::Python => python::add(plan, files, folder),
        Family::Maven => plan.jobs.extend(maven(files, folder)),
        Family::Gradle => plan.jobs.extend(gradle(files, folder)),
    }
}

/// A wrapper script as a command: `./mvnw` when it is committed executable, `sh mvnw` when not.
fn wrapper(files: &Files, folder: Folder, script: &str) -> Option<String> {
    let path = folder.path(script);
    match (files.has(&path), files.executable(&path)) {
        (false, _) => None,
        (true, true) => Some(format!("./{script}")),
        (true, false) => Some(format!("sh {script}")),
    }
}

fn maven(files: &Files, folder: Folder) -> Vec<Job> {
    let mvn = wrapper(files, folder, "mvnw").unwrap_or_else(|| "mvn".to_owned());
    vec![
        job(
            &folder.name("maven_build"),
            "build",
            &folder.command(&format!("{mvn} -B -q -DskipTests package")),
        ),
        job(
            &folder.name("maven_test"),
            "test",
            &folder.command(&format!("{mvn} -B -q verify")),
        ),
    ]
}

fn gradle(files: &Files, folder: Folder) -> Vec<Job> {
    let (gradle, why) = match wrapper(files, folder, "gradlew") {
        Some(wrapper) => (wrapper, None),
        None => (
            "gradle".to_owned(),
            Some(
                "no Gradle wrapper (gradlew) is committed, and the gradle installed may not be the version the build needs",
            ),
        ),
    };
    let jobs = [
        job(
            &folder.name("gradle_build"),
            "build",
            &folder.command(&format!("{gradle} assemble")),
        ),
        job(
            &folder.name("gradle_test"),
            "test",
            &folder.command(&format!("{gradle} test")),
        ),
    ];
    jobs.into_iter()
        .map(|j| match why {
            Some(why) => unsure(j, why),
            None => j,
        })
        .collect()
}

#[cfg(test)]
mod tests;
