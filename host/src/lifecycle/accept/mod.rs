//! `discern accept [--confirmed] [--approve-standard TOKEN]…`: land the effort with the owner's
//! consent. Honored Proof for the exact HEAD and the trunk contained; authority from consent
//! or a pre-authorized scope; every live proposal approved by exactly its token. Landing
//! fast-forwards the trunk (compare-and-swap), writes the Proof note, removes the worktree and
//! branch, and brings a clean main checkout on the trunk up to date.

use serde::Serialize;

mod approvals;
mod authority;
mod landable;
mod landed;
mod verify;

pub(crate) use verify::failing;

use authority::authority;
use landable::{NotLandable, landing, refusal};

use super::Moved;
use crate::approval::Granted;
use crate::commit;
use crate::config::Config;
use crate::git::Repo;
use crate::git::short;
use crate::preflight::{self, Cleanliness, Preflight, Prepared, Recover};
use crate::proof;
use crate::proposals::ApprovalItem;
use crate::protected::ProtectedChange;
use crate::result::{ErrorSlug, Hint, HintId, Refused, Reply, Report};
use crate::runtime::Runtime;

pub(crate) const VERB: &str = "accept";
/// Only the proven, clean commit lands.
pub(crate) const CLEANLINESS: Cleanliness = Cleanliness::Full;
pub(crate) const NOTE_VERSION: u32 = 1;

#[derive(Debug, Clone, Default, clap::Args, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AcceptRequest {
    /// The owner consented to this landing in conversation.
    #[arg(long)]
    #[serde(default)]
    pub confirmed: bool,
    /// Compatibility: a limit proposal's token. A token never approves on its own: the owner
    /// approves with `discern approve` (or at this terminal's prompt).
    #[arg(long = "approve-standard", value_name = "TOKEN")]
    #[serde(skip)]
    #[schemars(skip)]
    pub approve_standard: Vec<String>,
    /// Preview only: what landing would do; nothing is written.
    #[arg(long)]
    #[serde(default)]
    pub dry_run: bool,
    /// The owner's route: land the effort this names (id, branch or worktree path) from any
    /// checkout, the main one included. CLI only.
    #[arg(long)]
    #[serde(skip)]
    #[schemars(skip)]
    pub effort: Option<String>,
}

/// The durable Proof note on `refs/notes/discern`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ProofNote {
    pub version: u32,
    pub subject: NoteSubject,
    pub proof: proof::Proof,
    pub consent: Consent,
    pub approved_proposals: Vec<ApprovalItem>,
    /// Protected changes the owner approved, each with its token.
    pub approved_changes: Vec<ProtectedChange>,
    /// The approval of both lists, with its channel (a signature travels whole).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval: Option<Granted>,
}

/// What a Proof note is about: the landed commit, its branch and the trunk it landed on.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct NoteSubject {
    pub commit: String,
    pub branch: String,
    pub trunk: String,
}

/// Where the authority to land came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "source", rename_all = "snake_case")]
pub(crate) enum Consent {
    /// The owner consented in conversation.
    Confirmed,
    /// Every changed path is inside these standing grants.
    PreAuthorized { scopes: Vec<String> },
}

/// `data` of `accept --dry-run`.
#[derive(Debug, Serialize)]
struct WouldLand<'a> {
    would_land: String,
    trunk: &'a str,
    consent: &'a Consent,
}

fn refuse(slug: ErrorSlug, message: impl Into<String>, id: HintId, hint: &str) -> Refused {
    Refused::new(slug, message, Hint::next_step(id, hint))
}

/// What the table runs before `accept`: no recovery (accept finishes landings itself, since
/// its own landing finished is its result), then the caller's checkout clean, or, for a named
/// effort, nothing here (the effort's worktree is checked once it is found).
pub(crate) fn preflight(request: &AcceptRequest) -> Preflight {
    // Its config is read after its own recovery, which may rewrite it (`landing`).
    let here = Preflight::of(true, CLEANLINESS).journal(true);
    let preflight = match request.effort {
        Some(_) => Preflight::of(true, Cleanliness::Any),
        None => here,
    };
    Preflight {
        recover: Recover::ByVerb,
        ..preflight.dry_run(request.dry_run)
    }
}

/// Where `accept` says which phase it is in: a landing measures the proven commit again and
/// waits for the writer lock, which takes a while on a big repository.
pub(crate) type Say<'a> = &'a (dyn Fn(&str) + Sync);

pub(crate) fn accept(
    prepared: &Prepared,
    runtime: &Runtime,
    request: &AcceptRequest,
    say: Say,
) -> Result<Moved, Refused> {
    let ws = &prepared.ws;
    if let Some(effort) = &request.effort {
        // The named effort's own landing, cut short after the trunk moved (its worktree may be
        // gone already), is finished and is this call's result.
        if !request.dry_run {
            let here = crate::commit::landing::Here::Keep;
            let done = preflight::finish_landings_from(&ws.repo, here)?;
            let named = |b: &str| b == effort || b.rsplit('/').next() == Some(effort);
            if let Some(own) = done.iter().find(|r| r.landed.is_some() && named(&r.branch)) {
                return Ok(landed::finished_before(own, None));
            }
        }
        let request = AcceptRequest {
            effort: None,
            ..request.clone()
        };
        return match super::effort::workspace(ws, effort)
            .and_then(|effort_ws| preflight::prepare(VERB, effort_ws, preflight(&request)))
        {
            Ok(effort) => {
                // The effort's own journal records this landing (the caller's has none).
                let moved = accept(&effort, runtime, &request, say)?;
                Ok(Moved {
                    reply: effort.finish_reply(VERB, moved.reply),
                    root: moved.root,
                })
            }
            // An effort that landed before names the commit it landed as (its Proof note).
            Err(refusal) => match landed::already(ws, effort) {
                Some(envelope) => Ok(envelope.into()),
                None => Err(refusal),
            },
        };
    }
    // The table journals it for `progress` (a dry run records nothing).
    land(prepared, runtime, request, say)
}

/// What `accept` established about the effort before deciding anything.
struct Landing {
    config: Option<Config>,
    trunk: String,
    branch: String,
    head: gix::ObjectId,
    trunk_commit: gix::ObjectId,
    proof: proof::Proof,
    /// Landed from a plain checkout (the main one), which keeps its branch out.
    plain: bool,
}

/// Who authorized the landing, and what the owner approved.
struct Authority {
    consent: Consent,
    items: Vec<ApprovalItem>,
    protected: Vec<ProtectedChange>,
    approval: Option<Granted>,
}

/// The main checkout, and whether it has the trunk checked out (then it follows the landing).
struct MainCheckout {
    info: crate::git::WorktreeInfo,
    repo: Option<Repo>,
    on_trunk: bool,
}

fn land(
    prepared: &Prepared,
    runtime: &Runtime,
    request: &AcceptRequest,
    say: Say,
) -> Result<Moved, Refused> {
    let ws = &prepared.ws;
    // A landing a crash interrupted is finished (or unwound) before another is decided; this
    // effort's own, once its trunk moved, is finished whole — worktree and branch removed, as
    // the landing would have — and is this call's result.
    let branch = ws.repo.branch().ok().flatten();
    // Where the caller works once a finished landing removed this worktree.
    let main = ws
        .repo
        .worktrees()
        .ok()
        .and_then(|list| list.into_iter().find(|w| w.is_main))
        .map(|w| w.path);
    let finished = match request.dry_run {
        true => Ok(Vec::new()),
        false => preflight::finish_landings_from(&ws.repo, crate::commit::landing::Here::Remove),
    };
    let finished = finished?;
    if let Some(own) = finished
        .iter()
        .find(|r| r.landed.is_some() && Some(&r.branch) == branch.as_ref())
    {
        return Ok(landed::finished_before(own, main));
    }
    // This checkout's config transaction a crash interrupted (a pin killed once its branch
    // moved) is settled too, as every writing verb does, so the tree is not called dirty with
    // discern's own half-written discern.toml.
    if !request.dry_run
        && let Err(e) = crate::commit::recover(&ws.repo)
    {
        return Err(preflight::recovery_refusal(&e));
    }
    let finished = finished.into_iter().map(|r| r.message);
    match decide_and_land(prepared, runtime, request, say) {
        Ok(mut moved) => {
            match &mut moved.reply {
                Ok(envelope) => envelope.advisories.extend(finished),
                Err(refused) => refused.advisories.extend(finished),
            }
            Ok(moved)
        }
        Err(mut refused) => {
            refused.advisories.extend(finished);
            Err(refused)
        }
    }
}

fn decide_and_land(
    prepared: &Prepared,
    runtime: &Runtime,
    request: &AcceptRequest,
    say: Say,
) -> Result<Moved, Refused> {
    let ws = &prepared.ws;
    say("accept: reading the Proof, the trunk and the effort");
    let decided = landing(prepared).and_then(|landing| {
        say("accept: measuring the proven commit's Standards again");
        verify::standards_hold(ws, runtime, &landing, say)?;
        say("accept: checking the owner's consent and approvals");
        let authority = authority(ws, request, &landing)?;
        Ok((landing, authority))
    });
    let (landing, authority) = decided?;
    if request.dry_run {
        main_checkout(&ws.repo, &landing.trunk)?;
        return Ok(dry_run(&landing, &authority).into());
    }
    // Concurrent landings serialise here: under the writer lock the trunk is re-read (a
    // landing that lost the race is told the trunk moved, never that the winner's main-checkout
    // update is somebody's uncommitted change), then the main checkout is checked and landed.
    let lock = match commit::lock::WriterLock::acquire(&ws.repo) {
        Ok(lock) => lock,
        Err(e) => {
            return Err(refuse(
                ErrorSlug::WriterBusy,
                format!("Nothing landed: {e}."),
                HintId::CheckRepository,
                "Let the other discern writer finish, then accept again",
            ));
        }
    };
    let current = ws.repo.branch_commit(&landing.trunk).ok().flatten();
    if current != Some(landing.trunk_commit) {
        let (trunk, branch) = (landing.trunk.clone(), landing.branch.clone());
        return Err(refusal(&NotLandable::TrunkMoved { trunk, branch }));
    }
    let main = main_checkout(&ws.repo, &landing.trunk)?;
    say(&format!(
        "accept: landing on {}: the trunk moves, the main checkout follows, the worktree and branch are removed",
        landing.trunk
    ));
    Ok(landed::fast_forward(ws, &landing, &authority, &main, &lock))
}

/// The main checkout; refused before anything moves if it holds the trunk and has tracked
/// changes, or its state cannot be told.
fn main_checkout(repo: &Repo, trunk: &str) -> Result<MainCheckout, Refused> {
    let worktrees = repo.worktrees().map_err(|e| {
        refuse(
            ErrorSlug::CannotTell,
            format!("Nothing was landed: the worktrees cannot be listed ({e})."),
            HintId::CheckRepository,
            "Check the repository with `git worktree list` (and `git worktree prune` for a worktree whose folder is gone), then accept again.",
        )
    })?;
    let Some(info) = worktrees.iter().find(|w| w.is_main).cloned() else {
        return Err(refuse(
            ErrorSlug::Internal,
            "Cannot find the main checkout.",
            HintId::ReportBug,
            "Report this as a bug in discern.",
        ));
    };
    let main_repo = Repo::discover(&info.path).ok();
    let on_trunk = info.branch.as_deref() == Some(trunk);
    if !on_trunk {
        return Ok(MainCheckout {
            info,
            repo: main_repo,
            on_trunk,
        });
    }
    let dirty = match &main_repo {
        Some(m) => preflight::dirty_paths(m, Cleanliness::TrackedFiles),
        None => Err(crate::git::RepoError::Read {
            what: format!("the main checkout {}", info.path.display()),
            message: "it is not a readable git work tree".to_owned(),
        }),
    };
    let refused = |message: String, hint: &str| {
        refuse(
            ErrorSlug::PreconditionFailed,
            message,
            HintId::AskOwner,
            hint,
        )
    };
    match dirty {
        Err(e) => Err(refused(
            format!(
                "Whether the main checkout ({trunk}) has uncommitted changes cannot be told: {e}. Nothing was changed."
            ),
            &format!(
                "Ask the owner to run `git status` in {} and fix what it reports, then accept again.",
                info.path.display()
            ),
        )),
        Ok(dirty) if !dirty.is_empty() => Err(refused(
            format!(
                "The main checkout has {trunk} checked out with uncommitted changes ({}); landing would leave it inconsistent. Nothing was changed.",
                dirty.join(", ")
            ),
            "Ask the owner to commit or stash the main checkout's changes, then accept again.",
        )),
        Ok(_) => Ok(MainCheckout {
            info,
            repo: main_repo,
            on_trunk,
        }),
    }
}

/// `--dry-run`: what landing would do; nothing is written.
fn dry_run(landing: &Landing, authority: &Authority) -> Reply {
    let mut e = Reply::new(
        &WouldLand {
            would_land: landing.head.to_string(),
            trunk: &landing.trunk,
            consent: &authority.consent,
        },
        Report {
            state: format!(
                "Dry run: would fast-forward {} to {}.",
                landing.trunk,
                short(&landing.head.to_string())
            ),
            sections: Vec::new(),
        },
    );
    e.dry_run = Some(true);
    e
}
