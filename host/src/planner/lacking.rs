//! The blobs a partial clone lacks of a snapshot (`snapshot::promisor` names them), fetched in
//! one request (`git::promisor`) before any producer runs on it; when they cannot be had, why,
//! naming the fetch (`execute.rs` fails every execution that would have run with it).

use crate::snapshot::Snapshot;

/// The blobs a partial clone lacks of `snapshot` fetched, or why they cannot be.
pub(super) fn fetch_lacking(
    snapshot: &Snapshot,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<(), crate::snapshot::MissingBlobs> {
    let Some(lacking) = snapshot.lacking() else {
        return Ok(());
    };
    let mut command = vec!["git".to_owned()];
    command.extend(crate::git::promisor::fetch_args(&lacking.remote));
    if let Some(refused) = snapshot.refuse_fetch(&lacking, &command) {
        return Err(refused);
    }
    let count = lacking.ids.len();
    progress(&format!(
        "fetching {count} blob(s) of this partial clone from {}",
        lacking.remote
    ));
    let failed = |why: String| crate::snapshot::MissingBlobs::Fetch {
        count,
        commit: snapshot.commit(),
        remote: lacking.remote.clone(),
        why,
    };
    crate::git::promisor::fetch(&lacking.git_dir, &lacking.remote, &lacking.ids).map_err(failed)?;
    // git verified each object against its id; none may still be missing.
    match snapshot.lacking() {
        None => Ok(()),
        Some(left) => Err(failed(format!(
            "{} are still missing after the fetch",
            left.ids.len()
        ))),
    }
}
