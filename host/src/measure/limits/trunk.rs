//! The trunk judged cumulatively: from `--baseline REV`, else from the nearest first-parent
//! ancestor carrying a landing's Proof note whose landing verifies, else from the first parent,
//! every change only the owner may make must be covered by an approval a landing recorded for
//! it, verified under the baseline's policy and signers (the trust root).

use gix::ObjectId;

use super::range::{self, Unapprovable, Unapproved};
use super::{Against, BaselineKind, Forbidden, LimitsCheck, fix};
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
/// verified under the baseline's policy: never one a commit being judged sets.
fn judge(
    repo: &Repo,
    against: &Against,
    base: ObjectId,
    kind: BaselineKind,
    check: &mut LimitsCheck,
) -> Result<(), RepoError> {
    check.summary.baseline = Some(base.to_string());
    check.summary.baseline_kind = Some(kind);
    // The baseline's policy, anchored (read once, and only when an approval must be checked).
    let anchored = std::cell::OnceCell::new();
    let policy = || {
        anchored
            .get_or_init(|| crate::approval::anchored_policy(repo, base))
            .as_ref()
    };
    // Approvals given at landing are Proof notes: a clone without them cannot see those.
    let has_notes = repo.resolve_ref(crate::commit::NOTES_REF)?.is_some();
    for segment in range::segments(repo, base, against.head, &policy)? {
        let judged = range::unapproved(repo, &segment, &policy)?;
        if judged.approved_by.is_some() {
            check.approved_by = judged.approved_by;
        }
        for found in judged.unapproved {
            let mut message = message(&found, &against.trunk, base);
            if let Some(why) = &judged.not_counted {
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
            let what = match &found.change {
                Unapprovable::Loosened(l) => Forbidden::Loosened(l),
                Unapprovable::Protected(p) => Forbidden::Protected(p),
            };
            check.forbid(what, message, &show);
        }
    }
    Ok(())
}

fn message(found: &Unapproved, trunk: &str, base: ObjectId) -> String {
    let what = match &found.change {
        Unapprovable::Loosened(l) => l.describe(),
        Unapprovable::Protected(p) => format!("{} (a protected change)", p.describe()),
    };
    format!(
        "{what} on the trunk {trunk} in {} ({:?}), since {}, with no owner approval recorded for it. A limit loosens, and the gate's definition changes, only through an approval the owner gives when it lands; restore it in a new commit.",
        short(&found.commit.to_string()),
        found.subject,
        short(&base.to_string())
    )
}
