//! A work tree's changed paths without `git status`: what `git status --porcelain
//! --untracked-files=all` lists (tracked changes, then untracked files, each sorted), from one
//! in-process survey of the work tree against the index (`clean.rs`), which settles racily
//! clean and touched files by their content as git would store it (`settle.rs`), with git asked
//! only about the few names the survey could not settle: `git diff` compares the suspect tracked
//! files' content with all of git's filters, and `git check-ignore` decides the untracked names. Anything the
//! survey cannot read as usual (staged changes, conflicts, a tracked folder that became a file,
//! a repository nested in an untracked folder, very many names) is "cannot tell", and the
//! caller asks `git status`.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::Stdio;

use super::clean::{self, Head, Walk};
use super::fsmonitor::{Answer, Monitor};
use super::ignores;
use crate::cores::Threads;

/// Untracked files listed from untracked folders before the survey gives up on a row.
const UNTRACKED_BUDGET: usize = 10_000;

/// The changed paths of the work tree at `root` against `head` (HEAD's tree), or `None`
/// ("cannot tell": ask `git status`).
/// Where the worktree configures git's fsmonitor hook, it is asked first, and only the
/// folders where something changed since the last survey are read (`fsmonitor.rs`). The folders
/// are read on `threads`.
pub(super) fn changed_paths(
    repo: &gix::Repository,
    root: &Path,
    head: Head,
    threads: Threads,
) -> Option<Vec<String>> {
    let index = clean::usual_index(repo, head)?;
    let asked = Monitor::configured(repo, root, repo.git_dir()).map(|monitor| monitor.ask(&index));
    let only = match asked.as_ref().map(|a| &a.answer) {
        Some(Answer::Only(paths)) => Some(paths.as_slice()),
        Some(Answer::Everything) | None => None,
    };
    let walk = (Walk::Survey, threads);
    let survey = clean::walk_only(&index, (root, repo.git_dir()), walk, only)?;
    let mut changed = modified(root, &survey.suspects)?;
    changed.extend(survey.changed);
    changed.sort();
    let mut untracked = untracked(root, survey.untracked)?;
    untracked.sort();
    changed.extend(untracked);
    if let Some(asked) = asked {
        asked.remember(&changed);
    }
    Some(changed)
}

/// Which of the suspect tracked files git sees as changed (content, mode, deleted).
fn modified(root: &Path, suspects: &[String]) -> Option<Vec<String>> {
    if suspects.is_empty() {
        return Some(Vec::new());
    }
    let output = super::command()
        .args(super::NO_FSMONITOR)
        .args([
            "--literal-pathspecs",
            "diff",
            "--no-ext-diff",
            "--no-renames",
            "--name-only",
            "-z",
            "--",
        ])
        .args(suspects)
        .current_dir(root)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    output
        .stdout
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8(p.to_vec()).ok())
        .collect()
}

/// The untracked files `git status -uall` lists among `names` (the survey's untracked names in
/// tracked folders): ignored names dropped, untracked folders listed file by file and those
/// files asked again.
fn untracked(root: &Path, names: Vec<String>) -> Option<Vec<String>> {
    if names.is_empty() {
        return Some(Vec::new());
    }
    let ignored = ignores::ignored(root, &names)?;
    let (folders, mut files): (Vec<String>, Vec<String>) = names
        .into_iter()
        .filter(|name| !ignored.contains(name))
        .partition(|name| name.ends_with('/'));
    let mut inside = Vec::new();
    for folder in &folders {
        list_files(root, folder, &mut inside)?;
    }
    if !inside.is_empty() {
        let ignored = ignores::ignored(root, &inside)?;
        files.extend(inside.into_iter().filter(|file| !ignored.contains(file)));
    }
    Some(files)
}

/// Every file (and symlink) below the untracked `folder` (`dir/`), into `files`. A nested
/// repository (git lists it as the folder) or too many files: "cannot tell".
fn list_files(root: &Path, folder: &str, files: &mut Vec<String>) -> Option<()> {
    for dirent in std::fs::read_dir(root.join(OsStr::from_bytes(folder.as_bytes()))).ok()? {
        let dirent = dirent.ok()?;
        let name = dirent.file_name();
        let name = name.to_str()?;
        if name == ".git" {
            return None;
        }
        let path = format!("{folder}{name}");
        if dirent.file_type().ok()?.is_dir() {
            list_files(root, &format!("{path}/"), files)?;
        } else {
            files.push(path);
        }
        if files.len() > UNTRACKED_BUDGET {
            return None;
        }
    }
    Some(())
}
