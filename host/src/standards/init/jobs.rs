//! The build and test jobs `init` proposes for the ecosystems it recognises at the top of the
//! repository: Cargo, npm / pnpm / yarn, pytest and Go. A job whose command is certain to
//! exist is written; one discern cannot be sure of (no test script, no pytest configuration)
//! is written commented out, for the owner to enable.

use crate::snapshot::Snapshot;

/// One proposed job: its name, stage and command, and whether it is written enabled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Job {
    pub name: String,
    pub stage: &'static str,
    pub run: String,
    pub enabled: bool,
    /// Why it is commented out, for the comment above it.
    pub why: Option<&'static str>,
}

fn job(name: &str, stage: &'static str, run: &str) -> Job {
    Job {
        name: name.to_owned(),
        stage,
        run: run.to_owned(),
        enabled: true,
        why: None,
    }
}

fn unsure(mut job: Job, why: &'static str) -> Job {
    job.enabled = false;
    job.why = Some(why);
    job
}

/// The jobs of every ecosystem found, in a stable order.
pub(super) fn proposed(snapshot: &Snapshot) -> Vec<Job> {
    let has = |path: &str| snapshot.entry(path).is_some();
    let mut jobs = Vec::new();
    if has("Cargo.toml") {
        jobs.push(job("cargo_build", "build", "cargo build --all-targets"));
        jobs.push(job("cargo_test", "test", "cargo test"));
    }
    if has("package.json") {
        jobs.extend(node(snapshot));
    }
    if has("go.mod") {
        jobs.push(job("go_build", "build", "go build ./..."));
        jobs.push(job("go_test", "test", "go test ./..."));
    }
    if let Some(pytest) = pytest(snapshot) {
        jobs.push(pytest);
    }
    jobs
}

/// npm, pnpm or yarn by the lockfile; `test` and `build` from the package's scripts.
fn node(snapshot: &Snapshot) -> Vec<Job> {
    let tool = if snapshot.entry("pnpm-lock.yaml").is_some() {
        "pnpm"
    } else if snapshot.entry("yarn.lock").is_some() {
        "yarn"
    } else {
        "npm"
    };
    let scripts = content(snapshot, "package.json")
        .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
        .map(|package| package["scripts"].clone())
        .unwrap_or_default();
    let script = |name: &str| scripts[name].as_str().map(str::to_owned);
    let mut jobs = Vec::new();
    if script("build").is_some() {
        jobs.push(job(
            &format!("{tool}_build"),
            "build",
            &format!("{tool} run build"),
        ));
    }
    let test = job(&format!("{tool}_test"), "test", &format!("{tool} test"));
    // npm's placeholder fails on purpose ("Error: no test specified").
    match script("test") {
        Some(t) if !t.contains("no test specified") => jobs.push(test),
        _ => jobs.push(unsure(test, "package.json has no test script yet")),
    }
    jobs
}

/// The committed content of `path`, if it is a readable file.
fn content(snapshot: &Snapshot, path: &str) -> Option<Vec<u8>> {
    snapshot.entry(path)?;
    let (_, bytes) = snapshot.reader().read(path).ok()?;
    Some(bytes.as_ref().clone())
}

/// pytest where the repository configures it or has test files it would collect.
fn pytest(snapshot: &Snapshot) -> Option<Job> {
    let configured = ["pytest.ini", "conftest.py", "tests/conftest.py", "tox.ini"]
        .iter()
        .any(|p| snapshot.entry(p).is_some())
        || content(snapshot, "pyproject.toml")
            .is_some_and(|b| String::from_utf8_lossy(&b).contains("[tool.pytest"));
    let collected = snapshot.entries().iter().any(|e| {
        let name = e.path.rsplit('/').next().unwrap_or(&e.path);
        name.ends_with(".py") && (name.starts_with("test_") || name.ends_with("_test.py"))
    });
    let test = job("pytest", "test", "python -m pytest");
    match (configured, collected) {
        (true, _) => Some(test),
        (false, true) => Some(unsure(
            test,
            "test files are there, but no pytest configuration says pytest runs them",
        )),
        (false, false) => None,
    }
}

/// The `[jobs]` tables for `jobs`, the unsure ones commented out.
pub(super) fn render(jobs: &[Job]) -> String {
    if jobs.is_empty() {
        return String::new();
    }
    let mut text = String::from(
        "\n# Jobs the gate runs before measuring (host commands, not sandboxed), proposed for the\n\
         # ecosystems found here. Each is part of the gate's definition: a change to one is a\n\
         # protected change.\n",
    );
    for job in jobs {
        let table = format!(
            "[jobs.{}]\nstage = \"{}\"\nrun = {:?}\n",
            job.name, job.stage, job.run
        );
        match job.why {
            None => text.push_str(&format!("\n{table}")),
            Some(why) => {
                text.push_str(&format!(
                    "\n# Commented out: {why}. Enable it when it runs here.\n"
                ));
                for line in table.lines() {
                    text.push_str(&format!("# {line}\n"));
                }
            }
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unsure_job_is_rendered_commented_out() {
        let jobs = [
            job("cargo_test", "test", "cargo test"),
            unsure(job("npm_test", "test", "npm test"), "no test script"),
        ];
        let text = render(&jobs);
        assert!(text.contains("\n[jobs.cargo_test]\nstage = \"test\"\nrun = \"cargo test\"\n"));
        assert!(text.contains("# [jobs.npm_test]\n# stage = \"test\"\n# run = \"npm test\"\n"));
        assert!(crate::config::Config::parse(&text).is_ok(), "{text}");
    }
}
