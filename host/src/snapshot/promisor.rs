//! Partial clones: a blobless clone (`git clone --filter=blob:none`, a sparse checkout's
//! usual companion) holds every commit and tree but only the blobs it checked out. Before a
//! batch runs a producer on a snapshot, the blobs that snapshot names and the object store
//! lacks are fetched from the promisor remote in one request, as git itself does before a
//! `checkout` or `grep`: `git fetch` with the ids on stdin and the partial clone's filter. git
//! checks every object it receives against its id, and the snapshot reads each blob by id, so
//! what the remote sends is verified, never trusted. Offline (`--no-remote`), nothing is
//! fetched and the batch fails closed naming the command that fetches them.
//!
//! A clone that is not partial is never asked: a blob missing there is a damaged object store,
//! which the read itself reports. The fetch itself is git's (`git::promisor`); the planner runs
//! it (`planner::execute`).

use gix::ObjectId;

use super::{EntryKind, Snapshot};

/// Why the blobs a batch needs cannot be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum MissingBlobs {
    #[error(
        "{count} blob(s) of commit {commit} are not in this partial clone and --no-remote forbids fetching them from {remote}: fetch them ({fetch}), or measure without --no-remote"
    )]
    Offline {
        count: usize,
        commit: ObjectId,
        remote: String,
        fetch: String,
    },
    #[error(
        "{count} blob(s) of commit {commit} could not be fetched from the promisor remote {remote}: {why}. Check that {remote} is reachable (`git fetch {remote}`), then measure again"
    )]
    Fetch {
        count: usize,
        commit: ObjectId,
        remote: String,
        why: String,
    },
}

/// What a partial clone lacks of a snapshot: the promisor remote and the distinct blob ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Lacking {
    pub remote: String,
    pub ids: Vec<ObjectId>,
    /// The repository's git directory, where the fetch runs.
    pub git_dir: std::path::PathBuf,
}

impl Snapshot {
    /// This snapshot with fetching forbidden (`--no-remote`): blobs a partial clone lacks fail
    /// the batch instead, naming the fetch.
    pub(crate) fn offline(mut self) -> Snapshot {
        self.offline = true;
        self
    }

    /// What this snapshot names that a partial clone lacks; `None` when the clone is not
    /// partial or has every blob.
    pub(crate) fn lacking(&self) -> Option<Lacking> {
        let local = self.repo.to_thread_local();
        let remote = promisor_remote(&local)?;
        let mut ids: Vec<ObjectId> = self
            .entries
            .iter()
            .filter(|e| e.kind != EntryKind::Submodule && !local.has_object(e.id))
            .map(|e| e.id)
            .collect();
        if ids.is_empty() {
            return None;
        }
        ids.sort_unstable();
        ids.dedup();
        Some(Lacking {
            remote,
            ids,
            git_dir: local.git_dir().to_owned(),
        })
    }

    /// Why `lacking` may not be fetched: this snapshot is offline (naming the fetch), else
    /// `None`.
    pub(crate) fn refuse_fetch(&self, lacking: &Lacking, fetch: &[String]) -> Option<MissingBlobs> {
        let commit = self.commit;
        self.offline.then(|| MissingBlobs::Offline {
            count: lacking.ids.len(),
            commit,
            remote: lacking.remote.clone(),
            fetch: format!(
                "git rev-list --objects --missing=print {commit} | sed -n 's/^?//p' | {}",
                fetch.join(" ")
            ),
        })
    }
}

/// The remote a partial clone fetches missing objects from: `extensions.partialClone`, else a
/// remote marked `promisor`; `None` for a clone that is not partial.
fn promisor_remote(local: &gix::Repository) -> Option<String> {
    let config = local.config_snapshot();
    if let Some(remote) = config.string("extensions.partialClone") {
        return Some(remote.to_string());
    }
    local.remote_names().into_iter().find_map(|name| {
        let key = format!("remote.{name}.promisor");
        config
            .boolean(key.as_str())
            .filter(|&promisor| promisor)
            .map(|_| name.to_string())
    })
}
