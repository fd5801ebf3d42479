//! A fast clean-tree check that can only say "provably clean" or "cannot tell".
//!
//! It does what `git status` does on a clean tree, in-process and in parallel: the index must
//! match HEAD's tree (its cache-tree, else entry by entry); every tracked file's `lstat` must
//! match its index entry (mtime, ctime, size, inode, owner, mode), and a racily clean one (a
//! bounded number) must hash to its blob id; and every name in a tracked folder that the index
//! does not know must be ignored (one `git check-ignore` call decides, with all of git's ignore
//! sources). Anything unusual —
//! conflicts, sparse or assume-unchanged entries, submodules, an unreadable file, a stat
//! mismatch, an untracked name that is not ignored — is "cannot tell", and the caller asks
//! `git status`, which stays the authority on what is dirty and why.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::io::Write;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use gix::index::State;
use gix::index::entry::{Flags, Mode, Stat, stat::Options};

use super::{EntryKind, Snapshot};

/// Whether the index and the work tree provably hold exactly `head` (the snapshot of HEAD),
/// untracked files all ignored. `false` means "cannot tell", not "dirty".
pub fn proves_clean(repo: &gix::Repository, root: &Path, head: &Snapshot) -> bool {
    let Ok(index) = repo.open_index() else {
        return false;
    };
    let state: &State = &index;
    let unusual = Flags::ASSUME_VALID | Flags::SKIP_WORKTREE | Flags::INTENT_TO_ADD;
    if state
        .entries()
        .iter()
        .any(|e| e.stage_raw() != 0 || e.flags.intersects(unusual) || e.mode == Mode::COMMIT)
    {
        return false;
    }
    if !index_matches(state, head) {
        return false;
    }
    let racy = AtomicUsize::new(0);
    let untracked = std::thread::scope(|scope| {
        let walk = scope.spawn(|| untracked_names(state, root));
        let workers = std::thread::available_parallelism().map_or(1, usize::from);
        let chunk = state.entries().len().div_ceil(workers).max(1);
        let stats: Vec<_> = state
            .entries()
            .chunks(chunk)
            .map(|entries| scope.spawn(|| stats_match(state, entries, root, &racy)))
            .collect();
        let stats_ok = stats.into_iter().all(|s| s.join().unwrap_or(false));
        let untracked = walk.join().ok().flatten();
        untracked.filter(|_| stats_ok)
    });
    match untracked {
        None => false,
        Some(names) if names.is_empty() => true,
        Some(names) => all_ignored(root, &names),
    }
}

/// The index holds exactly HEAD's tree: a valid cache-tree with HEAD's tree id, or the same
/// entries (path, blob, mode) in the same order.
fn index_matches(state: &State, head: &Snapshot) -> bool {
    if let Some(tree) = state.tree()
        && tree.num_entries.is_some()
        && tree.id == head.tree()
    {
        return true;
    }
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

/// How many racily clean entries may be settled by hashing their content (as git does) before
/// the check gives up and lets `git status` decide. Just after a commit, the files it wrote
/// are racy; after a fresh checkout, thousands may be.
const RACY_BUDGET: usize = 256;

/// Every entry's `lstat` matches what the index recorded; an entry that is racily clean
/// (modified within the index file's own timestamp, where only the content can tell) must hash
/// to its blob id, within the shared `racy` budget.
fn stats_match(
    state: &State,
    entries: &[gix::index::Entry],
    root: &Path,
    racy: &AtomicUsize,
) -> bool {
    // As git is usually built (without USE_NSEC): whole seconds. Still sound, by git's own
    // racy rule: a file changed within the second its entry records is at least as new as the
    // index, so it is racy and the check says "cannot tell".
    let options = Options {
        trust_ctime: true,
        check_stat: true,
        use_nsec: false,
        use_stdev: false,
    };
    let timestamp = state.timestamp();
    entries.iter().all(|entry| {
        let path = root.join(OsStr::from_bytes(entry.path(state)));
        let Ok(meta) = gix::index::fs::Metadata::from_path_no_follow(&path) else {
            return false;
        };
        if entry.mode.change_to_match_fs(&meta, true, true).is_some() {
            return false;
        }
        let Ok(stat) = Stat::from_fs(&meta) else {
            return false;
        };
        if !entry.stat.matches(&stat, options) {
            return false;
        }
        !entry.stat.is_racy(timestamp, options)
            || (racy.fetch_add(1, Ordering::Relaxed) < RACY_BUDGET
                && content_matches(entry, &path, meta.is_symlink()))
    })
}

/// The file (or the symlink's target) hashes to the entry's blob id. Raw bytes: a file that
/// git would convert on the way in (line endings, filters) does not match, and git decides.
fn content_matches(entry: &gix::index::Entry, path: &Path, symlink: bool) -> bool {
    let bytes = if symlink {
        std::fs::read_link(path).map(|target| target.into_os_string().into_vec())
    } else {
        std::fs::read(path)
    };
    bytes.is_ok_and(|bytes| {
        gix::objs::compute_hash(entry.id.kind(), gix::objs::Kind::Blob, &bytes)
            .is_ok_and(|id| id == entry.id)
    })
}

/// Names in tracked folders that the index does not know (folders end in `/`), or `None` when
/// a folder cannot be read as expected.
fn untracked_names(state: &State, root: &Path) -> Option<Vec<String>> {
    let paths: Vec<&[u8]> = state
        .entries()
        .iter()
        .map(|e| e.path(state).as_ref())
        .collect();
    let mut names = Vec::new();
    walk(root, b"", &paths, &mut names)?;
    Some(names)
}

/// Read one tracked folder (`prefix` is empty or ends in `/`); `paths` are the sorted index
/// paths below it.
fn walk(root: &Path, prefix: &[u8], paths: &[&[u8]], names: &mut Vec<String>) -> Option<()> {
    let mut children: HashMap<&[u8], bool> = HashMap::new();
    for path in paths {
        let rest = &path[prefix.len()..];
        match rest.iter().position(|b| *b == b'/') {
            Some(slash) => children.insert(&rest[..slash], true),
            None => children.insert(rest, false),
        };
    }
    for dirent in std::fs::read_dir(root.join(OsStr::from_bytes(prefix))).ok()? {
        let dirent = dirent.ok()?;
        let name = dirent.file_name();
        let name = name.as_bytes();
        if prefix.is_empty() && name == b".git" {
            continue;
        }
        let is_dir = dirent.file_type().ok()?.is_dir();
        match children.get(name) {
            Some(true) if is_dir => {
                let sub = [prefix, name, b"/"].concat();
                let start = paths.partition_point(|p| *p < sub.as_slice());
                let len = paths[start..].partition_point(|p| p.starts_with(&sub));
                walk(root, &sub, &paths[start..start + len], names)?;
            }
            // A tracked folder that is no longer one: let git describe it.
            Some(true) => return None,
            Some(false) => {}
            None => names.push(format!(
                "{}{}{}",
                std::str::from_utf8(prefix).ok()?,
                std::str::from_utf8(name).ok()?,
                if is_dir { "/" } else { "" }
            )),
        }
    }
    Some(())
}

/// Whether git ignores every one of `names` (`git check-ignore`, which applies `.gitignore`
/// files, `info/exclude` and `core.excludesFile`).
fn all_ignored(root: &Path, names: &[String]) -> bool {
    let Ok(mut child) = Command::new("git")
        .args(["check-ignore", "-z", "--stdin"])
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
    else {
        return false;
    };
    let input: Vec<u8> = names
        .iter()
        .flat_map(|n| [n.as_bytes(), b"\0"])
        .flatten()
        .copied()
        .collect();
    let Some(mut stdin) = child.stdin.take() else {
        return false;
    };
    // Written from a thread: git answers while it reads, so a long list must not block on a
    // full stdout pipe.
    let (written, output) = std::thread::scope(|scope| {
        let writer = scope.spawn(move || stdin.write_all(&input).is_ok());
        let output = child.wait_with_output();
        (writer.join().unwrap_or(false), output)
    });
    let Ok(output) = output else {
        return false;
    };
    let ignored = output
        .stdout
        .split(|b| *b == 0)
        .filter(|n| !n.is_empty())
        .count();
    written && output.status.success() && ignored == names.len()
}
