//! The read-only view of one commit's tree that producers measure.
//!
//! Everything is read through gix from the object database: no checkout, no work-tree reads,
//! so uncommitted edits can never leak into a measurement. Entries are listed once when the
//! snapshot is opened; blob contents are read lazily, by any number of threads at once.

mod entries;
mod entry;
#[cfg(test)]
mod entry_tests;
mod listing;
mod nearby;
mod objects;
mod pathspec;
mod prefetch;
mod promisor;
mod reader;
pub(crate) mod runs;
mod shared;
mod shared_state;
#[cfg(test)]
mod shared_tests;
mod sizes;
mod verified;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use gix::ObjectId;

pub use entries::Entries;
pub use entry::{Entry, EntryKind};

pub use pathspec::Pathspec;
pub(crate) use pathspec::PathspecError;
pub(crate) use promisor::MissingBlobs;
pub(crate) use reader::Reader;
pub(crate) use shared::{BUDGET, Member, SharedReads};

/// How many entries [`Snapshot::entry_from`] looks at before it searches the listing.
const NEAR: usize = 4;

#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error("{path}: not a git repository ({message})")]
    Open { path: PathBuf, message: String },
    #[error("cannot resolve {rev:?} to a commit: {message}")]
    Resolve { rev: String, message: String },
    #[error("cannot read the tree of commit {commit}: {message}")]
    Tree { commit: ObjectId, message: String },
}

/// Why a read through the snapshot failed. Its text is what the producer sees.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    #[error("{0}: no such file in the snapshot")]
    NotFound(String),
    #[error("{0}: a submodule has no content in the snapshot")]
    Submodule(String),
    #[error("{path}: cannot read blob {id}: {message}")]
    Object {
        path: String,
        id: ObjectId,
        message: String,
    },
    /// The bytes read back under `id` hash to another id: the object store changed under the
    /// measurement (a job rewrote an object in place). Never a reading.
    #[error(
        "{path}: blob {id} reads back as content whose id is {found}: the object store was changed after the snapshot was taken (by a job?), so this reading cannot be trusted; measure again in a fresh clone, before any job runs"
    )]
    Tampered {
        path: String,
        id: ObjectId,
        found: ObjectId,
    },
}

/// The snapshot of one commit: its sorted entries and the repository to read blobs from.
#[derive(Clone)]
pub struct Snapshot {
    repo: gix::ThreadSafeRepository,
    /// Where blobs are inflated from (`objects.rs`).
    objects: Arc<objects::Objects>,
    commit: ObjectId,
    tree: ObjectId,
    worktree: bool,
    /// Every blob read through this snapshot is hashed and compared with its id
    /// ([`Snapshot::verifying`]).
    verify: bool,
    entries: Entries,
    /// Blob sizes, looked up (from object headers) only when a producer lists an entry: a
    /// measurement that reuses evidence never pays for them.
    sizes: Arc<sizes::Sizes>,
    /// Tracked paths whose names are not UTF-8, escaped: they cannot cross the WIT (`string`),
    /// so they are left out of the snapshot and named in an advisory.
    skipped: Arc<[String]>,
    /// Blobs a partial clone lacks may not be fetched (`--no-remote`; `promisor.rs`).
    offline: bool,
    /// The batch whose reads this snapshot's readers share ([`Snapshot::read_by`]).
    share: Option<shared::Share>,
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot")
            .field("commit", &self.commit)
            .field("entries", &self.entries.len())
            .finish()
    }
}

impl Snapshot {
    /// Open the snapshot of `rev` (for example `HEAD` or a commit id) in the repository at `dir`.
    pub fn open(dir: &Path, rev: &str) -> Result<Self, SnapshotError> {
        let repo = open_repository(dir)?;
        Self::of_rev(repo, rev)
    }

    /// The snapshot of `rev` in an already open repository.
    pub fn of_rev(repo: gix::ThreadSafeRepository, rev: &str) -> Result<Self, SnapshotError> {
        let resolve_error = |message: String| SnapshotError::Resolve {
            rev: rev.to_owned(),
            message,
        };
        let (commit, tree) = {
            let local = repo.to_thread_local();
            let commit = local
                .rev_parse_single(rev)
                .map_err(|e| resolve_error(e.to_string()))?
                .object()
                .and_then(|o| o.peel_to_commit())
                .map_err(|e| resolve_error(e.to_string()))?;
            let tree = commit
                .tree_id()
                .map_err(|e| resolve_error(e.to_string()))?
                .detach();
            (commit.id, tree)
        };
        Self::of_tree(repo, commit, tree, false)
    }

    /// The snapshot of `tree`; `commit` is the commit it belongs to (for a work-tree snapshot,
    /// the HEAD it was taken on).
    pub fn of_tree(
        repo: gix::ThreadSafeRepository,
        commit: ObjectId,
        tree: ObjectId,
        worktree: bool,
    ) -> Result<Self, SnapshotError> {
        // The trees are read through the store blobs are read from: the pages of the pack index
        // a listing touches (nearly all of it) are then mapped once, not by two stores.
        let objects = objects::Objects::new(&repo);
        let mut handle = objects.handle(0);
        let listed = listing::list(handle.repo(), tree, listing::Check::AsStored).map_err(|e| {
            SnapshotError::Tree {
                commit,
                message: e.to_string(),
            }
        })?;
        drop(handle);
        let listing::Listed { entries, skipped } = listed;
        let sizes = Arc::new(sizes::Sizes::unknown(entries.len()));
        Ok(Self {
            objects,
            repo,
            commit,
            tree,
            worktree,
            verify: false,
            entries,
            sizes,
            skipped: skipped.into(),
            offline: false,
            share: None,
        })
    }

    /// The tree this snapshot shows.
    pub fn tree(&self) -> ObjectId {
        self.tree
    }

    /// Whether this snapshot is of the work tree as it is (`--force`), not of a commit.
    pub fn is_worktree(&self) -> bool {
        self.worktree
    }

    /// The commit this snapshot shows (for a work-tree snapshot: the HEAD it was taken on).
    pub fn commit(&self) -> ObjectId {
        self.commit
    }

    /// Every tracked entry, sorted by path.
    pub fn entries(&self) -> &Entries {
        &self.entries
    }

    /// Tracked paths left out because their names are not UTF-8, escaped (`\xNN` for each
    /// byte that is not part of a UTF-8 character), sorted.
    pub fn skipped(&self) -> &[String] {
        &self.skipped
    }

    /// The same snapshot holding only the entries at `paths`: a producer run over it sees
    /// those files alone (see `standards/derived.rs`).
    pub fn restricted(&self, paths: &std::collections::BTreeSet<&str>) -> Snapshot {
        let keep: Vec<usize> = (self.entries.iter().enumerate())
            .filter(|(_, e)| paths.contains(e.path()))
            .map(|(i, _)| i)
            .collect();
        self.keeping(keep.iter().copied())
    }

    /// This snapshot with only the entries at `keep` (ascending indices into `entries()`).
    pub fn restricted_to(&self, keep: &[u32]) -> Snapshot {
        self.keeping(keep.iter().map(|&i| i as usize))
    }

    /// This snapshot with only the entries at `keep` (ascending indices into `entries()`).
    fn keeping(&self, keep: impl Iterator<Item = usize> + Clone) -> Snapshot {
        let kept = || keep.clone().filter(|&i| i < self.entries.len());
        let sizes = sizes::Sizes::unknown(kept().count());
        for (at, i) in kept().enumerate() {
            if let Some(known) = self.sizes.get(i) {
                sizes.set(at, known);
            }
        }
        Snapshot {
            repo: self.repo.clone(),
            objects: Arc::clone(&self.objects),
            commit: self.commit,
            tree: self.tree,
            worktree: self.worktree,
            verify: self.verify,
            entries: kept().map(|i| self.entries[i].clone()).collect(),
            sizes: Arc::new(sizes),
            skipped: Arc::from(Vec::new()),
            offline: self.offline,
            share: self.share.clone(),
        }
    }

    /// The same snapshot, whose every blob read (content and size) is hashed and compared
    /// with the id the tree names: for reads after the repository's own code ran (a job), which
    /// may have rewritten an object in place under the same id. A mismatch is a
    /// [`ReadError::Tampered`]. Nothing is read ahead on other threads.
    pub fn verifying(&self) -> Snapshot {
        let mut verifying = self.clone();
        verifying.verify = true;
        verifying.share = None;
        // Sizes looked up from object headers before are not trusted either.
        verifying.sizes = Arc::new(sizes::Sizes::unknown(self.entries.len()));
        verifying
    }

    /// Whether blob reads are verified ([`Snapshot::verifying`]).
    pub fn is_verifying(&self) -> bool {
        self.verify
    }

    /// The advisory naming the skipped paths, if any.
    pub fn skipped_advisory(&self) -> Option<String> {
        const SHOWN: usize = 10;
        let skipped = self.skipped();
        if skipped.is_empty() {
            return None;
        }
        let mut names: Vec<String> = skipped
            .iter()
            .take(SHOWN)
            .map(|p| format!("\"{p}\""))
            .collect();
        if skipped.len() > SHOWN {
            names.push(format!("and {} more", skipped.len() - SHOWN));
        }
        Some(format!(
            "{} tracked path(s) not measured: their names are not valid UTF-8, which producers cannot be given: {} (rename them, e.g. `git mv`, to measure them)",
            skipped.len(),
            names.join(", ")
        ))
    }

    /// Parse pathspecs as producers and Standards give them. An absolute path is refused, not
    /// made relative: a producer does not know where the repository is, a committed config must
    /// mean the same in every clone, and a recorded listing must read the same later.
    pub fn pathspec<S: AsRef<str>>(&self, specs: &[S]) -> Result<Pathspec, PathspecError> {
        Pathspec::parse(specs, None)
    }

    pub fn entry(&self, path: &str) -> Option<&Entry> {
        self.index_of(path).map(|i| &self.entries[i])
    }

    /// Where `path` is in the listing (sorted by path).
    fn index_of(&self, path: &str) -> Option<usize> {
        self.entries.binary_search_by(|e| e.path().cmp(path)).ok()
    }

    /// [`Snapshot::entry`], looked for first in the few entries from `from` on, which is moved
    /// to the entry found: a caller that goes through paths in listing order (findings come
    /// file by file) finds each one a step after the last, without a search of the listing.
    pub(crate) fn entry_from(
        &self,
        path: &str,
        from: &std::cell::Cell<usize>,
    ) -> Option<(usize, &Entry)> {
        let at = position_near(&self.entries, path, from.get())?;
        from.set(at);
        self.entries.get(at).map(|entry| (at, entry))
    }

    /// The indices (into [`Snapshot::entries`]) of the entries matching the pathspec, ascending.
    pub(crate) fn matching_indices<'a>(
        &'a self,
        pathspec: &'a Pathspec,
    ) -> impl Iterator<Item = usize> + 'a {
        (self.entries.iter().enumerate())
            .filter(|(_, e)| pathspec.matches(e.path()))
            .map(|(i, _)| i)
    }

    /// The entries, shared: what a read set names its reads by the index of.
    pub(crate) fn shared_entries(&self) -> Entries {
        self.entries.clone()
    }

    /// Entries matching the pathspec, sorted by path.
    pub fn matching<'a>(&'a self, pathspec: &'a Pathspec) -> impl Iterator<Item = &'a Entry> + 'a {
        self.entries.iter().filter(|e| pathspec.matches(e.path()))
    }

    /// The reads of several executions of a batch over this snapshot, shared: each blob
    /// inflated once for all, at most `budget` bytes held (`shared.rs`). `expected[c]` are the
    /// entries (indices into `entries()`) execution `c` will read.
    pub(crate) fn shared_reads(&self, expected: Vec<runs::Counted>, budget: u64) -> SharedReads {
        let objects = (Arc::clone(&self.objects), self.tree);
        SharedReads::new(objects, self.entries.clone(), expected, budget)
    }

    /// This snapshot as `member` of a batch reads it: its blobs shared with the other members.
    /// A verifying snapshot reads alone.
    pub(crate) fn read_by(&self, member: &Member) -> Snapshot {
        let mut shared = self.clone();
        if !self.verify {
            shared.share = member.share(self.tree);
        }
        shared
    }

    /// A reader for one thread: blob reads are served from this thread's repository handle.
    pub fn reader(&self) -> Reader {
        Reader::new(self)
    }
}

impl Snapshot {
    /// Paths whose entry differs between the tree of `commit` and this snapshot's tree (added,
    /// removed, or changed in content or mode), sorted; `None` when `commit` cannot be read
    /// (for example after a garbage collection). Only subtrees whose ids differ are read, so
    /// the cost follows the size of the change, not of the tree.
    pub fn changed_since(&self, commit: &str) -> Option<Vec<String>> {
        let local = self.repo.to_thread_local();
        let id: ObjectId = commit.parse().ok()?;
        let old = local.find_commit(id).ok()?.tree_id().ok()?.detach();
        let mut changed = Vec::new();
        diff_trees(
            &local,
            (Some(old), Some(self.tree)),
            "",
            NonUtf8::Skip,
            &mut |path, _| changed.push(path),
        )?;
        changed.sort_unstable();
        Some(changed)
    }
}

/// Paths whose entry differs between the trees of commits `from` and `to`, sorted, without
/// listing either tree (only subtrees whose ids differ are read); `None` when one cannot be read.
pub(crate) fn changed_between(
    repo: &gix::Repository,
    from: ObjectId,
    to: ObjectId,
) -> Option<Vec<String>> {
    let tree = |id: ObjectId| Some(repo.find_commit(id).ok()?.tree_id().ok()?.detach());
    let mut changed = Vec::new();
    diff_trees(
        repo,
        (Some(tree(from)?), Some(tree(to)?)),
        "",
        NonUtf8::Skip,
        &mut |path, _| changed.push(path),
    )?;
    changed.sort_unstable();
    Some(changed)
}

type TreeEntries = std::collections::BTreeMap<Vec<u8>, (gix::objs::tree::EntryMode, ObjectId)>;

/// A tree's entries by name (none for no tree); `None` when it cannot be read.
fn tree_entries(repo: &gix::Repository, tree: Option<ObjectId>) -> Option<TreeEntries> {
    let Some(tree) = tree else {
        return Some(TreeEntries::new());
    };
    let tree = repo.find_tree(tree).ok()?;
    let decoded = tree.decode().ok()?;
    Some(
        decoded
            .entries
            .iter()
            .map(|e| (e.filename.to_vec(), (e.mode, e.oid.to_owned())))
            .collect(),
    )
}

/// How a tree diff treats a name that is not UTF-8 (no snapshot holds one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NonUtf8 {
    /// Leave it out: nothing in a snapshot changed.
    Skip,
    /// Give up on the diff (the caller lists the tree whole instead).
    Fail,
}

/// A file entry of a tree: its mode and blob.
type FileEntry = (gix::objs::tree::EntryMode, ObjectId);

/// Walk what differs between the trees `old` and `new`, reading only subtrees whose ids differ,
/// and call `file` with each file path that differs and its entry in `new` (`None`: gone).
/// `None` when a tree cannot be read, or a differing name is not UTF-8 and `names` says fail.
fn diff_trees(
    repo: &gix::Repository,
    (old, new): (Option<ObjectId>, Option<ObjectId>),
    prefix: &str,
    names: NonUtf8,
    file: &mut dyn FnMut(String, Option<FileEntry>),
) -> Option<()> {
    if old == new {
        return Some(());
    }
    let (old, new) = (tree_entries(repo, old)?, tree_entries(repo, new)?);
    let all: std::collections::BTreeSet<&Vec<u8>> = old.keys().chain(new.keys()).collect();
    for name in all {
        let (before, after) = (old.get(name), new.get(name));
        if before == after {
            continue;
        }
        let name = match (std::str::from_utf8(name), names) {
            (Ok(name), _) => name,
            (Err(_), NonUtf8::Skip) => continue,
            (Err(_), NonUtf8::Fail) => return None,
        };
        let path = format!("{prefix}{name}");
        let subtree =
            |side: Option<&FileEntry>| side.filter(|(mode, _)| mode.is_tree()).map(|(_, id)| *id);
        let (old_tree, new_tree) = (subtree(before), subtree(after));
        if old_tree.is_some() || new_tree.is_some() {
            diff_trees(repo, (old_tree, new_tree), &format!("{path}/"), names, file)?;
        }
        let blob = |side: Option<&FileEntry>| side.filter(|(mode, _)| !mode.is_tree()).copied();
        if blob(before).is_some() || blob(after).is_some() {
            file(path, blob(after));
        }
    }
    Some(())
}

/// Paths whose entry differs between two snapshots (added, removed, or changed in content,
/// kind or mode: a `chmod +x` is a change), sorted.
pub fn changed_paths(before: Option<&Snapshot>, after: &Snapshot) -> Vec<String> {
    use std::cmp::Ordering;
    // Both listings are sorted by path: one pass over the two, nothing copied but the answer.
    let none = Entries::default();
    let before = before.map_or(&none, Snapshot::entries);
    let (mut old, mut new) = (before.iter().peekable(), after.entries().iter().peekable());
    let mut changed = Vec::new();
    loop {
        let order = match (old.peek(), new.peek()) {
            (None, None) => break,
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (Some(o), Some(n)) => o.path().cmp(n.path()),
        };
        let path = match order {
            Ordering::Less => old.next(),
            Ordering::Greater => new.next(),
            Ordering::Equal => match (old.next(), new.next()) {
                (Some(o), Some(n)) if o != n => Some(n),
                _ => None,
            },
        };
        changed.extend(path.map(|e| e.path().to_owned()));
    }
    changed
}

/// A path as git's bytes, readable: UTF-8 characters as they are, other bytes as `\xNN`.
fn escape(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// How discern opens a repository with gix: isolated from the machine's global and system
/// config, and never following `refs/replace/` (whatever the repository's own config says), so
/// no replace ref an agent wrote can stand in for a commit, tree or blob discern reads.
pub(crate) fn open_options() -> gix::open::Options {
    gix::open::Options::isolated().cli_overrides(["core.useReplaceRefs=false"])
}

fn open_repository(dir: &Path) -> Result<gix::ThreadSafeRepository, SnapshotError> {
    // Isolated: the machine's global and system git config never change what we read.
    gix::ThreadSafeRepository::open_opts(dir, open_options()).map_err(|e| SnapshotError::Open {
        path: dir.to_owned(),
        message: e.to_string(),
    })
}

/// Where `path` is in `entries` (sorted by path): looked for first in the few entries from
/// `from` on, where a caller going through paths in listing order finds the next, then searched.
pub(super) fn position_near(entries: &Entries, path: &str, from: usize) -> Option<usize> {
    let mut near = entries.iter_from(from).take(NEAR);
    match near.position(|e| *e.path() == *path) {
        Some(step) => Some(from + step),
        None => entries.binary_search_by(|e| e.path().cmp(path)).ok(),
    }
}
