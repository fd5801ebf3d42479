//! One round of a sync: fetch what the remote has into the tracking refs, bring each local ref
//! up to date with its copy (created, fast-forwarded, or merged), and push what is ahead.

use gix::ObjectId;
use serde::Serialize;

use super::refs::{SYNCED, Synced, tracking};
use super::seal::Seal;
use super::transport::{self, Pushed, Update};
use super::{SyncError, merge};
use crate::commit::shared_refs::{set_ref, tree_of, write_commit};
use crate::git::{Repo, short};

/// What happened to one ref.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Action {
    /// Neither side has it.
    Absent,
    UpToDate,
    /// Only this clone's has something new.
    Ahead,
    /// Taken from the remote (created or fast-forwarded).
    Fetched,
    /// Both had something new: merged.
    Merged,
    Pushed,
}

/// One ref after a sync.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct RefState {
    #[serde(rename = "ref")]
    pub name: String,
    pub local: Option<String>,
    pub remote: Option<String>,
    pub action: Action,
    /// Paths both sides wrote differently, settled by the ref's rule.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub settled: Vec<String>,
}

impl RefState {
    /// Whether this clone has something the remote does not.
    pub(crate) fn unpushed(&self) -> bool {
        self.local.is_some() && self.local != self.remote
    }

    pub(crate) fn line(&self) -> String {
        let at = |id: &Option<String>| id.as_deref().map_or_else(|| "none".to_owned(), short);
        let what = match self.action {
            Action::Absent => "on neither side".to_owned(),
            Action::UpToDate => format!("up to date at {}", at(&self.local)),
            Action::Ahead => format!("{} here, not on the remote yet", at(&self.local)),
            Action::Fetched => format!("fetched {}", at(&self.local)),
            Action::Merged => format!(
                "merged the remote's {} into {}{}",
                at(&self.remote),
                at(&self.local),
                match self.settled.len() {
                    0 => String::new(),
                    n => format!(
                        " ({n} path{} both wrote; this clone's kept)",
                        if n == 1 { "" } else { "s" }
                    ),
                }
            ),
            Action::Pushed => format!("pushed {}", at(&self.local)),
        };
        format!("{}: {what}", self.name)
    }
}

/// Fetch the remote's copies of the synced refs and bring each local ref up to date.
pub(super) fn fetch_and_merge(
    (repo, seal): (&Repo, &Seal),
    remote: &str,
) -> Result<Vec<RefState>, SyncError> {
    let names: Vec<&str> = SYNCED.iter().map(|s| s.name).collect();
    let tips = transport::remote_refs((repo, seal), remote, &names)?;
    let pairs: Vec<(String, String)> = tips
        .keys()
        .map(|name| (name.clone(), tracking(name, remote)))
        .collect();
    transport::fetch((repo, seal), remote, &pairs)?;
    SYNCED
        .iter()
        .map(|synced| integrate(repo, synced, tips.get(synced.name).copied()))
        .collect()
}

fn integrate(
    repo: &Repo,
    synced: &Synced,
    theirs: Option<ObjectId>,
) -> Result<RefState, SyncError> {
    let ours = repo.resolve_ref(synced.name)?.map(|r| r.commit);
    let mut state = RefState {
        name: synced.name.to_owned(),
        local: ours.map(|id| id.to_string()),
        remote: theirs.map(|id| id.to_string()),
        action: Action::UpToDate,
        settled: Vec::new(),
    };
    let (new, action) = match (ours, theirs) {
        (None, None) => (None, Action::Absent),
        (Some(_), None) => (None, Action::Ahead),
        (None, Some(t)) => (Some(t), Action::Fetched),
        (Some(o), Some(t)) if o == t => (None, Action::UpToDate),
        (Some(o), Some(t)) if repo.is_ancestor(t, o) => (None, Action::Ahead),
        (Some(o), Some(t)) if repo.is_ancestor(o, t) => (Some(t), Action::Fetched),
        (Some(o), Some(t)) => {
            let (merged, settled) = merged(repo, synced, o, t)?;
            state.settled = settled;
            (Some(merged), Action::Merged)
        }
    };
    if let Some(new) = new {
        // Brief, and after the network: a landing writing its note waits for it, or the
        // compare-and-swap below refuses and the sync is run again.
        let _writer = crate::commit::lock::WriterLock::acquire(repo)?;
        set_ref(repo, synced.name, ours, new, "discern sync")?;
        state.local = Some(new.to_string());
    }
    state.action = action;
    Ok(state)
}

/// A merge commit of `ours` and `theirs`, and the paths both wrote differently.
fn merged(
    repo: &Repo,
    synced: &Synced,
    ours: ObjectId,
    theirs: ObjectId,
) -> Result<(ObjectId, Vec<String>), SyncError> {
    let base = repo
        .merge_base(ours, theirs)
        .map(|b| tree_of(repo, b))
        .transpose()?;
    let result = merge::trees(
        &repo.local(),
        base,
        tree_of(repo, ours)?,
        tree_of(repo, theirs)?,
        synced.rule,
    )?;
    let tree = result
        .tree
        .ok_or_else(|| SyncError::Git("the merge wrote no tree".to_owned()))?;
    let message = format!("discern sync: merge {theirs} into {ours}");
    let commit = write_commit(repo, tree, &[ours, theirs], &message)?;
    Ok((commit, result.settled))
}

/// Push every ref this clone has ahead of the remote (and `trunk`, a landing), atomically,
/// each leased on the tip the remote had when it was fetched.
pub(super) fn push(
    (repo, seal): (&Repo, &Seal),
    remote: &str,
    states: &[RefState],
    trunk: Option<&Update>,
) -> Result<Pushed, SyncError> {
    let mut updates: Vec<Update> = states
        .iter()
        .filter(|s| s.unpushed())
        .filter_map(|s| {
            Some(Update {
                local: s.local.as_deref()?.parse().ok()?,
                remote_ref: s.name.clone(),
                expected: s.remote.as_deref().and_then(|r| r.parse().ok()),
            })
        })
        .collect();
    updates.extend(trunk.cloned());
    transport::push((repo, seal), remote, &updates)
}

/// Mark the refs a successful push carried, and move their tracking copies to what the
/// remote now has (as git does for a branch's upstream), so `status` sees nothing unpushed.
pub(super) fn pushed(repo: &Repo, remote: &str, states: &mut [RefState]) -> Result<(), SyncError> {
    for state in states.iter_mut().filter(|s| s.unpushed()) {
        let name = tracking(&state.name, remote);
        let old = repo.resolve_ref(&name)?.map(|r| r.commit);
        if let Some(new) = state.local.as_deref().and_then(|l| l.parse().ok()) {
            set_ref(repo, &name, old, new, "discern sync: pushed")?;
        }
        state.remote = state.local.clone();
        state.action = Action::Pushed;
    }
    Ok(())
}
