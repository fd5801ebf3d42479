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
//! which the read itself reports.

use std::io::Write;
use std::process::{Command, Stdio};

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

impl Snapshot {
    /// This snapshot with fetching forbidden (`--no-remote`): blobs a partial clone lacks fail
    /// the batch instead, naming the fetch.
    pub(crate) fn offline(mut self) -> Snapshot {
        self.offline = true;
        self
    }

    /// Fetch the blobs this snapshot names that a partial clone lacks, in one request to its
    /// promisor remote; how many were fetched (0 when the clone is not partial or has them
    /// all). `progress` hears about a fetch before it starts.
    pub(crate) fn fetch_missing(
        &self,
        progress: &(dyn Fn(&str) + Sync),
    ) -> Result<usize, MissingBlobs> {
        let local = self.repo.to_thread_local();
        let Some(remote) = promisor_remote(&local) else {
            return Ok(0);
        };
        let missing = self.missing(&local);
        if missing.is_empty() {
            return Ok(0);
        }
        let count = missing.len();
        let git_dir = local.git_dir().to_owned();
        let commit = self.commit;
        if self.offline {
            let fetch = format!(
                "git rev-list --objects --missing=print {commit} | sed -n 's/^?//p' | {}",
                fetch_args(&remote).join(" ")
            );
            return Err(MissingBlobs::Offline {
                count,
                commit,
                remote,
                fetch,
            });
        }
        progress(&format!(
            "fetching {count} blob(s) of this partial clone from {remote}"
        ));
        let failed = |why: String| MissingBlobs::Fetch {
            count,
            commit,
            remote: remote.clone(),
            why,
        };
        fetch(&git_dir, &remote, &missing).map_err(failed)?;
        // git verified each object against its id; none may still be missing.
        let left = self.missing(&self.repo.to_thread_local()).len();
        match left {
            0 => Ok(count),
            left => Err(failed(format!("{left} are still missing after the fetch"))),
        }
    }

    /// The distinct blobs (files and symlinks) this snapshot names that the object store lacks.
    fn missing(&self, local: &gix::Repository) -> Vec<ObjectId> {
        let mut missing: Vec<ObjectId> = self
            .entries
            .iter()
            .filter(|e| e.kind != EntryKind::Submodule && !local.has_object(e.id))
            .map(|e| e.id)
            .collect();
        missing.sort_unstable();
        missing.dedup();
        missing
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

/// `git fetch` as git's own lazy fetch runs it: no negotiation, no tags, no FETCH_HEAD, the
/// object ids on stdin, and the partial clone's filter kept.
fn fetch_args(remote: &str) -> Vec<String> {
    [
        "git",
        "-c",
        "fetch.negotiationAlgorithm=noop",
        "fetch",
        remote,
        "--no-tags",
        "--no-write-fetch-head",
        "--recurse-submodules=no",
        "--filter=blob:none",
        "--stdin",
    ]
    .map(str::to_owned)
    .to_vec()
}

/// Run the fetch of `ids` from `remote` in the repository at `git_dir`; git's own message when
/// it fails.
fn fetch(git_dir: &std::path::Path, remote: &str, ids: &[ObjectId]) -> Result<(), String> {
    let args = fetch_args(remote);
    let mut child = Command::new(&args[0])
        .arg("--git-dir")
        .arg(git_dir)
        .args(&args[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("git could not be started: {e}"))?;
    let mut list = String::with_capacity(ids.len() * 41);
    for id in ids {
        list.push_str(&id.to_string());
        list.push('\n');
    }
    // Written on its own thread: git may answer on stderr before it has read all of stdin.
    let stdin = child.stdin.take();
    let writer = std::thread::spawn(move || stdin.map(|mut s| s.write_all(list.as_bytes())));
    let output = child
        .wait_with_output()
        .map_err(|e| format!("git fetch did not finish: {e}"))?;
    let written = writer
        .join()
        .map_err(|_| "writing the ids failed".to_owned())?;
    if let Some(Err(e)) = written {
        return Err(format!("the ids could not be handed to git fetch: {e}"));
    }
    match output.status.success() {
        true => Ok(()),
        false => {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let tail: Vec<&str> = stderr.lines().rev().take(3).collect();
            let why: Vec<&str> = tail.into_iter().rev().collect();
            Err(format!(
                "git fetch failed ({}): {}",
                output.status,
                why.join(" ")
            ))
        }
    }
}
