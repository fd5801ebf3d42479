//! Landing itself, as one journaled transaction (`commit::landing`): the Proof note, the
//! trunk's compare-and-swap, the main checkout, the worktree and the branch; and the result,
//! which after the trunk moved is always `ok` with what each later step did.

use serde::Serialize;

use super::{
    Authority, Consent, Landing, MainCheckout, NOTE_VERSION, NoteSubject, ProofNote, refuse,
};
use crate::commit::{self, landing};
use crate::git::{Repo, short};
use crate::lifecycle::Moved;
use crate::proposals::{self, ApprovalItem};
use crate::result::{Action, ErrorSlug, Hint, HintId, Reply, Report, WithNext};
use crate::workspace::Workspace;

/// `data` of a landing.
#[derive(Debug, Serialize)]
struct Landed<'a> {
    landed: String,
    trunk: &'a str,
    proof_line: &'a str,
    consent: &'a Consent,
    standard_approvals: &'a [ApprovalItem],
    protected_approvals: &'a [crate::protected::ProtectedChange],
    /// How the owner approved them (`signed`, `terminal`, `elicitation`).
    #[serde(skip_serializing_if = "Option::is_none")]
    approval_channel: Option<&'static str>,
    proof_note: NoteStatus,
    landing: LandingFacts,
    root: &'a std::path::Path,
}

#[derive(Debug, Serialize)]
struct NoteStatus {
    #[serde(rename = "ref")]
    reference: &'static str,
    written: bool,
    error: Option<String>,
}

/// What the landing did besides moving the trunk.
#[derive(Debug, Serialize)]
struct LandingFacts {
    trunk_landed: bool,
    worktree_removed: bool,
    branch_deleted: bool,
    main_checkout_updated: bool,
}

/// The landing of the effort `name` (its id or branch) on the trunk, found by its Proof note
/// within the trunk's recent history: "already landed at <commit>".
pub(super) fn already(ws: &Workspace, name: &str) -> Option<Reply> {
    // Whether it landed cannot be told without the config (its trunk and branch prefix): no
    // "already landed"; the caller's refusal stands.
    let Ok(config) = crate::config::Config::load(ws.root()) else {
        return None;
    };
    let trunk = ws.landing_trunk(config.as_ref());
    let prefix = config.map_or_else(
        || crate::config::DEFAULT_BRANCH_PREFIX.to_owned(),
        |c| c.branch_prefix,
    );
    let branches = [name.to_owned(), format!("{prefix}{name}")];
    let tip = ws.repo.branch_commit(&trunk).ok().flatten()?;
    // Whether it landed cannot be told: no "already landed"; the caller's refusal stands.
    let (at, branch) = landing::landed_by_note(&ws.repo, tip, &branches).ok()??;
    let landed = at.to_string();
    Some(Reply::new(
        AlreadyLanded {
            already_landed: &landed,
            branch: &branch,
            trunk: &trunk,
        },
        Report {
            state: format!(
                "{branch} already landed on {trunk} at {}; there is nothing to accept.",
                short(&landed)
            ),
            sections: Vec::new(),
        },
    ))
}

/// `data` of an effort that landed before this `accept`.
#[derive(Serialize)]
struct AlreadyLanded<'a> {
    already_landed: &'a str,
    branch: &'a str,
    trunk: &'a str,
}

/// `data` of a landing an earlier `accept` began and this one finished.
#[derive(Serialize)]
struct FinishedInterrupted<'a> {
    landed: &'a str,
    finished_interrupted: bool,
}

/// This effort's landing, begun by an earlier `accept` a crash cut short after the trunk moved,
/// and now finished: the result is that landing's.
pub(super) fn finished_before(own: &landing::Recovered, main: Option<std::path::PathBuf>) -> Moved {
    let landed = own.landed.map(|c| c.to_string()).unwrap_or_default();
    let mut envelope = Reply::new(
        FinishedInterrupted {
            landed: &landed,
            finished_interrupted: true,
        },
        Report {
            state: format!(
                "{} already landed at {}: {}",
                own.branch,
                short(&landed),
                own.message
            ),
            sections: Vec::new(),
        },
    );
    envelope.advisories.push(own.message.clone());
    Moved {
        reply: Ok(envelope),
        root: main,
    }
}

/// Land: one transaction; nothing landed unless the trunk's compare-and-swap succeeded.
pub(super) fn fast_forward(
    ws: &Workspace,
    landing: &Landing,
    authority: &Authority,
    main: &MainCheckout,
    lock: &commit::lock::WriterLock,
) -> Moved {
    let repo = &ws.repo;
    let journal = journal(repo, landing, authority, main);
    let faults = &ws.settings.faults;
    let landed = match landing::land(repo, main.repo.as_ref(), &journal, faults, lock) {
        Ok(landed) => landed,
        Err(e) => {
            return Moved {
                reply: Err(refuse(
                    ErrorSlug::PreconditionFailed,
                    format!("Nothing landed: {e}."),
                    HintId::UpdateFromTrunk,
                    "Bring in the trunk, run the gate, then accept again",
                )
                .with_next(Action::new("update"))),
                root: None,
            };
        }
    };
    let _ = proposals::store::save(repo, &[]);
    result(landing, authority, main, &landed)
}

fn journal(
    repo: &Repo,
    landing: &Landing,
    authority: &Authority,
    main: &MainCheckout,
) -> landing::LandingJournal {
    let note = ProofNote {
        version: NOTE_VERSION,
        subject: NoteSubject {
            commit: landing.head.to_string(),
            branch: landing.branch.clone(),
            trunk: landing.trunk.clone(),
        },
        proof: landing.proof.clone(),
        consent: authority.consent.clone(),
        approved_proposals: authority.items.clone(),
        approved_changes: authority.protected.clone(),
        approval: authority.approval.clone(),
    };
    landing::LandingJournal {
        version: landing::VERSION,
        branch: landing.branch.clone(),
        trunk: landing.trunk.clone(),
        trunk_from: landing.trunk_commit.to_string(),
        head: landing.head.to_string(),
        worktree: repo.root().to_owned(),
        main: main.info.path.clone(),
        main_on_trunk: main.on_trunk,
        note: serde_json::to_string_pretty(&note).unwrap_or_default(),
        locks: commit::owned_lock::claim(
            [
                format!("refs/heads/{}.lock", landing.trunk),
                format!("refs/heads/{}.lock", landing.branch),
                format!("{}.lock", commit::NOTES_REF),
                "packed-refs.lock".to_owned(),
            ]
            .into_iter()
            .map(|lock| repo.common_dir().join(lock))
            .chain(main.repo.as_ref().map(|m| m.git_dir().join("index.lock"))),
        ),
    }
}

fn result(
    landing: &Landing,
    authority: &Authority,
    main: &MainCheckout,
    landed: &landing::Landed,
) -> Moved {
    let Landing {
        trunk,
        branch,
        head,
        proof,
        ..
    } = landing;
    let main_updated = matches!(landed.main_updated, Some(Ok(())));
    // The Proof was made before the owner approved; what landed says who approved it.
    let line = match &authority.approval {
        Some(granted) => crate::proof::approved(&proof.line, &granted.channel.approver()),
        None => proof.line.clone(),
    };
    let data = Landed {
        landed: head.to_string(),
        trunk,
        proof_line: &line,
        consent: &authority.consent,
        standard_approvals: &authority.items,
        protected_approvals: &authority.protected,
        approval_channel: authority.approval.as_ref().map(|g| g.channel.name()),
        proof_note: NoteStatus {
            reference: commit::NOTES_REF,
            written: landed.note_written,
            error: landed.note_error.clone(),
        },
        landing: LandingFacts {
            trunk_landed: true,
            worktree_removed: landed.worktree_removed,
            branch_deleted: landed.branch_deleted,
            main_checkout_updated: main_updated,
        },
        root: &main.info.path,
    };
    let mut e = Reply::new(
        &data,
        Report {
            state: format!(
                "Landed {branch} on {trunk} at {}. {}",
                short(&head.to_string()),
                line
            ),
            sections: Vec::new(),
        },
    );
    main_behind(&mut e, landing, main, landed);
    if landing.plain {
        e.hints.push(Hint::next_step(
            HintId::WorkInEffort,
            format!(
                "Push the landing and its Proof note in one atomic push: `discern sync --push` (or `git push --atomic origin {trunk} {}`).",
                commit::NOTES_REF
            ),
        ));
        return Moved {
            reply: Ok(e),
            root: None,
        };
    }
    if !landed.worktree_removed {
        e.advisories.push(format!(
            "The effort worktree could not be removed; remove it with `git worktree remove` from {}.",
            main.info.path.display()
        ));
    }
    e.hints.push(Hint::next_step(
        HintId::WorkInEffort,
        format!(
            "Continue in the main checkout {} (or start a new effort).",
            main.info.path.display()
        ),
    ));
    Moved {
        reply: Ok(e),
        root: landed.worktree_removed.then(|| main.info.path.clone()),
    }
}

/// The main checkout could not follow the landing: how to bring it up to date, and the
/// owner's attention on it.
fn main_behind(e: &mut Reply, landing: &Landing, main: &MainCheckout, landed: &landing::Landed) {
    let Some(Err(why)) = &landed.main_updated else {
        return;
    };
    let command = landing::follow_command(
        &main.info.path,
        &landing.trunk_commit.to_string(),
        &landing.head.to_string(),
    );
    e.advisories.push(format!(
        "The trunk landed, but the main checkout could not follow it ({why}); it shows the landing reversed until it does. Bring it up to date with `{command}`; never commit what it shows now."
    ));
    let path = main.info.path.display().to_string();
    if let Ok(hint) = Hint::owner_attention(HintId::MainCheckoutBehind, &[("detail", &path)]) {
        e.hints.push(hint);
    }
}
