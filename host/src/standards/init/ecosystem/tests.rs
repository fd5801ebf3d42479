//! Each ecosystem as a committed tree: the setup steps and jobs `init` proposes for it, as the
//! `discern.toml` text it writes (snapshotted), which the config reader accepts.

use std::os::unix::fs::PermissionsExt;

use discern_tests::TestRepo;

use super::proposed;
use crate::config::Config;
use crate::snapshot::Snapshot;

/// The `[worktree]` and `[jobs]` text `init` writes for `files` committed, with `installed`
/// the tools on `PATH`; it parses, and its setup is what the config reads back.
fn written(files: &[(&str, &str)], installed: &[&str]) -> String {
    let repo = TestRepo::new();
    for (path, content) in files {
        repo.write(path, content);
        if path.ends_with("mvnw") || path.ends_with("gradlew") {
            let full = repo.path().join(path);
            std::fs::set_permissions(&full, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
    repo.commit("a project");
    let snapshot = Snapshot::open(repo.path(), "HEAD").expect("HEAD opens");
    let plan = proposed(&snapshot, &|tool| installed.contains(&tool));
    let text = plan.render();
    let config = Config::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(config.worktree.setup, plan.setup, "{text}");
    text
}

const BUILD_AND_TEST: &str = r#"{"scripts": {"build": "tsc", "test": "vitest run"}}"#;

#[test]
fn bun_installs_frozen_and_runs_the_package_scripts() {
    let text = written(
        &[("package.json", BUILD_AND_TEST), ("bun.lock", "{}\n")],
        &[],
    );
    insta::assert_snapshot!(text);
}

#[test]
fn bun_without_a_test_script_runs_its_own_runner_over_test_files() {
    let text = written(
        &[
            ("package.json", r#"{"scripts": {}}"#),
            ("bun.lockb", "\0"),
            ("src/a.test.ts", "test('a', () => {});\n"),
        ],
        &["bun"],
    );
    assert!(text.contains("run = \"bun test\""), "{text}");
    assert!(
        !text.contains("bun_build"),
        "no build script, no build job: {text}"
    );
}

#[test]
fn bun_and_npm_lockfiles_choose_the_tool_installed_here() {
    let files = [
        ("package.json", BUILD_AND_TEST),
        ("bun.lock", "{}\n"),
        ("package-lock.json", "{}\n"),
    ];
    let without_bun = written(&files, &["npm"]);
    insta::assert_snapshot!(without_bun);
    let with_bun = written(&files, &["npm", "bun"]);
    assert!(
        with_bun.contains("setup = [\"bun install --frozen-lockfile\"]"),
        "{with_bun}"
    );
    // `packageManager` decides over both.
    let declared = written(
        &[
            (
                "package.json",
                r#"{"packageManager": "npm@10.2.0", "scripts": {"test": "node t.js"}}"#,
            ),
            ("bun.lock", "{}\n"),
            ("package-lock.json", "{}\n"),
        ],
        &["bun"],
    );
    assert!(declared.contains("setup = [\"npm ci\"]"), "{declared}");
    assert!(!declared.contains("side by side"), "{declared}");
}

#[test]
fn pnpm_and_both_yarns_install_without_touching_the_lockfile() {
    insta::assert_snapshot!(
        "pnpm",
        written(
            &[
                ("package.json", BUILD_AND_TEST),
                ("pnpm-lock.yaml", "lockfileVersion: '9.0'\n")
            ],
            &[]
        )
    );
    let classic = written(
        &[
            ("package.json", BUILD_AND_TEST),
            ("yarn.lock", "# yarn lockfile v1\n"),
        ],
        &[],
    );
    assert!(
        classic.contains("setup = [\"yarn install --frozen-lockfile\"]"),
        "{classic}"
    );
    assert!(classic.contains("run = \"yarn test\""), "{classic}");
    for berry in [
        vec![
            ("package.json", BUILD_AND_TEST),
            ("yarn.lock", "__metadata:\n  version: 8\n"),
        ],
        vec![
            ("package.json", BUILD_AND_TEST),
            ("yarn.lock", "x\n"),
            (".yarnrc.yml", "nodeLinker: node-modules\n"),
        ],
    ] {
        let text = written(&berry, &[]);
        assert!(
            text.contains("setup = [\"yarn install --immutable\"]"),
            "{text}"
        );
    }
}

#[test]
fn npm_uses_ci_with_a_lockfile_and_comments_out_a_missing_test_script() {
    let locked = written(
        &[
            (
                "package.json",
                r#"{"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}"#,
            ),
            ("package-lock.json", "{}\n"),
        ],
        &[],
    );
    insta::assert_snapshot!("npm", locked);
    let unlocked = written(&[("package.json", BUILD_AND_TEST)], &[]);
    assert!(unlocked.contains("setup = [\"npm install\"]"), "{unlocked}");
    assert!(unlocked.contains("has no lockfile for npm"), "{unlocked}");
}

#[test]
fn python_installs_by_its_lockfile_and_runs_pytest_in_that_environment() {
    let configured = "[tool.pytest.ini_options]\n";
    insta::assert_snapshot!(
        "uv",
        written(
            &[("pyproject.toml", configured), ("uv.lock", "version = 1\n")],
            &[]
        )
    );
    insta::assert_snapshot!(
        "poetry",
        written(
            &[
                ("pyproject.toml", configured),
                ("poetry.lock", "# poetry\n")
            ],
            &[]
        )
    );
    insta::assert_snapshot!(
        "pip",
        written(
            &[
                ("requirements.txt", "requests\n"),
                ("requirements-dev.txt", "pytest\n"),
                ("tests/test_a.py", "def test_a():\n    pass\n"),
                ("tests/conftest.py", ""),
            ],
            &[]
        )
    );
    // A package with tests but no requirements installs itself.
    let package = written(
        &[
            ("pyproject.toml", "[project]\nname = \"x\"\n"),
            ("tests/test_x.py", "def test_x():\n    pass\n"),
        ],
        &[],
    );
    assert!(package.contains("pip install -e ."), "{package}");
    // No tests: no job would use an environment, so none is made.
    let bare = written(&[("pyproject.toml", "[project]\nname = \"x\"\n")], &[]);
    assert_eq!(bare, "", "{bare}");
    // A pyproject.toml of tools' settings beside JavaScript is no Python project.
    let tools = written(
        &[
            ("package.json", BUILD_AND_TEST),
            ("pyproject.toml", "[tool.ruff]\nline-length = 100\n"),
        ],
        &[],
    );
    assert!(
        !tools.contains("python") && !tools.contains("venv"),
        "{tools}"
    );
}

#[test]
fn cargo_go_maven_and_gradle_build_and_test_without_a_setup() {
    insta::assert_snapshot!(
        "compiled",
        written(
            &[
                ("Cargo.toml", "[package]\nname = \"x\"\n"),
                ("go.mod", "module x\n"),
                ("pom.xml", "<project/>\n"),
                ("mvnw", "#!/bin/sh\n"),
                ("build.gradle.kts", "\n"),
                ("gradlew", "#!/bin/sh\n"),
            ],
            &[]
        )
    );
    let unwrapped = written(&[("pom.xml", "<project/>\n"), ("build.gradle", "\n")], &[]);
    assert!(
        unwrapped.contains("run = \"mvn -B -q verify\""),
        "{unwrapped}"
    );
    assert!(unwrapped.contains("# run = \"gradle test\""), "{unwrapped}");
}

#[test]
fn a_frontend_and_a_service_in_folders_get_each_their_own_named_jobs() {
    let text = written(
        &[
            ("web/package.json", BUILD_AND_TEST),
            ("web/bun.lock", "{}\n"),
            ("service/go.mod", "module x\n"),
            ("service/main.go", "package main\n"),
            ("examples/demo/package.json", "{}\n"),
            ("examples/package.json", "{}\n"),
            ("docs/README.md", "# docs\n"),
        ],
        &[],
    );
    insta::assert_snapshot!(text);
}

#[test]
fn a_folder_of_a_family_the_root_has_is_part_of_the_root_project() {
    let text = written(
        &[
            ("Cargo.toml", "[workspace]\nmembers = [\"cli\"]\n"),
            ("cli/Cargo.toml", "[package]\nname = \"cli\"\n"),
            ("package.json", BUILD_AND_TEST),
            ("pnpm-lock.yaml", "lockfileVersion: '9.0'\n"),
            ("app/package.json", "{}\n"),
        ],
        &[],
    );
    assert!(!text.contains("cli_cargo"), "{text}");
    assert!(!text.contains("app_"), "{text}");
    assert!(
        text.contains("setup = [\"pnpm install --frozen-lockfile\"]"),
        "{text}"
    );
}
