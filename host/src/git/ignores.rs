//! Which untracked names git ignores, decided in-process where that is exact, else by `git
//! check-ignore`.
//!
//! In-process, gix's exclude stack applies what `git check-ignore` applies, in git's order:
//! `core.excludesFile` (else `$XDG_CONFIG_HOME/git/ignore`, else `~/.config/git/ignore`), the
//! common dir's `info/exclude`, then every `.gitignore` along the path (read from the work tree
//! only, a symlinked one skipped, as git does), the last match deciding, and an excluded folder
//! excluding everything below it. The repository is opened as git sees it (global and system
//! config included, `settle.rs`).
//!
//! Fail closed: whatever gix might not read exactly as git would goes to git — configuration
//! from the command line (`GIT_CONFIG_PARAMETERS`, `GIT_CONFIG_COUNT`), any `include` or
//! `includeIf` in the configuration, a case-insensitive repository (`core.ignoreCase`), a
//! relative excludes file or `XDG_CONFIG_HOME`, gitoxide's precious files (`$`), a global
//! pattern that matches the top folder itself (gix's stack would exclude everything below it), a repository gix does not fully trust, an
//! unreadable ignore file, a path gix will not take, any error. Never "ignored" on a guess:
//! an untracked name that is not ignored makes a tree dirty.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use gix::index::entry::Mode;
use gix::worktree::stack::state::ignore::Source;

/// Which of `names` git ignores (`git check-ignore`, which applies `.gitignore` files,
/// `info/exclude` and `core.excludesFile`, and an ignored folder to all below it), as they were
/// given (folders with a trailing `/`); `None` when git cannot say.
pub(super) fn ignored(root: &Path, names: &[String]) -> Option<HashSet<String>> {
    if names.is_empty() {
        return Some(HashSet::new());
    }
    in_process(root, names).or_else(|| check_ignore(root, names))
}

/// [`ignored`] decided by gix's exclude stack; `None` where that might differ from git.
pub(super) fn in_process(root: &Path, names: &[String]) -> Option<HashSet<String>> {
    let repo = super::settle::open_as_git_does(root)?.to_thread_local();
    if !exact_as_git(&repo) {
        return None;
    }
    let empty = gix::index::State::new(repo.object_hash());
    // No index: git reads `.gitignore` files from the work tree only (the index only for
    // skip-worktree entries, which the clean check never accepts).
    let mut stack = repo
        .excludes(&empty, None, Source::WorktreeThenIdMappingIfNotSkipped)
        .ok()?;
    let mut ignored = HashSet::new();
    for name in names {
        let (path, folder) = match name.strip_suffix('/') {
            Some(path) => (path, true),
            None => (name.as_str(), false),
        };
        let mode = if folder { Mode::DIR } else { Mode::FILE };
        if stack.at_entry(path, Some(mode)).ok()?.is_excluded() {
            ignored.insert(name.clone());
        }
    }
    Some(ignored)
}

/// Whether gix reads the ignore rules of `repo` exactly as git does (see the module's doc).
fn exact_as_git(repo: &gix::Repository) -> bool {
    let config = repo.config_snapshot();
    let file = config.plumbing();
    let includes = ["include", "includeIf"].iter().any(|name| {
        file.sections_by_name(name)
            .is_some_and(|mut s| s.next().is_some())
    });
    let plain = config.boolean("core.ignoreCase") != Some(true)
        && config.boolean("gitoxide.parsePrecious") != Some(true);
    !includes && plain && excludes_file(&config).is_some_and(|file| !root_excluded(repo, file))
}

/// The excludes file git reads (`Some(None)`: none), where gix finds the same one: an absolute
/// `core.excludesFile`, else `git/ignore` in an absolute `XDG_CONFIG_HOME` (git skips an empty
/// one, gix does not), else in `$HOME/.config`.
fn excludes_file(config: &gix::config::Snapshot) -> Option<Option<PathBuf>> {
    let base = match config.trusted_path("core.excludesFile") {
        Ok(Some(path)) => return path.is_absolute().then_some(Some(path)),
        Ok(None) => match (
            std::env::var_os("XDG_CONFIG_HOME"),
            std::env::var_os("HOME"),
        ) {
            (Some(xdg), _) => PathBuf::from(xdg),
            (None, Some(home)) => PathBuf::from(home).join(".config"),
            (None, None) => return Some(None),
        },
        Err(_) => return None,
    };
    base.is_absolute()
        .then(|| Some(base.join("git").join("ignore")))
}

/// Whether the excludes file or `info/exclude` excludes the empty path: gix's stack matches the
/// work tree's top folder against them (git never does), and would then exclude everything
/// (`*` does it). Unreadable: `true`, for git to decide.
fn root_excluded(repo: &gix::Repository, excludes_file: Option<PathBuf>) -> bool {
    let mut buf = Vec::new();
    let Ok(globals) = gix::ignore::Search::from_git_dir(
        repo.common_dir(),
        excludes_file,
        &mut buf,
        Default::default(),
    ) else {
        return true;
    };
    globals
        .pattern_matching_relative_path("".into(), Some(true), gix::glob::pattern::Case::Sensitive)
        .is_some_and(|found| !found.pattern.is_negative())
}

/// [`ignored`] asked of `git check-ignore`. Folders are asked for without their trailing `/`:
/// git then looks at the path itself, as `git status` does (with the slash, `keep/*` would
/// match `keep/` even where `!keep/c` shows `keep/c` as untracked). A name starting with `:`
/// would be read as pathspec magic: "cannot tell".
pub(super) fn check_ignore(root: &Path, names: &[String]) -> Option<HashSet<String>> {
    if names.iter().any(|n| n.starts_with(':')) {
        return None;
    }
    let mut child = super::command()
        .args(super::NO_FSMONITOR)
        .args(["check-ignore", "-z", "--stdin"])
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let input: Vec<u8> = names
        .iter()
        .flat_map(|n| [n.trim_end_matches('/').as_bytes(), b"\0"])
        .flatten()
        .copied()
        .collect();
    let mut stdin = child.stdin.take()?;
    // Written from a thread: git answers while it reads, so a long list must not block on a
    // full stdout pipe.
    let (written, output) = std::thread::scope(|scope| {
        let writer = scope.spawn(move || stdin.write_all(&input).is_ok());
        let output = child.wait_with_output();
        (writer.join().unwrap_or(false), output)
    });
    let output = output.ok()?;
    // Exit 1: none of them is ignored.
    let answered = output.status.success() || output.status.code() == Some(1);
    if !written || !answered {
        return None;
    }
    let said: HashSet<&[u8]> = output
        .stdout
        .split(|b| *b == 0)
        .filter(|n| !n.is_empty())
        .collect();
    Some(
        names
            .iter()
            .filter(|n| said.contains(n.trim_end_matches('/').as_bytes()))
            .cloned()
            .collect(),
    )
}
