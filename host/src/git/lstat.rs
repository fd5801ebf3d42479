//! Reading a work tree's folders the way `git status` does: each folder opened below the work
//! tree's root, its names read with `getdents64` into one buffer, each tracked name `lstat`ed
//! relative to the open folder. Nothing is allocated per entry (a fleet's status reads hundreds
//! of thousands of them; the standard library's iterator allocated each name twice).
//!
//! Linux reads with `statx` and `getdents64`; other Unix systems (macOS) with `fstatat` and
//! `readdir`, the same data through the calls they have.

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
#[cfg(target_os = "linux")]
use rustix::fs::{RawDir, StatxFlags};

/// What a clean check needs of a file's `lstat`: all of git's stat data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Lstat {
    /// `st_mode`: the file's kind and permission bits.
    pub mode: u32,
    pub size: u64,
    /// Seconds and nanoseconds.
    pub mtime: (i64, u32),
    pub ctime: (i64, u32),
    pub dev: u64,
    pub ino: u64,
    pub uid: u32,
    pub gid: u32,
}

impl Lstat {
    fn kind(&self) -> FileType {
        // The type bits (`S_IFMT`) fit every system's `mode_t` (16 bits on macOS).
        FileType::from_raw_mode((self.mode & 0o170_000) as rustix::fs::RawMode)
    }

    pub(super) fn is_file(&self) -> bool {
        self.kind() == FileType::RegularFile
    }

    pub(super) fn is_folder(&self) -> bool {
        self.kind() == FileType::Directory
    }

    pub(super) fn is_symlink(&self) -> bool {
        self.kind() == FileType::Symlink
    }

    /// The owner may execute it (git's one permission bit).
    pub(super) fn executable(&self) -> bool {
        self.mode & 0o100 != 0
    }
}

#[cfg(target_os = "linux")]
/// The stat data `statx` must return for a comparison with the index; a file system that
/// leaves any out is "cannot tell".
const NEEDED: StatxFlags = StatxFlags::TYPE
    .union(StatxFlags::MODE)
    .union(StatxFlags::UID)
    .union(StatxFlags::GID)
    .union(StatxFlags::INO)
    .union(StatxFlags::SIZE)
    .union(StatxFlags::MTIME)
    .union(StatxFlags::CTIME);

/// `lstat` of `name` in the open folder `folder`.
#[cfg(target_os = "linux")]
pub(super) fn lstat(folder: BorrowedFd, name: &CStr) -> io::Result<Lstat> {
    let st = rustix::fs::statx(
        folder,
        name,
        AtFlags::SYMLINK_NOFOLLOW,
        StatxFlags::BASIC_STATS,
    )?;
    if !StatxFlags::from_bits_retain(st.stx_mask).contains(NEEDED) {
        return Err(io::Error::other("the file system leaves out stat data"));
    }
    Ok(Lstat {
        mode: u32::from(st.stx_mode),
        size: st.stx_size,
        mtime: (st.stx_mtime.tv_sec, st.stx_mtime.tv_nsec),
        ctime: (st.stx_ctime.tv_sec, st.stx_ctime.tv_nsec),
        dev: rustix::fs::makedev(st.stx_dev_major, st.stx_dev_minor),
        ino: st.stx_ino,
        uid: st.stx_uid,
        gid: st.stx_gid,
    })
}

/// `lstat` of `name` in the open folder `folder`.
#[cfg(not(target_os = "linux"))]
pub(super) fn lstat(folder: BorrowedFd, name: &CStr) -> io::Result<Lstat> {
    let st = rustix::fs::statat(folder, name, AtFlags::SYMLINK_NOFOLLOW)?;
    let number = |n: i64| u64::try_from(n).map_err(|_| io::Error::other("a negative stat field"));
    let nanos = |n: i64| u32::try_from(n).map_err(|_| io::Error::other("a stat time out of range"));
    Ok(Lstat {
        mode: u32::from(st.st_mode),
        size: number(st.st_size)?,
        mtime: (st.st_mtime, nanos(st.st_mtime_nsec)?),
        ctime: (st.st_ctime, nanos(st.st_ctime_nsec)?),
        dev: number(i64::from(st.st_dev))?,
        ino: st.st_ino,
        uid: st.st_uid,
        gid: st.st_gid,
    })
}

/// The work tree's root, open for the folders below it.
pub(super) fn open_root(root: &Path) -> io::Result<OwnedFd> {
    Ok(rustix::fs::openat(
        rustix::fs::CWD,
        root,
        folder_flags(),
        Mode::empty(),
    )?)
}

/// The folder `prefix` (relative, empty for the root, else ending in `/`) below `root`, never
/// through a symbolic link in its last part.
pub(super) fn open_folder(root: BorrowedFd, prefix: &[u8]) -> io::Result<OwnedFd> {
    let relative: &[u8] = match prefix.strip_suffix(b"/") {
        Some(folder) => folder,
        None => b".",
    };
    Ok(rustix::fs::openat(
        root,
        relative,
        folder_flags() | OFlags::NOFOLLOW,
        Mode::empty(),
    )?)
}

fn folder_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC
}

/// A name's kind as the folder listing gives it; `None` where the file system does not say
/// (the caller asks `lstat`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Listed {
    Folder,
    Other,
    Unknown,
}

/// Call `each` with every name in the open `folder` but `.` and `..`, and its kind as listed;
/// stops at the first `None` from `each` (and returns it). `buffer` (its spare capacity) is
/// reused across calls.
#[cfg(target_os = "linux")]
pub(super) fn each_name(
    folder: &OwnedFd,
    buffer: &mut Vec<u8>,
    mut each: impl FnMut(&CStr, Listed) -> Option<()>,
) -> io::Result<Option<()>> {
    if buffer.capacity() < BUFFER {
        buffer.reserve(BUFFER);
    }
    let mut names = RawDir::new(folder.as_fd(), buffer.spare_capacity_mut());
    while let Some(entry) = names.next() {
        let entry = entry?;
        let name = entry.file_name();
        if matches!(name.to_bytes(), b"." | b"..") {
            continue;
        }
        if each(name, listed(entry.file_type())).is_none() {
            return Ok(None);
        }
    }
    Ok(Some(()))
}

/// Bytes read per `getdents64` call.
#[cfg(target_os = "linux")]
const BUFFER: usize = 32 << 10;

/// [`each_name`] where there is no `getdents64`: `readdir` on a duplicate of the folder's
/// descriptor (`buffer` is not needed).
#[cfg(not(target_os = "linux"))]
pub(super) fn each_name(
    folder: &OwnedFd,
    _buffer: &mut Vec<u8>,
    mut each: impl FnMut(&CStr, Listed) -> Option<()>,
) -> io::Result<Option<()>> {
    let mut names = rustix::fs::Dir::read_from(folder.as_fd())?;
    while let Some(entry) = names.read() {
        let entry = entry?;
        let name = entry.file_name();
        if matches!(name.to_bytes(), b"." | b"..") {
            continue;
        }
        if each(name, listed(entry.file_type())).is_none() {
            return Ok(None);
        }
    }
    Ok(Some(()))
}

/// A listed kind from the file type a folder listing gives.
fn listed(kind: FileType) -> Listed {
    match kind {
        FileType::Directory => Listed::Folder,
        FileType::Unknown => Listed::Unknown,
        _ => Listed::Other,
    }
}
