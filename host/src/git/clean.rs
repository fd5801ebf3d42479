//! A fast clean-tree check that can only say "provably clean" or "cannot tell".
//!
//! It does what `git status` does on a clean tree, in-process and in parallel: the index must
//! match HEAD's tree (its cache-tree, else entry by entry); every tracked file's `lstat` must
//! match its index entry to the nanosecond (mtime, ctime, size, inode, owner, mode), racily
//! clean ones must hold the content the index records, as git would store it (`settle.rs`;
//! those it cannot settle, a bounded number, must show no change to `git diff-files`, which
//! compares their content with all of git's filters); and every name in a tracked folder that
//! the index does not know must be ignored (`ignores.rs` decides, with all of git's ignore
//! sources, in-process where that is exact, else by one `git check-ignore` call). Anything unusual —
//! conflicts, sparse or assume-unchanged entries, submodules, an unreadable file, a stat
//! mismatch, an untracked name that is not ignored — is "cannot tell", and the caller asks
//! `git status`, which stays the authority on what is dirty and why.

mod check;
mod folders;

use std::os::fd::AsFd;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};

use gix::index::State;
use gix::index::entry::{Flags, Mode};

use super::lstat;
use super::settle::Filters;
use super::settled::{self, Record};
use crate::cores::{Loan, Threads, cores};
use crate::snapshot::{EntryKind, Snapshot};
use check::{Check, Reading};
use folders::{Folder, holding, tracked_folders};

/// HEAD as the clean check holds the index to it: its tree, and the snapshot that lists it,
/// opened only when the index's cache-tree cannot vouch for that tree by its id.
#[derive(Clone, Copy)]
pub(super) enum Head<'a> {
    /// HEAD's snapshot, already open.
    Snapshot(&'a Snapshot),
    /// HEAD's tree id, and how to open its snapshot (`None`: unreadable, "cannot tell").
    Tree(gix::ObjectId, &'a dyn Fn() -> Option<Snapshot>),
}

impl Head<'_> {
    fn tree(&self) -> gix::ObjectId {
        match self {
            Head::Snapshot(snapshot) => snapshot.tree(),
            Head::Tree(tree, _) => *tree,
        }
    }

    /// The snapshot listing HEAD's entries, opened now if it was not.
    fn listing(&self) -> Option<std::borrow::Cow<'_, Snapshot>> {
        match self {
            Head::Snapshot(snapshot) => Some(std::borrow::Cow::Borrowed(*snapshot)),
            Head::Tree(_, open) => open().map(std::borrow::Cow::Owned),
        }
    }
}

/// Whether the index and the work tree provably hold exactly `head` (HEAD's tree), untracked
/// files all ignored. `false` means "cannot tell", not "dirty".
pub(super) fn proves_clean(repo: &gix::Repository, root: &Path, head: Head) -> bool {
    let Some(index) = usual_index(repo, head) else {
        return false;
    };
    let Some(survey) = walk(&index, root, repo.git_dir(), Walk::Prove) else {
        return false;
    };
    racy_unchanged(root, &survey.suspects)
        && (survey.untracked.is_empty() || all_ignored(root, &survey.untracked))
}

/// The index, when the in-process checks can read it at all: git and discern look at the same
/// index (no `GIT_*` redirection), no entry is unusual (conflicts, sparse, assume-unchanged,
/// intent-to-add, submodules) and it holds exactly HEAD's tree (staged changes are for `git
/// status` to name).
pub(super) fn usual_index(repo: &gix::Repository, head: Head) -> Option<gix::index::File> {
    // The repository is opened isolated from the environment; git (the fallback, and
    // `check-ignore`) is not. Where they could look at different indexes or trees, only git.
    if [
        "GIT_INDEX_FILE",
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_COMMON_DIR",
    ]
    .iter()
    .any(|var| std::env::var_os(var).is_some())
    {
        return None;
    }
    let index = index_as_git_reads_it(repo)?;
    let state: &State = &index;
    let unusual = Flags::ASSUME_VALID | Flags::SKIP_WORKTREE | Flags::INTENT_TO_ADD;
    let usual = !state
        .entries()
        .iter()
        .any(|e| e.stage_raw() != 0 || e.flags.intersects(unusual) || e.mode == Mode::COMMIT);
    (usual && index_matches(state, head)).then_some(index)
}

/// The index, read as git reads it outside `git fsck`: decoded without first hashing the whole
/// file against its trailing checksum (git verifies it only with `fsck`; a status of a fleet
/// spent a tenth of its user time hashing indexes). A damaged index still fails to decode, and
/// its trailer is still read: the settled record (`settled.rs`) is keyed by it.
fn index_as_git_reads_it(repo: &gix::Repository) -> Option<gix::index::File> {
    let options = gix::index::decode::Options::default();
    gix::index::File::at(repo.index_path(), repo.object_hash(), true, options).ok()
}

/// How a walk treats a tracked file that does not match its index entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Walk {
    /// Stop: the tree is not provably clean. Racily clean entries are the only suspects.
    Prove,
    /// Settle it by its content where stat data cannot tell (racily clean, or touched at the
    /// same size), list it as changed where git would without reading it (another size), else
    /// collect it (and every missing tracked file) as a suspect, for git to compare.
    Survey,
}

/// What one pass over the work tree saw against the index.
#[derive(Debug, Default)]
pub(super) struct Survey {
    /// Tracked files that may have changed, for git to compare: racily clean ones whose
    /// content could not be settled in-process, and (surveying) those whose `lstat` differs
    /// from the index or that are missing.
    pub suspects: Vec<String>,
    /// Tracked files whose content, as git would store it, differs from the index (surveying).
    pub changed: Vec<String>,
    /// Names in tracked folders that the index does not know (folders with a trailing `/`).
    pub untracked: Vec<String>,
    /// Racily clean entries (indices) settled unchanged by their content in this walk.
    pub settled: Vec<usize>,
}

/// Read every tracked folder of `index` on every core; `None` is "cannot tell". Racily clean
/// entries the work tree's settled record (`settled.rs`, in its own git folder `git_dir`)
/// trusts are not read again; those a survey settled by content now are added to it.
pub(super) fn walk(
    index: &gix::index::File,
    root: &Path,
    git_dir: &Path,
    mode: Walk,
) -> Option<Survey> {
    walk_only(
        index,
        (root, git_dir),
        (mode, Threads::Fixed(cores())),
        None,
    )
}

/// [`walk`] on `threads`, reading only the tracked folders that hold one of `only`
/// (relative paths), when given: for each, the deepest tracked folder it is in, and the tracked
/// folder it names. The caller knows that nothing changed in any other folder (`fsmonitor.rs`).
pub(super) fn walk_only(
    index: &gix::index::File,
    (root, git_dir): (&Path, &Path),
    (mode, threads): (Walk, Threads),
    only: Option<&[String]>,
) -> Option<Survey> {
    let state: &State = index;
    // Folders name their files by entry in four bytes, as the index counts its entries.
    u32::try_from(state.entries().len()).ok()?;
    let mut folders = Vec::new();
    tracked_folders(state, Vec::new(), 0..state.entries().len(), &mut folders);
    if let Some(only) = only {
        folders = holding(folders, only);
    }
    let record_file = settled::path(git_dir);
    let checksum = index.checksum().filter(|c| !c.is_null());
    let record = checksum.and_then(|c| Record::load(&record_file, c, state.entries().len()));
    let started = Record::now();
    let racy = AtomicUsize::new(0);
    let filters = Filters::new(root);
    let root_folder = lstat::open_root(root).ok()?;
    let check = Check {
        state,
        root: root_folder.as_fd(),
        racy: &racy,
        mode,
        filters: &filters,
        record: record.as_ref(),
    };
    let survey = survey_folders(&check, &folders, threads)?;
    // Only a survey (`discern status`) writes the record: the verbs that prove a tree clean,
    // dry runs among them, write nothing.
    if let (Some(checksum), Some(started), Walk::Survey) = (checksum, started, mode)
        && !survey.settled.is_empty()
    {
        remember(
            &record_file,
            Record::new(checksum, started, state.entries().len()),
            state,
            &survey,
            record.as_ref(),
        );
    }
    Some(survey)
}

/// Add the entries `survey` settled by content to the record (when that adds any).
fn remember(file: &Path, mut fresh: Record, state: &State, survey: &Survey, old: Option<&Record>) {
    for &index in &survey.settled {
        fresh.mark(index, &state.entries()[index].stat);
    }
    let merged = match old {
        Some(old) if fresh.within(old) => return,
        Some(old) => fresh.union(old),
        None => fresh,
    };
    merged.save(file);
}

/// Folders are independent: read them on `threads` (this one among them), each thread taking
/// the next folder nobody took, and starting one more thread whenever a core is lent while at
/// least two folders are left. A thread that cannot be started leaves its folders to the
/// others; a share that panicked is "cannot tell".
fn survey_folders(check: &Check, folders: &[Folder], threads: Threads) -> Option<Survey> {
    let next = AtomicUsize::new(0);
    let share = |lend: &mut dyn FnMut()| {
        let read = || read_share(check, (folders, &next), lend);
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(read))
            .ok()
            .flatten()
    };
    std::thread::scope(|scope| {
        let helper = |loan| {
            std::thread::Builder::new()
                .spawn_scoped(scope, move || {
                    let _loan: Option<Loan> = loan;
                    share(&mut || {})
                })
                .ok()
        };
        let mut others: Vec<_> = (1..threads.at_start())
            .filter_map(|_| helper(None))
            .collect();
        let mut lend = || {
            if let Some(loan) = threads.borrow() {
                others.extend(helper(Some(loan)));
            }
        };
        let mine = share(&mut lend);
        let mut survey = mine?;
        for thread in others {
            let more = thread.join().ok().flatten()?;
            survey.suspects.extend(more.suspects);
            survey.changed.extend(more.changed);
            survey.untracked.extend(more.untracked);
            survey.settled.extend(more.settled);
        }
        Some(survey)
    })
}

/// Read the folders nobody took yet, one at a time (`next` counts those taken), calling `lend`
/// before each while at least two more are left. Where one cannot tell, the others stop too.
fn read_share(
    check: &Check,
    (folders, next): (&[Folder], &AtomicUsize),
    lend: &mut dyn FnMut(),
) -> Option<Survey> {
    let mut survey = Survey::default();
    let mut reading = Reading::new(check);
    loop {
        let at = next.fetch_add(1, Ordering::Relaxed);
        let Some(folder) = folders.get(at) else {
            return Some(survey);
        };
        if folders.len() - at > 2 {
            lend();
        }
        if check.folder(folder, &mut survey, &mut reading).is_none() {
            next.store(folders.len(), Ordering::Relaxed);
            return None;
        }
    }
}

/// The index holds exactly HEAD's tree: a valid cache-tree with HEAD's tree id, or the same
/// entries (path, blob, mode) in the same order (HEAD's snapshot is opened only for this).
fn index_matches(state: &State, head: Head) -> bool {
    if let Some(tree) = state.tree()
        && tree.num_entries.is_some()
        && tree.id == head.tree()
    {
        return true;
    }
    let Some(head) = head.listing() else {
        return false;
    };
    let (ours, theirs) = (state.entries(), head.entries());
    ours.len() == theirs.len()
        && ours.iter().zip(theirs).all(|(entry, committed)| {
            let mode = match committed.kind {
                EntryKind::Blob if committed.executable => Mode::FILE_EXECUTABLE,
                EntryKind::Blob => Mode::FILE,
                EntryKind::Symlink => Mode::SYMLINK,
                EntryKind::Submodule => Mode::COMMIT,
            };
            entry.path(state) == committed.path().as_bytes()
                && entry.id == committed.id
                && entry.mode == mode
        })
}

/// Whether git sees no change in the racily clean `paths`: `git diff-files` compares their
/// content the way git does (line endings, filters, attributes), without writing anything,
/// and without git's fsmonitor (a proof never rests on the hook, and git would wait for it).
fn racy_unchanged(root: &Path, paths: &[String]) -> bool {
    paths.is_empty()
        || super::command()
            .args(super::NO_FSMONITOR)
            .args(["--literal-pathspecs", "diff-files", "--quiet", "--"])
            .args(paths)
            .current_dir(root)
            .env("GIT_OPTIONAL_LOCKS", "0")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
}

/// Whether git ignores every one of `names` (`ignores.rs`).
fn all_ignored(root: &Path, names: &[String]) -> bool {
    super::ignores::ignored(root, names).is_some_and(|ignored| ignored.len() == names.len())
}
