//! `discern accept [--confirmed] [--approve-standard TOKEN]…`: land the effort with the owner's
//! consent. Honored Proof for the exact HEAD and the trunk contained; authority from consent
//! or a pre-authorized scope; every live proposal approved by exactly its token. Landing
//! fast-forwards the trunk (compare-and-swap), writes the Proof note, removes the worktree and
//! branch, and brings a clean main checkout on the trunk up to date.

use serde::Serialize;

mod approvals;
mod landed;
mod verify;

pub(crate) use verify::failing;

use super::Moved;
use crate::approval::{self, Granted};
use crate::commit;
use crate::config::Config;
use crate::git::Repo;
use crate::git::short;
use crate::preflight::{self, Cleanliness, Preflight, Prepared, Recover};
use crate::proof::{self, ProofState};
use crate::proposals::ApprovalItem;
use crate::proposals::required;
use crate::protected::ProtectedChange;
use crate::result::{Action, Envelope, ErrorSlug, Hint, HintId, Refusal, Report, WithNext};
use crate::runtime::Runtime;
use crate::snapshot::Pathspec;
use crate::workspace::Workspace;

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

/// `data` of a refusal for want of consent.
#[derive(Debug, Serialize)]
struct AwaitingConsent<'a> {
    proof_line: &'a str,
    changed_paths: &'a [&'a str],
    pre_authorized: &'a [String],
}

/// `data` of `accept --dry-run`.
#[derive(Debug, Serialize)]
struct WouldLand<'a> {
    would_land: String,
    trunk: &'a str,
    consent: &'a Consent,
}

fn to_data(data: &impl Serialize) -> serde_json::Value {
    serde_json::to_value(data).unwrap_or(serde_json::Value::Null)
}

fn refuse(slug: ErrorSlug, message: impl Into<String>, id: HintId, hint: &str) -> Envelope {
    Envelope::refusal(VERB, slug, message, Hint::next_step(id, hint))
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

pub(crate) fn accept(prepared: &Prepared, runtime: &Runtime, request: &AcceptRequest) -> Moved {
    let ws = &prepared.ws;
    if let Some(effort) = &request.effort {
        // The named effort's own landing, cut short after the trunk moved (its worktree may be
        // gone already), is finished and is this call's result.
        if !request.dry_run {
            let here = crate::commit::landing::Here::Keep;
            match preflight::finish_landings_from(VERB, &ws.repo, here) {
                Err(refusal) => return (*refusal).into(),
                Ok(done) => {
                    let named = |b: &str| b == effort || b.rsplit('/').next() == Some(effort);
                    if let Some(own) = done.iter().find(|r| r.landed.is_some() && named(&r.branch))
                    {
                        return landed::finished_before(own, None);
                    }
                }
            }
        }
        let request = AcceptRequest {
            effort: None,
            ..request.clone()
        };
        return match super::effort::workspace(ws, VERB, effort)
            .and_then(|effort_ws| preflight::prepare(VERB, effort_ws, preflight(&request)))
        {
            Ok(effort) => {
                // The effort's own journal records this landing (the caller's has none).
                let moved = accept(&effort, runtime, &request);
                Moved {
                    envelope: effort.finish(moved.envelope),
                    root: moved.root,
                }
            }
            // An effort that landed before names the commit it landed as (its Proof note).
            Err(refusal) => landed::already(ws, effort).unwrap_or(*refusal).into(),
        };
    }
    // The table journals it for `progress` (a dry run records nothing).
    land(prepared, runtime, request)
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

fn land(prepared: &Prepared, runtime: &Runtime, request: &AcceptRequest) -> Moved {
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
        false => {
            preflight::finish_landings_from(VERB, &ws.repo, crate::commit::landing::Here::Remove)
        }
    };
    let finished = match finished {
        Ok(finished) => finished,
        Err(refusal) => return (*refusal).into(),
    };
    if let Some(own) = finished
        .iter()
        .find(|r| r.landed.is_some() && Some(&r.branch) == branch.as_ref())
    {
        return landed::finished_before(own, main);
    }
    // This checkout's config transaction a crash interrupted (a pin killed once its branch
    // moved) is settled too, as every writing verb does, so the tree is not called dirty with
    // discern's own half-written discern.toml.
    if !request.dry_run
        && let Err(e) = crate::commit::recover(&ws.repo)
    {
        return preflight::recovery_refusal(VERB, &e).into();
    }
    let mut moved = decide_and_land(prepared, runtime, request);
    moved
        .envelope
        .advisories
        .extend(finished.into_iter().map(|r| r.message));
    moved
}

fn decide_and_land(prepared: &Prepared, runtime: &Runtime, request: &AcceptRequest) -> Moved {
    let ws = &prepared.ws;
    let decided = landing(prepared).and_then(|landing| {
        verify::standards_hold(ws, runtime, &landing)?;
        let authority = authority(ws, request, &landing)?;
        Ok((landing, authority))
    });
    let (landing, authority) = match decided {
        Ok(decided) => decided,
        Err(refusal) => return (*refusal).into(),
    };
    if request.dry_run {
        return match main_checkout(&ws.repo, &landing.trunk) {
            Ok(_) => dry_run(&landing, &authority).into(),
            Err(refusal) => (*refusal).into(),
        };
    }
    // Concurrent landings serialise here: under the writer lock the trunk is re-read (a
    // landing that lost the race is told the trunk moved, never that the winner's main-checkout
    // update is somebody's uncommitted change), then the main checkout is checked and landed.
    let lock = match commit::lock::WriterLock::acquire(&ws.repo) {
        Ok(lock) => lock,
        Err(e) => {
            return refuse(
                ErrorSlug::WriterBusy,
                format!("Nothing landed: {e}."),
                HintId::CheckRepository,
                "Let the other discern writer finish, then accept again",
            )
            .into();
        }
    };
    let current = ws.repo.branch_commit(&landing.trunk).ok().flatten();
    if current != Some(landing.trunk_commit) {
        let (trunk, branch) = (landing.trunk.clone(), landing.branch.clone());
        return (*refusal(&NotLandable::TrunkMoved { trunk, branch })).into();
    }
    match main_checkout(&ws.repo, &landing.trunk) {
        Ok(main) => landed::fast_forward(ws, &landing, &authority, &main, &lock),
        Err(refusal) => (*refusal).into(),
    }
}

/// The preconditions: an effort worktree on a branch, clean, with honored Proof for its HEAD,
/// containing the current trunk.
fn landing(prepared: &Prepared) -> Result<Landing, Box<Envelope>> {
    let (ws, repo) = (&prepared.ws, &prepared.ws.repo);
    // Read after this verb's recovery; an unreadable config is refused: the trunk it names
    // is where the landing goes.
    let config = preflight::load_config(ws, VERB)?;
    // DISCERN_TRUNK never changes what the gate and the landing trust.
    let trunk = ws.landing_trunk(config.as_ref());
    let branch = repo.branch().ok().flatten();
    // A plain checkout (the main one) lands the branch it has out; never the trunk itself.
    if repo.is_main_checkout() && branch.as_deref().is_none_or(|b| b == trunk) {
        return Err(owners_route(ws));
    }
    let Some(branch) = branch else {
        return Err(refusal(&NotLandable::Detached));
    };
    prepared.require_clean(VERB)?;
    let (Some(head), Some(trunk_commit)) = (
        repo.head().ok().flatten(),
        repo.branch_commit(&trunk).ok().flatten(),
    ) else {
        return Err(refusal(&NotLandable::Unreadable { trunk }));
    };
    // The local trunk branch is what moves; left behind its upstream, it is not the team's.
    if let Ok(Some(team)) = repo.resolve_trunk(&trunk)
        && team.commit != trunk_commit
    {
        let upstream = team
            .reference
            .trim_start_matches("refs/remotes/")
            .to_owned();
        return Err(refusal(&NotLandable::LocalTrunkBehind { trunk, upstream }));
    }
    if let Err(why) = approval::trunk_agrees(repo, &trunk, trunk_commit, &branch) {
        return Err(refusal(&NotLandable::NotATrunk { why }));
    }
    let (state, proof) = proof::state(repo);
    let Some(proof) = proof.filter(|_| state == ProofState::Honored) else {
        let head = short(&head.to_string());
        return Err(refusal(&NotLandable::Unproven { head, state }));
    };
    if !repo.is_ancestor(trunk_commit, head) {
        return Err(refusal(&NotLandable::TrunkMoved { trunk, branch }));
    }
    // The Proof must be for exactly the trunk this landing resolves, at exactly its commit.
    let proven_commit = proof.trunk_commit.parse::<gix::ObjectId>().ok();
    if proof.trunk != trunk || proven_commit != Some(trunk_commit) {
        let proven = format!("{} at {}", proof.trunk, short(&proof.trunk_commit));
        let now = format!("{trunk} at {}", short(&trunk_commit.to_string()));
        return Err(refusal(&NotLandable::OtherTrunk { proven, now }));
    }
    Ok(Landing {
        config,
        trunk,
        branch,
        head,
        trunk_commit,
        proof,
        plain: repo.is_main_checkout(),
    })
}

/// Why this checkout cannot land (consent, approvals and the main checkout are judged later).
#[derive(Debug, thiserror::Error)]
enum NotLandable {
    #[error("accept lands an effort or a branch; this checkout has the trunk out.")]
    MainCheckout,
    #[error(
        "The local {trunk} is behind {upstream}; a landing fast-forwards the trunk as the team has it."
    )]
    LocalTrunkBehind { trunk: String, upstream: String },
    #[error("HEAD is detached.")]
    Detached,
    #[error("HEAD or the trunk {trunk} cannot be read.")]
    Unreadable { trunk: String },
    #[error("There is no honored Proof for {head} ({}); only proven work lands.", state.as_str())]
    Unproven { head: String, state: ProofState },
    #[error(
        "{trunk} moved since the Proof: {branch} does not contain it, so it cannot fast-forward."
    )]
    TrunkMoved { trunk: String, branch: String },
    #[error(
        "The Proof was made against {proven}, not {now}; it proves nothing about this landing."
    )]
    OtherTrunk { proven: String, now: String },
    #[error("Nothing lands: {why}.")]
    NotATrunk { why: String },
}

/// The refusal for each reason a checkout cannot land, with the step past it, in one place.
fn refusal(why: &NotLandable) -> Box<Envelope> {
    Box::new(why.refusal(VERB))
}

impl Refusal for NotLandable {
    fn slug(&self) -> ErrorSlug {
        match self {
            NotLandable::MainCheckout | NotLandable::Detached => ErrorSlug::WrongCheckout,
            NotLandable::Unreadable { .. } => ErrorSlug::CannotTell,
            _ => ErrorSlug::PreconditionFailed,
        }
    }

    /// The hint and, where there is one, the step past it.
    fn hint(&self) -> Hint {
        let (id, hint, step) = match self {
            NotLandable::MainCheckout => (
                HintId::WorkInEffort,
                "Land from inside the effort worktree, or name it (`discern accept --effort ID`)"
                    .to_owned(),
                Some("accept"),
            ),
            NotLandable::LocalTrunkBehind { trunk, upstream } => {
                let (remote, name) = upstream.split_once('/').unwrap_or(("origin", upstream));
                (
                    HintId::UpdateFromTrunk,
                    format!(
                        "Bring the local {trunk} up to date (`git fetch {remote} {name}:{trunk}`), then accept again"
                    ),
                    None,
                )
            }
            NotLandable::Detached => (
                HintId::WorkInEffort,
                "Check out the effort branch.".to_owned(),
                None,
            ),
            NotLandable::Unreadable { .. } => (
                HintId::UpdateFromTrunk,
                "Check the repository.".to_owned(),
                None,
            ),
            NotLandable::Unproven { .. } => (
                HintId::FixGate,
                "Run the gate, then accept".to_owned(),
                Some("done"),
            ),
            NotLandable::NotATrunk { .. } => (
                HintId::AskOwner,
                "Restore [repository].trunk to the trunk this effort forked from; a change to it takes effect only once landed".to_owned(),
                None,
            ),
            NotLandable::OtherTrunk { .. } => (
                HintId::FixGate,
                "Run the gate against the trunk, then accept".to_owned(),
                Some("done"),
            ),
            NotLandable::TrunkMoved { .. } => (
                HintId::UpdateFromTrunk,
                "Bring in the trunk, run the gate, then accept".to_owned(),
                Some("update"),
            ),
        };
        let hint = Hint::next_step(id, hint);
        match step {
            Some(step) => hint.with_action(Action::new(step)),
            None => hint,
        }
    }
}

/// The ids of the efforts ready to land: a worktree on a branch, its Proof honored (clean,
/// for exactly its HEAD), containing the trunk and ahead of it.
fn ready_to_land(ws: &Workspace) -> Result<Vec<String>, String> {
    let config = Config::load(ws.repo.root()).ok().flatten();
    let trunk = ws.landing_trunk(config.as_ref());
    let trunk_commit = ws
        .repo
        .branch_commit(&trunk)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("the trunk {trunk} cannot be read"))?;
    let worktrees = ws.repo.worktrees().map_err(|e| e.to_string())?;
    Ok(worktrees
        .iter()
        .filter(|w| !w.is_main && !w.prunable && w.branch.is_some())
        .filter(|w| {
            w.head
                .is_some_and(|head| head != trunk_commit && ws.repo.is_ancestor(trunk_commit, head))
        })
        .filter(|w| {
            Repo::discover(&w.path).is_ok_and(|repo| proof::state(&repo).0 == ProofState::Honored)
        })
        .filter_map(|w| w.path.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect())
}

/// From a checkout with the trunk out: the efforts ready to land, each with its exact command.
fn owners_route(ws: &Workspace) -> Box<Envelope> {
    let mut envelope = *refusal(&NotLandable::MainCheckout);
    // Which efforts are ready is never guessed as "none" when it cannot be told.
    let ready = match ready_to_land(ws) {
        Ok(ready) => ready,
        Err(why) => {
            let message = format!(
                "{} Which efforts are ready to land cannot be told ({why}); `discern status` shows each one's state.",
                NotLandable::MainCheckout
            );
            envelope.report.state = message.clone();
            envelope.message = Some(message);
            return Box::new(envelope);
        }
    };
    let commands: Vec<String> = ready
        .iter()
        .map(|id| format!("discern accept --effort {id} --confirmed"))
        .collect();
    let message = match commands.as_slice() {
        [] => format!(
            "{} No effort is ready to land (clean, proven, containing the trunk): `discern status` shows each one's state.",
            NotLandable::MainCheckout
        ),
        [one] => format!(
            "{} One effort is ready to land: `{one}`.",
            NotLandable::MainCheckout
        ),
        many => format!(
            "{} {} efforts are ready to land: {}.",
            NotLandable::MainCheckout,
            many.len(),
            many.iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    envelope.report.state = message.clone();
    envelope.message = Some(message);
    envelope.data = Some(serde_json::json!({ "ready_to_land": ready, "commands": commands }));
    // The next step with the real effort ids, never a placeholder.
    let hint = match ready.as_slice() {
        [] => "Land from inside an effort's worktree once it is proven; `discern status` shows each effort's state".to_owned(),
        [id] => format!(
            "With the owner's consent, land it: `discern accept --effort {id} --confirmed`"
        ),
        many => format!(
            "With the owner's consent, land each: {}",
            many.iter()
                .map(|id| format!("`discern accept --effort {id} --confirmed`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    envelope.hints = vec![Hint::next_step(HintId::WorkInEffort, hint)];
    Box::new(envelope)
}

/// Consent in conversation, or every changed path inside a standing grant; and every live
/// proposal approved by exactly its token.
fn authority(
    ws: &Workspace,
    request: &AcceptRequest,
    landing: &Landing,
) -> Result<Authority, Box<Envelope>> {
    let repo = &ws.repo;
    let Landing {
        trunk,
        branch,
        head,
        trunk_commit,
        proof,
        ..
    } = landing;
    let base = repo
        .merge_base(*trunk_commit, *head)
        .unwrap_or(*trunk_commit);
    // Fail closed: paths that cannot be listed are never inside a grant.
    let changed = repo
        // Without rename detection: a file moved into a granted folder also lists the path it
        // left, which the grant must cover too. In-process, never a `git` found on `PATH`.
        .changed_between(base, *head)
        .map_err(|e| {
            Box::new(refuse(
                ErrorSlug::CannotTell,
                format!("The changed paths cannot be listed: {e}."),
                HintId::CheckRepository,
                &format!("Run `git diff --name-only {base}..HEAD` and fix what it reports, then accept again."),
            ))
        })?;
    let changed: Vec<&str> = changed.iter().map(String::as_str).collect();
    // Standing grants are the owner's: read from the trunk's committed config, never from the
    // branch being landed (a branch that widens its own grant takes effect only after landing).
    let scopes = Config::at(repo, *trunk_commit)
        .ok()
        .flatten()
        .map(|c| c.pre_authorized)
        .unwrap_or_default();
    let granted = !scopes.is_empty() && {
        let spec = Pathspec::new(&scopes);
        changed.iter().all(|p| spec.matches(p))
    };
    if !request.confirmed && !granted {
        let mut e = refuse(
            ErrorSlug::AwaitingConsent,
            format!(
                "Landing {branch} on {trunk} needs the owner's consent: {}",
                proof.line
            ),
            HintId::AskOwner,
            "Ask the owner; with their consent in this conversation, land it",
        )
        .with_next(Action::new("accept").flag("confirmed"));
        e.data = Some(to_data(&AwaitingConsent {
            proof_line: &proof.line,
            changed_paths: &changed,
            pre_authorized: &scopes,
        }));
        return Err(Box::new(e));
    }
    // What needs approval is derived from the trunk's config and HEAD's, never remembered.
    let required = required::required(repo, trunk, *trunk_commit, *head).map_err(|e| {
        Box::new(
            refuse(
                ErrorSlug::CannotTell,
                format!("What needs the owner's approval cannot be told: {e}."),
                HintId::CheckRepository,
                "Fix what is named above, run the gate, then accept again",
            )
            .with_next(Action::new("done")),
        )
    })?;
    let approval = match required.is_empty() && required.unexplained.is_empty() {
        true => None,
        false => Some(approvals::approve(ws, request, landing, &required)?),
    };
    let consent = match request.confirmed {
        true => Consent::Confirmed,
        false => Consent::PreAuthorized { scopes },
    };
    Ok(Authority {
        consent,
        items: required.proposals,
        protected: required.protected,
        approval,
    })
}

/// The main checkout; refused before anything moves if it holds the trunk and has tracked
/// changes, or its state cannot be told.
fn main_checkout(repo: &Repo, trunk: &str) -> Result<MainCheckout, Box<Envelope>> {
    let worktrees = repo.worktrees().map_err(|e| {
        Box::new(refuse(
            ErrorSlug::CannotTell,
            format!("Nothing was landed: the worktrees cannot be listed ({e})."),
            HintId::CheckRepository,
            "Check the repository with `git worktree list` (and `git worktree prune` for a worktree whose folder is gone), then accept again.",
        ))
    })?;
    let Some(info) = worktrees.iter().find(|w| w.is_main).cloned() else {
        return Err(Box::new(refuse(
            ErrorSlug::Internal,
            "Cannot find the main checkout.",
            HintId::ReportBug,
            "Report this as a bug in discern.",
        )));
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
        Box::new(refuse(
            ErrorSlug::PreconditionFailed,
            message,
            HintId::AskOwner,
            hint,
        ))
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
fn dry_run(landing: &Landing, authority: &Authority) -> Envelope {
    let mut e = Envelope::ok(
        VERB,
        to_data(&WouldLand {
            would_land: landing.head.to_string(),
            trunk: &landing.trunk,
            consent: &authority.consent,
        }),
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
