//! `discern approve [BRANCH|REV|--effort ID] [--head SHA] [--key PATH] [--dry-run] [--token
//! T…]`: the owner's route, from any checkout (`target`). It lists what awaits the owner's
//! approval on the named branch or revision, an effort, or the branch this checkout has out —
//! every loosening (a live proposal) and every protected change, derived from the trunk tip's
//! config against HEAD — and approves exactly that set, at exactly the head the owner reviewed
//! (`reviewed`: `--head`, or the items' `--token`s; a dry run prints the command that signs
//! what it showed). Where the trunk names allowed signers, the change — the repository, the
//! trunk commit, the items and what it does to the tree — is signed with the owner's SSH key
//! and committed under `.discern/approvals/` on the branch (`in_tree`, `approval::tree`), which
//! every merge strategy carries; otherwise each item is answered at this terminal and recorded
//! as a note on the approved commit (`refs/notes/discern-approvals`). A CLI verb only: no MCP
//! tool can approve.

use std::path::PathBuf;

use serde::Serialize;

use crate::approval::{self, Channel, Granted, Subject};
use crate::config::{ApprovalPolicy, Config};
use crate::git::{Repo, short};
use crate::proposals::required::{self, Required};
use crate::result::{Hint, HintId, Refusal, Refused, Reply, Report, Section};
use crate::workspace::Workspace;

mod in_tree;
mod key;
mod refused;
mod reviewed;
mod target;

use refused::NotApproved;

pub(crate) const VERB: &str = "approve";

#[derive(Debug, Clone, Default, clap::Args, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ApproveRequest {
    /// What to approve: a branch, `origin/BRANCH`, `refs/pull/N/head` or a commit id (default:
    /// the branch this checkout has out).
    #[serde(default)]
    pub target: Option<String>,
    /// The local branch that gets the approval commit when the target is a remote or
    /// pull-request ref or a commit (default: `BRANCH` for `origin/BRANCH`, `pr-N` for
    /// `refs/pull/N/head`).
    #[arg(long)]
    #[serde(default)]
    pub branch: Option<String>,
    /// The effort to approve: its id, branch or worktree path (default: this checkout).
    #[arg(long)]
    #[serde(default)]
    pub effort: Option<String>,
    /// The commit the owner reviewed (its id): nothing is signed once the target moved past
    /// it. A signed approval needs it (or `--token`); `--dry-run` prints the command with the
    /// head it showed.
    #[arg(long, value_name = "SHA")]
    #[serde(default)]
    pub head: Option<String>,
    /// The SSH key to sign with (a private key, or a public key whose private half is in the
    /// agent); default: git's `user.signingkey`.
    #[arg(long)]
    #[serde(default)]
    pub key: Option<PathBuf>,
    /// List what awaits approval and the command that approves exactly that; approve nothing.
    #[arg(long)]
    #[serde(default)]
    pub dry_run: bool,
    /// The tokens (or unique prefixes) the owner approves, repeated: when given, they must name
    /// exactly the items awaiting approval.
    #[arg(long = "token")]
    #[serde(default)]
    pub tokens: Vec<String>,
}

impl ApproveRequest {
    /// The request's own check, on both surfaces: one target, and no flag its mode ignores.
    pub(crate) fn validate(&self) -> Result<(), Refused> {
        let unused = |flag, when, why| NotApproved::Unused { flag, when, why };
        let refused = match self {
            r if r.target.is_some() && r.effort.is_some() => Some(NotApproved::TargetTwice),
            r if r.branch.is_some() && r.target.is_none() => Some(unused(
                "--branch",
                "without a named target",
                "it names the local branch a remote ref's or a commit's approval goes on",
            )),
            r if r.dry_run && !r.tokens.is_empty() => Some(unused(
                "--token",
                "with --dry-run",
                "a dry run lists what awaits approval and approves nothing",
            )),
            r if r.dry_run && r.key.is_some() => {
                Some(unused("--key", "with --dry-run", "a dry run signs nothing"))
            }
            _ => None,
        };
        refused.map_or(Ok(()), |why| Err(why.refused()))
    }
}

/// What an approval is about: the effort's checkout, its HEAD and trunk, and what it needs.
struct Pending {
    repo: Repo,
    subject: Subject,
    required: Required,
    /// The local branch a signed approval's commit goes on, and how it reaches the forge.
    branch: Option<target::Receiving>,
    push: Option<String>,
    /// How the approved work lands, with the real effort id or branch.
    lands: String,
}

/// `data` of `approve`.
#[derive(Debug, Serialize)]
struct Approved<'a> {
    head: String,
    trunk: &'a str,
    trunk_commit: String,
    approval: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    channel: Option<&'a Channel>,
    required: &'a Required,
    /// A dry run's: the command that approves exactly what it listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    command: Option<String>,
    /// A signed approval's: where it was committed and how it reaches the pull request.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    signed: Option<in_tree::Committed>,
}

/// What `data` says beyond the listing: a dry run's command, a signed approval's commit.
#[derive(Debug, Default)]
struct Details {
    command: Option<String>,
    signed: Option<in_tree::Committed>,
}

pub(crate) fn approve(ws: &Workspace, request: &ApproveRequest) -> Result<Reply, Refused> {
    let pending = pending(ws, request)?;
    let policy = approval::policy(&pending.repo, pending.subject.trunk_commit)
        .map_err(|e| NotApproved::PolicyUnreadable { why: e.to_string() })?;
    if request.dry_run || pending.required.is_empty() {
        if request.dry_run && !pending.required.is_empty() {
            return Ok(to_sign(&pending, &policy, request));
        }
        return Ok(listing(&pending, policy.approval, None, Details::default()));
    }
    exactly(&pending.required, request)?;
    if policy.approval == ApprovalPolicy::Signed {
        // A signature is for what the owner reviewed: the head, or the items by token.
        if request.head.is_none() && request.tokens.is_empty() {
            let target = reviewed::target(request);
            let dry_run = reviewed::dry_run(request);
            return Err(NotApproved::NotReviewed { target, dry_run }.into());
        }
        return in_tree::in_tree(ws, &pending, &policy, request.key.as_deref());
    }
    let granted = asked(ws, &pending)?;
    record(&pending, &granted)?;
    let granted = Some(&granted);
    Ok(listing(
        &pending,
        policy.approval,
        granted,
        Details::default(),
    ))
}

/// The target's checkout, HEAD, trunk and what it needs approved.
fn pending(ws: &Workspace, request: &ApproveRequest) -> Result<Pending, Refused> {
    let target::Target {
        repo,
        head,
        branch,
        push,
    } = target::target(
        ws,
        request.effort.as_deref(),
        request.target.as_deref(),
        request.branch.as_deref(),
    )?;
    reviewed::check(&repo, request, head)?;
    // The approved checkout's own config (an effort's worktree, or this one): unreadable is a
    // refusal, never the default trunk.
    let config = Config::load(repo.root()).map_err(|e| crate::preflight::config_refusal(&e))?;
    let trunk = ws.landing_trunk(config.as_ref());
    // A branch of a release line is approved against that line, as CI judges it.
    let trunk = crate::measure::limits::landing_line(ws, trunk, Some(head));
    // The trunk as the team has it: a stale local trunk is not what CI judges against.
    let trunk_commit = match repo.trunk_commit(&trunk) {
        Ok(Some(commit)) => commit,
        Err(e) if let Some(diverged) = crate::git::DivergedTrunk::of(&e) => {
            return Err(NotApproved::TrunkDiverged(diverged).into());
        }
        _ => return Err(NotApproved::TrunkUnreadable { trunk }.into()),
    };
    if !repo.is_ancestor(trunk_commit, head) {
        let head = short(&head.to_string());
        return Err(NotApproved::TrunkNotContained { head, trunk }.into());
    }
    let required = required::required(&repo, &trunk, trunk_commit, head)
        .map_err(|e| NotApproved::RequiredUnknown { why: e.to_string() })?;
    required.explained("then approve.")?;
    // A stale proposal authorizes nothing: caught here, before the owner signs it.
    let stale = required.stale(&repo, head, &trunk);
    if !stale.is_empty() {
        return Err(NotApproved::StaleProposals { standards: stale }.into());
    }
    let tokens = required.tokens();
    let prefix = config.as_ref().map_or_else(
        || crate::config::DEFAULT_BRANCH_PREFIX.to_owned(),
        |c| c.branch_prefix.clone(),
    );
    let lands = lands(
        request.effort.as_deref(),
        branch.as_ref().map(|b| b.name.as_str()),
        &prefix,
    );
    Ok(Pending {
        repo,
        subject: Subject {
            trunk,
            trunk_commit,
            head,
            tokens,
        },
        required,
        branch,
        push,
        lands,
    })
}

/// How the approved work lands: an effort by its id from any checkout, a plain branch by the
/// merge button or `accept` on a checkout of it.
fn lands(effort: Option<&str>, branch: Option<&str>, prefix: &str) -> String {
    let id = effort.or_else(|| branch.and_then(|b| b.strip_prefix(prefix)));
    match (id, branch) {
        (Some(id), _) => format!(
            "Land it with `discern accept --effort {id} --confirmed` (or `discern accept --confirmed` inside the effort)."
        ),
        (None, Some(branch)) => format!(
            "Land it by merging the pull request of {branch}, or with `discern done` and `discern accept --confirmed` on a checkout of {branch}."
        ),
        (None, None) => "Land it by merging its pull request.".to_owned(),
    }
}

/// The owner's tokens, when given, name exactly the items awaiting approval.
fn exactly(required: &Required, request: &ApproveRequest) -> Result<(), Refused> {
    let given = &request.tokens;
    if given.is_empty() {
        return Ok(());
    }
    let wanted = required.tokens();
    let mut named = std::collections::BTreeSet::new();
    for prefix in given {
        let matches: Vec<&String> = wanted
            .iter()
            .filter(|t| t.starts_with(prefix.as_str()))
            .collect();
        match matches.as_slice() {
            [one] if prefix.len() >= 4 => {
                named.insert((*one).clone());
            }
            [] => {
                let (prefix, dry_run) = (prefix.clone(), reviewed::dry_run(request));
                return Err(NotApproved::TokenMoved { prefix, dry_run }.into());
            }
            _ => {
                let (prefix, matches) = (prefix.clone(), matches.len());
                return Err(NotApproved::AmbiguousToken { prefix, matches }.into());
            }
        }
    }
    if named != wanted {
        let (named, wanted) = (named.len(), wanted.len());
        return Err(NotApproved::NotEveryToken { named, wanted }.into());
    }
    Ok(())
}

/// The interactive channel: yes or no to each item, on this terminal only.
fn asked(ws: &Workspace, pending: &Pending) -> Result<Granted, Refused> {
    if !ws.settings.terminal {
        return Err(NotApproved::NoTerminal.into());
    }
    let title = format!(
        "Approve these changes for {} landing on {}?",
        short(&pending.subject.head.to_string()),
        pending.subject.trunk
    );
    if !approval::ask_on_terminal(&title, &pending.required.lines()) {
        return Err(NotApproved::NotAnsweredYes.into());
    }
    Ok(Granted {
        version: approval::VERSION,
        payload: pending.subject.payload(),
        channel: Channel::Terminal,
    })
}

/// The approval as a note on the approved commit, under the writer lock.
fn record(pending: &Pending, granted: &Granted) -> Result<(), Refused> {
    let failed = |why: String| Refused::from(NotApproved::NoteNotWritten { why });
    let _lock = crate::commit::lock::WriterLock::acquire(&pending.repo)
        .map_err(|e| failed(e.to_string()))?;
    let bytes = serde_json::to_vec_pretty(granted).map_err(|e| failed(e.to_string()))?;
    crate::commit::write_note_on(
        &pending.repo,
        approval::NOTES_REF,
        pending.subject.head,
        &bytes,
    )
    .map(|_| ())
    .map_err(|e| failed(e.to_string()))
}

/// The dry run's last word: the command that approves exactly the head and items it listed.
fn to_sign(pending: &Pending, policy: &approval::Policy, request: &ApproveRequest) -> Reply {
    let command = reviewed::command(request, pending.subject.head);
    let key = match policy.approval == ApprovalPolicy::Signed && !key::configured(&pending.repo) {
        true => " (add `--key PATH`: git's user.signingkey names no key here)",
        false => "",
    };
    let hint = Hint::next_step(
        HintId::AskOwner,
        format!("Approve exactly what is listed, at this head: `{command}`{key}."),
    );
    let details = Details {
        command: Some(command),
        signed: None,
    };
    listing(pending, policy.approval, None, details).with_hint(hint)
}

/// What awaits (or now has) the owner's approval, compact.
fn listing(
    pending: &Pending,
    policy: ApprovalPolicy,
    granted: Option<&Granted>,
    details: Details,
) -> Reply {
    let head = short(&pending.subject.head.to_string());
    let count = pending.required.proposals.len() + pending.required.protected.len();
    let state = match (granted, count) {
        (_, 0) => format!("Nothing in {head} needs the owner's approval."),
        (None, n) => format!(
            "{n} change(s) in {head} await the owner's approval ({}).",
            policy.as_str()
        ),
        (Some(g), n) => format!(
            "Approved {n} change(s) for {head} on {} ({}).",
            pending.subject.trunk,
            g.channel.name()
        ),
    };
    let data = Approved {
        head: pending.subject.head.to_string(),
        trunk: &pending.subject.trunk,
        trunk_commit: pending.subject.trunk_commit.to_string(),
        approval: policy.as_str(),
        channel: granted.map(|g| &g.channel),
        required: &pending.required,
        command: details.command,
        signed: details.signed,
    };
    let mut e = Reply::new(
        &data,
        Report {
            state,
            sections: vec![Section {
                table: None,
                title: match granted {
                    Some(g) => format!("Approved by {}", g.channel.approver()),
                    None => "Awaiting the owner's exact approval".to_owned(),
                },
                lines: pending.required.lines(),
            }],
        },
    );
    if granted.is_some() {
        e.hints
            .push(Hint::next_step(HintId::Accept, pending.lands.clone()));
    }
    e
}
