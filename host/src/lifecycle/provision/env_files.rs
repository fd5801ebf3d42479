//! `[worktree].env_files`: files the main checkout has and git does not (`.env`, local
//! credentials), copied into an effort's worktree with mode 0600 and kept out of every commit.
//!
//! A file git would not ignore in the worktree is added to the repository's `info/exclude`
//! (git reads it for every worktree), anchored to its path, and the reply says so: an env file
//! is never an untracked change that blocks `done`, and never committed. A file the repository
//! tracks is not copied (it is in the worktree already, as committed). A file the main checkout
//! lacks is an advisory, not a failure; one already in the worktree is left as it is (its
//! owner may have edited it).

use std::path::Path;

use crate::git::Repo;

/// What copying the env files did, as advisories.
#[derive(Debug, Default)]
pub(crate) struct Copied {
    pub files: Vec<String>,
    pub advisories: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum EnvFileError {
    #[error("cannot copy the env file {file} into {worktree}: {why}")]
    Copy {
        file: String,
        worktree: String,
        why: String,
    },
    #[error("cannot keep the env file {file} out of commits: {why}")]
    Exclude { file: String, why: String },
}

/// Copy each of `files` that `main` has into the worktree of `effort`.
pub(crate) fn copy(main: &Path, effort: &Repo, files: &[String]) -> Result<Copied, EnvFileError> {
    let mut copied = Copied::default();
    for file in files {
        let from = main.join(file);
        let to = effort.root().join(file);
        if effort
            .git(&["ls-files", "--error-unmatch", "--", file])
            .is_ok()
        {
            copied.advisories.push(format!(
                "The env file {file} is tracked by the repository, so it was not copied (the worktree has it as committed)."
            ));
            continue;
        }
        if !from.is_file() {
            copied.advisories.push(format!(
                "The env file {file} is not in the main checkout ({}); the effort starts without it.",
                from.display()
            ));
            continue;
        }
        if let Some(advisory) = exclude(effort, file)? {
            copied.advisories.push(advisory);
        }
        if to.exists() {
            continue;
        }
        write_private(&from, &to).map_err(|e| EnvFileError::Copy {
            file: file.clone(),
            worktree: effort.root().display().to_string(),
            why: e.to_string(),
        })?;
        copied.files.push(file.clone());
    }
    Ok(copied)
}

/// Copy `from` to `to` readable by its owner only (0600 from the moment it exists).
fn write_private(from: &Path, to: &Path) -> std::io::Result<()> {
    let bytes = std::fs::read(from)?;
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut out = options.open(to)?;
    std::io::Write::write_all(&mut out, &bytes)?;
    out.sync_all()
}

/// Make git ignore `file` in `effort` (an anchored line in the shared `info/exclude`) unless it
/// already does; the advisory saying so, when a line was added.
fn exclude(effort: &Repo, file: &str) -> Result<Option<String>, EnvFileError> {
    let failed = |why: String| EnvFileError::Exclude {
        file: file.to_owned(),
        why,
    };
    // `check-ignore` exits 0 for an ignored path, 1 for one that is not, 128 on an error.
    let status = crate::git::command()
        .args(["check-ignore", "-q", "--no-index", "--", file])
        .current_dir(effort.root())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|e| failed(format!("git check-ignore cannot run: {e}")))?;
    match status.code() {
        Some(0) => return Ok(None),
        Some(1) => {}
        _ => return Err(failed(format!("git check-ignore {file} failed ({status})"))),
    }
    let path = effort.common_dir().join("info").join("exclude");
    let mut text = crate::fsutil::read_or_empty(&path)
        .map_err(|e| failed(format!("cannot read {}: {e}", path.display())))?;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&format!(
        "# discern: [worktree].env_files, never committed\n/{}\n",
        escape(file)
    ));
    crate::fsutil::write_atomic(&path, text.as_bytes()).map_err(|e| failed(e.to_string()))?;
    Ok(Some(format!(
        "The env file {file} was not ignored by git; {} now ignores it in every worktree, so it is never committed.",
        path.display()
    )))
}

/// `file` as a literal gitignore pattern: glob characters and a leading `#`/`!` escaped.
fn escape(file: &str) -> String {
    let mut out = String::new();
    for c in file.chars() {
        if "*?[]\\#!".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn an_env_file_name_is_excluded_literally() {
        assert_eq!(escape(".env"), ".env");
        assert_eq!(escape("conf/*.local"), "conf/\\*.local");
    }
}
