//! `discern accept [--confirmed] [--approve-standard TOKEN]…`: land the effort with the owner's
//! consent. Honored Proof for the exact HEAD and the trunk contained; authority from consent
//! or a pre-authorized scope; every live proposal approved by exactly its token. Landing
//! fast-forwards the trunk (compare-and-swap), writes the Proof note, removes the worktree and
//! branch, and brings a clean main checkout on the trunk up to date.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::json;

use super::Moved;
use crate::commit;
use crate::config::Config;
use crate::operations::Journal;
use crate::preflight::{self, Cleanliness};
use crate::proof::{self, ProofState};
use crate::proposals::{self, ApprovalItem};
use crate::result::{Envelope, ErrorSlug, Hint, HintId, Report, Section};
use crate::snapshot::short;
use crate::snapshot::{Pathspec, Repo};
use crate::workspace::Workspace;

pub const VERB: &str = "accept";
pub const NOTE_VERSION: u32 = 1;

#[derive(Debug, Clone, Default, clap::Args, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AcceptRequest {
    /// The owner consented to this landing in conversation.
    #[arg(long)]
    #[serde(default)]
    pub confirmed: bool,
    /// The owner's approval of one limit proposal, by its token (once per proposal).
    #[arg(long = "approve-standard", value_name = "TOKEN")]
    #[serde(default)]
    pub approve_standard: Vec<String>,
    /// Preview only: what landing would do; nothing is written.
    #[arg(long)]
    #[serde(default)]
    pub dry_run: bool,
}

/// The durable Proof note on `refs/notes/discern`.
#[derive(Debug, Clone, Serialize)]
pub struct ProofNote {
    pub version: u32,
    pub subject: serde_json::Value,
    pub proof: proof::Proof,
    pub consent: serde_json::Value,
    pub approved_proposals: Vec<ApprovalItem>,
}

fn refuse(slug: ErrorSlug, message: impl Into<String>, id: HintId, hint: &str) -> Envelope {
    Envelope::refusal(VERB, slug, message, Hint::next_step(id, hint))
}

pub fn accept(ws: &Workspace, request: &AcceptRequest) -> Moved {
    // A dry run writes nothing, not even the operation journal.
    let journal = Journal::begin_unless(request.dry_run, &ws.repo, VERB);
    let landed = land(ws, request);
    Moved {
        envelope: journal.finish(landed.envelope),
        root: landed.root,
    }
}

fn land(ws: &Workspace, request: &AcceptRequest) -> Moved {
    let repo = &ws.repo;
    if repo.is_main_checkout() {
        return refuse(
            ErrorSlug::PreconditionFailed,
            "accept lands an effort; this is the main checkout.",
            HintId::WorkInEffort,
            "Run `discern accept` inside the effort worktree.",
        )
        .into();
    }
    let config = Config::load(repo.root()).ok().flatten();
    let trunk = ws.trunk(config.as_ref());
    let Some(branch) = repo.branch().ok().flatten() else {
        return refuse(
            ErrorSlug::PreconditionFailed,
            "HEAD is detached.",
            HintId::WorkInEffort,
            "Check out the effort branch.",
        )
        .into();
    };
    if let Err(refusal) = preflight::require_clean(VERB, repo, Cleanliness::Full) {
        return (*refusal).into();
    }
    let (Some(head), Some(trunk_commit)) = (
        repo.head().ok().flatten(),
        repo.branch_commit(&trunk).ok().flatten(),
    ) else {
        return refuse(
            ErrorSlug::PreconditionFailed,
            format!("HEAD or the trunk {trunk} cannot be read."),
            HintId::UpdateFromTrunk,
            "Check the repository.",
        )
        .into();
    };
    let (state, proof) = proof::state(repo);
    let Some(proof) = proof.filter(|_| state == ProofState::Honored) else {
        return refuse(
            ErrorSlug::PreconditionFailed,
            format!(
                "There is no honored Proof for {} ({}); only proven work lands.",
                short(&head.to_string()),
                state.as_str()
            ),
            HintId::FixGate,
            "Run `discern done`, then accept.",
        )
        .into();
    };
    if !repo.is_ancestor(trunk_commit, head) {
        return refuse(
            ErrorSlug::PreconditionFailed,
            format!(
                "{trunk} moved since the Proof: {branch} does not contain it, so it cannot fast-forward."
            ),
            HintId::UpdateFromTrunk,
            "Run `discern update`, then `discern done`, then accept.",
        ).into();
    }

    // Authority: consent in conversation, or every changed path inside a standing grant.
    let base = repo.merge_base(trunk_commit, head).unwrap_or(trunk_commit);
    let changed = repo
        .git(&["diff", "--name-only", &format!("{base}..{head}")])
        .unwrap_or_default();
    let changed: Vec<&str> = changed.lines().collect();
    let scopes = config
        .as_ref()
        .map(|c| c.pre_authorized.clone())
        .unwrap_or_default();
    let granted = !scopes.is_empty() && {
        let spec = Pathspec::new(&scopes);
        changed.iter().all(|p| spec.matches(p))
    };
    let records = proposals::store::load(repo).unwrap_or_default();
    let items: Vec<ApprovalItem> = records.iter().map(ApprovalItem::of).collect();
    if !request.confirmed && !granted {
        let mut e = refuse(
            ErrorSlug::AwaitingConsent,
            format!(
                "Landing {branch} on {trunk} needs the owner's consent: {}",
                proof.line
            ),
            HintId::AskOwner,
            "Ask the owner; with their consent in this conversation, run `discern accept --confirmed`.",
        );
        e.data = Some(
            json!({ "proof_line": proof.line, "changed_paths": changed, "pre_authorized": scopes }),
        );
        return e.into();
    }
    if !records.is_empty() {
        let stale: Vec<String> = records
            .iter()
            .filter_map(|r| {
                let why = proposals::stale_reasons(repo, config.as_ref(), &trunk, r);
                (!why.is_empty()).then(|| format!("{} ({})", r.standard, why.join("; ")))
            })
            .collect();
        if !stale.is_empty() {
            return refuse(
                ErrorSlug::ProposalStale,
                format!("Stale proposals authorize nothing: {}.", stale.join(", ")),
                HintId::StandardsPropose,
                "Renew them (repeat the proposal batch), run `discern done`, then accept.",
            )
            .into();
        }
        let wanted: BTreeSet<&str> = items.iter().map(|i| i.token.as_str()).collect();
        let given: Vec<&str> = request
            .approve_standard
            .iter()
            .map(String::as_str)
            .collect();
        let unique: BTreeSet<&str> = given.iter().copied().collect();
        let exact = request.confirmed && unique.len() == given.len() && unique == wanted;
        if !exact {
            let mut problems = Vec::new();
            if !request.confirmed {
                problems.push(
                    "a proposal is never covered by a standing grant: the owner must confirm"
                        .to_owned(),
                );
            }
            if unique.len() != given.len() {
                problems.push("a token is given more than once".to_owned());
            }
            let unknown: Vec<&str> = unique.difference(&wanted).copied().collect();
            if !unknown.is_empty() {
                problems.push(format!("unknown token(s): {}", unknown.join(", ")));
            }
            let missing = wanted.difference(&unique).count();
            if missing > 0 {
                problems.push(format!("{missing} proposal(s) not approved"));
            }
            let mut e = refuse(
                ErrorSlug::AwaitingStandardApproval,
                format!(
                    "Limit proposals need the owner's exact approval ({}).",
                    problems.join("; ")
                ),
                HintId::AskOwner,
                "Show the owner each proposal below; with their approval, run `discern accept --confirmed --approve-standard TOKEN` once per proposal.",
            );
            e.data = Some(json!({ "standard_approvals_required": items }));
            e.report.sections = vec![Section {
                title: "Proposals awaiting exact owner approval".to_owned(),
                lines: items.iter().map(ApprovalItem::line).collect(),
            }];
            return e.into();
        }
    }

    // The main checkout: refuse before anything if it holds the trunk and is dirty.
    let worktrees = repo.worktrees().unwrap_or_default();
    let Some(main) = worktrees.iter().find(|w| w.is_main).cloned() else {
        return refuse(
            ErrorSlug::Internal,
            "Cannot find the main checkout.",
            HintId::ReportBug,
            "Report this as a bug in discern.",
        )
        .into();
    };
    let main_repo = Repo::discover(&main.path).ok();
    let main_on_trunk = main.branch.as_deref() == Some(trunk.as_str());
    if main_on_trunk {
        let main_dirty = match &main_repo {
            Some(m) => preflight::dirty_paths(m, Cleanliness::TrackedFiles),
            None => Err(crate::snapshot::RepoError::Read {
                what: format!("the main checkout {}", main.path.display()),
                message: "it is not a readable git work tree".to_owned(),
            }),
        };
        let main_dirty = match main_dirty {
            Ok(dirty) => dirty,
            Err(e) => {
                return refuse(
                    ErrorSlug::PreconditionFailed,
                    format!(
                        "Whether the main checkout ({trunk}) has uncommitted changes cannot be told: {e}. Nothing was changed."
                    ),
                    HintId::AskOwner,
                    &format!("Ask the owner to run `git status` in {} and fix what it reports, then accept again.", main.path.display()),
                ).into();
            }
        };
        if !main_dirty.is_empty() {
            return refuse(
                ErrorSlug::PreconditionFailed,
                format!(
                    "The main checkout has {trunk} checked out with uncommitted changes ({}); landing would leave it inconsistent. Nothing was changed.",
                    main_dirty.join(", ")
                ),
                HintId::AskOwner,
                "Ask the owner to commit or stash the main checkout's changes, then accept again.",
            ).into();
        }
    }
    let consent = if request.confirmed {
        json!({ "source": "confirmed" })
    } else {
        json!({ "source": "pre_authorized", "scopes": scopes })
    };
    if request.dry_run {
        let mut e = Envelope::ok(
            VERB,
            json!({ "would_land": head.to_string(), "trunk": trunk, "consent": consent }),
            Report {
                state: format!(
                    "Dry run: would fast-forward {trunk} to {}.",
                    short(&head.to_string())
                ),
                sections: Vec::new(),
            },
        );
        e.dry_run = Some(true);
        return e.into();
    }

    // Land: fast-forward the trunk (CAS), then the note, then clean up.
    if let Err(e) = commit::move_branch(
        repo,
        &trunk,
        trunk_commit,
        head,
        &format!("discern accept: fast-forward {trunk} to {branch}"),
    ) {
        return refuse(
            ErrorSlug::PreconditionFailed,
            format!("Nothing landed: {e}."),
            HintId::UpdateFromTrunk,
            "Run `discern update`, `discern done`, then accept again.",
        )
        .into();
    }
    let note = ProofNote {
        version: NOTE_VERSION,
        subject: json!({ "commit": head.to_string(), "branch": branch, "trunk": trunk }),
        proof: proof.clone(),
        consent: consent.clone(),
        approved_proposals: if records.is_empty() {
            Vec::new()
        } else {
            items.clone()
        },
    };
    let note_status = serde_json::to_vec_pretty(&note)
        .map_err(|e| e.to_string())
        .and_then(|bytes| commit::write_note(repo, head, &bytes).map_err(|e| e.to_string()));
    // The main checkout follows the trunk if it has it checked out.
    let main_updated = main_on_trunk
        && main_repo.as_ref().is_some_and(|m| {
            m.git(&[
                "read-tree",
                "-m",
                "-u",
                &trunk_commit.to_string(),
                &head.to_string(),
            ])
            .is_ok()
        });
    let worktree_path = repo.root().to_owned();
    let removed = main_repo.as_ref().is_some_and(|m| {
        m.git(&["worktree", "remove", &worktree_path.display().to_string()])
            .is_ok()
    });
    let branch_deleted = removed
        && main_repo
            .as_ref()
            .is_some_and(|m| commit::delete_branch(m, &branch, head).is_ok());
    let _ = proposals::store::save(repo, &[]);
    let landing = json!({ "trunk_landed": true, "worktree_removed": removed, "branch_deleted": branch_deleted, "main_checkout_updated": main_updated });
    let mut e = Envelope::ok(
        VERB,
        json!({
            "landed": head.to_string(),
            "trunk": trunk,
            "proof_line": proof.line,
            "consent": consent,
            "standard_approvals": if records.is_empty() { Vec::new() } else { items },
            "proof_note": { "ref": commit::NOTES_REF, "written": note_status.is_ok(), "error": note_status.err() },
            "landing": landing,
            "root": main.path,
        }),
        Report {
            state: format!(
                "Landed {branch} on {trunk} at {}. {}",
                short(&head.to_string()),
                proof.line
            ),
            sections: Vec::new(),
        },
    );
    if !removed {
        e.advisories.push(format!(
            "The effort worktree {} could not be removed; remove it with `git worktree remove`.",
            worktree_path.display()
        ));
    }
    e.hints.push(Hint::next_step(
        HintId::WorkInEffort,
        format!(
            "Continue in the main checkout {} (or start a new effort).",
            main.path.display()
        ),
    ));
    Moved {
        envelope: e,
        root: removed.then(|| main.path.clone()),
    }
}
