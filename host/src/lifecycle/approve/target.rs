//! What `discern approve` approves: this checkout's branch, an effort (`--effort ID`), or a
//! branch or revision named on the command line (`feature`, `origin/feature`,
//! `refs/pull/7/head`, a commit id) — from any checkout, no worktree needed. A signed approval
//! lands as a commit on a local branch: the named branch itself, or for a remote or
//! pull-request ref the local branch of the same name (`feature`, `pr-7`, or `--branch NAME`),
//! created at the approved commit when absent, fast-forwarded to it when the branch is behind
//! it and checked out nowhere (an earlier approval the author pulled and built on), and never
//! moved from anywhere else.

use gix::ObjectId;

use super::refused::NotApproved;
use crate::git::{Repo, short};
use crate::result::Refused;
use crate::workspace::Workspace;

/// The commit approved and where its approval commit goes.
pub(super) struct Target {
    /// The repository read and written: the worktree that has the branch out, if any.
    pub repo: Repo,
    pub head: ObjectId,
    /// The local branch that receives a signed approval's commit.
    pub branch: Option<Receiving>,
    /// How the approval reaches the forge, for the report.
    pub push: Option<String>,
}

/// A local branch for the approval commit; `create` when it does not exist yet, `forward`
/// from the commit it is at when it is behind the approved one.
pub(super) struct Receiving {
    pub name: String,
    pub create: bool,
    pub forward: Option<ObjectId>,
}

/// The target the request names: `rev`, else `--effort`, else this checkout.
pub(super) fn target(
    ws: &Workspace,
    effort: Option<&str>,
    rev: Option<&str>,
    branch: Option<&str>,
) -> Result<Target, Refused> {
    match (rev, effort) {
        (Some(_), Some(_)) => Err(NotApproved::TargetTwice.into()),
        (Some(rev), None) => named(ws, rev, branch),
        (None, Some(effort)) => {
            let repo = super::super::effort::workspace(ws, effort)?.repo;
            checked_out(recovered(repo)?)
        }
        (None, None) => this_checkout(ws),
    }
}

/// This checkout, when it has a branch other than the trunk out (an effort's worktree, or a
/// plain clone with a pull request's branch checked out).
fn this_checkout(ws: &Workspace) -> Result<Target, Refused> {
    let config = crate::preflight::load_config(ws)?;
    let trunk = ws.landing_trunk(config.as_ref());
    let branch = ws.repo.branch().ok().flatten();
    let on_trunk = branch.is_none() || branch.as_deref() == Some(trunk.as_str());
    if ws.repo.is_main_checkout() && on_trunk {
        return Err(NotApproved::TrunkCheckedOut.into());
    }
    checked_out(ws.repo.clone())
}

/// A checkout's HEAD and the branch it has out.
fn checked_out(repo: Repo) -> Result<Target, Refused> {
    let Some(head) = repo.head().ok().flatten() else {
        return Err(unreadable("HEAD"));
    };
    let branch = repo.branch().ok().flatten().map(|name| Receiving {
        name,
        create: false,
        forward: None,
    });
    Ok(Target {
        repo,
        head,
        branch,
        push: None,
    })
}

/// Another checkout, with the config transaction a kill interrupted there (an approval commit
/// killed after its branch moved) finished or unwound first: the preflight recovers only the
/// checkout the verb runs in, and its index and file must follow the branch before anything
/// is read or committed there.
fn recovered(repo: Repo) -> Result<Repo, Refused> {
    crate::commit::recover(&repo).map_err(|e| crate::preflight::recovery_refusal(&e))?;
    Ok(repo)
}

fn unreadable(what: &str) -> Refused {
    NotApproved::Unreadable {
        what: what.to_owned(),
    }
    .into()
}

/// A branch or revision named on the command line.
fn named(ws: &Workspace, rev: &str, branch: Option<&str>) -> Result<Target, Refused> {
    let local = rev.strip_prefix("refs/heads/").unwrap_or(rev);
    let branch_name = !rev.starts_with("refs/") || rev.starts_with("refs/heads/");
    if branch_name && let Some(at) = ws.repo.local_branch_commit(local).ok().flatten() {
        if branch.is_some_and(|b| b != local) {
            let local = local.to_owned();
            return Err(NotApproved::BranchFlagOnLocalBranch { local }.into());
        }
        return on_local_branch(ws, local, at, None);
    }
    let (reference, head) = resolved(&ws.repo, rev)?;
    let Some(name) = branch
        .map(str::to_owned)
        .or_else(|| receiving_name(&reference))
    else {
        let rev = rev.to_owned();
        return Err(NotApproved::NotABranch { rev }.into());
    };
    let push = push_hint(&reference, &name);
    match ws.repo.local_branch_commit(&name).ok().flatten() {
        None => Ok(Target {
            repo: ws.repo.clone(),
            head,
            branch: Some(Receiving {
                name,
                create: true,
                forward: None,
            }),
            push,
        }),
        Some(at) if at == head => on_local_branch(ws, &name, at, push),
        Some(at) if ws.repo.is_ancestor(at, head) && !checked_out_anywhere(ws, &name)? => {
            Ok(Target {
                repo: ws.repo.clone(),
                head,
                branch: Some(Receiving {
                    name,
                    create: false,
                    forward: Some(at),
                }),
                push,
            })
        }
        Some(at) => Err(NotApproved::BranchElsewhere {
            name,
            at: short(&at.to_string()),
            rev: rev.to_owned(),
            head: short(&head.to_string()),
        }
        .into()),
    }
}

/// Whether a worktree of this repository has `name` out (its files would have to move too).
fn checked_out_anywhere(ws: &Workspace, name: &str) -> Result<bool, Refused> {
    let worktrees = ws
        .repo
        .worktrees()
        .map_err(|_| unreadable("The list of worktrees"))?;
    Ok(worktrees.iter().any(|w| w.branch.as_deref() == Some(name)))
}

/// A local branch at `at`: approved in the worktree that has it out, else as a ref alone.
fn on_local_branch(
    ws: &Workspace,
    name: &str,
    at: ObjectId,
    push: Option<String>,
) -> Result<Target, Refused> {
    let worktrees = ws
        .repo
        .worktrees()
        .map_err(|_| unreadable("The list of worktrees"))?;
    let repo = match worktrees
        .iter()
        .find(|w| w.branch.as_deref() == Some(name) && !w.prunable)
    {
        Some(w) => recovered(
            Repo::discover(&w.path).map_err(|_| unreadable(&format!("The worktree of {name}")))?,
        )?,
        None => ws.repo.clone(),
    };
    Ok(Target {
        repo,
        head: at,
        branch: Some(Receiving {
            name: name.to_owned(),
            create: false,
            forward: None,
        }),
        push,
    })
}

/// `rev` as a remote-tracking or pull-request ref (never a tag), else as a commit id.
fn resolved(repo: &Repo, rev: &str) -> Result<(Option<String>, ObjectId), Refused> {
    if let Some(found) = repo.resolve_ref(rev).ok().flatten() {
        return Ok((Some(found.reference), found.commit));
    }
    let hex = rev.len() >= 7 && rev.chars().all(|c| c.is_ascii_hexdigit());
    match hex.then(|| repo.rev_parse(rev).ok()).flatten() {
        Some(commit) => Ok((None, commit)),
        None => Err(NotApproved::UnknownRevision {
            rev: rev.to_owned(),
        }
        .into()),
    }
}

/// The local branch a remote ref's approval goes on: `origin/feature` → `feature`,
/// `refs/pull/7/head` → `pr-7`.
fn receiving_name(reference: &Option<String>) -> Option<String> {
    let reference = reference.as_deref()?;
    if let Some(number) = pull_number(reference) {
        return Some(format!("pr-{number}"));
    }
    let rest = reference.strip_prefix("refs/remotes/")?;
    let (_, branch) = rest.split_once('/')?;
    (!branch.is_empty() && branch != "HEAD").then(|| branch.to_owned())
}

fn pull_number(reference: &str) -> Option<&str> {
    let rest = reference.strip_prefix("refs/pull/").or_else(|| {
        reference
            .strip_prefix("refs/remotes/")
            .and_then(|r| r.split_once("/pull/").map(|(_, n)| n))
    })?;
    rest.strip_suffix("/head")
}

/// What sends the approval commit to the pull request.
fn push_hint(reference: &Option<String>, local: &str) -> Option<String> {
    let reference = reference.as_deref()?;
    if pull_number(reference).is_some() {
        return Some(format!(
            "push {local} to the pull request's branch (`git push FORK_URL {local}:BRANCH`; maintainers may edit a fork's pull request), or ask its author to pull it"
        ));
    }
    let rest = reference.strip_prefix("refs/remotes/")?;
    let (remote, branch) = rest.split_once('/')?;
    Some(format!("push it (`git push {remote} {local}:{branch}`)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remote_or_pull_request_ref_names_its_local_branch() {
        let name = |r: &str| receiving_name(&Some(r.to_owned()));
        assert_eq!(
            name("refs/remotes/origin/feature/x"),
            Some("feature/x".into())
        );
        assert_eq!(name("refs/pull/7/head"), Some("pr-7".into()));
        assert_eq!(
            name("refs/remotes/origin/pull/12/head"),
            Some("pr-12".into())
        );
        assert_eq!(name("refs/remotes/origin/HEAD"), None);
        assert_eq!(name("refs/pull/7/merge"), None);
        assert_eq!(receiving_name(&None), None);
    }

    #[test]
    fn the_push_hint_names_the_remote_and_branch() {
        let hint = push_hint(&Some("refs/remotes/upstream/fix".into()), "fix");
        assert_eq!(
            hint.as_deref(),
            Some("push it (`git push upstream fix:fix`)")
        );
        let pull = push_hint(&Some("refs/pull/3/head".into()), "pr-3").unwrap_or_default();
        assert!(pull.contains("pr-3:BRANCH"), "{pull}");
    }
}
