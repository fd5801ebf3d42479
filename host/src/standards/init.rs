//! `discern init`: find the built-in Standards that fit this repository, measure them on the
//! committed HEAD, and write a commented `discern.toml` with each limit at today's value.

mod candidates;
mod driver;
mod ecosystem;
mod jobs;
mod node;
mod owner;
mod paths;
mod protect;
mod python;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use gix::ObjectId;

use candidates::{Candidate, candidates, toml_list};

use crate::config::{Config, Direction};
use crate::result::{Action, ErrorSlug, Hint, HintId, Refusal, Refused, Reply, Report, Section};
use crate::runtime::Runtime;
use crate::snapshot::Snapshot;
use crate::workspace::Workspace;

pub(crate) const VERB: &str = "init";

/// `data` of `init`: the file written, the commit measured, and each Standard's limit.
#[derive(Debug, serde::Serialize)]
struct InitData<'a> {
    path: &'a std::path::Path,
    commit: &'a str,
    trunk: &'a str,
    standards: Vec<Written<'a>>,
}

#[derive(Debug, serde::Serialize)]
struct Written<'a> {
    name: &'a str,
    direction: Direction,
    limit: f64,
}

/// `discern init [--trunk NAME]`.
#[derive(Debug, Clone, Default, clap::Args, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct InitRequest {
    /// The branch work lands on (default: what `origin/HEAD` names, else `main` or `master`).
    #[arg(long, value_name = "NAME")]
    #[serde(default)]
    pub trunk: Option<String>,
    /// Install discern's merge driver for discern.toml in this clone instead (the
    /// `.gitattributes` line and `merge.discern.driver`); no config is written.
    #[arg(long)]
    #[serde(default)]
    pub merge_driver: bool,
    /// The owner's SSH public key (a `.pub` file): signed approval from the first commit —
    /// written as the allowed-signers file's line, with `[acceptance]` `approval = "signed"`.
    #[arg(long, value_name = "PATH")]
    #[serde(default)]
    pub owner_key: Option<std::path::PathBuf>,
    /// The repository a signed approval names (`github.com/acme/app`; default: `origin`'s);
    /// only with --owner-key.
    #[arg(long, value_name = "NAME", requires = "owner_key")]
    #[serde(default)]
    pub repository: Option<String>,
}

impl InitRequest {
    /// Refuse flags that do not combine, on both surfaces.
    pub(crate) fn validate(&self) -> Result<(), Refused> {
        let problem = match (self.merge_driver, &self.owner_key, &self.repository) {
            (true, Some(_), _) | (true, _, Some(_)) => Some(
                "--merge-driver installs the merge driver only; it writes no config, so --owner-key and --repository do not apply.",
            ),
            (false, None, Some(_)) => Some(
                "--repository names the repository a signed approval is bound to: it needs --owner-key.",
            ),
            _ => None,
        };
        match problem {
            Some(problem) => Err(Refused::new(
                ErrorSlug::InvalidArguments,
                problem,
                Hint::next_step(HintId::SeeHelp, "Pass the flags that go together")
                    .with_action(Action::new("init").arg("owner_key", "PATH")),
            )),
            None => Ok(()),
        }
    }
}

/// Why `init` wrote nothing.
#[derive(Debug, thiserror::Error)]
enum NotWritten {
    #[error("{} already exists; `discern init` never overwrites it.", .0.display())]
    Exists(std::path::PathBuf),
    #[error("This repository has no commit yet; `discern init` measures the committed tree.")]
    NoCommit,
    #[error(
        "The trunk cannot be told: `origin/HEAD` names no branch and neither `main` nor `master` exists."
    )]
    NoTrunk,
    #[error("cannot read the committed tree: {0}")]
    Snapshot(String),
    #[error("init drafted an invalid config: {0}")]
    Draft(String),
    #[error("{0}")]
    Owner(#[from] owner::NoOwner),
    #[error("cannot write {}: {source}", .path.display())]
    Write {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
}

impl Refusal for NotWritten {
    fn slug(&self) -> ErrorSlug {
        self.explained().0
    }

    fn hint(&self) -> Hint {
        self.explained().1
    }
}

impl NotWritten {
    /// Its slug and the way past it.
    fn explained(&self) -> (ErrorSlug, Hint) {
        match self {
            NotWritten::Exists(_) => (
                ErrorSlug::AlreadyExists,
                Hint::next_step(
                    HintId::InitExists,
                    "Edit discern.toml by hand, or move it away and write a new one",
                )
                .with_action(Action::new("init")),
            ),
            NotWritten::NoCommit => (
                ErrorSlug::NothingCommitted,
                Hint::next_step(
                    HintId::CommitFirst,
                    "Commit your files, then write the starter config",
                )
                .with_action(Action::new("init")),
            ),
            NotWritten::NoTrunk => (
                ErrorSlug::TrunkUnreadable,
                Hint::next_step(HintId::SeeHelp, "Name the branch work lands on")
                    .with_action(Action::new("init").arg("trunk", "NAME")),
            ),
            NotWritten::Write { .. } => (
                ErrorSlug::PreconditionFailed,
                Hint::next_step(
                    HintId::InitExists,
                    "Check the file and its directory, then write it again",
                )
                .with_action(Action::new("init")),
            ),
            NotWritten::Owner(owner::NoOwner::NoRepository(_)) => (
                ErrorSlug::InvalidArguments,
                Hint::next_step(HintId::SeeHelp, "Name the repository a signed approval is bound to")
                    .with_action(
                        Action::new("init")
                            .arg("owner_key", "PATH")
                            .arg("repository", "HOST/OWNER/NAME"),
                    ),
            ),
            NotWritten::Owner(_) => (
                ErrorSlug::InvalidArguments,
                Hint::next_step(
                    HintId::SeeHelp,
                    "Pass the public key you sign approvals with (`ssh-keygen -t ed25519` makes one)",
                )
                .with_action(Action::new("init").arg("owner_key", "~/.ssh/id_ed25519.pub")),
            ),
            NotWritten::Snapshot(_) | NotWritten::Draft(_) => (
                ErrorSlug::Internal,
                Hint::next_step(HintId::ReportBug, "Report this as a bug in discern."),
            ),
        }
    }
}

struct Language {
    key: &'static str,
    name: &'static str,
    globs: &'static [&'static str],
    /// A regex for lint suppressions in this language, and what it catches.
    suppressions: Option<(&'static str, &'static str)>,
}

const LANGUAGES: &[Language] = &[
    Language {
        key: "rust",
        name: "Rust",
        globs: &["**/*.rs"],
        suppressions: Some((
            r"#!?\[allow\(",
            "each `#[allow(` or `#![allow(` attribute (one per attribute, however many lints it names)",
        )),
    },
    Language {
        key: "typescript",
        name: "TypeScript/JavaScript",
        globs: &[
            "**/*.ts", "**/*.tsx", "**/*.mts", "**/*.cts", "**/*.js", "**/*.jsx", "**/*.mjs",
            "**/*.cjs",
        ],
        suppressions: Some((
            r"eslint-disable|@ts-ignore|@ts-expect-error",
            "each `eslint-disable` (also `-line` and `-next-line`), `@ts-ignore` and `@ts-expect-error`",
        )),
    },
    Language {
        key: "python",
        name: "Python",
        globs: &["**/*.py"],
        suppressions: Some((
            r"#\s*(type:\s*ignore|noqa)",
            "each `# type: ignore` and `# noqa` comment (with or without codes)",
        )),
    },
    Language {
        key: "go",
        name: "Go",
        globs: &["**/*.go"],
        suppressions: Some((
            r"//\s*nolint",
            "each `//nolint` comment (with or without linters)",
        )),
    },
    Language {
        key: "java",
        name: "Java/Kotlin",
        globs: &["**/*.java", "**/*.kt"],
        suppressions: Some((
            r"@SuppressWarnings",
            "each `@SuppressWarnings` annotation (one per annotation, however many warnings)",
        )),
    },
    Language {
        key: "c",
        name: "C/C++",
        globs: &["**/*.c", "**/*.h", "**/*.cc", "**/*.cpp", "**/*.hpp"],
        suppressions: None,
    },
    Language {
        key: "ruby",
        name: "Ruby",
        globs: &["**/*.rb"],
        suppressions: Some((
            r"rubocop:disable",
            "each `rubocop:disable` comment (one per comment, however many cops)",
        )),
    },
];

pub(crate) fn init(
    ws: &Workspace,
    runtime: &Runtime,
    request: &InitRequest,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Reply, Refused> {
    request.validate()?;
    if request.merge_driver {
        return driver::install_driver(ws);
    }
    Ok(write(ws, runtime, request, progress)?)
}

fn write(
    ws: &Workspace,
    runtime: &Runtime,
    request: &InitRequest,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Reply, NotWritten> {
    let path = ws.root().join(crate::config::FILE);
    if path.exists() {
        return Err(NotWritten::Exists(path));
    }
    let (head, snapshot) = committed(ws)?;
    let owner = match &request.owner_key {
        Some(key) => Some(owner::owner(ws, key, request.repository.as_deref())?),
        None => None,
    };
    let signers_path = ws.root().join(owner::SIGNERS);
    if owner.is_some() && signers_path.exists() {
        return Err(NotWritten::Exists(signers_path));
    }
    let trunk = match &request.trunk {
        Some(trunk) => trunk.clone(),
        None => ws.repo.default_trunk().ok_or(NotWritten::NoTrunk)?,
    };
    let candidates = candidates(&snapshot);
    let plan = ecosystem::proposed(&snapshot, &on_path);
    // The CI definitions, and the files the setup steps and enabled jobs name.
    let protected = protect::protected_paths(&snapshot, &plan.commands());
    let draft = render(&trunk, &candidates, &|_| 0.0, head.to_string());
    let values = todays_limits(ws, runtime, &snapshot, &draft, progress)?;
    let kept: Vec<Candidate> = candidates
        .into_iter()
        .filter(|c| values.contains_key(&c.name))
        .collect();
    let mut text = render(
        &trunk,
        &kept,
        &|name| values.get(name).copied().unwrap_or(0.0),
        head.to_string(),
    );
    text.push_str(&plan.render());
    text.push_str(&acceptance(&protected, owner.as_ref()));
    Config::parse(&text).map_err(|e| NotWritten::Draft(e.to_string()))?;
    if let Some(owner) = &owner {
        write_signers(&signers_path, &owner.signers)?;
    }
    write_new(&path, &text).map_err(|source| NotWritten::Write {
        path: path.clone(),
        source,
    })?;
    let mut envelope = wrote(&path, &head.to_string(), &trunk, &kept, &values);
    let unignored: Vec<&str> = plan
        .creates
        .iter()
        .filter(|folder| {
            ws.repo
                .git(&["check-ignore", "-q", "--no-index", folder])
                .is_err()
        })
        .map(String::as_str)
        .collect();
    if !unignored.is_empty() {
        envelope = envelope.with_hint(Hint::next_step(
            HintId::InitCommit,
            format!(
                "Ignore what the setup installs ({}: add it to .gitignore and commit that with discern.toml): a worktree holding files git does not ignore is not clean, and the gate proves only clean commits",
                unignored.join(", ")
            ),
        ));
    }
    // `discern agents` is offered once the config exists: the agents' clients, wired.
    let agents = Hint::new(
        HintId::WireAgents,
        "Then wire the agent clients to discern's MCP server and guidance",
    )
    .with_action(Action::new("agents"));
    Ok(match &owner {
        Some(owner) => envelope.with_hint(Hint::new(
            HintId::InitSignedApproval,
            format!(
                "Signed approval from the first commit: commit {} with discern.toml; only a signature by {}'s key (`discern approve`) approves a loosened limit or a change to the gate of {}.",
                owner::SIGNERS,
                owner.principal,
                owner.repository
            ),
        )),
        None => envelope.with_hint(Hint::new(HintId::InitSignedApproval, owner::LATER)),
    }
    .with_hint(agents))
}

/// Whether `tool` is an executable file on this process's `PATH` (where two lockfiles disagree,
/// the tool the owner has wins).
fn on_path(tool: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            std::fs::metadata(dir.join(tool))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

/// The committed HEAD and its snapshot: what `init` measures.
fn committed(ws: &Workspace) -> Result<(ObjectId, Snapshot), NotWritten> {
    let Ok(Some(head)) = ws.repo.head() else {
        return Err(NotWritten::NoCommit);
    };
    let snapshot = ws
        .repo
        .snapshot(head)
        .map_err(|e| NotWritten::Snapshot(e.to_string()))?;
    Ok((head, snapshot))
}

/// Measure every Standard of `draft` on `snapshot`: name → the limit a pin would set today
/// (its exact value, written in the shortest form that reads back the same, so the first
/// measurement holds it: a rounded limit would report a phantom gain). A Standard that cannot
/// be read is left out.
fn todays_limits(
    ws: &Workspace,
    runtime: &Runtime,
    snapshot: &Snapshot,
    draft: &str,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<BTreeMap<String, f64>, NotWritten> {
    let config = Config::parse(draft).map_err(|e| NotWritten::Draft(e.to_string()))?;
    let selected: Vec<_> = config.standards.iter().collect();
    Ok(crate::measure::at::readings(
        ws, runtime, &config, &selected, snapshot, None, progress,
    ))
}

/// The allowed-signers file, in its folder, never over an existing one.
fn write_signers(path: &Path, text: &str) -> Result<(), NotWritten> {
    let failed = |source| NotWritten::Write {
        path: path.to_owned(),
        source,
    };
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder).map_err(failed)?;
    }
    write_new(path, text).map_err(failed)
}

/// Create `path` with `text`, never over an existing file.
fn write_new(path: &Path, text: &str) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()
}

/// The reply of a written `discern.toml`.
fn wrote(
    path: &Path,
    head: &str,
    trunk: &str,
    kept: &[Candidate],
    values: &BTreeMap<String, f64>,
) -> Reply {
    // The limits as written: today's value at the precision limits are written in.
    let written = |c: &Candidate| crate::measure::pin_target(c.direction, values[&c.name], 0.0);
    let lines: Vec<String> = kept
        .iter()
        .map(|c| format!("{} = {} ({})", c.name, written(c), c.comment))
        .collect();
    Reply::new(InitData {
            path,
            commit: head,
            trunk,
            standards: kept
                .iter()
                .map(|c| Written {
                    name: &c.name,
                    direction: c.direction,
                    limit: written(c),
                })
                .collect(),
        },
        Report {
            state: format!("Wrote discern.toml with {} Standards, each limit at today's value on {}; the trunk is {trunk}.", kept.len(), crate::git::short(head)),
            sections: vec![Section { table: None, title: "Standards".to_owned(), lines }],
        },
    )
    .with_hint(Hint::next_step(
        HintId::InitCommit,
        "Review discern.toml, commit it (`git add discern.toml && git commit -m \"Add discern Standards\"`), then measure",
    ).with_action(Action::new("standards")))
}

fn render(
    trunk: &str,
    candidates: &[Candidate],
    limit: &dyn Fn(&str) -> f64,
    commit: String,
) -> String {
    let mut text = format!(
        "# discern.toml: this repository's Standards, written by `discern init` on {}.\n\
         # Each limit is the value measured on that commit. A Standard with direction = \"down\"\n\
         # holds a ceiling that may only fall; \"up\" holds a floor that may only rise. Tighten\n\
         # limits with `discern standards --pin`; never loosen one on a branch.\n\n\
         [repository]\ntrunk = {trunk:?}\n",
        crate::git::short(&commit)
    );
    for candidate in candidates {
        text.push_str(&format!(
            "\n# {}\n[standards.{}]\ndirection = \"{}\"\nlimit = {}\n{}",
            candidate.comment,
            candidate.name,
            candidate.direction.as_str(),
            toml_number(crate::measure::pin_target(
                candidate.direction,
                limit(&candidate.name),
                0.0
            )),
            candidate.body
        ));
    }
    text
}

/// The `[acceptance]` table: signed approval by the owner's key (with `--owner-key`) and the
/// files protected besides `discern.toml` (nothing when there is neither).
fn acceptance(paths: &[String], owner: Option<&owner::Owner>) -> String {
    if paths.is_empty() && owner.is_none() {
        return String::new();
    }
    let mut text = String::from("\n[acceptance]\n");
    if let Some(owner) = owner {
        text.push_str(&owner::acceptance_keys(owner));
    }
    if !paths.is_empty() {
        text.push_str(&format!(
            "# Files that define the gate besides this one (the CI that runs discern, and what a job\n\
             # runs: the manifest that defines its command, settings that can replace it, the folders\n\
             # of its scripts and the helpers they name): a change to any is a protected change, landed\n\
             # only with the owner's approval. Fit the list before committing it: later, changing it\n\
             # is a protected change too.\n\
             protected = {}\n",
            toml_list(paths)
        ));
    }
    text
}

fn toml_number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        format!("{value}")
    }
}
