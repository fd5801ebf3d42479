//! The command an entry starts, and whether a command an entry names runs here.
//!
//! An entry names `discern` when `discern` on PATH is this very binary: the file can then be
//! committed and shared, whoever installed discern where. Otherwise it names this binary's
//! absolute path, so the client starts the binary that wrote it (a build not on PATH, or a PATH
//! whose `discern` is another one); `--check` and `doctor` report an entry whose command no
//! longer runs.

use std::path::{Path, PathBuf};

/// The program an entry written by this process starts.
pub(crate) fn command() -> Result<String, String> {
    let exe = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .map_err(|e| format!("the running binary's path cannot be read: {e}"))?;
    let on_path = resolve("discern").and_then(|p| p.canonicalize().ok());
    match on_path {
        Some(found) if found == exe => Ok("discern".to_owned()),
        _ => Ok(exe.display().to_string()),
    }
}

/// Where `command` runs from: itself when it names a path, else the first executable of that
/// name on PATH.
pub(crate) fn resolve(command: &str) -> Option<PathBuf> {
    if command.contains('/') {
        let path = PathBuf::from(command);
        return executable(&path).then_some(path);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(command))
        .find(|candidate| executable(candidate))
}

/// Why `command` would not start here, or `None` when it would.
pub(crate) fn does_not_run(command: &str) -> Option<String> {
    match resolve(command) {
        Some(_) => None,
        None if command.contains('/') => Some(format!("`{command}` is not an executable file")),
        None => Some(format!("`{command}` is not on PATH")),
    }
}

fn executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Whether any of `programs` is on PATH.
pub(crate) fn installed(programs: &[&str]) -> bool {
    programs.iter().any(|p| resolve(p).is_some())
}
