//! Whether this checkout can land: an effort worktree on a branch, clean, with honored Proof
//! for its HEAD against exactly the trunk it resolves, containing it; and, from a checkout
//! with the trunk out, the efforts that are ready, each with its command. Consent, approvals
//! and the main checkout are judged later.

use super::{Landing, VERB};
use crate::approval;
use crate::config::Config;
use crate::git::{Repo, short};
use crate::preflight::{self, Prepared};
use crate::proof::{self, ProofState};
use crate::result::spelled::{command_line, spell};
use crate::result::{Action, ErrorSlug, Hint, HintId, Refusal, Refused};
use crate::workspace::Workspace;

/// The preconditions: an effort worktree on a branch, clean, with honored Proof for its HEAD,
/// containing the current trunk.
pub(super) fn landing(prepared: &Prepared) -> Result<Landing, Refused> {
    let (ws, repo) = (&prepared.ws, &prepared.ws.repo);
    // Read after this verb's recovery; an unreadable config is refused: the trunk it names
    // is where the landing goes.
    let config = preflight::load_config(ws)?;
    // DISCERN_TRUNK never changes what the gate and the landing trust; a branch of a release
    // line the trunk's tip declares lands on that line.
    let declared = ws.landing_trunk(config.as_ref());
    let trunk =
        crate::measure::limits::landing_line(ws, declared.clone(), repo.head().ok().flatten());
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
    // The local trunk branch is what moves; left behind its upstream, it is not the team's;
    // diverged from it, which one the team is on cannot be told.
    match repo.resolve_trunk(&trunk) {
        Ok(Some(team)) if team.commit != trunk_commit => {
            let upstream = team
                .reference
                .trim_start_matches("refs/remotes/")
                .to_owned();
            return Err(refusal(&NotLandable::LocalTrunkBehind { trunk, upstream }));
        }
        Ok(_) => {}
        Err(e) => {
            return Err(refusal(&match crate::git::DivergedTrunk::of(&e) {
                Some(diverged) => NotLandable::TrunkDiverged(diverged),
                None => NotLandable::Unreadable { trunk },
            }));
        }
    }
    // A release line is the trunk tip's declaration, never this branch's: its own config names
    // the trunk, not itself.
    let agrees = match trunk == declared || trunk == branch {
        true => approval::trunk_agrees(repo, &trunk, trunk_commit, &branch),
        false => Ok(()),
    };
    if let Err(why) = agrees {
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
pub(super) enum NotLandable {
    #[error("accept lands an effort or a branch; this checkout has the trunk out.")]
    MainCheckout,
    #[error(
        "The local {trunk} is behind {upstream}; a landing fast-forwards the trunk as the team has it."
    )]
    LocalTrunkBehind { trunk: String, upstream: String },
    #[error("Where the landing goes cannot be told: {0}.")]
    TrunkDiverged(crate::git::DivergedTrunk),
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
pub(super) fn refusal(why: &NotLandable) -> Refused {
    why.refused()
}

impl Refusal for NotLandable {
    fn slug(&self) -> ErrorSlug {
        match self {
            NotLandable::MainCheckout | NotLandable::Detached => ErrorSlug::WrongCheckout,
            NotLandable::Unreadable { .. } => ErrorSlug::CannotTell,
            NotLandable::TrunkDiverged(_) => ErrorSlug::TrunkUnreadable,
            _ => ErrorSlug::PreconditionFailed,
        }
    }

    /// The hint and, where there is one, the step past it.
    fn hint(&self) -> Hint {
        let (id, hint, step) = match self {
            NotLandable::MainCheckout => (
                HintId::WorkInEffort,
                format!(
                    "Land from inside the effort worktree, or name it (`{}`)",
                    command_line(&Action::new("accept").arg("effort", "ID"))
                ),
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
            NotLandable::TrunkDiverged(diverged) => (
                HintId::UpdateFromTrunk,
                diverged.hint("accept again"),
                None,
            ),
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
    let config = Config::load(ws.repo.root()).map_err(|e| e.to_string())?;
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

/// The exact command that lands effort `id`, with the owner's consent: the owner's route,
/// a command line on every surface (`accept --effort` is CLI only).
fn land(id: &str) -> String {
    command_line(&Action::new("accept").arg("effort", id).flag("confirmed"))
}

/// `data` of the refusal from a checkout with the trunk out: the efforts ready to land.
#[derive(serde::Serialize)]
struct ReadyToLand<'a> {
    ready_to_land: &'a [String],
    commands: &'a [String],
}

/// From a checkout with the trunk out: the efforts ready to land, each with its exact command.
fn owners_route(ws: &Workspace) -> Refused {
    let mut envelope = refusal(&NotLandable::MainCheckout);
    // Which efforts are ready is never guessed as "none" when it cannot be told.
    let ready = match ready_to_land(ws) {
        Ok(ready) => ready,
        Err(why) => {
            let message = format!(
                "{} Which efforts are ready to land cannot be told ({why}); `{}` shows each one's state.",
                NotLandable::MainCheckout,
                spell(&Action::new("status"))
            );
            envelope.message = message;
            return envelope;
        }
    };
    let commands: Vec<String> = ready.iter().map(|id| land(id)).collect();
    let message = match commands.as_slice() {
        [] => format!(
            "{} No effort is ready to land (clean, proven, containing the trunk): `{}` shows each one's state.",
            NotLandable::MainCheckout,
            spell(&Action::new("status"))
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
    envelope.message = message;
    let mut envelope = envelope.with_data(ReadyToLand {
        ready_to_land: &ready,
        commands: &commands,
    });
    // The next step with the real effort ids, never a placeholder.
    let hint = match ready.as_slice() {
        [] => format!(
            "Land from inside an effort's worktree once it is proven; `{}` shows each effort's state",
            spell(&Action::new("status"))
        ),
        [id] => format!("With the owner's consent, land it: `{}`", land(id)),
        many => format!(
            "With the owner's consent, land each: {}",
            many.iter()
                .map(|id| format!("`{}`", land(id)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    envelope.hints = vec![Hint::next_step(HintId::WorkInEffort, hint)];
    envelope
}
