//! The trunk judged cumulatively: from `--baseline REV`, else from the nearest first-parent
//! ancestor carrying a landing's Proof note whose landing verifies, else from the first parent,
//! every change only the owner may make must be covered by an approval a landing recorded for
//! it, verified under the baseline's policy and signers (the trust root).

use gix::ObjectId;

use super::range::{self, Unapprovable, Unapproved};
use super::{Against, BaselineKind, Forbidden, LimitsCheck, UnapprovedChange, fix};
use crate::git::{Repo, RepoError, short};

/// How far back a landing is looked for before the first parent is taken instead.
const LANDING_SEARCH: usize = 10_000;

/// `--baseline REV`: every commit since `REV`, which must be an ancestor of HEAD.
pub(super) fn given(
    repo: &Repo,
    against: &Against,
    rev: &str,
    check: &mut LimitsCheck,
) -> Result<(), RepoError> {
    // An explicit baseline is always required: what was asked for is checked or the run fails.
    check.required = true;
    if no_previous_tip(rev) {
        return first_push(repo, against, check);
    }
    let Ok(base) = repo.rev_parse(rev) else {
        let fix = match repo.is_shallow() {
            true => fix::fetch(repo, &against.trunk),
            false => format!("git fetch origin {rev}"),
        };
        check.unverified(
            format!("the baseline {rev:?} is not a commit this clone has"),
            Some(fix),
        );
        return Ok(());
    };
    if !repo.is_ancestor(base, against.head) {
        check.unverified(
            format!(
                "the baseline {} is not an ancestor of HEAD (was the trunk rewritten?)",
                short(&base.to_string())
            ),
            None,
        );
        return Ok(());
    }
    judge(repo, against, base, BaselineKind::Given, check)
}

/// A merge queue's entry with no `--baseline`: what it will land is every commit since its merge
/// base with the trunk (the queue's base, where the trunk has not moved since), each pull
/// request's merge judged as the trunk judges it.
pub(super) fn queued(
    repo: &Repo,
    against: &Against,
    trunk: ObjectId,
    check: &mut LimitsCheck,
) -> Result<(), RepoError> {
    let Some(base) = repo.merge_base(trunk, against.head) else {
        check.required = true;
        check.unverified(
            "this merge queue entry has no merge base with the trunk in this clone".to_owned(),
            Some(fix::fetch(repo, &against.trunk)),
        );
        return Ok(());
    };
    check.advisories.push(format!(
        "A merge queue's entry (GITHUB_EVENT_NAME=merge_group): judged as what it will land on the trunk {}, every commit since {}, each pull request's merge against its own predecessor. Name the queue's base: `--baseline ${{{{ github.event.merge_group.base_sha }}}}`.",
        against.trunk,
        short(&base.to_string())
    ));
    given(repo, against, &base.to_string(), check)
}

/// The all-zero id a forge gives as `before` of a push that created the branch (GitHub's
/// `github.event.before`): there was no previous tip.
fn no_previous_tip(rev: &str) -> bool {
    matches!(rev.len(), 40 | 64) && rev.bytes().all(|b| b == b'0')
}

/// A push that created the branch: everything it brings is new, so every commit of HEAD's
/// first-parent chain is judged, from its root commit (whose config is the trust root) on.
fn first_push(repo: &Repo, against: &Against, check: &mut LimitsCheck) -> Result<(), RepoError> {
    let mut root = against.head;
    while let Some(parent) = repo.first_parent(root)? {
        root = parent;
    }
    if repo.parent_missing(root) {
        check.unverified(
            "the push created the branch (--baseline is the all-zero id: no previous tip), so every commit down to the root is judged, and this shallow clone lacks some".to_owned(),
            Some(fix::fetch(repo, &against.trunk)),
        );
        return Ok(());
    }
    if root == against.head {
        check.summary.baseline_kind = Some(BaselineKind::Root);
        return Ok(());
    }
    check.advisories.push(format!(
        "The push created the branch (--baseline is the all-zero id: no previous tip): every commit since the root commit {} is judged.",
        short(&root.to_string())
    ));
    judge(repo, against, root, BaselineKind::Given, check)
}

/// HEAD is the trunk: judge it since its last landing (or its first parent).
pub(super) fn landed(
    repo: &Repo,
    against: &Against,
    check: &mut LimitsCheck,
) -> Result<(), RepoError> {
    let Some(parent) = repo.first_parent(against.head)? else {
        if repo.parent_missing(against.head) {
            check.unverified(
                "this shallow clone lacks the trunk commit's parent, so what it changed cannot be told".to_owned(),
                Some(fix::fetch(repo, &against.trunk)),
            );
        } else {
            check.summary.baseline_kind = Some(BaselineKind::Root);
        }
        return Ok(());
    };
    // Without Proof notes in this clone there is no landing to find: the first parent it is.
    let has_notes = repo.resolve_ref(crate::commit::NOTES_REF)?.is_some();
    let searches = if has_notes { LANDING_SEARCH } else { 0 };
    let mut candidate = parent;
    for _ in 0..searches {
        if range::verified_landing(repo, candidate)? {
            return judge(repo, against, candidate, BaselineKind::Landing, check);
        }
        match repo.first_parent(candidate)? {
            Some(next) => candidate = next,
            None if repo.parent_missing(candidate) => {
                check.unverified(
                    "this shallow clone ends before the trunk's last landing, so the commits since it cannot all be judged".to_owned(),
                    Some(fix::fetch(repo, &against.trunk)),
                );
                return Ok(());
            }
            None => break,
        }
    }
    judge(repo, against, parent, BaselineKind::FirstParent, check)
}

/// Every forbidden change in `base..HEAD` needs an approval a landing in the range recorded,
/// verified under the baseline's policy: never one a commit being judged sets. A tip that
/// restores the gate from before an unapproved change is judged from there (`revert`).
fn judge(
    repo: &Repo,
    against: &Against,
    base: ObjectId,
    kind: BaselineKind,
    check: &mut LimitsCheck,
) -> Result<(), RepoError> {
    let mut judged = judged_from(repo, base, against.head)?;
    let (mut base, mut kind) = (base, kind);
    if !judged.unapproved.is_empty()
        && let Some(restored) = super::revert::restored(repo, base, against.head)?
    {
        let again = judged_from(repo, restored, against.head)?;
        if again.unapproved.is_empty() && legitimate(repo, restored, LEGITIMACY_DEPTH)? {
            let mut keys: Vec<String> = judged
                .unapproved
                .iter()
                .map(|(u, _)| u.change.key())
                .collect();
            keys.dedup();
            check.advisories.push(format!(
                "HEAD restores the gate of {} exactly: it undoes {}, changed without the owner's approval since then (up to {} {:?}), so it is judged as no change.",
                short(&restored.to_string()),
                keys.join(", "),
                short(&base.to_string()),
                repo.subject(base)?
            ));
            judged = again;
            // A baseline the runner gave stays the one named (the findings compare with it).
            if kind != BaselineKind::Given {
                (base, kind) = (restored, BaselineKind::Restored);
            }
        }
    }
    check.summary.baseline = Some(base.to_string());
    check.summary.baseline_kind = Some(kind);
    if judged.approved_by.is_some() {
        check.approved_by = judged.approved_by;
    }
    // Approvals given at landing are Proof notes: a clone without them cannot see those.
    let has_notes = repo.resolve_ref(crate::commit::NOTES_REF)?.is_some();
    for (found, not_counted) in judged.unapproved {
        let mut message = message(&found, &against.trunk, base);
        if let Some(why) = &not_counted {
            message.push_str(&format!(
                " The approval this stretch carries in {} does not count: {why}.",
                crate::approval::tree::DIR
            ));
        }
        if !has_notes {
            message.push_str(&format!(
                " This clone has no Proof notes ({}), where an approval given when it landed is recorded: if the owner approved it then, fetch them (`git fetch origin {}:{}`) and check again.",
                crate::commit::NOTES_REF,
                crate::commit::NOTES_REF,
                crate::commit::NOTES_REF
            ));
        }
        let show = format!("git show {}", short(&found.commit.to_string()));
        check.unapproved.push(UnapprovedChange {
            key: found.change.key(),
            what: found.change.what(),
            commit: found.commit.to_string(),
            subject: found.subject.clone(),
        });
        let what = match &found.change {
            Unapprovable::Loosened(l) => Forbidden::Loosened(l),
            Unapprovable::Protected(p) => Forbidden::Protected(p),
        };
        check.forbid(what, message, &show);
    }
    Ok(())
}

/// How many reverts back a restored gate's legitimacy is followed before it counts as not.
const LEGITIMACY_DEPTH: usize = 4;

/// Whether the gate at `at` got there legitimately: the commit that established it was approved
/// (or changed nothing only the owner may change, or is the history's start), or itself
/// restored a gate that got there legitimately — followed `depth` reverts back, else not.
fn legitimate(repo: &Repo, at: ObjectId, depth: usize) -> Result<bool, RepoError> {
    let Some(established) = super::revert::establishing(repo, at)? else {
        return Ok(false);
    };
    let Some(parent) = repo.first_parent(established)? else {
        return Ok(true);
    };
    if judged_from(repo, parent, established)?
        .unapproved
        .is_empty()
    {
        return Ok(true);
    }
    if depth == 0 {
        return Ok(false);
    }
    match super::revert::restored(repo, parent, established)? {
        Some(restored) => legitimate(repo, restored, depth - 1),
        None => Ok(false),
    }
}

/// `base..head` judged: each change no approval covers (with why an approval the stretch
/// carries does not count), and who approved in the tree.
struct RangeJudged {
    unapproved: Vec<(Unapproved, Option<String>)>,
    approved_by: Option<String>,
}

/// `base..head` judged under `base`'s anchored policy (read once, and only when an approval
/// must be checked).
fn judged_from(repo: &Repo, base: ObjectId, head: ObjectId) -> Result<RangeJudged, RepoError> {
    let anchored = std::cell::OnceCell::new();
    let policy = || {
        anchored
            .get_or_init(|| crate::approval::anchored_policy(repo, base))
            .as_ref()
    };
    let mut out = RangeJudged {
        unapproved: Vec::new(),
        approved_by: None,
    };
    for segment in range::segments(repo, base, head, &policy)? {
        let judged = judged_segment(repo, &segment, &policy)?;
        if judged.approved_by.is_some() {
            out.approved_by = judged.approved_by;
        }
        out.unapproved.extend(
            judged
                .unapproved
                .into_iter()
                .map(|u| (u, judged.not_counted.clone())),
        );
    }
    Ok(out)
}

/// `segment` judged by its net change; when that leaves a change unapproved and no landing's
/// note approves the stretch, judged again merge by merge (several pull requests a merge queue
/// or one push brought, each approved for its own change): it passes as they would one by
/// one, and otherwise stands as judged whole.
fn judged_segment<'p>(
    repo: &Repo,
    segment: &range::Segment,
    policy: &dyn Fn() -> Option<&'p crate::approval::Policy>,
) -> Result<range::Judged, RepoError> {
    let whole = range::unapproved(repo, segment, policy)?;
    if whole.unapproved.is_empty() || segment.approvals != range::Approvals::default() {
        return Ok(whole);
    }
    let Some(pieces) = range::by_merges(repo, segment)? else {
        return Ok(whole);
    };
    let mut approved_by = None;
    for piece in &pieces {
        let judged = range::unapproved(repo, piece, policy)?;
        if !judged.unapproved.is_empty() {
            return Ok(whole);
        }
        approved_by = judged.approved_by.or(approved_by);
    }
    Ok(range::Judged {
        unapproved: Vec::new(),
        approved_by,
        not_counted: None,
    })
}

fn message(found: &Unapproved, trunk: &str, base: ObjectId) -> String {
    let commit = short(&found.commit.to_string());
    let (what, rule) = match &found.change {
        Unapprovable::Loosened(l) => (
            l.describe(),
            "A limit loosens only through a proposal the owner approves when it lands",
        ),
        Unapprovable::Protected(p) => (
            format!("{} (a protected change)", p.describe()),
            "The gate's definition changes only through the owner's approval of exactly that change",
        ),
    };
    format!(
        "{what} on the trunk {trunk} in {commit} ({:?}), since {}, with no owner approval recorded for it. {rule}: make it in an effort (`discern start`, commit it there, `discern done`, then `discern accept`, where the owner approves it), or undo it on the trunk (`git revert {commit}`: restoring what was there before is no change).",
        found.subject,
        short(&base.to_string())
    )
}
