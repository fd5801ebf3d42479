//! What `init` protects besides `discern.toml`: the files that define the gate too — the CI
//! definitions that run discern, and what its jobs run. A job runs more than the words of its
//! command: `npm test` runs the `test` script of `package.json`, a script sources helpers beside
//! it, `.cargo/config.toml` can wrap every compiler call. So `init` protects the manifest that
//! defines a job's command, the settings that can replace it, and the folder of every script a
//! command names (`sh scripts/count.sh` protects `scripts/**`, so a helper it sources is
//! covered), with the helpers such a script names elsewhere: editing one changes what the gate
//! measures as surely as editing the limit.

use crate::snapshot::Snapshot;

/// CI definitions, protected where the repository has them.
const CI_DEFINITIONS: &[(&str, &str)] = &[
    (".github/workflows/", ".github/workflows/**"),
    (".gitlab-ci.yml", ".gitlab-ci.yml"),
    (".circleci/", ".circleci/**"),
    ("azure-pipelines.yml", "azure-pipelines.yml"),
    ("Jenkinsfile", "Jenkinsfile"),
];

/// Settings that can replace what a tool's job runs (a runner, a wrapper, a script shell).
const TOOL_SETTINGS: &[(&str, &[&str])] = &[
    ("cargo", &[".cargo/config.toml", ".cargo/config"]),
    ("npm", &["package.json", ".npmrc"]),
    ("pnpm", &["package.json", ".npmrc", "pnpm-workspace.yaml"]),
    (
        "yarn",
        &["package.json", ".npmrc", ".yarnrc", ".yarnrc.yml"],
    ),
    ("bun", &["package.json", ".npmrc", "bunfig.toml"]),
    ("uv", &["pyproject.toml", "uv.toml"]),
    ("poetry", &["pyproject.toml", "poetry.toml"]),
    ("pytest", PYTEST_SETTINGS),
    ("mvn", MAVEN_SETTINGS),
    ("mvnw", MAVEN_SETTINGS),
    ("gradle", GRADLE_SETTINGS),
    ("gradlew", GRADLE_SETTINGS),
];

const PYTEST_SETTINGS: &[&str] = &[
    "pytest.ini",
    "conftest.py",
    "tox.ini",
    "setup.cfg",
    "pyproject.toml",
];

const MAVEN_SETTINGS: &[&str] = &[
    "pom.xml",
    ".mvn/maven.config",
    ".mvn/jvm.config",
    ".mvn/wrapper/maven-wrapper.properties",
];

const GRADLE_SETTINGS: &[&str] = &[
    "build.gradle",
    "build.gradle.kts",
    "settings.gradle",
    "settings.gradle.kts",
    "gradle.properties",
    "gradle/wrapper/gradle-wrapper.properties",
];

/// A folder holding more tracked files than this is the project's code, not a folder of
/// scripts: the script and the helpers it names are protected instead of all of it.
const SCRIPT_FOLDER_FILES: usize = 100;

/// How deep `init` follows the helpers a script names.
const HELPER_DEPTH: usize = 3;

/// The pathspecs `[acceptance].protected` starts with: the CI definitions present, and what
/// `commands` run (see the module), sorted.
pub(super) fn protected_paths(snapshot: &Snapshot, commands: &[&str]) -> Vec<String> {
    let mut paths: Vec<String> = CI_DEFINITIONS
        .iter()
        .filter(|(prefix, _)| {
            snapshot
                .entries()
                .iter()
                .any(|e| match prefix.ends_with('/') {
                    true => e.path().starts_with(prefix),
                    false => *e.path() == **prefix,
                })
        })
        .map(|(_, spec)| (*spec).to_owned())
        .collect();
    // Each command with the folder it runs in (`cd web && …` runs in `web/`).
    let mut run: Vec<(&str, String)> = Vec::new();
    for command in commands {
        let (folder, command) = in_folder(command);
        run.push((folder, command.to_owned()));
        for (_, files) in TOOL_SETTINGS
            .iter()
            .filter(|(name, _)| tools(command).contains(name))
        {
            paths.extend(
                files
                    .iter()
                    .map(|f| joined(folder, f).unwrap_or_default())
                    .filter(|f| snapshot.entry(f).is_some()),
            );
        }
        run.extend(
            package_scripts(snapshot, folder, command)
                .into_iter()
                .map(|script| (folder, script)),
        );
    }
    let mut scripts: Vec<String> = run
        .iter()
        .flat_map(|(folder, command)| named_files(command, folder))
        .filter(|path| snapshot.entry(path).is_some())
        .collect();
    scripts.sort();
    scripts.dedup();
    for script in helpers(snapshot, scripts) {
        paths.push(covering(snapshot, &script));
    }
    paths.sort();
    paths.dedup();
    // A folder protected whole covers the files below it.
    let folders: Vec<String> = paths
        .iter()
        .filter_map(|p| p.strip_suffix("**").map(str::to_owned))
        .collect();
    paths.retain(|p| {
        !folders
            .iter()
            .any(|f| p.starts_with(f.as_str()) && *p != format!("{f}**"))
    });
    paths
}

/// The folder a setup step or job runs in (`"web"` for `cd web && bun run build`, `""` at the
/// root) and the command it runs there.
fn in_folder(command: &str) -> (&str, &str) {
    command
        .strip_prefix("cd ")
        .and_then(|rest| rest.split_once(" && "))
        .filter(|(dir, _)| !dir.contains(char::is_whitespace))
        .unwrap_or(("", command))
}

/// The tools `command` runs whose settings matter: its program (`./mvnw` as `mvnw`, the script
/// `sh` runs), and pytest wherever it is named.
fn tools(command: &str) -> Vec<&str> {
    let mut words = command.split_whitespace();
    let mut found = Vec::new();
    let program = match words.next() {
        Some("sh") => words.next(),
        other => other,
    };
    if let Some(program) = program {
        found.push(program.trim_start_matches("./"));
    }
    if command.split_whitespace().any(|w| w == "pytest") {
        found.push("pytest");
    }
    found
}

/// `scripts` and every tracked file they name (`source lib.sh`, `. ./lib.sh`, `node x.js`),
/// read from the repository root or the script's folder, to [`HELPER_DEPTH`].
fn helpers(snapshot: &Snapshot, scripts: Vec<String>) -> Vec<String> {
    let mut found = scripts.clone();
    let mut next = scripts;
    for _ in 0..HELPER_DEPTH {
        let mut named = Vec::new();
        for script in &next {
            let Some(text) = content(snapshot, script) else {
                continue;
            };
            let folder = script.rsplit_once('/').map_or("", |(dir, _)| dir);
            for line in String::from_utf8_lossy(&text).lines() {
                named.extend(
                    named_files(line, folder)
                        .into_iter()
                        .chain(named_files(line, ""))
                        .filter(|path| snapshot.entry(path).is_some() && !found.contains(path)),
                );
            }
        }
        named.sort();
        named.dedup();
        found.extend(named.iter().cloned());
        next = named;
    }
    found
}

/// The pathspec that protects `script`: its folder, unless that is the root or the project's
/// code (more than [`SCRIPT_FOLDER_FILES`] files), where it is the file alone.
fn covering(snapshot: &Snapshot, script: &str) -> String {
    match script.rsplit_once('/') {
        Some((folder, _)) => {
            let prefix = format!("{folder}/");
            let files = snapshot
                .entries()
                .iter()
                .filter(|e| e.path().starts_with(&prefix))
                .take(SCRIPT_FOLDER_FILES + 1)
                .count();
            match files > SCRIPT_FOLDER_FILES {
                true => script.to_owned(),
                false => format!("{prefix}**"),
            }
        }
        None => script.to_owned(),
    }
}

/// The `package.json` scripts (of `folder`'s) an npm, pnpm, yarn or bun command runs (`npm
/// test` runs `pretest`, `test` and `posttest`; `bun run build` runs `build` and its hooks).
fn package_scripts(snapshot: &Snapshot, folder: &str, command: &str) -> Vec<String> {
    let mut words = command.split_whitespace();
    let (Some(tool), Some(verb)) = (words.next(), words.next()) else {
        return Vec::new();
    };
    if !["npm", "pnpm", "yarn", "bun"].contains(&tool) {
        return Vec::new();
    }
    let name = match verb {
        "run" | "run-script" => words.next().unwrap_or_default(),
        // `bun test` is bun's own runner, not a script.
        _ if tool == "bun" => return Vec::new(),
        other => other,
    };
    let manifest = joined(folder, "package.json").unwrap_or_default();
    let scripts = content(snapshot, &manifest)
        .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
        .map(|package| package["scripts"].clone())
        .unwrap_or_default();
    [format!("pre{name}"), name.to_owned(), format!("post{name}")]
        .iter()
        .filter_map(|key| scripts[key.as_str()].as_str().map(str::to_owned))
        .collect()
}

/// The committed content of `path`, if it is a readable file of at most 1 MiB.
fn content(snapshot: &Snapshot, path: &str) -> Option<Vec<u8>> {
    snapshot.entry(path)?;
    let (_, bytes) = snapshot.reader().read(path).ok()?;
    (bytes.len() <= 1 << 20).then(|| bytes.as_ref().clone())
}

/// The words of a shell command that could be repository files (`./x.sh` as `x.sh`), read from
/// `folder` (`""`: the repository root); a word built from a variable or an absolute path
/// (`"$(dirname "$0")/lib.sh"`) as its last part in `folder`.
fn named_files(command: &str, folder: &str) -> Vec<String> {
    command
        .split(|c: char| {
            c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')' | '`' | ',' | '=')
        })
        .map(|word| word.trim_matches(['"', '\'']))
        .filter(|word| !word.is_empty() && !word.starts_with('-'))
        .filter_map(|word| match word.contains('$') || word.starts_with('/') {
            true => {
                let last = word.rsplit('/').next().filter(|l| !l.contains('$'))?;
                joined(folder, last)
            }
            false => joined(folder, word),
        })
        .collect()
}

/// `word` read from `folder`, normalised; `None` for an absolute path or one above the root.
fn joined(folder: &str, word: &str) -> Option<String> {
    if word.starts_with('/') {
        return None;
    }
    let mut parts: Vec<&str> = folder.split('/').filter(|p| !p.is_empty()).collect();
    for part in word.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            name => parts.push(name),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

#[cfg(test)]
mod tests {
    use discern_tests::TestRepo;

    use super::{named_files, protected_paths};
    use crate::snapshot::Snapshot;

    #[test]
    fn init_protects_what_its_jobs_run_and_the_folders_of_their_scripts() {
        let repo = TestRepo::new();
        repo.write(
            "package.json",
            r#"{ "scripts": { "pretest": "sh run.sh", "test": "sh scripts/test.sh", "build": "node src/build.js" } }"#,
        )
        .write("scripts/test.sh", ". \"$(dirname \"$0\")/helper.sh\"\n")
        .write("scripts/helper.sh", "run() { :; }\n")
        .write("run.sh", ". ci/lib.sh\n")
        .write("ci/lib.sh", "true\n")
        .write(".cargo/config.toml", "[build]\n")
        .write("Cargo.toml", "[package]\n")
        .write(".github/workflows/ci.yml", "on: push\n");
        for n in 0..=super::SCRIPT_FOLDER_FILES {
            repo.write(&format!("src/m{n}.js"), "x\n");
        }
        repo.write("src/build.js", "require('./m1.js')\n");
        repo.commit("a project");
        let snapshot = Snapshot::open(repo.path(), "HEAD").expect("HEAD opens");
        let paths = protected_paths(&snapshot, &["npm test", "npm run build", "cargo test"]);
        assert_eq!(
            paths,
            [
                ".cargo/config.toml",
                ".github/workflows/**",
                "ci/**",
                "package.json",
                "run.sh",
                "scripts/**",
                "src/build.js",
                "src/m1.js",
            ]
        );
    }

    #[test]
    fn the_words_of_a_command_that_may_be_files() {
        assert_eq!(
            named_files("sh ./scripts/count.sh --fast && python3 'ci/m.py' X=1", ""),
            ["sh", "scripts/count.sh", "python3", "ci/m.py", "X", "1"]
        );
        let sourced = named_files(
            ". \"$(dirname \"$0\")/lib.sh\"; source ./helper.sh; . \"${DIR}/x.sh\"; cat ../up.txt",
            "scripts",
        );
        for helper in [
            "scripts/lib.sh",
            "scripts/helper.sh",
            "scripts/x.sh",
            "up.txt",
        ] {
            assert!(
                sourced.contains(&helper.to_owned()),
                "{helper}: {sourced:?}"
            );
        }
    }
}
