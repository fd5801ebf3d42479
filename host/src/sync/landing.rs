//! The local trunk's landing and the forge's trunk: a landing (`accept` writes a Proof note on
//! the commit it lands) the forge lacks is pushed with its note when the local trunk is a
//! fast-forward of the forge's, and named as not pushed, with the command that gets it there,
//! when the forge's trunk moved on since it landed. A trunk is never force-pushed.

use gix::ObjectId;

use super::SyncError;
use super::seal::Seal;
use super::transport::{self, Update};
use crate::git::{Repo, RepoError, short};

/// How far back along the local trunk's first parents a landing is looked for.
const SEARCH: usize = 200;

/// The local trunk against the forge's.
pub(super) enum TrunkLanding {
    /// Nothing of the local trunk to push: no landing the forge lacks.
    Nothing,
    /// A fast-forward of the forge's trunk that holds a landing: pushed with the notes.
    Push(Update),
    /// A landing the forge lacks on a local trunk that is no fast-forward of the forge's.
    Diverged(Unpushed),
}

/// A landing the push cannot carry.
#[derive(Debug, Clone, serde::Serialize)]
pub(crate) struct Unpushed {
    pub trunk: String,
    /// The local trunk's tip.
    pub local: String,
    /// The landing on it the forge lacks.
    pub landing: String,
    /// The forge's trunk tip.
    pub remote: String,
}

impl Unpushed {
    /// Why the landing was not pushed, and the commands that push it.
    pub(crate) fn message(&self, remote: &str) -> String {
        format!(
            "the landing {} on the local trunk {trunk} was not pushed: {remote}'s {trunk} moved to {} since it landed, so the local {trunk} is no fast-forward of it and a trunk is never force-pushed (the notes and evidence were pushed). Bring the team's trunk in with a merge and push again: `git checkout {trunk} && git pull --no-rebase {remote} {trunk}`, then `discern sync --push` (a rebase would rewrite the landing and leave it without its Proof note)",
            short(&self.landing),
            short(&self.remote),
            trunk = self.trunk,
        )
    }
}

/// The local trunk `trunk` against the remote's, asked of the remote itself.
pub(super) fn trunk_landing(
    (repo, seal): (&Repo, &Seal),
    remote: &str,
    trunk: &str,
) -> Result<TrunkLanding, SyncError> {
    let Some(local) = repo.local_branch_commit(trunk)? else {
        return Ok(TrunkLanding::Nothing);
    };
    let name = format!("refs/heads/{trunk}");
    let theirs = transport::remote_refs((repo, seal), remote, &[name.as_str()])?.remove(&name);
    let Some(theirs) = theirs else {
        return Ok(TrunkLanding::Nothing);
    };
    let Some(landing) = landing_beyond(repo, local, theirs)? else {
        return Ok(TrunkLanding::Nothing);
    };
    Ok(match repo.is_ancestor(theirs, local) {
        true => TrunkLanding::Push(Update {
            local,
            remote_ref: name,
            expected: Some(theirs),
        }),
        false => TrunkLanding::Diverged(Unpushed {
            trunk: trunk.to_owned(),
            local: local.to_string(),
            landing: landing.to_string(),
            remote: theirs.to_string(),
        }),
    })
}

/// The newest landing (a commit with a Proof note) on `local`'s first-parent chain that
/// `theirs` does not contain.
pub(crate) fn landing_beyond(
    repo: &Repo,
    local: ObjectId,
    theirs: ObjectId,
) -> Result<Option<ObjectId>, RepoError> {
    let mut at = Some(local);
    for _ in 0..SEARCH {
        let Some(commit) = at else { break };
        if commit == theirs || repo.is_ancestor(commit, theirs) {
            break;
        }
        if repo.note(crate::commit::NOTES_REF, commit)?.is_some() {
            return Ok(Some(commit));
        }
        at = repo.first_parent(commit)?;
    }
    Ok(None)
}

/// The landing the local trunk holds and the remote's trunk (as last fetched into its
/// tracking ref) lacks: what `status` names as unpushed.
/// `Ok(None)` without a local trunk or a tracking ref; what cannot be read is an error, never
/// "nothing unpushed".
pub(crate) fn unpushed_landing(
    repo: &Repo,
    remote: &str,
    trunk: &str,
) -> Result<Option<ObjectId>, RepoError> {
    let Some(local) = repo.local_branch_commit(trunk)? else {
        return Ok(None);
    };
    let tracking = format!("refs/remotes/{remote}/{trunk}");
    let Some(theirs) = repo.resolve_ref(&tracking)? else {
        return Ok(None);
    };
    landing_beyond(repo, local, theirs.commit)
}
