//! What the owner reviewed: `--head SHA`, the commit they looked at, which the target must still
//! be (approval-only commits on top of it add no code); and the command a dry run prints, which
//! signs exactly the head and the items it showed.

use gix::ObjectId;

use super::ApproveRequest;
use super::refused::NotApproved;
use crate::git::{Repo, short};

/// `--head`, when given, is the target's head (or the commit beneath the approval-only commits
/// on it); otherwise the branch moved past what the owner reviewed, or was rewritten.
pub(super) fn check(
    repo: &Repo,
    request: &ApproveRequest,
    head: ObjectId,
) -> Result<(), NotApproved> {
    let Some(given) = request.head.as_deref() else {
        return Ok(());
    };
    let hex = given.len() >= 7 && given.chars().all(|c| c.is_ascii_hexdigit());
    let reviewed = match hex.then(|| repo.rev_parse(given).ok()).flatten() {
        Some(reviewed) => reviewed,
        None => {
            return Err(NotApproved::NotACommit {
                given: given.to_owned(),
            });
        }
    };
    let beneath = crate::approval::tree::beneath_approvals(repo, head).unwrap_or(head);
    if reviewed == head || reviewed == beneath {
        return Ok(());
    }
    let (target, dry_run) = (target(request), dry_run(request));
    let (at, reviewed_short) = (short(&head.to_string()), short(&reviewed.to_string()));
    match repo.is_ancestor(reviewed, head) {
        true => {
            let past = match repo.ahead_behind(reviewed, head) {
                Ok((ahead, _)) => format!("{ahead} commit(s)"),
                Err(e) => format!("some commit(s) (how many cannot be told: {e})"),
            };
            Err(NotApproved::MovedPast {
                target,
                dry_run,
                at,
                reviewed: reviewed_short,
                past,
            })
        }
        false => Err(NotApproved::Rewritten {
            target,
            dry_run,
            at,
            reviewed: reviewed_short,
        }),
    }
}

/// What the request approves, for a message: the target as written, the effort, or this
/// checkout's branch.
pub(super) fn target(request: &ApproveRequest) -> String {
    match (&request.target, &request.effort) {
        (Some(target), _) => target.clone(),
        (None, Some(effort)) => format!("the effort {effort}"),
        (None, None) => "this checkout's branch".to_owned(),
    }
}

/// The dry run of the same target, which prints the command that signs what it shows.
pub(super) fn dry_run(request: &ApproveRequest) -> String {
    let mut words = vec!["discern approve".to_owned()];
    if let Some(target) = &request.target {
        words.push(target.clone());
    }
    if let Some(effort) = &request.effort {
        words.push(format!("--effort {effort}"));
    }
    if let Some(branch) = &request.branch {
        words.push(format!("--branch {branch}"));
    }
    words.push("--dry-run".to_owned());
    words.join(" ")
}

/// The command that approves exactly `head` and the items a dry run listed: the same target,
/// the same receiving branch, `--head` the full commit id.
pub(super) fn command(request: &ApproveRequest, head: ObjectId) -> String {
    let mut words = vec!["discern".to_owned(), "approve".to_owned()];
    if let Some(target) = &request.target {
        words.push(target.clone());
    }
    if let Some(effort) = &request.effort {
        words.extend(["--effort".to_owned(), effort.clone()]);
    }
    if let Some(branch) = &request.branch {
        words.extend(["--branch".to_owned(), branch.clone()]);
    }
    words.extend(["--head".to_owned(), head.to_string()]);
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_printed_command_keeps_the_target_and_names_the_head() {
        let head: ObjectId = "0123456789abcdef0123456789abcdef01234567".parse().unwrap();
        let request = ApproveRequest {
            target: Some("origin/feature".into()),
            branch: Some("feature-approved".into()),
            ..ApproveRequest::default()
        };
        assert_eq!(
            command(&request, head),
            "discern approve origin/feature --branch feature-approved --head 0123456789abcdef0123456789abcdef01234567"
        );
        let effort = ApproveRequest {
            effort: Some("fix".into()),
            ..ApproveRequest::default()
        };
        assert!(command(&effort, head).starts_with("discern approve --effort fix --head "));
        assert_eq!(
            dry_run(&request),
            "discern approve origin/feature --branch feature-approved --dry-run"
        );
        assert_eq!(
            dry_run(&ApproveRequest::default()),
            "discern approve --dry-run"
        );
    }
}
