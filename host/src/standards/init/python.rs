//! Python projects: uv (`uv.lock`), poetry (`poetry.lock` or `[tool.poetry]`), or pip into a
//! virtual environment (`requirements.txt`, a `pyproject.toml` or `setup.py`), installed as the
//! worktree's setup, and pytest run through the same environment where the project configures
//! it or has tests it would collect.

use super::ecosystem::{Files, Folder};
use super::jobs::{Job, Plan, job, unsure};

/// How a project's environment is made and its commands run in it.
struct Environment {
    install: String,
    /// The prefix that runs a module's command in the environment (`uv run `).
    run: &'static str,
}

/// Whether `folder` holds a Python project: a lockfile, requirements, `setup.py`, or a
/// `pyproject.toml` that defines a package (one holding only tools' settings — ruff, black — in
/// another language's repository is no project).
pub(super) fn present(files: &Files, folder: Folder) -> bool {
    ["uv.lock", "poetry.lock", "requirements.txt", "setup.py"]
        .iter()
        .any(|f| files.has(&folder.path(f)))
        || files.text(&folder.path("pyproject.toml")).is_some_and(|t| {
            ["[project]", "[tool.poetry]", "[build-system]"]
                .iter()
                .any(|table| t.contains(table))
        })
}

fn environment(files: &Files, folder: Folder) -> Environment {
    let has = |f: &str| files.has(&folder.path(f));
    let pyproject = files
        .text(&folder.path("pyproject.toml"))
        .unwrap_or_default();
    if has("uv.lock") {
        return Environment {
            install: "uv sync --frozen".to_owned(),
            run: "uv run ",
        };
    }
    if has("poetry.lock") || pyproject.contains("[tool.poetry]") {
        return Environment {
            install: "poetry install --no-interaction".to_owned(),
            run: "poetry run ",
        };
    }
    let venv = "python3 -m venv .venv && .venv/bin/pip install";
    let install = match has("requirements.txt") {
        true => {
            let mut install = format!("{venv} -r requirements.txt");
            for extra in ["requirements-dev.txt", "requirements-test.txt"] {
                if has(extra) {
                    install.push_str(&format!(" -r {extra}"));
                }
            }
            install
        }
        false => format!("{venv} -e ."),
    };
    Environment {
        install,
        run: ".venv/bin/python -m ",
    }
}

/// The setup step and the test job of the Python project in `folder`; nothing where no job
/// would use the environment (a folder of documentation's requirements, say).
pub(super) fn add(plan: &mut Plan, files: &Files, folder: Folder) {
    let env = environment(files, folder);
    let test = job(
        &folder.name("pytest"),
        "test",
        &folder.command(&format!("{}pytest", env.run)),
    );
    let Some(test) = pytest(files, folder, test) else {
        return;
    };
    plan.setup.push(folder.command(&env.install));
    // poetry keeps its environments outside the project unless told otherwise.
    if env.run != "poetry run " {
        plan.creates.push(folder.path(".venv/"));
    }
    plan.jobs.push(test);
}

/// pytest at the root of a repository with no Python project there (no environment to make).
pub(super) fn bare_pytest(files: &Files) -> Option<Job> {
    pytest(
        files,
        Folder { prefix: "" },
        job("pytest", "test", "python -m pytest"),
    )
}

/// `test` where `folder` configures pytest, commented out where it only has tests pytest would
/// collect; `None` where it has neither.
fn pytest(files: &Files, folder: Folder, test: Job) -> Option<Job> {
    let configured = ["pytest.ini", "conftest.py", "tests/conftest.py", "tox.ini"]
        .iter()
        .any(|p| files.has(&folder.path(p)))
        || files
            .text(&folder.path("pyproject.toml"))
            .is_some_and(|t| t.contains("[tool.pytest"));
    let collected = files
        .paths()
        .filter(|p| p.starts_with(folder.prefix))
        .any(|p| {
            let name = p.rsplit('/').next().unwrap_or(p);
            name.ends_with(".py") && (name.starts_with("test_") || name.ends_with("_test.py"))
        });
    match (configured, collected) {
        (true, _) => Some(test),
        (false, true) => Some(unsure(
            test,
            "test files are there, but no pytest configuration says pytest runs them",
        )),
        (false, false) => None,
    }
}
