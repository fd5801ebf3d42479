//! Atomic file writes: a temp file in the same directory, fsync, rename. An existing file's
//! permissions are kept.

use std::io::Write;
use std::path::Path;

pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| std::io::Error::other(format!("{} has no parent", path.display())))?;
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    let permissions = match std::fs::metadata(path) {
        Ok(meta) => meta.permissions(),
        Err(_) => default_permissions(),
    };
    tmp.as_file().set_permissions(permissions)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// `rw-r--r--`, what a file written by `git checkout` gets under the usual umask.
fn default_permissions() -> std::fs::Permissions {
    std::os::unix::fs::PermissionsExt::from_mode(0o644)
}
