//! The config transaction: a journal written before the ref moves, the commit itself, and the
//! recovery that finishes or unwinds whatever a crash left.

use gix::ObjectId;

use super::{
    CommitError, Faults, git_error, move_branch, step, sync_file, sync_worktree, write_objects,
};
use crate::config::FILE;
use crate::git::Repo;

/// What a config-only commit needs.
/// The one kind of config-only commit that changes nothing: a proposal renewal, whose message
/// carries the proposals again so that every clone sees them bound to the new HEAD.
pub(crate) const RENEWAL: &str = "renewal";

pub(crate) struct ConfigCommit<'a> {
    /// `pin`, `proposal`, [`RENEWAL`], …: what the journal says it was doing.
    pub kind: &'a str,
    pub branch: &'a str,
    /// The HEAD that was measured: the parent, and the ref's expected value.
    pub head: ObjectId,
    /// The config the edit started from: it must be what `head` commits (another writer may
    /// have moved HEAD after it was read), checked under the writer lock.
    pub base: &'a [u8],
    pub content: &'a [u8],
    pub message: &'a str,
    /// The state files that must be written once the commit exists (proposal records bound
    /// to it), given the new commit's id. They are part of the journal, so recovery writes
    /// them without knowing which verb made the transaction.
    pub files: &'a dyn Fn(ObjectId) -> Result<Vec<StateFile>, String>,
}

/// One file under `<git-dir>/discern/` that a transaction writes once its commit exists.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct StateFile {
    /// The file name under `<git-dir>/discern/` (a plain name: no folder, no `..`).
    pub name: String,
    /// Its whole new content; `None` removes the file.
    pub content: Option<String>,
}

/// The only state files a transaction may write: the proposal records. A journal naming any
/// other file (the Proof marker, the measurement record) is refused, so a damaged or forged
/// journal cannot create or erase Proof through recovery.
const WRITABLE: &[&str] = &["standard-limit-proposals.json"];

impl StateFile {
    fn write(&self, repo: &Repo) -> std::io::Result<()> {
        if !WRITABLE.contains(&self.name.as_str()) {
            return Err(std::io::Error::other(format!(
                "the journal names an unsafe state file {:?}",
                self.name
            )));
        }
        let path = repo.admin_path(&self.name);
        match &self.content {
            Some(content) => crate::fsutil::write_atomic(&path, content.as_bytes()),
            None => match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            },
        }
    }
}

/// The transaction journal: written before the ref moves, removed when everything is done.
/// Whoever finds it later finishes or unwinds the transaction.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Journal {
    pub version: u32,
    pub kind: String,
    pub branch: String,
    pub head: String,
    pub commit: String,
    /// The one file the commit changes (`discern.toml`, or an approval under
    /// `.discern/approvals/`) and its new content.
    #[serde(default = "config_file")]
    pub path: String,
    pub content: String,
    /// What the transaction writes once its commit exists.
    #[serde(default)]
    pub files: Vec<StateFile>,
    /// The git lock files the transaction may create, claimed before they could exist.
    #[serde(default)]
    pub locks: Vec<super::owned_lock::Claim>,
}

pub(super) const JOURNAL: &str = "config-transaction.json";

/// Write `journal` where recovery looks for it, before the ref moves; its path.
pub(super) fn write_journal(
    repo: &Repo,
    journal: &Journal,
) -> Result<std::path::PathBuf, CommitError> {
    let path = repo.admin_path(JOURNAL);
    super::journal_file::write(&path, journal, "the journal")?;
    Ok(path)
}

fn config_file() -> String {
    FILE.to_owned()
}
/// 2: the journal carries its state files (1 carried a verb-specific payload).
pub(super) const JOURNAL_VERSION: u32 = 2;

/// How a leftover journal was resolved.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Recovery {
    /// The ref had not moved: the repository is as it was before; the journal is gone.
    RolledBack(Journal),
    /// The commit had landed: index, work tree and payload are now complete.
    Completed(Journal),
}

/// Make the commit, move the branch (CAS), sync the work tree, let `complete` write the
/// payload, drop the journal. A failure before the ref moved changes nothing; a failure after
/// it is rolled back (ref back by CAS, file and index restored); a crash anywhere is finished
/// or unwound by [`recover`].
pub(crate) fn config_only_commit(
    repo: &Repo,
    commit: &ConfigCommit<'_>,
    faults: &Faults,
) -> Result<ObjectId, CommitError> {
    // Writers serialise on one lock for the journal, commit and ref phase.
    let _lock =
        super::lock::WriterLock::acquire(repo).map_err(|e| CommitError::Git(e.to_string()))?;
    // Under the lock: a commit that would change nothing (another writer made it first) is
    // never stacked as an empty one.
    let committed = repo
        .file_at(commit.head, FILE)
        .map_err(|e| git_error("cannot read the committed config", e))?;
    if committed.as_deref() != Some(commit.base) {
        return Err(CommitError::ConfigChanged);
    }
    if commit.content == commit.base && commit.kind != RENEWAL {
        return Err(CommitError::Unchanged);
    }
    let (new, blob) = write_objects(repo, commit.head, commit.content, commit.message)?;
    faults.point(step::OBJECTS_WRITTEN);
    let files = (commit.files)(new).map_err(|e| git_error("cannot prepare the records", e))?;
    let journal = Journal {
        version: JOURNAL_VERSION,
        kind: commit.kind.to_owned(),
        branch: commit.branch.to_owned(),
        head: commit.head.to_string(),
        commit: new.to_string(),
        path: FILE.to_owned(),
        content: String::from_utf8_lossy(commit.content).into_owned(),
        files,
        locks: super::owned_lock::claim([
            repo.common_dir()
                .join(format!("refs/heads/{}.lock", commit.branch)),
            repo.common_dir().join("packed-refs.lock"),
            repo.git_dir().join("index.lock"),
        ]),
    };
    let journal_path = write_journal(repo, &journal)?;
    faults.point(step::JOURNAL_WRITTEN);
    let summary = commit.message.lines().next().unwrap_or("discern: config");
    if let Err(e) = move_branch(
        repo,
        commit.branch,
        commit.head,
        new,
        &format!("commit: {summary}"),
    ) {
        let _ = std::fs::remove_file(&journal_path);
        return Err(e);
    }
    faults.point(step::REF_MOVED);
    if let Err(e) = sync_worktree(repo, commit.content, blob) {
        rollback(repo, commit, new);
        let _ = std::fs::remove_file(&journal_path);
        return Err(e);
    }
    faults.point(step::WORKTREE_SYNCED);
    write_files(repo, &journal).map_err(|e| {
        git_error(
            "the commit landed but its records could not be written (the next call finishes them)",
            e,
        )
    })?;
    faults.point(step::PAYLOAD_WRITTEN);
    std::fs::remove_file(&journal_path).map_err(|e| git_error("cannot remove the journal", e))?;
    Ok(new)
}

/// The journal of a transaction a crash interrupted, if one is pending: what read-only verbs
/// and dry runs report instead of recovering (they write nothing). `Err` when the journal
/// exists but cannot be read.
pub(crate) fn pending(repo: &Repo) -> Result<Option<Journal>, String> {
    let path = repo.admin_path(JOURNAL);
    match std::fs::read(&path) {
        Ok(bytes) => parse_journal(&bytes)
            .map(Some)
            .map_err(|why| format!("{} {why}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{} cannot be read ({e})", path.display())),
    }
}

/// A journal of this format, or of format 1 converted: its proposal records (the verb-specific
/// payload format 1 carried) become the one state file they are written to, bound to the
/// journal's commit, exactly as format 1's recovery wrote them.
fn parse_journal(bytes: &[u8]) -> Result<Journal, String> {
    let mut value: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| format!("is unreadable ({e})"))?;
    let version = value.get("version").and_then(serde_json::Value::as_u64);
    if version == Some(1) {
        let commit = value["commit"].clone();
        let mut records = value
            .as_object_mut()
            .and_then(|o| o.remove("payload"))
            .unwrap_or(serde_json::Value::Null);
        let files = match (value["kind"].as_str(), records.as_array_mut()) {
            (Some("proposal"), Some(list)) => {
                for record in list.iter_mut() {
                    record["commit"] = commit.clone();
                    record["bound_commit"] = commit.clone();
                }
                let store = serde_json::json!({ "version": 1, "proposals": records });
                let content = serde_json::to_string_pretty(&store).map_err(|e| e.to_string())?;
                serde_json::json!([{ "name": WRITABLE[0], "content": content }])
            }
            _ => serde_json::json!([]),
        };
        value["files"] = files;
        value["version"] = serde_json::json!(JOURNAL_VERSION);
    }
    let journal: Journal =
        serde_json::from_value(value).map_err(|e| format!("is unreadable ({e})"))?;
    if journal.version != JOURNAL_VERSION {
        return Err(format!(
            "was written by a newer discern (format {}, this one reads {JOURNAL_VERSION})",
            journal.version
        ));
    }
    Ok(journal)
}

fn write_files(repo: &Repo, journal: &Journal) -> std::io::Result<()> {
    journal.files.iter().try_for_each(|file| file.write(repo))
}

/// Finish or unwind a transaction a crash interrupted, whatever verb made it. `Ok(None)`:
/// there was none.
pub(crate) fn recover(repo: &Repo) -> Result<Option<Recovery>, CommitError> {
    let path = repo.admin_path(JOURNAL);
    if !path.exists() {
        return Ok(None);
    }
    // A live writer holds the lock while its journal exists: wait for it, never take it over.
    let _lock =
        super::lock::WriterLock::acquire(repo).map_err(|e| CommitError::Git(e.to_string()))?;
    let Ok(bytes) = std::fs::read(&path) else {
        return Ok(None);
    };
    let unreadable = |why: String| {
        CommitError::Git(format!(
            "the transaction journal {} {why}; inspect the branch and the file, then delete the journal (`rm {}`)",
            path.display(),
            path.display()
        ))
    };
    let journal = parse_journal(&bytes).map_err(unreadable)?;
    // A lock the crashed transaction itself left (its claim proves it) would stop the repair;
    // one it cannot prove is discern's stops recovery, journal kept, claim and all.
    if let Some(lock) = super::owned_lock::still_held(&journal.locks) {
        return Err(CommitError::Locked(lock));
    }
    let parse = |id: &str| {
        id.parse::<ObjectId>()
            .map_err(|e| unreadable(format!("names an invalid commit ({e})")))
    };
    let (head, new) = (parse(&journal.head)?, parse(&journal.commit)?);
    let current = repo
        .branch_commit(&journal.branch)
        .map_err(|e| git_error("cannot read the branch", e))?;
    if current == Some(head) {
        // The ref never moved: restore the file and the index from HEAD in case they changed.
        restore(repo, head, &journal.path)?;
        std::fs::remove_file(&path).map_err(|e| git_error("cannot remove the journal", e))?;
        return Ok(Some(Recovery::RolledBack(journal)));
    }
    // The commit landed and the branch moved on from it (a `git commit -a` after the kill,
    // say): it is finished, its records written; the work tree is the later commits' to say.
    if let Some(tip) = current
        && tip != new
        && repo.is_ancestor(new, tip)
    {
        check_shape_of(repo, new, head, &journal.path)?;
        write_files(repo, &journal)
            .map_err(|e| git_error("cannot write the transaction's records", e))?;
        std::fs::remove_file(&path).map_err(|e| git_error("cannot remove the journal", e))?;
        return Ok(Some(Recovery::Completed(journal)));
    }
    if current != Some(new) {
        return Err(unreadable(format!(
            "describes a commit on {} that is neither its tip nor in its history (another writer moved the branch elsewhere)",
            journal.branch
        )));
    }
    check_shape_of(repo, new, head, &journal.path)?;
    let blob = repo
        .local()
        .write_blob(journal.content.as_bytes())
        .map_err(|e| git_error("cannot write the blob", e))?
        .detach();
    // The checkout that has the branch out follows it (an approval may be committed on a
    // branch no worktree has out).
    if repo.branch().ok().flatten().as_deref() == Some(journal.branch.as_str()) {
        sync_file(repo, &journal.path, journal.content.as_bytes(), blob)?;
    }
    write_files(repo, &journal)
        .map_err(|e| git_error("cannot write the transaction's records", e))?;
    std::fs::remove_file(&path).map_err(|e| git_error("cannot remove the journal", e))?;
    Ok(Some(Recovery::Completed(journal)))
}

/// The file `path` and its index entry back to what `head` commits (removed when it has none).
fn restore(repo: &Repo, head: ObjectId, path: &str) -> Result<(), CommitError> {
    match repo.file_at(head, path) {
        Ok(Some(old)) => {
            if let Ok(blob) = repo.local().write_blob(&old) {
                sync_file(repo, path, &old, blob.detach())?;
            }
        }
        Ok(None) if path != FILE => super::unstage(repo, path)?,
        _ => {}
    }
    Ok(())
}

/// A config-only commit: exactly one parent (`parent`) and only `discern.toml` changed.
pub(crate) fn check_shape(
    repo: &Repo,
    commit: ObjectId,
    parent: ObjectId,
) -> Result<(), CommitError> {
    check_shape_of(repo, commit, parent, FILE)
}

/// A one-file commit: exactly one parent (`parent`) and only `path` changed.
fn check_shape_of(
    repo: &Repo,
    commit: ObjectId,
    parent: ObjectId,
    path: &str,
) -> Result<(), CommitError> {
    let changed = changed_paths(repo, commit)?;
    let local = repo.local();
    let parents: Vec<ObjectId> = local
        .find_commit(commit)
        .map_err(|e| git_error("cannot read the commit", e))?
        .parent_ids()
        .map(|id| id.detach())
        .collect();
    if parents != [parent] || changed.iter().any(|p| p != path) {
        return Err(CommitError::Git(format!(
            "commit {commit} is not a commit of {path} alone on {parent} (parents: {parents:?}, changed: {})",
            changed.join(", ")
        )));
    }
    Ok(())
}

/// Paths a commit changed versus its first parent.
pub(super) fn changed_paths(repo: &Repo, commit: ObjectId) -> Result<Vec<String>, CommitError> {
    let parent = repo
        .local()
        .find_commit(commit)
        .map_err(|e| git_error("cannot read the commit", e))?
        .parent_ids()
        .next()
        .map(|id| id.detach());
    let after = repo
        .snapshot(commit)
        .map_err(|e| git_error("cannot read the commit", e))?;
    let before = match parent {
        Some(parent) => Some(
            repo.snapshot(parent)
                .map_err(|e| git_error("cannot read the parent", e))?,
        ),
        None => None,
    };
    Ok(crate::snapshot::changed_paths(before.as_ref(), &after))
}

/// Undo a commit whose work-tree sync failed: ref back (CAS), file and index back to HEAD's.
fn rollback(repo: &Repo, commit: &ConfigCommit<'_>, new: ObjectId) {
    if move_branch(
        repo,
        commit.branch,
        new,
        commit.head,
        "discern: roll back a failed config commit",
    )
    .is_ok()
        && let Ok(Some(old)) = repo.file_at(commit.head, FILE)
        && let Ok(blob) = repo.local().write_blob(&old)
    {
        let _ = sync_worktree(repo, &old, blob.detach());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_format_1_proposal_journal_becomes_its_state_file_bound_to_the_commit() {
        let v1 = serde_json::json!({
            "version": 1, "kind": "proposal", "branch": "agent/x", "head": "a".repeat(40),
            "commit": "b".repeat(40), "content": "[standards]\n",
            "payload": [{ "standard": "todo", "commit": "", "bound_commit": "", "reason": "r" }]
        });
        let journal = parse_journal(v1.to_string().as_bytes()).expect("format 1 converts");
        assert_eq!(journal.version, JOURNAL_VERSION);
        let [file] = &journal.files[..] else {
            panic!("one state file: {:?}", journal.files)
        };
        assert_eq!(file.name, crate::proposals::store::FILE);
        let store: serde_json::Value =
            serde_json::from_str(file.content.as_deref().expect("content")).expect("json");
        assert_eq!(store["version"], 1);
        assert_eq!(store["proposals"][0]["commit"], "b".repeat(40));
        assert_eq!(store["proposals"][0]["bound_commit"], "b".repeat(40));
        let pin = serde_json::json!({ "version": 1, "kind": "pin", "branch": "b", "head": "a",
            "commit": "c", "content": "", "payload": null });
        assert!(
            parse_journal(pin.to_string().as_bytes())
                .expect("pin")
                .files
                .is_empty()
        );
        let newer = serde_json::json!({ "version": 9, "kind": "pin", "branch": "b", "head": "a",
            "commit": "c", "content": "" });
        assert!(parse_journal(newer.to_string().as_bytes()).is_err());
    }

    #[test]
    fn only_the_proposal_store_may_be_written_by_a_journal() {
        assert!(WRITABLE.contains(&crate::proposals::store::FILE));
        assert!(!WRITABLE.contains(&crate::proof::FILE));
    }
}
