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

use std::collections::{HashMap, HashSet};
use std::ffi::CStr;
use std::ops::Range;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};

use gix::index::State;
use gix::index::entry::{Flags, Mode, Stat, stat, stat::Options};

use super::lstat::{self, Listed, Lstat};
use super::settle::{Filters, Settled, Settling};
use super::settled::{self, Record};
use crate::cores::{Loan, Threads, cores};
use crate::snapshot::{EntryKind, Snapshot};

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
    let paths: Vec<&[u8]> = state
        .entries()
        .iter()
        .map(|e| e.path(state).as_ref())
        .collect();
    let mut folders = Vec::new();
    tracked_folders(&paths, Vec::new(), 0..paths.len(), &mut folders);
    if let Some(only) = only {
        folders = holding(folders, only);
    }
    let record_file = settled::path(git_dir);
    let checksum = index.checksum().filter(|c| !c.is_null());
    let record = checksum.and_then(|c| Record::load(&record_file, c, paths.len()));
    let started = Record::now();
    let racy = AtomicUsize::new(0);
    let filters = Filters::new(root);
    let root_folder = lstat::open_root(root).ok()?;
    let check = Check {
        state,
        root: root_folder.as_fd(),
        paths: &paths,
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
            Record::new(checksum, started, paths.len()),
            state,
            &survey,
            record.as_ref(),
        );
    }
    Some(survey)
}

/// The folders of `folders` that hold one of `paths`: the deepest tracked folder each path is
/// in, and the tracked folder a path names (with or without its trailing `/`).
fn holding<'a>(folders: Vec<Folder<'a>>, paths: &[String]) -> Vec<Folder<'a>> {
    let at: HashMap<&[u8], usize> = folders
        .iter()
        .enumerate()
        .map(|(i, f)| (f.prefix.as_slice(), i))
        .collect();
    let mut wanted = HashSet::new();
    for path in paths {
        let mut prefix = Vec::new();
        for part in path.trim_end_matches('/').split('/') {
            let mut deeper = prefix.clone();
            deeper.extend_from_slice(part.as_bytes());
            deeper.push(b'/');
            if !at.contains_key(deeper.as_slice()) {
                break;
            }
            prefix = deeper;
        }
        wanted.extend(at.get(prefix.as_slice()).copied());
    }
    folders
        .into_iter()
        .enumerate()
        .filter(|(i, _)| wanted.contains(i))
        .map(|(_, f)| f)
        .collect()
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
    let mut reading = Reading {
        buffer: Vec::new(),
        settling: Settling::new(check.filters, check.state),
        recorded: Vec::new(),
    };
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
            entry.path(state) == committed.path.as_bytes()
                && entry.id == committed.id
                && entry.mode == mode
        })
}

/// How many racily clean entries that cannot be settled in-process (`settle.rs`) may be handed
/// to `git diff-files` before the check gives up and lets `git status` decide. Just after a
/// commit, the files it wrote are racy; after a fresh checkout, thousands may be.
const RACY_BUDGET: usize = 256;

/// One tracked folder, as the index knows it.
struct Folder<'a> {
    /// Empty for the root, else ending in `/`.
    prefix: Vec<u8>,
    /// Tracked files directly in it, sorted by name: name and index of the entry.
    files: Vec<(&'a [u8], usize)>,
    /// The [`name_key`] of each of `files`, in the same order (so sorted too).
    keys: Vec<u64>,
    /// Names of tracked subfolders, sorted.
    subfolders: Vec<&'a [u8]>,
}

impl Folder<'_> {
    /// Where in `files` the tracked file `name` is: found among the keys (one word each), and
    /// only then among the names that share its key.
    fn file(&self, name: &[u8]) -> Option<usize> {
        let key = name_key(name);
        let from = self.keys.partition_point(|k| *k < key);
        let to = from + self.keys[from..].partition_point(|k| *k == key);
        let at = self.files[from..to].binary_search_by(|(n, _)| (*n).cmp(name));
        at.ok().map(|at| from + at)
    }

    fn has_subfolder(&self, name: &[u8]) -> bool {
        self.subfolders.binary_search(&name).is_ok()
    }
}

/// The first 8 bytes of `name` as one big-endian word, zero-padded: names in byte order have
/// their keys in order (a name holds no NUL, so a shorter name's padding sorts first).
fn name_key(name: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    let n = name.len().min(8);
    word[..n].copy_from_slice(&name[..n]);
    u64::from_be_bytes(word)
}

/// Every tracked folder below `prefix`, whose sorted index paths are `range`, in one pass:
/// a subfolder's paths are a contiguous run, skipped with a binary search.
fn tracked_folders<'a>(
    paths: &[&'a [u8]],
    prefix: Vec<u8>,
    range: Range<usize>,
    folders: &mut Vec<Folder<'a>>,
) {
    let mut folder = Folder {
        prefix,
        files: Vec::new(),
        keys: Vec::new(),
        subfolders: Vec::new(),
    };
    let mut below = Vec::new();
    let mut at = range.start;
    while at < range.end {
        let path = paths[at];
        let rest = &path[folder.prefix.len()..];
        match rest.iter().position(|b| *b == b'/') {
            Some(slash) => {
                let sub = &path[..folder.prefix.len() + slash + 1];
                let len = paths[at..range.end].partition_point(|p| p.starts_with(sub));
                folder.subfolders.push(&rest[..slash]);
                below.push((sub.to_vec(), at..at + len));
                at += len;
            }
            None => {
                folder.files.push((rest, at));
                at += 1;
            }
        }
    }
    // Index order is byte order of whole paths: the files come sorted, the subfolders need
    // not (`b-c/…` sorts before `b/…`).
    folder.files.sort_unstable();
    folder.keys = folder
        .files
        .iter()
        .map(|(name, _)| name_key(name))
        .collect();
    folder.subfolders.sort_unstable();
    folders.push(folder);
    for (sub, range) in below {
        tracked_folders(paths, sub, range, folders);
    }
}

/// What one thread reuses from folder to folder: the listing buffer, the content settling, and
/// the copies of what the index records of the folder's files.
struct Reading<'a> {
    buffer: Vec<u8>,
    settling: Settling<'a>,
    recorded: Vec<Recorded>,
}

/// What the index records of one tracked file, as the stat comparison reads it, copied for a
/// folder before its names are read: a folder's entries lie apart in the index (its subfolders'
/// entries between them), and reading each where it lies, between system calls that evict it,
/// cost more than the comparison itself.
#[derive(Debug, Clone, Copy)]
struct Recorded {
    stat: Stat,
    mode: Mode,
    /// Recorded with size 0 though its blob is not empty: smudged by git as racily clean.
    smudged: bool,
    /// Found in the folder.
    seen: bool,
}

impl Recorded {
    fn of(entry: &gix::index::Entry) -> Self {
        Self {
            stat: entry.stat,
            mode: entry.mode,
            smudged: entry.stat.size == 0 && !entry.id.is_empty_blob(),
            seen: false,
        }
    }
}

struct Check<'a> {
    state: &'a State,
    /// The work tree's root, open.
    root: BorrowedFd<'a>,
    paths: &'a [&'a [u8]],
    racy: &'a AtomicUsize,
    mode: Walk,
    filters: &'a Filters,
    record: Option<&'a Record>,
}

/// What a tracked file's `lstat` says against its index entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    /// Matches, and the entry is not racily clean.
    Matches,
    /// Matches, but the entry is racily clean (or smudged): only the content can tell.
    Racy,
    /// Differs, but the kind and mode are the same and the size cannot tell (the same size, a
    /// smudged entry's 0, or the same size modulo 4 GiB): only the content can tell.
    Touched,
    /// The same kind and mode at another size than the entry records (a size of 0 is a smudged
    /// entry, `Touched`): git lists it as modified without reading it (`ie_modified`), even
    /// where a line-ending conversion would store the same blob.
    Resized,
    /// Differs in kind or mode.
    Differs,
}

impl Check<'_> {
    /// Read one tracked folder: every tracked file in it must be there with its recorded stat
    /// data (or, racily clean, its content), every tracked subfolder must be a folder; adds
    /// the names the index does not know (folders with a trailing `/`) and the suspects to
    /// `survey`, or returns `None` ("cannot tell"). Surveying, a tracked file that is missing
    /// or does not match is a suspect, and so is every file of a tracked folder that is gone.
    fn folder(&self, folder: &Folder, survey: &mut Survey, reading: &mut Reading) -> Option<()> {
        let Folder { prefix, files, .. } = folder;
        let dir = match lstat::open_folder(self.root, prefix) {
            Ok(dir) => dir,
            Err(e) if self.mode == Walk::Survey && e.kind() == std::io::ErrorKind::NotFound => {
                return self.suspect_all(files.iter().map(|(_, index)| index), survey);
            }
            Err(_) => return None,
        };
        let Reading {
            buffer,
            settling,
            recorded,
        } = reading;
        recorded.clear();
        let entries = self.state.entries();
        recorded.extend(
            files
                .iter()
                .map(|(_, index)| Recorded::of(&entries[*index])),
        );
        lstat::each_name(&dir, buffer, |name, listed| {
            let at = (dir.as_fd(), name, listed);
            self.name(folder, at, (recorded, survey), settling)
        })
        .ok()??;
        // Something tracked is missing.
        let missing = files
            .iter()
            .zip(recorded.iter())
            .filter(|(_, recorded)| !recorded.seen)
            .map(|((_, index), _)| index);
        self.suspect_all(missing, survey)
    }

    /// One name of `folder` (read in the open folder `dir`, listed as `listed`): a tracked file
    /// (marked seen in `recorded`, what the index records of the folder's files), a tracked
    /// subfolder, or a name the index does not know.
    fn name(
        &self,
        folder: &Folder,
        (dir, name, listed): (BorrowedFd, &CStr, Listed),
        (recorded, survey): (&mut [Recorded], &mut Survey),
        settling: &mut Settling,
    ) -> Option<()> {
        let bytes = name.to_bytes();
        if folder.prefix.is_empty() && bytes == b".git" {
            return Some(());
        }
        if let Some(at) = folder.file(bytes) {
            recorded[at].seen = true;
            // Relative to the open folder, as cheap as git's own lstat.
            let meta = lstat::lstat(dir, name).ok()?;
            let file = (folder.files[at].1, &recorded[at]);
            return self.tracked(file, &meta, survey, settling);
        }
        let is_folder = match listed {
            Listed::Folder => true,
            Listed::Other => false,
            Listed::Unknown => lstat::lstat(dir, name).ok()?.is_folder(),
        };
        if folder.has_subfolder(bytes) {
            // A tracked folder that is now something else: only git can name that.
            return is_folder.then_some(());
        }
        survey.untracked.push(format!(
            "{}{}{}",
            std::str::from_utf8(&folder.prefix).ok()?,
            std::str::from_utf8(bytes).ok()?,
            if is_folder { "/" } else { "" }
        ));
        Some(())
    }

    /// `path` may have changed: a suspect when surveying, the end of a proof.
    fn suspect(&self, path: &[u8], survey: &mut Survey) -> Option<()> {
        if self.mode == Walk::Prove {
            return None;
        }
        survey
            .suspects
            .push(std::str::from_utf8(path).ok()?.to_owned());
        Some(())
    }

    /// `path` has changed (surveying).
    fn changed(&self, path: &[u8], survey: &mut Survey) -> Option<()> {
        survey
            .changed
            .push(std::str::from_utf8(path).ok()?.to_owned());
        Some(())
    }

    fn suspect_all<'i>(
        &self,
        indices: impl Iterator<Item = &'i usize>,
        survey: &mut Survey,
    ) -> Option<()> {
        for &index in indices {
            self.suspect(self.paths[index], survey)?;
        }
        Some(())
    }

    /// One tracked file (entry `index`, its stat data as `recorded`) found in its folder with
    /// `lstat` `meta`: matching, settled by its content, or a suspect.
    fn tracked(
        &self,
        (index, recorded): (usize, &Recorded),
        meta: &Lstat,
        survey: &mut Survey,
        settling: &mut Settling,
    ) -> Option<()> {
        let seen = self.seen(recorded, meta);
        // Matching, or racily clean and settled unchanged since (the settled record): done,
        // without reaching for the entry where it lies in the index.
        let trusted = |r: &Record| r.trusts(index, &recorded.stat);
        if seen == Seen::Matches || (seen == Seen::Racy && self.record.is_some_and(trusted)) {
            return Some(());
        }
        let entry = &self.state.entries()[index];
        let path = self.paths[index];
        let by_content = match (seen, self.mode) {
            (Seen::Matches, _) => return Some(()),
            (Seen::Resized, Walk::Survey) => return self.changed(path, survey),
            (Seen::Racy, _) | (Seen::Touched, Walk::Survey) => true,
            (Seen::Touched | Seen::Resized | Seen::Differs, _) => false,
        };
        if !by_content {
            return self.suspect(path, survey);
        }
        match (settling.settle(entry, path, meta), self.mode) {
            (Settled::Unchanged, _) => {
                if seen == Seen::Racy {
                    survey.settled.push(index);
                }
                Some(())
            }
            (Settled::Changed, Walk::Prove) => None,
            (Settled::Changed, Walk::Survey) => self.changed(path, survey),
            (Settled::CannotTell, Walk::Survey) => self.suspect(path, survey),
            // Proving, a racily clean entry is left to `git diff-files`, a bounded number.
            (Settled::CannotTell, Walk::Prove) => {
                if self.racy.fetch_add(1, Ordering::Relaxed) >= RACY_BUDGET {
                    return None;
                }
                survey
                    .suspects
                    .push(std::str::from_utf8(path).ok()?.to_owned());
                Some(())
            }
        }
    }

    /// The file's `lstat` against its index entry, to the nanosecond (stricter than git as it
    /// is usually built, so never "matches" where any git would see a change). Racily clean is
    /// judged by whole seconds (changed within the second the index was written: again the
    /// stricter side); an entry whose recorded size is 0 but whose blob is not empty was
    /// smudged by git as racy and is treated the same.
    fn seen(&self, entry: &Recorded, meta: &Lstat) -> Seen {
        let exact = Options {
            trust_ctime: true,
            check_stat: true,
            use_nsec: true,
            use_stdev: false,
        };
        let by_second = Options {
            use_nsec: false,
            ..exact
        };
        let executable = meta.executable();
        let mode_ok = match entry.mode {
            Mode::FILE => meta.is_file() && !executable,
            Mode::FILE_EXECUTABLE => meta.is_file() && executable,
            Mode::SYMLINK => meta.is_symlink(),
            _ => false,
        };
        let time = |(secs, nsecs): (i64, u32)| {
            Some(stat::Time {
                secs: u32::try_from(secs).ok()?,
                nsecs,
            })
        };
        // A time the index cannot hold (before 1970, after 2106) matches nothing: "cannot
        // tell", and git status decides.
        let (Some(mtime), Some(ctime)) = (time(meta.mtime), time(meta.ctime)) else {
            return Seen::Differs;
        };
        // Truncated to 32 bits on purpose, as git (and the index) does.
        let now = Stat {
            mtime,
            ctime,
            dev: meta.dev as u32,
            ino: meta.ino as u32,
            uid: meta.uid,
            gid: meta.gid,
            size: meta.size as u32,
        };
        if !mode_ok {
            return Seen::Differs;
        }
        // Sizes as the index holds them, truncated to 32 bits, as git compares them.
        if entry.stat.size != now.size {
            return match entry.stat.size {
                0 => Seen::Touched,
                _ => Seen::Resized,
            };
        }
        if u64::from(entry.stat.size) != meta.size {
            // The same size modulo 4 GiB: only the content (git, for a file this large) can tell.
            return Seen::Touched;
        }
        if !entry.stat.matches(&now, exact) {
            return Seen::Touched;
        }
        match entry.smudged || entry.stat.is_racy(self.state.timestamp(), by_second) {
            true => Seen::Racy,
            false => Seen::Matches,
        }
    }
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

#[cfg(test)]
mod tests {
    use super::{Folder, tracked_folders};

    /// Names that share their first 8 bytes, shorter than 8, one a prefix of another, and
    /// past ASCII: the keyed lookup finds exactly the names a plain search finds.
    #[test]
    fn a_folder_finds_exactly_its_tracked_names() {
        let names: Vec<String> = [
            "a",
            "ab",
            "abcdefgh",
            "abcdefgh.rs",
            "abcdefghi",
            "abcdefgz",
            "component_alpha.rs",
            "component_beta.rs",
            "component_",
            "z",
            "\u{e9}t\u{e9}.md",
            "\u{e9}t\u{e9}",
            "~",
        ]
        .iter()
        .map(|n| format!("src/{n}"))
        .collect();
        let mut paths: Vec<&[u8]> = names.iter().map(|n| n.as_bytes()).collect();
        paths.sort_unstable();
        let mut folders = Vec::new();
        tracked_folders(&paths, Vec::new(), 0..paths.len(), &mut folders);
        let src: &Folder = folders.iter().find(|f| f.prefix == b"src/").unwrap();
        for (at, (name, _)) in src.files.iter().enumerate() {
            assert_eq!(
                src.file(name),
                Some(at),
                "{}",
                String::from_utf8_lossy(name)
            );
        }
        for absent in [
            "",
            "abcdefg",
            "abcdefgh.r",
            "abcdefgha",
            "component",
            "component_g",
            "zz",
        ] {
            assert_eq!(src.file(absent.as_bytes()), None, "{absent}");
        }
    }
}
