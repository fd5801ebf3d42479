//! `discern start`: a new effort — a linked worktree on a new branch forked from the trunk.

use std::path::{Path, PathBuf};

use super::Moved;
use super::provision;
use super::provision::reply as setup;
use crate::commit;
use crate::config::{Config, DEFAULT_BRANCH_PREFIX, WorktreeSettings};
use crate::git::Repo;
use crate::preflight::{self, Cleanliness};
use crate::result::{Action, ErrorSlug, Hint, HintId, Refused, Reply, Report, Section, WithNext};
use crate::setup_record::{self, SetupLock};
use crate::task::{self, CreatedFrom, TaskMetadata};
use crate::workspace::Workspace;

pub(crate) const VERB: &str = "start";

#[derive(Debug, Clone, Default, clap::Args, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct StartRequest {
    /// The effort's name (its id): default a random codename.
    #[arg(long)]
    pub name: Option<String>,
    /// A one-line title (≤ 120 characters).
    #[arg(long)]
    pub title: Option<String>,
    /// A one-line brief (≤ 500 characters).
    #[arg(long)]
    pub brief: Option<String>,
    /// Fork from this ref instead of the trunk.
    #[arg(long)]
    pub from: Option<String>,
    /// Preview only: what would be created; nothing is written.
    #[arg(long)]
    #[serde(default)]
    pub dry_run: bool,
}

fn refuse(slug: ErrorSlug, message: impl Into<String>, hint: &str) -> Refused {
    Refused::new(slug, message, Hint::next_step(HintId::StartFromMain, hint))
}

const ADJECTIVES: &[&str] = &[
    "amber", "brisk", "calm", "deft", "eager", "fair", "gentle", "hardy", "keen", "lucid", "merry",
    "noble", "proud", "quiet", "rapid", "steady", "tidy", "vivid", "witty", "zesty",
];
const NOUNS: &[&str] = &[
    "badger", "comet", "delta", "ember", "falcon", "garnet", "harbor", "island", "juniper",
    "kestrel", "lantern", "meadow", "nebula", "orchid", "pebble", "quarry", "river", "summit",
    "tundra", "willow",
];

/// A random `<adjective>-<noun>-<4 hex>` codename.
fn codename(attempt: u32) -> String {
    let seed = format!(
        "{:?}:{}:{attempt}",
        std::time::SystemTime::now(),
        std::process::id()
    );
    let digest = crate::digest::Digest::of(seed.as_bytes());
    let b = digest.as_bytes();
    format!(
        "{}-{}-{:02x}{:02x}",
        ADJECTIVES[usize::from(b[0]) % ADJECTIVES.len()],
        NOUNS[usize::from(b[1]) % NOUNS.len()],
        b[2],
        b[3]
    )
}

/// Why `name` cannot be an effort id, if it cannot.
pub(crate) fn name_problem(name: &str) -> Option<String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
        && !name.ends_with(".lock")
        && !name.contains("..");
    (!ok).then(|| format!("{name:?} is not a usable effort name: 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit"))
}

/// The folder efforts live in: the sibling `<repo>.worktrees/`.
pub(crate) fn worktree_root(main: &Path) -> PathBuf {
    let name = main
        .file_name()
        .map_or_else(|| "repo".into(), |n| n.to_string_lossy().into_owned());
    main.with_file_name(format!("{name}.worktrees"))
}

/// `start`, once the table's preflight has finished the landings a crash interrupted (from the
/// main checkout too, before forking; never on a dry run) and loaded this checkout's `config`
/// (which names the trunk and the branch prefix).
pub(crate) fn start(
    ws: &Workspace,
    config: Option<&Config>,
    request: &StartRequest,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Moved, Refused> {
    let plan = plan(ws, config, request)?;
    let data = StartData {
        id: &plan.id,
        branch: &plan.branch,
        path: &plan.path,
        from: From {
            reference: &plan.from_ref,
            commit: plan.from_commit.to_string(),
        },
        task: Task {
            title: request.title.as_deref(),
            brief: request.brief.as_deref(),
        },
    };
    if request.dry_run {
        let state = format!(
            "Dry run: would create {} on branch {} from {}.",
            plan.path.display(),
            plan.branch,
            plan.from_ref
        );
        let mut envelope = Reply::new(
            data,
            Report {
                state,
                sections: Vec::new(),
            },
        );
        envelope.dry_run = Some(true);
        return Ok(envelope.into());
    }
    let (lock, worktree) = create(&ws.repo, request, &plan, &ws.settings.faults)?;
    let provisioned = provisioned(ws, &plan, (&worktree, lock.as_ref()), progress);
    Ok(started(&ws.repo, &plan, data, provisioned))
}

/// What provisioning the new effort answered, and how its setup ended (`None` when the new
/// worktree could not be provisioned at all).
struct Provisioning {
    reply: Result<Reply, Refused>,
    setup: Option<setup::SetupData>,
}

/// The new effort provisioned as its own `[worktree]` says: nothing to do without the table;
/// the reply of a failed step otherwise.
fn provisioned(
    ws: &Workspace,
    plan: &Plan,
    (worktree, lock): (&WorktreeSettings, Option<&SetupLock>),
    progress: &(dyn Fn(&str) + Sync),
) -> Option<Provisioning> {
    let unprovisioned = |failure: &provision::Failure| Provisioning {
        reply: Err(setup::failed(VERB, &plan.path, failure)),
        setup: None,
    };
    if worktree.is_empty() {
        return None;
    }
    ws.settings.faults.point(setup_record::SETUP_BEGUN);
    let effort = match Repo::discover(&plan.path) {
        Ok(effort) => effort,
        Err(e) => {
            let failure = provision::env_failure(&format!("the new worktree cannot be read: {e}"));
            return Some(unprovisioned(&failure));
        }
    };
    // Without setup steps there is no record and no lock: env files and ensure only.
    let own_lock;
    let lock = match lock {
        Some(lock) => lock,
        None => match setup_record::lock(effort.git_dir()) {
            Ok(lock) => {
                own_lock = lock;
                &own_lock
            }
            Err(e) => {
                let failure = provision::env_failure(&e.to_string());
                return Some(unprovisioned(&failure));
            }
        },
    };
    let done = setup::provision(ws.repo.root(), &effort, worktree, lock, progress);
    Some(Provisioning {
        reply: setup::reply(VERB, &plan.path, worktree, &done),
        setup: Some(setup::SetupData::of(worktree, &done)),
    })
}

/// `data` of a started effort: the effort, and how its provisioning ended.
#[derive(Debug, serde::Serialize)]
struct Started<'a> {
    #[serde(flatten)]
    effort: StartData<'a>,
    #[serde(flatten)]
    setup: Option<setup::SetupData>,
}

/// `data` of a `start` result: the effort, where it forked from, its task.
#[derive(Debug, serde::Serialize)]
struct StartData<'a> {
    id: &'a str,
    branch: &'a str,
    path: &'a Path,
    from: From<'a>,
    task: Task<'a>,
}

#[derive(Debug, serde::Serialize)]
struct From<'a> {
    #[serde(rename = "ref")]
    reference: &'a str,
    commit: String,
}

#[derive(Debug, serde::Serialize)]
struct Task<'a> {
    title: Option<&'a str>,
    brief: Option<&'a str>,
}

/// The effort `start` would create.
struct Plan {
    id: String,
    branch: String,
    path: PathBuf,
    from_ref: String,
    from_commit: gix::ObjectId,
}

/// Where the new effort goes and what it forks from, refused when it cannot be created: not
/// the main checkout, a bad title or brief, an unknown `--from`, a taken or bad name.
fn plan(ws: &Workspace, config: Option<&Config>, request: &StartRequest) -> Result<Plan, Refused> {
    let repo = &ws.repo;
    let refused = |slug, message: String, hint: &str| refuse(slug, message, hint);
    if !repo.is_main_checkout() {
        return Err(refused(
            ErrorSlug::WrongCheckout,
            format!(
                "{} is an effort worktree; efforts start from the main checkout.",
                repo.root().display()
            ),
            "Start efforts in the main checkout, or keep working in this effort",
        )
        .with_next(Action::new("start")));
    }
    let trunk = ws.trunk(config);
    let prefix = config.map_or(DEFAULT_BRANCH_PREFIX.to_owned(), |c| {
        c.branch_prefix.clone()
    });
    for (what, text, max) in [
        ("title", &request.title, task::MAX_TITLE),
        ("brief", &request.brief, task::MAX_BRIEF),
    ] {
        if let Some(problem) = text.as_deref().and_then(|t| task::problem(what, t, max)) {
            return Err(refused(
                ErrorSlug::InvalidArguments,
                format!("Cannot start: {problem}."),
                "Give a one-line title (≤ 120 characters) and brief (≤ 500).",
            ));
        }
    }
    let from_ref = request.from.clone().unwrap_or_else(|| trunk.clone());
    let Some(from_commit) = resolve(repo, &from_ref) else {
        return Err(refused(
            ErrorSlug::PreconditionFailed,
            format!(
                "Cannot start from {from_ref:?}: it does not name a commit in this repository."
            ),
            "Pass --from with a branch, tag or commit, or create the trunk branch first.",
        ));
    };
    let root = worktree_root(repo.root());
    let id = effort_id(repo, &root, &prefix, request.name.as_deref())?;
    Ok(Plan {
        branch: format!("{prefix}{id}"),
        path: root.join(&id),
        id,
        from_ref,
        from_commit,
    })
}

/// The effort's id: the requested name when it is valid and free, else a free codename.
fn effort_id(
    repo: &Repo,
    root: &Path,
    prefix: &str,
    name: Option<&str>,
) -> Result<String, Refused> {
    let refused = |slug, message: String, hint: &str| refuse(slug, message, hint);
    let Some(name) = name else {
        return (0..16)
            .map(codename)
            .find(|id| !taken(repo, root, prefix, id))
            .ok_or_else(|| {
                refused(
                    ErrorSlug::Internal,
                    "Could not find a free effort name.".to_owned(),
                    "Pass --name.",
                )
            });
    };
    if let Some(problem) = name_problem(name) {
        return Err(refused(
            ErrorSlug::InvalidArguments,
            problem,
            "Choose another --name.",
        ));
    }
    if taken(repo, root, prefix, name) {
        return Err(refused(
            ErrorSlug::AlreadyExists,
            format!(
                "An effort named {name} already exists (branch {prefix}{name} or folder {}).",
                root.join(name).display()
            ),
            "Choose another --name, or continue in the existing effort.",
        ));
    }
    Ok(name.to_owned())
}

/// Create the branch, the worktree and the task metadata (with the effort's port), removing
/// only what this call created if a later step fails. The new worktree's own `discern.toml`
/// (the commit it forks from) says how it is provisioned; one that cannot be read refuses the
/// start. With setup steps configured, the setup lock is taken and the setup recorded
/// `running` inside the fork, so a kill from here on leaves an effort whose setup the next verb
/// finishes as interrupted; the lock and the settings are returned.
fn create(
    repo: &Repo,
    request: &StartRequest,
    plan: &Plan,
    faults: &commit::Faults,
) -> Result<(Option<SetupLock>, WorktreeSettings), Refused> {
    let Plan {
        id,
        branch,
        path,
        from_ref,
        from_commit,
    } = plan;
    let metadata = TaskMetadata {
        version: task::VERSION,
        id: id.clone(),
        title: request.title.clone(),
        brief: request.brief.clone(),
        created_from: CreatedFrom {
            reference: from_ref.clone(),
            commit: from_commit.to_string(),
        },
        port: None,
    };
    let held = std::cell::RefCell::new(None);
    let settings = std::cell::RefCell::new(WorktreeSettings::default());
    let record = |path: &Path| {
        let effort = Repo::discover(path).map_err(|e| e.to_string())?;
        let worktree = Config::load(path)
            .map_err(|e| format!("the effort's discern.toml cannot be read: {e}"))?
            .map(|c| c.worktree)
            .unwrap_or_default();
        let git_dir = effort.git_dir();
        let port = provision::choose_port(&repo.common_dir(), worktree.ports, git_dir)?;
        let metadata = TaskMetadata {
            port,
            ..metadata.clone()
        };
        task::save(git_dir, &metadata).map_err(|e| e.to_string())?;
        if !worktree.setup.is_empty() {
            let lock = setup_record::lock(git_dir).map_err(|e| e.to_string())?;
            let running = setup_record::SetupRecord {
                version: setup_record::VERSION,
                state: setup_record::SetupState::Running,
                steps: worktree.setup.len(),
                at: None,
            };
            setup_record::save(git_dir, &running).map_err(|e| e.to_string())?;
            *held.borrow_mut() = Some(lock);
        }
        *settings.borrow_mut() = worktree;
        Ok(())
    };
    let journal = commit::fork::ForkJournal::new(repo, id, branch, path, *from_commit);
    commit::fork::fork(repo, &journal, &record, faults).map_err(|e| {
        let hint = match e {
            commit::fork::ForkError::Branch { .. } => "Choose another --name.",
            commit::fork::ForkError::Worktree { .. } => "Check the folder and try again.",
            // The effort's own config, its port band or the repository's permissions.
            commit::fork::ForkError::Metadata(_) => "Fix what the message names, then start again.",
            _ => "Check the repository's permissions and try again.",
        };
        refuse(
            ErrorSlug::PreconditionFailed,
            format!(
                "{}. Nothing was left behind.",
                super::provision::reply::upper_first(&e.to_string())
            ),
            hint,
        )
    })?;
    Ok((held.into_inner(), settings.into_inner()))
}

fn lower_first(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_lowercase().chain(chars).collect())
        .unwrap_or_default()
}

/// The result of a started effort; the caller works in it from now on.
fn started(
    repo: &Repo,
    plan: &Plan,
    effort: StartData,
    provisioned: Option<Provisioning>,
) -> Moved {
    let Plan {
        id,
        branch,
        path,
        from_ref,
        from_commit,
    } = plan;
    let (provisioned, setup) = match provisioned {
        Some(Provisioning { reply, setup }) => (Some(reply), setup),
        None => (None, None),
    };
    let data = Started { effort, setup };
    let provisioned = match provisioned {
        Some(Err(failed)) => {
            return Moved {
                reply: Err(provision_failed(id, failed, &data)),
                root: Some(path.clone()),
            };
        }
        Some(Ok(provisioned)) => Some(provisioned),
        None => None,
    };
    let mut envelope = Reply::new(
        &data,
        Report {
            state: format!(
                "Started effort {id}: {} on branch {branch}, forked from {from_ref} at {}.",
                path.display(),
                crate::git::short(&from_commit.to_string())
            ),
            sections: vec![Section {
                table: None,
                title: "Effort".to_owned(),
                lines: vec![
                    format!("path: {}", path.display()),
                    format!("branch: {branch}"),
                ],
            }],
        },
    );
    envelope.hints.push(
        Hint::next_step(
            HintId::WorkInEffort,
            format!(
                "Work in {} (cd there); commit, then run the gate",
                path.display()
            ),
        )
        .with_action(Action::new("done")),
    );
    match preflight::dirty_paths(repo, Cleanliness::Full) {
        Ok(dirty) if dirty.is_empty() => {}
        Ok(dirty) => envelope.hints.push(Hint::new(HintId::MainCheckoutDirty, format!("The main checkout has uncommitted changes ({}); they stay there and are not in the new effort.", dirty.len()))),
        Err(e) => envelope.hints.push(Hint::new(HintId::MainCheckoutDirty, format!("Whether the main checkout has uncommitted changes cannot be told ({e}); whatever it has stays there and is not in the new effort."))),
    }
    if let Some(provisioned) = provisioned {
        with_provisioning(&mut envelope, provisioned);
    }
    Moved {
        reply: Ok(envelope),
        root: Some(path.clone()),
    }
}

/// `start`'s refusal when provisioning failed: the effort exists (its data says where), and the
/// step's refusal says what failed and how to run it again.
fn provision_failed(id: &str, failed: Refused, data: &Started) -> Refused {
    let mut failed = failed.with_data(data);
    failed.message = format!("Started effort {id}, but {}", lower_first(&failed.message));
    failed
}

/// The steps and advisories of a provisioning that passed, added to `start`'s result (its
/// data is in `Started`).
fn with_provisioning(envelope: &mut Reply, provisioned: Reply) {
    envelope.steps = provisioned.steps;
    envelope.report.sections.extend(provisioned.report.sections);
    envelope.advisories.extend(provisioned.advisories);
}

fn taken(repo: &Repo, root: &Path, prefix: &str, id: &str) -> bool {
    root.join(id).exists()
        || repo
            .branch_commit(&format!("{prefix}{id}"))
            .ok()
            .flatten()
            .is_some()
}

/// A branch, tag or commit (anything `rev-parse` understands) as a commit id.
pub(crate) fn resolve(repo: &Repo, rev: &str) -> Option<gix::ObjectId> {
    let local = repo.local();
    let id = local.rev_parse_single(rev).ok()?;
    let commit = id.object().ok()?.peel_to_commit().ok()?;
    Some(commit.id)
}
