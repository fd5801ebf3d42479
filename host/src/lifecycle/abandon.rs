//! `discern abandon [ID] [--force] [--dry-run]`: give an effort up — its worktree removed and
//! its branch deleted, in one journaled transaction (`commit::abandon`). Work that would be
//! lost is refused unless `--force` says to discard it: uncommitted changes, and commits on
//! no remote and not on the trunk. A CLI verb only: discarding an effort is the owner's
//! decision, and the MCP tool list is fixed by ADR 0405.

use std::path::PathBuf;

use gix::ObjectId;
use serde::Serialize;

use super::Moved;
use crate::commit::abandon::{self, AbandonJournal};
use crate::config::Config;
use crate::git::{Repo, short};
use crate::preflight::{self, Cleanliness};
use crate::result::spelled::spell;
use crate::result::{Action, ErrorSlug, Hint, HintId, Refused, Reply, Report};
use crate::workspace::Workspace;

pub(crate) const VERB: &str = "abandon";

#[derive(Debug, Clone, Default, clap::Args, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AbandonRequest {
    /// The effort to abandon: its id, branch or worktree path (default: the effort this
    /// checkout is).
    #[serde(default)]
    pub effort: Option<String>,
    /// The effort to abandon, named as `approve --effort` and `accept --effort` name it (the
    /// same as the positional EFFORT).
    #[arg(long = "effort", value_name = "EFFORT", conflicts_with = "effort")]
    #[serde(skip)]
    #[schemars(skip)]
    pub effort_flag: Option<String>,
    /// Discard what would be lost: uncommitted changes, and commits on no remote and not on
    /// the trunk.
    #[arg(long)]
    #[serde(default)]
    pub force: bool,
    /// Say what would be removed; remove nothing.
    #[arg(long)]
    #[serde(default)]
    pub dry_run: bool,
}

/// The effort as judged before anything is removed.
struct Effort {
    id: String,
    branch: String,
    head: ObjectId,
    path: PathBuf,
    main: Repo,
    /// Uncommitted changes (paths) and commits on no remote and not on the trunk.
    changes: Vec<String>,
    unpushed: usize,
}

/// `data` of `abandon`.
#[derive(Debug, Serialize)]
struct Abandoned<'a> {
    abandoned: &'a str,
    branch: &'a str,
    head: String,
    path: String,
    discarded_changes: &'a [String],
    discarded_commits: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    branch_deleted: Option<bool>,
}

fn refuse(slug: ErrorSlug, message: impl Into<String>, id: HintId, hint: &str) -> Refused {
    Refused::new(slug, message, Hint::next_step(id, hint))
}

pub(crate) fn abandon(ws: &Workspace, request: &AbandonRequest) -> Result<Moved, Refused> {
    let effort = judged(ws, request)?;
    nothing_lost(&effort, request.force)?;
    if request.dry_run {
        let mut e = result(&effort, None);
        e.dry_run = Some(true);
        e.report.state = format!(
            "Dry run: {}",
            e.report.state.replacen("Abandoned", "would abandon", 1)
        );
        return Ok(e.into());
    }
    let mut journal = AbandonJournal::new(
        &effort.main,
        &effort.id,
        &effort.branch,
        effort.path.clone(),
        effort.head,
    );
    journal.discard = request.force;
    match abandon::abandon(&effort.main, &journal, &ws.settings.faults) {
        Ok(done) => Ok(Moved {
            reply: Ok(result(&effort, Some(done.branch_deleted))),
            root: Some(effort.main.root().to_owned()),
        }),
        Err(e) => Err(refuse(
            ErrorSlug::PreconditionFailed,
            format!("Nothing was abandoned: {e}."),
            HintId::CheckRepository,
            "Fix what is named, then abandon again.",
        )),
    }
}

/// The step that names the effort to abandon, and where the efforts are listed.
fn name_one() -> String {
    format!(
        "Run `{}` (`{}` lists the efforts).",
        spell(&Action::new("abandon").arg("effort", "ID")),
        spell(&Action::new("status").flag("all"))
    )
}

/// The named effort (or this checkout's), its branch, HEAD and what abandoning would lose.
fn judged(ws: &Workspace, request: &AbandonRequest) -> Result<Effort, Refused> {
    let effort_ws = match request.effort.as_ref().or(request.effort_flag.as_ref()) {
        Some(id) => super::effort::workspace(ws, id)?,
        None if ws.repo.is_main_checkout() => {
            return Err(refuse(
                ErrorSlug::WrongCheckout,
                "This is the main checkout; name the effort to abandon.",
                HintId::AskOwner,
                &name_one(),
            ));
        }
        None => ws.clone(),
    };
    let repo = &effort_ws.repo;
    if repo.is_main_checkout() {
        return Err(refuse(
            ErrorSlug::WrongCheckout,
            "The main checkout is no effort; abandon removes an effort's worktree and branch.",
            HintId::AskOwner,
            &name_one(),
        ));
    }
    let unreadable = |what: &str| {
        refuse(
            ErrorSlug::CannotTell,
            format!("{what} cannot be read; nothing was abandoned."),
            HintId::CheckRepository,
            "Check the effort with `git status` there, then abandon again.",
        )
    };
    let (Some(branch), Some(head)) = (repo.branch().ok().flatten(), repo.head().ok().flatten())
    else {
        return Err(unreadable("The effort's branch or HEAD"));
    };
    let main = repo
        .worktrees()
        .ok()
        .and_then(|list| list.into_iter().find(|w| w.is_main))
        .and_then(|w| Repo::discover(&w.path).ok())
        .ok_or_else(|| unreadable("The main checkout"))?;
    let path = repo.root().to_owned();
    let id = path
        .file_name()
        .map_or_else(|| branch.clone(), |n| n.to_string_lossy().into_owned());
    let changes = preflight::dirty_paths(repo, Cleanliness::Full)
        .map_err(|e| unreadable(&format!("Whether {id} has uncommitted changes ({e})")))?;
    let config = Config::load(main.root()).map_err(|e| crate::preflight::config_refusal(&e))?;
    let trunk = ws.landing_trunk(config.as_ref());
    let unpushed = unpushed(&main, head, &trunk)
        .ok_or_else(|| unreadable(&format!("Which commits of {branch} are on no remote")))?;
    Ok(Effort {
        id,
        branch,
        head,
        path,
        main,
        changes,
        unpushed,
    })
}

/// Commits of `head` on no remote-tracking ref and not on the trunk; `None` when git cannot
/// say (never guessed as none).
fn unpushed(main: &Repo, head: ObjectId, trunk: &str) -> Option<usize> {
    let mut args = vec![
        "rev-list".to_owned(),
        "--count".to_owned(),
        head.to_string(),
        "--not".to_owned(),
        "--remotes".to_owned(),
    ];
    if let Ok(Some(trunk)) = main.resolve_ref(trunk) {
        args.push(trunk.commit.to_string());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    main.git(&args).ok()?.trim().parse().ok()
}

/// Refused when abandoning would lose work, unless forced.
fn nothing_lost(effort: &Effort, force: bool) -> Result<(), Refused> {
    if force || (effort.changes.is_empty() && effort.unpushed == 0) {
        return Ok(());
    }
    let mut lost = Vec::new();
    if !effort.changes.is_empty() {
        lost.push(format!(
            "{} uncommitted change(s) ({})",
            effort.changes.len(),
            effort
                .changes
                .iter()
                .take(5)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if effort.unpushed > 0 {
        lost.push(format!(
            "{} commit(s) on no remote and not on the trunk",
            effort.unpushed
        ));
    }
    Err(refuse(
        ErrorSlug::PreconditionFailed,
        format!(
            "Abandoning {} would lose {}; nothing was abandoned.",
            effort.id,
            lost.join(" and ")
        ),
        HintId::AskOwner,
        &format!(
            "Keep the work (`git push origin {}`, or commit it), or discard it with `{}`.",
            effort.branch,
            spell(
                &Action::new("abandon")
                    .arg("effort", effort.id.as_str())
                    .flag("force")
            )
        ),
    ))
}

fn result(effort: &Effort, branch_deleted: Option<bool>) -> Reply {
    let data = Abandoned {
        abandoned: &effort.id,
        branch: &effort.branch,
        head: effort.head.to_string(),
        path: effort.path.display().to_string(),
        discarded_changes: &effort.changes,
        discarded_commits: effort.unpushed,
        branch_deleted,
    };
    let kept = match branch_deleted {
        Some(false) => format!(
            " The branch {} moved meanwhile and was kept.",
            effort.branch
        ),
        _ => String::new(),
    };
    let mut e = Reply::new(
        &data,
        Report {
            state: format!(
                "Abandoned {}: its worktree {} and its branch {} (at {}).{kept}",
                effort.id,
                effort.path.display(),
                effort.branch,
                short(&effort.head.to_string())
            ),
            sections: Vec::new(),
        },
    );
    e.hints.push(Hint::next_step(
        HintId::StartEffort,
        format!(
            "Continue in the main checkout {} (or start a new effort).",
            effort.main.root().display()
        ),
    ));
    e
}
