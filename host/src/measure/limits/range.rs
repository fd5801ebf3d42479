//! The trunk judged cumulatively along its first-parent chain: from a verified baseline to HEAD,
//! cut at every landing into segments, each judged by its net change (the protected set, from
//! the segment's start to its end) against the approvals the landing at its end recorded —
//! verified under the policy and signers of the trust root (the baseline), never of a commit
//! being judged. A merge, a root commit brought in by one, or a history rewritten in between is
//! judged by what the chain's trees say, so nothing admitted goes unjudged.

use std::collections::BTreeSet;

use gix::ObjectId;
use serde::Deserialize;

use crate::approval::{Granted, Policy};
use crate::config::{ApprovalPolicy, AtError, Config};
use crate::git::{Repo, RepoError};
use crate::protected::{self, GateChanges, Loosening, ProtectedChange, Side};

/// What a landing's Proof note approved, as far as its approval verifies.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Approvals {
    pub limits: Vec<Approval>,
    /// The tokens of approved protected changes.
    pub protected: BTreeSet<String>,
}

/// An approved limit move.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(super) struct Approval {
    pub standard: String,
    pub trunk_limit: f64,
    pub proposed_limit: f64,
    #[serde(default)]
    pub token: String,
}

/// The part of a Proof note the ratchet reads (the rest is the landing's record).
#[derive(Debug, Deserialize)]
struct LandedNote {
    version: u32,
    proof: NoteProof,
    #[serde(default)]
    approved_proposals: Vec<Approval>,
    #[serde(default)]
    approved_changes: Vec<ProtectedChange>,
    #[serde(default)]
    approval: Option<Granted>,
}

#[derive(Debug, Deserialize)]
struct NoteProof {
    trunk_commit: String,
}

/// One stretch of the first-parent chain, judged by its net change.
#[derive(Debug, Clone)]
pub(super) struct Segment {
    pub from: ObjectId,
    pub to: ObjectId,
    /// What the landing at `to` approved (empty: no landing there, or none that verifies).
    pub approvals: Approvals,
}

/// A change of a segment that no approval there covers.
#[derive(Debug, Clone)]
pub(super) struct Unapproved {
    pub change: Unapprovable,
    /// The first commit of the segment whose tree shows it.
    pub commit: ObjectId,
    pub subject: String,
}

#[derive(Debug, Clone)]
pub(super) enum Unapprovable {
    Loosened(Loosening),
    Protected(ProtectedChange),
}

impl Unapprovable {
    /// What changed, as a key of `discern.toml` (`standards.todo.limit`, `jobs.test`) or a
    /// protected file (`file:scripts/test.sh`).
    pub(super) fn key(&self) -> String {
        match self {
            Unapprovable::Loosened(l) => format!("standards.{}.limit", l.standard),
            Unapprovable::Protected(p) => p.key.clone(),
        }
    }

    /// What kind of change it is.
    pub(super) fn what(&self) -> &'static str {
        match self {
            Unapprovable::Loosened(_) => "a loosened limit",
            Unapprovable::Protected(_) => "a protected change",
        }
    }
}

fn landed_note(repo: &Repo, commit: ObjectId) -> Result<Option<LandedNote>, RepoError> {
    let Some(bytes) = repo.note(crate::commit::NOTES_REF, commit)? else {
        return Ok(None);
    };
    Ok(serde_json::from_slice::<LandedNote>(&bytes)
        .ok()
        .filter(|note| note.version >= 1))
}

/// Whether `commit` carries a landing's Proof note whose landing verifies: the trunk commit it
/// says it landed on is a first-parent ancestor, and everything that landing changed only the
/// owner may change is covered by an approval that verifies under the policy of that trunk
/// commit. A note anyone could write on any commit is not a baseline by being there.
pub(super) fn verified_landing(repo: &Repo, commit: ObjectId) -> Result<bool, RepoError> {
    let Some(note) = landed_note(repo, commit)? else {
        return Ok(false);
    };
    let Ok(from) = note.proof.trunk_commit.parse::<ObjectId>() else {
        return Ok(false);
    };
    if from == commit || repo.first_parent_chain(from, commit)?.is_none() {
        return Ok(false);
    }
    let policy = crate::approval::anchored_policy(repo, from);
    let approvals = approved_by(policy.as_ref(), commit, from, note);
    let segment = Segment {
        from,
        to: commit,
        approvals,
    };
    Ok(unapproved(repo, &segment, &|| policy.as_ref())?
        .unapproved
        .is_empty())
}

/// The segments of `base..head` along the first-parent chain, each landing's approvals read
/// under `policy` (the trust root's; `None` when it cannot be read: then none counts).
pub(super) fn segments<'p>(
    repo: &Repo,
    base: ObjectId,
    head: ObjectId,
    policy: &dyn Fn() -> Option<&'p Policy>,
) -> Result<Vec<Segment>, RepoError> {
    let Some(chain) = repo.first_parent_chain(base, head)? else {
        // Not on the chain: one segment, approved only by a landing of exactly it.
        let approvals = match landed_note(repo, head)? {
            Some(note) => approved_by(policy(), head, base, note),
            None => Approvals::default(),
        };
        return Ok(vec![Segment {
            from: base,
            to: head,
            approvals,
        }]);
    };
    let mut found = Vec::new();
    let mut start = 0;
    for (i, &commit) in chain.iter().enumerate().skip(1) {
        let Some(note) = landed_note(repo, commit)? else {
            continue;
        };
        let landed_on = note.proof.trunk_commit.parse::<ObjectId>().ok();
        let on_chain = landed_on.and_then(|t| chain[..i].iter().position(|&c| c == t));
        // A landing on a commit before the segment's start is judged from the start all the
        // same: its approvals then match only what this stretch changed exactly (a note that
        // claims an earlier start could otherwise net a loosening out against older history).
        let from = match on_chain {
            Some(j) if j > start => {
                found.push(unapproved_segment(chain[start], chain[j]));
                chain[j]
            }
            _ => chain[start],
        };
        let approvals = approved_by(policy(), commit, from, note);
        found.push(Segment {
            from,
            to: commit,
            approvals,
        });
        start = i;
    }
    if start + 1 < chain.len() {
        found.push(unapproved_segment(chain[start], head));
    }
    Ok(found)
}

/// `segment` cut after each merge commit on its first-parent chain, and after each commit that
/// adds an approval (a squash's one commit, a rebased pull request's last): each pull request a
/// merge queue or the merge button landed, judged against its own predecessor (`None`: nothing
/// cuts it, or the chain cannot be read). The pieces cover the chain end to end, so every
/// change along it is judged in one of them; a piece carries no landing's approvals.
pub(super) fn by_merges(repo: &Repo, segment: &Segment) -> Result<Option<Vec<Segment>>, RepoError> {
    let Some(chain) = repo.first_parent_chain(segment.from, segment.to)? else {
        return Ok(None);
    };
    let mut pieces = Vec::new();
    let mut start = chain[0];
    for (i, &commit) in chain.iter().enumerate().skip(1) {
        if commit != segment.to
            && (repo.parents(commit)?.len() > 1 || adds_approval(repo, chain[i - 1], commit)?)
        {
            pieces.push(unapproved_segment(start, commit));
            start = commit;
        }
    }
    if pieces.is_empty() {
        return Ok(None);
    }
    pieces.push(unapproved_segment(start, segment.to));
    Ok(Some(pieces))
}

/// Whether `commit` adds a file under the approvals' folder to its first parent's tree.
fn adds_approval(repo: &Repo, parent: ObjectId, commit: ObjectId) -> Result<bool, RepoError> {
    let prefix = format!("{}/", crate::approval::tree::DIR);
    for path in repo.changed_between(parent, commit)? {
        if path.starts_with(&prefix) && repo.blob_at(parent, &path)?.is_none() {
            return Ok(true);
        }
    }
    Ok(false)
}

fn unapproved_segment(from: ObjectId, to: ObjectId) -> Segment {
    Segment {
        from,
        to,
        approvals: Approvals::default(),
    }
}

/// What `note` (on the landed `commit`, which landed on `from`) approves under `policy`: where
/// the trust root requires signed approvals, only what a valid signature over exactly this
/// landing names; where it does not, what the note lists (an interactive approval is only as
/// good as the note). An unreadable policy approves nothing.
fn approved_by(
    policy: Option<&Policy>,
    commit: ObjectId,
    from: ObjectId,
    note: LandedNote,
) -> Approvals {
    let Some(policy) = policy else {
        return Approvals::default();
    };
    let tokens: Option<BTreeSet<String>> = match policy.approval {
        ApprovalPolicy::Interactive => None,
        ApprovalPolicy::Signed => Some(
            note.approval
                .as_ref()
                .and_then(|granted| verified_tokens(policy, commit, from, granted))
                .unwrap_or_default(),
        ),
    };
    let counts = |token: &str| tokens.as_ref().is_none_or(|t| t.contains(token));
    Approvals {
        limits: note
            .approved_proposals
            .into_iter()
            .filter(|a| counts(&a.token))
            .collect(),
        protected: note
            .approved_changes
            .into_iter()
            .filter(|c| counts(&c.token))
            .map(|c| c.token)
            .collect(),
    }
}

/// The tokens a signed approval names, when its signature verifies and it is for exactly this
/// landing (`commit` landed on `from`).
fn verified_tokens(
    policy: &Policy,
    commit: ObjectId,
    from: ObjectId,
    granted: &Granted,
) -> Option<BTreeSet<String>> {
    let subject = crate::approval::Subject::parse(&granted.payload)?;
    (subject.head == commit
        && subject.trunk_commit == from
        && matches!(granted.channel, crate::approval::Channel::Signed { .. })
        && crate::approval::check(policy, &subject, granted).is_ok())
    .then_some(subject.tokens)
}

/// Every change of `segment` only the owner may make that its approvals do not cover: the
/// landing's at its end, or a signed approval the segment adds in its tree for exactly its
/// net change against its start's `discern.toml` (verified under `policy`, the trust root's).
pub(super) fn unapproved<'p>(
    repo: &Repo,
    segment: &Segment,
    policy: &dyn Fn() -> Option<&'p Policy>,
) -> Result<Judged, RepoError> {
    let changes = net_change(repo, segment.from, segment.to)?;
    let mut not_counted = None;
    if !changes.is_empty() {
        match approved_in_tree(repo, segment, policy(), &changes)? {
            Ok(who) => {
                return Ok(Judged {
                    unapproved: Vec::new(),
                    approved_by: Some(who),
                    not_counted: None,
                });
            }
            Err(why) => not_counted = why,
        }
    }
    let mut found = Vec::new();
    for l in changes.loosened {
        if !segment.approvals.limits.iter().any(|a| covers(a, &l)) {
            found.push(Unapprovable::Loosened(l));
        }
    }
    for p in changes.protected {
        if !segment.approvals.protected.contains(&p.token) {
            found.push(Unapprovable::Protected(p));
        }
    }
    let unapproved = found
        .into_iter()
        .map(|change| {
            let commit = introduced_by(repo, segment, &change)?;
            let subject = repo.subject(commit)?;
            Ok(Unapproved {
                change,
                commit,
                subject,
            })
        })
        .collect::<Result<_, RepoError>>()?;
    Ok(Judged {
        unapproved,
        approved_by: None,
        not_counted,
    })
}

/// A segment judged: what no approval covers, and who approved it in the tree, if anyone did.
#[derive(Debug, Clone, Default)]
pub(super) struct Judged {
    pub unapproved: Vec<Unapproved>,
    /// `principal (file)` of the approval in the tree that covers the whole segment.
    pub approved_by: Option<String>,
    /// Why the approval the segment adds in its tree does not count, when it adds one.
    pub not_counted: Option<String>,
}

/// `principal (file)` of the approval the segment adds in its tree for exactly its net change;
/// otherwise why the one it adds does not count (`None`: it adds none).
fn approved_in_tree(
    repo: &Repo,
    segment: &Segment,
    policy: Option<&Policy>,
    changes: &GateChanges,
) -> Result<Result<String, Option<String>>, RepoError> {
    let approvals = crate::approval::tree::added(repo, segment.from, segment.to)?;
    if approvals.is_empty() {
        return Ok(Err(None));
    }
    let range = crate::approval::tree::Range {
        from: segment.from,
        to: segment.to,
    };
    Ok(
        match crate::approval::tree::approving(repo, &approvals, policy, range, changes) {
            Ok(a) => Ok(format!("{} ({})", a.principal, a.path())),
            Err(why) => Err(Some(
                why.map_or_else(|| "it cannot be read".to_owned(), |w| w.to_string()),
            )),
        },
    )
}

fn covers(a: &Approval, l: &Loosening) -> bool {
    a.standard == l.standard && a.trunk_limit == l.from && a.proposed_limit == l.to
}

/// The protected set from `from`'s tree and config to `to`'s. A config that cannot be parsed
/// at either end reads as none: its Standards deleted, which only the owner may do.
pub(super) fn net_change(
    repo: &Repo,
    from: ObjectId,
    to: ObjectId,
) -> Result<GateChanges, RepoError> {
    let (old, new) = (config(repo, from)?, config(repo, to)?);
    protected::between(
        repo,
        Side {
            commit: from,
            config: &old,
        },
        Side {
            commit: to,
            config: &new,
        },
    )
}

fn config(repo: &Repo, commit: ObjectId) -> Result<Config, RepoError> {
    match Config::at_or_absent(repo, commit) {
        Ok(config) => Ok(config),
        Err(AtError::Unreadable(e)) => Err(e),
        Err(_) => Ok(Config::absent()),
    }
}

/// The first commit on the segment's chain whose tree already shows `change` (the segment's end
/// when the chain cannot be read).
fn introduced_by(
    repo: &Repo,
    segment: &Segment,
    change: &Unapprovable,
) -> Result<ObjectId, RepoError> {
    let Some(chain) = repo.first_parent_chain(segment.from, segment.to)? else {
        return Ok(segment.to);
    };
    for &commit in chain.iter().skip(1) {
        let seen = net_change(repo, segment.from, commit)?;
        let shows = match change {
            Unapprovable::Loosened(l) => seen.loosened.iter().any(|s| s.standard == l.standard),
            Unapprovable::Protected(p) => seen.protected.iter().any(|s| s.key == p.key),
        };
        if shows {
            return Ok(commit);
        }
    }
    Ok(segment.to)
}
