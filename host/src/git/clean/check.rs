//! One tracked folder read against the index: each name in it a tracked file (its `lstat`
//! compared with its entry, racily clean ones settled by content), a tracked subfolder, or a
//! name the index does not know.

use std::ffi::CStr;
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::atomic::{AtomicUsize, Ordering};

use gix::index::State;
use gix::index::entry::{Mode, Stat, stat, stat::Options};

use super::folders::{Folder, Paths};
use super::{Survey, Walk};
use crate::git::lstat::{self, Listed, Lstat};
use crate::git::settle::{Filters, Settled, Settling};
use crate::git::settled::Record;

/// How many racily clean entries that cannot be settled in-process (`settle.rs`) may be handed
/// to `git diff-files` before the check gives up and lets `git status` decide. Just after a
/// commit, the files it wrote are racy; after a fresh checkout, thousands may be.
const RACY_BUDGET: usize = 256;

/// What one thread reuses from folder to folder: the listing buffer, the content settling, and
/// the copies of what the index records of the folder's files.
pub(super) struct Reading<'a> {
    buffer: Vec<u8>,
    settling: Settling<'a>,
    recorded: Vec<Recorded>,
}

impl<'a> Reading<'a> {
    pub(super) fn new(check: &Check<'a>) -> Self {
        Reading {
            buffer: Vec::new(),
            settling: Settling::new(check.filters, check.state),
            recorded: Vec::new(),
        }
    }
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

pub(super) struct Check<'a> {
    pub(super) state: &'a State,
    /// The work tree's root, open.
    pub(super) root: BorrowedFd<'a>,
    pub(super) racy: &'a AtomicUsize,
    pub(super) mode: Walk,
    pub(super) filters: &'a Filters,
    pub(super) record: Option<&'a Record>,
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
    pub(super) fn folder(
        &self,
        folder: &Folder,
        survey: &mut Survey,
        reading: &mut Reading,
    ) -> Option<()> {
        let Folder { prefix, files, .. } = folder;
        let dir = match lstat::open_folder(self.root, prefix) {
            Ok(dir) => dir,
            Err(e) if self.mode == Walk::Survey && e.kind() == std::io::ErrorKind::NotFound => {
                return self.suspect_all(files.iter().map(|&index| index as usize), survey);
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
                .map(|&index| Recorded::of(&entries[index as usize])),
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
            .map(|(&index, _)| index as usize);
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
        if let Some(at) = folder.file(self.state, bytes) {
            recorded[at].seen = true;
            // Relative to the open folder, as cheap as git's own lstat.
            let meta = lstat::lstat(dir, name).ok()?;
            let file = (folder.files[at] as usize, &recorded[at]);
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

    fn suspect_all(&self, indices: impl Iterator<Item = usize>, survey: &mut Survey) -> Option<()> {
        for index in indices {
            self.suspect(self.state.path(index), survey)?;
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
        let path = self.state.path(index);
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
