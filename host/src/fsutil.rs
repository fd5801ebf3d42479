//! Atomic file writes: a temp file, fsync, rename (for a cache, no fsync). An existing file's
//! permissions are kept.
//! A work-tree file is written through a temp file in discern's own folder, so a crash never
//! leaves dirt in the work tree.

use std::io::Write;
use std::path::Path;

/// The prefix of every temp file discern writes (what recovery may clean up).
pub(crate) const TEMP_PREFIX: &str = ".discern-tmp-";

pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_via(path, bytes, parent(path)?, Sync::Synced)
}

/// [`write_atomic`] without the fsync, for a cache whose reader checks what it reads: a crash
/// never shows a half-written file under `path` (the rename is atomic), and a power loss that
/// leaves its blocks unwritten leaves a file that does not parse, read as a miss. Writing a
/// large cache file (a reading's findings) then costs no wait for the disk.
pub(crate) fn write_cache(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_via(path, bytes, parent(path)?, Sync::Unsynced)
}

/// The text of `path`, empty when there is no such file; any other failure is an error (a
/// file that is rewritten from what was read must never be read as empty by mistake).
pub(crate) fn read_or_empty(path: &Path) -> std::io::Result<String> {
    match std::fs::read_to_string(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        other => other,
    }
}

fn parent(path: &Path) -> std::io::Result<&Path> {
    path.parent()
        .ok_or_else(|| std::io::Error::other(format!("{} has no parent", path.display())))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Sync {
    Synced,
    Unsynced,
}

/// Write `path` atomically through a temp file in `temp_dir` (on the same file system; if the
/// rename crosses devices, through one beside `path` instead).
pub(crate) fn write_atomic_via(path: &Path, bytes: &[u8], temp_dir: &Path) -> std::io::Result<()> {
    match write_via(path, bytes, temp_dir, Sync::Synced) {
        Err(e) if e.raw_os_error() == Some(18) => write_atomic(path, bytes),
        other => other,
    }
}

/// Remove the temp files a crash left in `dir`: discern's own (by their prefix) and older than
/// `age`, so a write in flight in another process is never touched.
pub(crate) fn clean_temp(dir: &Path, age: std::time::Duration) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let ours = entry.file_name().to_string_lossy().starts_with(TEMP_PREFIX);
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|elapsed| elapsed > age);
        if ours && old {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

fn write_via(path: &Path, bytes: &[u8], dir: &Path, sync: Sync) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    let permissions = match std::fs::metadata(path) {
        Ok(meta) => meta.permissions(),
        Err(_) => default_permissions(),
    };
    tmp.as_file().set_permissions(permissions)?;
    if sync == Sync::Synced {
        tmp.as_file().sync_all()?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// `rw-r--r--`, what a file written by `git checkout` gets under the usual umask.
fn default_permissions() -> std::fs::Permissions {
    std::os::unix::fs::PermissionsExt::from_mode(0o644)
}
