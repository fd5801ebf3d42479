//! `discern doctor`: prove the gate runs in a fresh worktree before the owner commits anything.
//! In a throwaway worktree of HEAD (with the work tree's `discern.toml`, committed or not) it
//! provisions as `start` does (env files, port, setup, ensure), then runs the gate's checks —
//! fix → build → check ∥ test, every Standard measured on the work tree — records nothing (no
//! Proof, no evidence), reports each step with its result and time, and removes the worktree.
//! A throwaway a kill left behind (`<repo>.worktrees/.doctor-<pid>`, its process gone) is removed
//! by the next run. The checks of this checkout ([`checkup`]) come first; `--quick` runs them
//! alone.

use std::path::Path;
use std::time::Instant;

use super::check_line::{Check, Status};
use super::checkup;
use super::provision::reply::provision;
use super::steps::{self, Outcome, Step};
use crate::agents::guidance::Tool;
use crate::config::{Config, Stage};
use crate::git::Repo;
use crate::git::worktree::{self, Removal};
use crate::measure::{self, EvidenceUse, Measurement};
use crate::result::{Action, ErrorSlug, Hint, HintId, Refused, Reply, Report, Section};
use crate::runtime::Runtime;
use crate::workspace::Workspace;

pub(crate) const VERB: &str = "doctor";
const PREFIX: &str = ".doctor-";

/// `discern doctor [--quick]`: it checks the repository it runs in.
#[derive(Debug, Clone, Default, clap::Args, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DoctorRequest {
    /// Only the checks (binary, git, config, clients, caches, worktrees): no rehearsal of the
    /// gate in a throwaway worktree.
    #[arg(long)]
    #[serde(default)]
    pub quick: bool,
}

/// `data` of a rehearsed gate, with the checks.
#[derive(Debug, serde::Serialize)]
struct DoctorData<'a> {
    passed: bool,
    duration_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    failed_step: Option<String>,
    checks: &'a [Check],
}

/// `data` of a doctor whose gate was not rehearsed (`--quick`, or refused before it ran).
#[derive(Debug, serde::Serialize)]
struct ChecksOnly<'a> {
    checks: &'a [Check],
}

fn refuse(slug: ErrorSlug, message: String, hint: &str) -> Refused {
    Refused::new(slug, message, Hint::next_step(HintId::FixConfig, hint))
}

/// The checks first (see [`checkup`]), then, unless `--quick`, the gate rehearsed in a
/// throwaway worktree; a failing check fails the call, each naming its fix.
pub(crate) fn doctor(
    ws: &Workspace,
    runtime: &Runtime,
    request: &DoctorRequest,
    tools: &[Tool],
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Reply, Refused> {
    let checks = checkup::checks(ws, tools);
    let result = match request.quick {
        true => Ok(Reply::new(
            ChecksOnly { checks: &checks },
            Report {
                state: "The checks ran; the gate was not rehearsed (--quick).".to_owned(),
                sections: Vec::new(),
            },
        )),
        false => rehearse(ws, runtime, &checks, progress),
    };
    with_checks(result, &checks)
}

/// `result` with the checks: their section first, `data.checks`, and a refusal naming the
/// failing ones where the rest passed.
fn with_checks(result: Result<Reply, Refused>, checks: &[Check]) -> Result<Reply, Refused> {
    let failing: Vec<&str> = checks
        .iter()
        .filter(|c| c.status == Status::Fail)
        .map(|c| c.check.as_str())
        .collect();
    let result = match (result, failing.is_empty()) {
        (Ok(envelope), false) => Err(Refused::new(
            ErrorSlug::PreconditionFailed,
            format!(
                "{} check(s) fail: {}; each line names its fix.",
                failing.len(),
                failing.join(", ")
            ),
            Hint::next_step(HintId::FixConfig, "Apply each fix, then check again")
                .with_action(Action::new(VERB)),
        )
        .carrying(envelope)),
        (result, _) => result,
    };
    let section = Section {
        table: None,
        title: "Checks".to_owned(),
        lines: checks.iter().map(checkup::line).collect(),
    };
    match result {
        // The reply's data holds the checks already (`DoctorData`, `ChecksOnly`).
        Ok(mut envelope) => {
            envelope.report.sections.insert(0, section);
            Ok(envelope)
        }
        // A refusal before the gate was rehearsed carries the checks alone.
        Err(mut refused) => {
            refused.sections.insert(0, section);
            match refused.data.is_some() {
                true => Err(refused),
                false => Err(refused.with_data(ChecksOnly { checks })),
            }
        }
    }
}

/// The gate rehearsed in a throwaway worktree of HEAD.
fn rehearse(
    ws: &Workspace,
    runtime: &Runtime,
    checks: &[Check],
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Reply, Refused> {
    let repo = &ws.repo;
    // Read here, not by the preflight: the checks above report an invalid config themselves.
    let config = match Config::load(repo.root()) {
        Ok(Some(config)) => config,
        Ok(None) => {
            return Err(refuse(
                ErrorSlug::PreconditionFailed,
                format!("{} has no discern.toml to check.", repo.root().display()),
                "Write one with `discern init`, then run `discern doctor`",
            ));
        }
        Err(e) => return Err(crate::preflight::config_refusal(&e)),
    };
    let Some(main) = crate::identity::main_checkout(repo) else {
        return Err(refuse(
            ErrorSlug::WrongCheckout,
            "The main checkout of this repository cannot be found.".to_owned(),
            "Run it in a repository with a work tree",
        ));
    };
    let mut advisories = remove_leftovers(repo, &main);
    let started = Instant::now();
    let path = super::start::worktree_root(&main).join(format!("{PREFIX}{}", std::process::id()));
    if let Err(e) = throwaway(repo, &path) {
        return Err(refuse(
            ErrorSlug::PreconditionFailed,
            format!(
                "Cannot make a throwaway worktree at {}: {e}.",
                path.display()
            ),
            "Commit something first (the check runs on HEAD), then run it again",
        ));
    }
    let mut checked = check(&main, &path, ws, runtime, &config, progress);
    checked.keep_logs(&repo.admin_path(VERB));
    let removed = worktree::remove(repo, &path, Removal::Discard);
    let _ = repo.git(&["worktree", "prune"]);
    if let Err(e) = removed {
        advisories.push(format!(
            "The throwaway worktree {} could not be removed ({e}); remove it with `git worktree remove --force {}`.",
            path.display(),
            path.display()
        ));
    }
    let uncommitted = repo
        .git(&["status", "--porcelain", "--", crate::config::FILE])
        .map_or(true, |s| !s.is_empty());
    match reply(
        checked,
        started.elapsed().as_secs_f64(),
        uncommitted,
        checks,
    ) {
        Ok(mut envelope) => {
            envelope.advisories.extend(advisories);
            Ok(envelope)
        }
        Err(mut refused) => {
            refused.advisories.extend(advisories);
            Err(refused)
        }
    }
}

/// A detached worktree of HEAD at `path`, with the work tree's `discern.toml` (committed or not).
fn throwaway(repo: &Repo, path: &Path) -> Result<(), String> {
    let at = path.display().to_string();
    repo.git(&["worktree", "add", "--detach", &at, "HEAD"])
        .map_err(|e| e.to_string())?;
    let config = repo.root().join(crate::config::FILE);
    std::fs::copy(&config, path.join(crate::config::FILE))
        .map(|_| ())
        .map_err(|e| format!("cannot copy discern.toml into it: {e}"))
}

/// Throwaway worktrees an earlier, killed check left: removed; one line each.
fn remove_leftovers(repo: &Repo, main: &Path) -> Vec<String> {
    let root = super::start::worktree_root(main);
    let Ok(listed) = repo.worktrees() else {
        return Vec::new();
    };
    listed
        .iter()
        .filter(|w| w.path.parent() == Some(root.as_path()))
        .filter(|w| {
            // Another check's, while the process that made it lives, is left alone.
            let pid = w.path.file_name().and_then(|n| {
                let name = n.to_string_lossy();
                name.strip_prefix(PREFIX)
                    .and_then(|p| p.parse::<u32>().ok())
            });
            pid.is_some_and(|pid| !crate::commit::owned_lock::alive(pid))
        })
        .filter(|w| worktree::remove(repo, &w.path, Removal::DiscardLocked).is_ok())
        .map(|w| {
            format!(
                "A throwaway worktree an interrupted check left ({}) was removed.",
                w.path.display()
            )
        })
        .collect()
}

/// What the check did: every step, and the label of the one that failed.
struct Checked {
    steps: Vec<Step>,
    diagnostics: Vec<crate::result::Diagnostic>,
    failed: Option<String>,
    /// The throwaway's log folder, once it exists.
    logs: Option<std::path::PathBuf>,
}

impl Checked {
    /// Keep the steps' full output past the throwaway: its logs moved to `to`, and every path
    /// naming them rewritten.
    fn keep_logs(&mut self, to: &Path) {
        let Some(from) = self.logs.take().filter(|f| f.is_dir()) else {
            return;
        };
        let _ = std::fs::remove_dir_all(to);
        if std::fs::create_dir_all(to).is_err() {
            return;
        }
        for entry in std::fs::read_dir(&from).into_iter().flatten().flatten() {
            let _ = std::fs::copy(entry.path(), to.join(entry.file_name()));
        }
        let (from, to) = (from.display().to_string(), to.display().to_string());
        for step in &mut self.steps {
            if let Some(path) = step.output_path.as_mut() {
                *path = path.replace(&from, &to);
            }
        }
        for diagnostic in &mut self.diagnostics {
            diagnostic.message = diagnostic.message.replace(&from, &to);
        }
    }
}

/// Provision the throwaway at `path`, then run the gate's jobs and Standards in it.
fn check(
    main: &Path,
    path: &Path,
    ws: &Workspace,
    runtime: &Runtime,
    config: &Config,
    progress: &(dyn Fn(&str) + Sync),
) -> Checked {
    let mut checked = Checked {
        steps: Vec::new(),
        diagnostics: Vec::new(),
        failed: None,
        logs: None,
    };
    let throwaway = match Workspace::open(path, ws.settings.clone()) {
        Ok(throwaway) => throwaway,
        Err(e) => {
            checked.failed = Some("worktree".to_owned());
            checked
                .steps
                .push(Step::check("worktree", false, e.to_string()));
            return checked;
        }
    };
    let repo = &throwaway.repo;
    checked.logs = Some(repo.admin_path("jobs"));
    if let Err(why) = identity(repo, main, config) {
        checked.failed = Some("port".to_owned());
        checked.steps.push(Step::check("port", false, why));
        return checked;
    }
    let provisioned = match crate::setup_record::lock(repo.git_dir()) {
        Ok(lock) => provision(main, repo, &config.worktree, &lock, progress),
        Err(e) => {
            checked.failed = Some("setup".to_owned());
            checked
                .steps
                .push(Step::check("setup", false, e.to_string()));
            return checked;
        }
    };
    checked.steps.extend(provisioned.ran.steps);
    if let Some(failure) = provisioned.ran.failure {
        checked.failed = Some(format!(
            "{}:{}",
            failure.kind.as_str(),
            failure.stopped.index
        ));
        checked.diagnostics.push(failure.diagnostic);
        return checked;
    }
    for (stage, parallel) in [
        (&[Stage::Fix][..], false),
        (&[Stage::Build][..], false),
        (&[Stage::Check, Stage::Test][..], true),
    ] {
        let (steps, failures) = steps::run(
            &steps::jobs_of(Some(config), stage),
            repo,
            parallel,
            progress,
        );
        checked.failed = steps
            .iter()
            .find(|s| s.outcome == Outcome::Failed)
            .map(|s| s.label.clone());
        checked.steps.extend(steps);
        checked.diagnostics.extend(failures);
        if checked.failed.is_some() {
            return checked;
        }
    }
    standards(&throwaway, runtime, config, progress, &mut checked);
    checked
}

/// The throwaway's identity, as an effort's: a name and a port of the band (task metadata).
fn identity(repo: &Repo, main: &Path, config: &Config) -> Result<(), String> {
    let git_dir = repo.git_dir();
    let common = Repo::discover(main)
        .map_err(|e| e.to_string())?
        .common_dir();
    let port = super::provision::choose_port(&common, config.worktree.ports, git_dir)?;
    let head = repo
        .head()
        .map_err(|e| e.to_string())?
        .ok_or("the throwaway worktree has no HEAD")?
        .to_string();
    let metadata = crate::task::TaskMetadata {
        version: crate::task::VERSION,
        id: repo
            .root()
            .file_name()
            .map_or_else(|| VERB.to_owned(), |n| n.to_string_lossy().into_owned()),
        title: Some("discern doctor".to_owned()),
        brief: None,
        created_from: crate::task::CreatedFrom {
            reference: "HEAD".to_owned(),
            commit: head,
        },
        port,
    };
    crate::task::save(git_dir, &metadata).map_err(|e| e.to_string())
}

/// Every Standard measured on the throwaway's work tree (nothing recorded), as one step.
fn standards(
    ws: &Workspace,
    runtime: &Runtime,
    config: &Config,
    progress: &(dyn Fn(&str) + Sync),
    checked: &mut Checked,
) {
    if config.standards.is_empty() {
        return;
    }
    let started = Instant::now();
    let selected: Vec<_> = config.standards.iter().collect();
    let ctx = measure::Context {
        ws,
        runtime,
        config,
        selected: &selected,
        claims: &[],
        progress,
    };
    let options = measure::Options {
        worktree: true,
        evidence: EvidenceUse::Fresh,
        ..measure::Options::default()
    };
    let (ok, note) = match measure::measure(&ctx, &options) {
        Ok(measured) => {
            let failing: Vec<&str> = measured
                .standards
                .iter()
                .filter(|s| {
                    s.measurement == Measurement::Failed || s.verdict.is_some_and(|v| !v.passes())
                })
                .map(|s| s.name.as_str())
                .collect();
            checked.diagnostics.extend(measured.diagnostics);
            match failing.is_empty() {
                true => (
                    true,
                    format!("{} Standard(s) pass", measured.standards.len()),
                ),
                false => (false, format!("failing: {}", failing.join(", "))),
            }
        }
        Err(e) => (false, e.to_string()),
    };
    let mut step = Step::check("standards", ok, note);
    step.duration_s = Some((started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0);
    if !ok {
        checked.failed = Some("standards".to_owned());
    }
    checked.steps.push(step);
}

fn reply(
    checked: Checked,
    duration_s: f64,
    uncommitted: bool,
    checks: &[Check],
) -> Result<Reply, Refused> {
    let data = DoctorData {
        passed: checked.failed.is_none(),
        duration_s: (duration_s * 10.0).round() / 10.0,
        failed_step: checked.failed.clone(),
        checks,
    };
    let section = Section {
        table: None,
        title: "Steps".to_owned(),
        lines: checked.steps.iter().map(line).collect(),
    };
    if let Some(step) = &checked.failed {
        let mut failed = Refused::new(
            ErrorSlug::GateFailed,
            format!("The gate fails in a fresh worktree at {step}; nothing was recorded."),
            Hint::next_step(
                HintId::FixConfig,
                "Fix what the failing step reports (its command is in discern.toml), then run `discern doctor` again",
            )
            .with_action(Action::new(VERB)),
        )
        .with_data(data)
        .with_steps(&checked.steps);
        failed.sections.push(section);
        failed.diagnostics = checked.diagnostics;
        return Err(failed);
    }
    let mut ok = Reply::new(data,
        Report {
            state: format!(
                "The gate passes in a fresh worktree: {} step(s) in {duration_s:.1} s; nothing was recorded.",
                checked.steps.len()
            ),
            sections: vec![section],
        },
    )
    .with_steps(&checked.steps);
    let next = match uncommitted {
        true => "Commit discern.toml, then start an effort",
        false => "Start an effort",
    };
    ok.hints
        .push(Hint::next_step(HintId::InitCommit, next).with_action(Action::new("start")));
    ok.diagnostics = checked.diagnostics;
    Ok(ok)
}

fn line(step: &Step) -> String {
    let outcome = match step.outcome {
        Outcome::Ok => "ok    ",
        Outcome::Failed => "FAILED",
    };
    let time = step
        .duration_s
        .map_or_else(String::new, |s| format!(" ({s:.1} s)"));
    format!(
        "{outcome} {}{time}: {}",
        step.label,
        step.note.clone().unwrap_or_default()
    )
}
