//! JavaScript and TypeScript projects: the package manager (`packageManager` in `package.json`,
//! else the lockfile: bun, pnpm, yarn classic or berry, npm), its frozen install as the
//! worktree's setup, and a build and a test job where `package.json` has those scripts — a job
//! for a script that is not there would fail every gate.

use super::ecosystem::{Files, Folder};
use super::jobs::{Plan, job, unsure};

/// A package manager, as its lockfile or `packageManager` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tool {
    Bun,
    Pnpm,
    YarnClassic,
    YarnBerry,
    Npm,
}

impl Tool {
    fn command(self) -> &'static str {
        match self {
            Tool::Bun => "bun",
            Tool::Pnpm => "pnpm",
            Tool::YarnClassic | Tool::YarnBerry => "yarn",
            Tool::Npm => "npm",
        }
    }

    /// Its lockfiles, the first the one it writes.
    fn lockfiles(self) -> &'static [&'static str] {
        match self {
            Tool::Bun => &["bun.lock", "bun.lockb"],
            Tool::Pnpm => &["pnpm-lock.yaml"],
            Tool::YarnClassic | Tool::YarnBerry => &["yarn.lock"],
            Tool::Npm => &["package-lock.json", "npm-shrinkwrap.json"],
        }
    }

    /// The install that never changes the lockfile (a plain install without one).
    fn install(self, locked: bool) -> &'static str {
        match (self, locked) {
            (Tool::Bun, true) => "bun install --frozen-lockfile",
            (Tool::Pnpm, true) => "pnpm install --frozen-lockfile",
            (Tool::YarnClassic, true) => "yarn install --frozen-lockfile",
            (Tool::YarnBerry, true) => "yarn install --immutable",
            (Tool::Npm, true) => "npm ci",
            (Tool::Npm, false) => "npm install",
            (tool, false) => match tool {
                Tool::Bun => "bun install",
                Tool::Pnpm => "pnpm install",
                _ => "yarn install",
            },
        }
    }

    /// The command that runs the `test` script (`bun test` is bun's own runner, not the
    /// script).
    fn test_script(self) -> &'static str {
        match self {
            Tool::Bun => "bun run test",
            Tool::Pnpm => "pnpm test",
            Tool::YarnClassic | Tool::YarnBerry => "yarn test",
            Tool::Npm => "npm test",
        }
    }
}

/// The package manager `package.json`'s `packageManager` names (`"pnpm@9.1.0"`).
fn declared(package: &serde_json::Value, yarn_berry: bool) -> Option<Tool> {
    let spec = package["packageManager"].as_str()?;
    let (name, version) = spec.split_once('@').unwrap_or((spec, ""));
    match name {
        "bun" => Some(Tool::Bun),
        "pnpm" => Some(Tool::Pnpm),
        "npm" => Some(Tool::Npm),
        "yarn" if version.starts_with("1.") => Some(Tool::YarnClassic),
        "yarn" if version.is_empty() && !yarn_berry => Some(Tool::YarnClassic),
        "yarn" => Some(Tool::YarnBerry),
        _ => None,
    }
}

/// Yarn 2+ (berry): a `.yarnrc.yml`, or a lockfile with its `__metadata` header.
fn berry(files: &Files, folder: Folder) -> bool {
    files.has(&folder.path(".yarnrc.yml"))
        || files
            .text(&folder.path("yarn.lock"))
            .is_some_and(|lock| lock.contains("__metadata:"))
}

/// The package manager for `folder`, and a note when the choice was not the only one.
fn tool(
    files: &Files,
    folder: Folder,
    package: &serde_json::Value,
    installed: &dyn Fn(&str) -> bool,
) -> (Tool, Option<String>) {
    let yarn = match berry(files, folder) {
        true => Tool::YarnBerry,
        false => Tool::YarnClassic,
    };
    if let Some(tool) = declared(package, yarn == Tool::YarnBerry) {
        return (tool, None);
    }
    let locked: Vec<(Tool, &str)> = [Tool::Bun, Tool::Pnpm, yarn, Tool::Npm]
        .into_iter()
        .filter_map(|tool| {
            let file = tool
                .lockfiles()
                .iter()
                .find(|f| files.has(&folder.path(f)))?;
            Some((tool, *file))
        })
        .collect();
    match locked[..] {
        [] => (Tool::Npm, None),
        [(tool, _)] => (tool, None),
        _ => {
            let chosen = locked
                .iter()
                .find(|(tool, _)| installed(tool.command()))
                .unwrap_or(&locked[0]);
            let names: Vec<String> = locked.iter().map(|(_, f)| folder.path(f)).collect();
            let why = match installed(chosen.0.command()) {
                true => format!("{} is installed here", chosen.0.command()),
                false => "none of their tools is installed here".to_owned(),
            };
            let note = format!(
                "{} are committed side by side: {} is chosen ({why}); name the package manager in package.json (\"packageManager\") to choose another.",
                names.join(" and "),
                chosen.0.command()
            );
            (chosen.0, Some(note))
        }
    }
}

/// The setup step and the jobs of the JavaScript project in `folder`.
pub(super) fn add(
    plan: &mut Plan,
    files: &Files,
    folder: Folder,
    installed: &dyn Fn(&str) -> bool,
) {
    let package = files
        .read(&folder.path("package.json"))
        .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
        .unwrap_or_default();
    let (tool, note) = tool(files, folder, &package, installed);
    let locked = tool.lockfiles().iter().any(|f| files.has(&folder.path(f)));
    plan.setup.push(folder.command(tool.install(locked)));
    plan.creates.push(folder.path("node_modules/"));
    plan.notes.extend(note);
    if !locked {
        plan.notes.push(format!(
            "{} has no lockfile for {}: its install resolves versions afresh in every worktree.",
            folder.path("package.json"),
            tool.command()
        ));
    }
    let script = |name: &str| package["scripts"][name].as_str().map(str::to_owned);
    let name = |kind: &str| folder.name(&format!("{}_{kind}", tool.command()));
    if script("build").is_some() {
        let run = format!("{} run build", tool.command());
        plan.jobs
            .push(job(&name("build"), "build", &folder.command(&run)));
    }
    // npm's placeholder fails on purpose ("Error: no test specified").
    let test = match script("test") {
        Some(t) if !t.contains("no test specified") => {
            job(&name("test"), "test", &folder.command(tool.test_script()))
        }
        // bun runs its own test runner over the test files it finds.
        _ if tool == Tool::Bun && has_test_files(files, folder) => {
            job(&name("test"), "test", &folder.command("bun test"))
        }
        _ => unsure(
            job(&name("test"), "test", &folder.command(tool.test_script())),
            "package.json has no test script yet",
        ),
    };
    plan.jobs.push(test);
}

/// The extensions of the sources bun's test runner reads.
const SOURCES: [&str; 8] = ["ts", "tsx", "js", "jsx", "mjs", "cjs", "mts", "cts"];

/// Whether `folder` has files bun's test runner collects (`*.test.ts`, `*_spec.js`, …).
fn has_test_files(files: &Files, folder: Folder) -> bool {
    files
        .paths()
        .filter(|p| p.starts_with(folder.prefix) && !p.contains("node_modules/"))
        .any(|p| {
            let name = p.rsplit('/').next().unwrap_or(p);
            let Some((stem, extension)) = name.rsplit_once('.') else {
                return false;
            };
            SOURCES.contains(&extension)
                && [".test", "_test", ".spec", "_spec"]
                    .iter()
                    .any(|s| stem.ends_with(s))
        })
}
