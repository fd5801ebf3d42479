//! git's file-system monitor hook, asked the way git asks it, to limit a survey of the work
//! tree (`discern status`) to the folders where something changed.
//!
//! Where a worktree's own git config sets `core.fsmonitor` to a program (watchman's
//! `fsmonitor-watchman` hook, say; a boolean names git's own daemon, which discern does not
//! ask), the survey runs it as git does (protocol version 2, in the work tree's top folder,
//! through the shell, with arguments `2` and the last token; nothing on standard input) and
//! reads its answer: a new token, NUL, then the NUL-separated paths that changed since the last
//! token (`/` alone: everything). git keeps its token in the index (extension `FSMN`);
//! discern keeps its own per worktree (`<git-dir>/discern/fsmonitor`, written by temp file
//! and rename), with what the survey that followed the answer saw: the index it surveyed (by
//! checksum), the changed paths it listed, and the files outside the work tree whose change
//! would change an answer without a path in the tree changing (`info/exclude`,
//! `info/attributes`, the excludes and attributes files git reads).
//!
//! The hook is asked *before* the survey, so a change made while the survey reads the tree is
//! in the next answer. A survey limited by an answer reads only the folders of the paths it
//! names and of the paths the last survey listed as changed; everything else is as that survey
//! saw it, since nothing there changed. Fail closed: no saved state, another index, a changed
//! ignore or attributes file, a `.gitignore` or `.gitattributes` among the paths, a path that
//! is not a plain relative path, a hook that fails, answers nothing readable, says everything
//! or runs past [`TIMEOUT`] — each of them means the whole walk. Only the survey asks the hook:
//! a verb that must prove a tree clean (`done`, `accept`) never trusts it. The git commands the
//! survey and the proof run (`check-ignore`, `diff`, `diff-files`) run with the monitor off
//! (`git::NO_FSMONITOR`): git would otherwise ask the hook again, with no time limit.

use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// How long the hook may take before its answer is not waited for (the whole walk then).
pub(super) const TIMEOUT: Duration = Duration::from_secs(2);

/// The saved state's format.
const VERSION: u32 = 1;

/// The hook configured for one work tree, and what discern saved after asking it last.
pub(super) struct Monitor {
    hook: String,
    root: PathBuf,
    state_file: PathBuf,
    sources: Vec<Source>,
}

/// A file outside the work tree whose content decides what is ignored or how a file is
/// converted, with its `lstat` (`None`: absent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Source {
    path: PathBuf,
    stat: Option<[i64; 6]>,
}

/// What discern saved after a survey that followed the hook's answer.
#[derive(Debug, Serialize, Deserialize)]
struct Saved {
    version: u32,
    token: String,
    /// The checksum of the index surveyed (hex).
    index: String,
    sources: Vec<Source>,
    /// The changed paths the survey listed (tracked changes and untracked files).
    changed: Vec<String>,
}

/// What the hook answered, read against what was saved.
pub(super) enum Answer {
    /// Survey everything (no state to rely on, or the hook could not say).
    Everything,
    /// Only these paths (relative, `/`-separated) may differ from what the last survey saw:
    /// those the hook named and those the last survey listed as changed.
    Only(Vec<String>),
}

/// One question to the hook: the token it answered with (`None` when it failed) and what to
/// survey.
pub(super) struct Asked {
    monitor: Monitor,
    token: Option<String>,
    index: Option<String>,
    pub answer: Answer,
}

impl Monitor {
    /// The hook `core.fsmonitor` names for the work tree at `root` (read as git reads its
    /// config), if it names a program; `git_dir` is the worktree's own git folder. Only a
    /// worktree whose own git config (`repo`, the isolated repository) sets the key is asked:
    /// the others are not opened again.
    pub(super) fn configured(repo: &gix::Repository, root: &Path, git_dir: &Path) -> Option<Self> {
        repo.config_snapshot().string("core.fsmonitor")?;
        let repo = super::settle::open_as_git_does(root)?.to_thread_local();
        let config = repo.config_snapshot();
        let hook = config.string("core.fsmonitor")?.to_string();
        // A boolean (or nothing) names git's builtin daemon or turns the monitor off.
        if hook.trim().is_empty() || gix::config::Boolean::try_from(hook.as_str()).is_ok() {
            return None;
        }
        let sources = sources(&repo)?;
        Some(Self {
            hook,
            root: root.to_owned(),
            state_file: git_dir.join("discern").join("fsmonitor"),
            sources,
        })
    }

    /// Ask the hook what changed since the saved token, before the survey reads anything.
    pub(super) fn ask(self, index: &gix::index::File) -> Asked {
        let index = index
            .checksum()
            .filter(|c| !c.is_null())
            .map(|c| c.to_string());
        let saved = self.saved();
        // Without a saved token git's first question carries the time; any answer then means
        // the whole walk, and the token it returns is the one the next survey asks with.
        let token = saved.as_ref().map_or_else(now_token, |s| s.token.clone());
        let replied = ask_hook(&self.hook, &self.root, &token);
        let answer = match (&saved, &replied) {
            (Some(saved), Some((_, Some(paths))))
                if Some(&saved.index) == index.as_ref() && saved.sources == self.sources =>
            {
                limited(paths, &saved.changed)
            }
            _ => Answer::Everything,
        };
        Asked {
            token: replied.map(|(token, _)| token),
            index,
            answer,
            monitor: self,
        }
    }

    fn saved(&self) -> Option<Saved> {
        let saved: Saved = serde_json::from_slice(&std::fs::read(&self.state_file).ok()?).ok()?;
        (saved.version == VERSION).then_some(saved)
    }
}

impl Asked {
    /// Save the hook's token with what the survey that followed it listed as `changed`.
    /// Nothing is saved when the hook failed (the last token, still valid, is asked again).
    pub(super) fn remember(self, changed: &[String]) {
        let (Some(token), Some(index)) = (self.token, self.index) else {
            return;
        };
        let saved = Saved {
            version: VERSION,
            token,
            index,
            sources: self.monitor.sources,
            changed: changed.to_vec(),
        };
        if let Ok(bytes) = serde_json::to_vec(&saved) {
            let _ = crate::fsutil::write_cache(&self.monitor.state_file, &bytes);
        }
    }
}

/// What to survey: the hook's paths and the last survey's changed ones, or everything when a
/// path could change what is ignored or how files convert, or is not a plain relative path.
fn limited(paths: &[String], changed: &[String]) -> Answer {
    let unusual = |path: &str| {
        let path = path.trim_end_matches('/');
        path.is_empty()
            || path.starts_with('/')
            || path.split('/').any(|part| {
                matches!(
                    part,
                    "" | "." | ".." | ".git" | ".gitignore" | ".gitattributes"
                )
            })
    };
    if paths.iter().any(|p| unusual(p)) {
        return Answer::Everything;
    }
    let mut only: Vec<String> = paths.iter().chain(changed).cloned().collect();
    only.sort();
    only.dedup();
    Answer::Only(only)
}

/// The files outside the work tree that decide what is ignored and how files convert, as git
/// finds them, with their `lstat`; `None` when a configured one cannot be resolved.
fn sources(repo: &gix::Repository) -> Option<Vec<Source>> {
    let config = repo.config_snapshot();
    let excludes = config.trusted_path("core.excludesFile").ok()?;
    let attributes = config.trusted_path("core.attributesFile").ok()?;
    let xdg = |name: &str| {
        let base = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
        Some(base.join("git").join(name))
    };
    let info = repo.common_dir().join("info");
    let files = [
        Some(info.join("exclude")),
        Some(info.join("attributes")),
        excludes.or_else(|| xdg("ignore")),
        attributes.or_else(|| xdg("attributes")),
    ]
    .into_iter()
    .flatten()
    .map(|path| Source {
        stat: std::fs::symlink_metadata(&path).ok().map(|m| {
            [
                m.len() as i64,
                m.mtime(),
                m.mtime_nsec(),
                m.ctime(),
                m.ctime_nsec(),
                m.ino() as i64,
            ]
        }),
        path,
    });
    Some(files.collect())
}

/// The token git's first question carries: the time, in nanoseconds.
fn now_token() -> String {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
        .to_string()
}

/// Run the hook as git runs it (`sh -c '<hook> "$@"' <hook> 2 <token>` in the work tree's top
/// folder, nothing on standard input): its new token and the paths it names (`None`:
/// everything), or `None` when it failed, timed out or answered nothing readable.
fn ask_hook(hook: &str, root: &Path, token: &str) -> Option<(String, Option<Vec<String>>)> {
    let child = Command::new("sh")
        .arg("-c")
        .arg(format!("{hook} \"$@\""))
        .arg(hook)
        .arg("2")
        .arg(token)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let output = finish(child, TIMEOUT)?;
    parse(&output)
}

/// The child's standard output once it exited successfully within `timeout`; killed past it.
fn finish(mut child: Child, timeout: Duration) -> Option<Vec<u8>> {
    let mut stdout = child.stdout.take()?;
    let (sender, output) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = sender.send(stdout.read_to_end(&mut bytes).ok().map(|_| bytes));
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(1));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    };
    // A process the hook started may still hold its output open: not waited for past the
    // deadline either.
    let remaining = deadline.saturating_duration_since(Instant::now());
    let bytes = output.recv_timeout(remaining).ok().flatten()?;
    status.success().then_some(bytes)
}

/// Version 2's answer: the token, NUL, then NUL-separated paths; `/` among them means
/// everything (`None`). `None` for the whole when there is no token.
fn parse(output: &[u8]) -> Option<(String, Option<Vec<String>>)> {
    let nul = output.iter().position(|b| *b == 0)?;
    let token = std::str::from_utf8(&output[..nul]).ok()?;
    if token.is_empty() {
        return None;
    }
    let mut paths = Vec::new();
    for path in output[nul + 1..]
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
    {
        // git reads an answer whose first path starts with `/` as everything; any such path
        // (or one that is not UTF-8) is taken so here.
        match std::str::from_utf8(path) {
            Ok(path) if !path.starts_with('/') => paths.push(path.to_owned()),
            _ => return Some((token.to_owned(), None)),
        }
    }
    Some((token.to_owned(), Some(paths)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_a_token_then_paths_and_a_slash_means_everything() {
        assert_eq!(
            parse(b"c:1:2\0a.rs\0src/b.rs\0"),
            Some((
                "c:1:2".to_owned(),
                Some(vec!["a.rs".to_owned(), "src/b.rs".to_owned()])
            ))
        );
        assert_eq!(parse(b"t\0"), Some(("t".to_owned(), Some(Vec::new()))));
        assert_eq!(parse(b"t\0a\0/\0"), Some(("t".to_owned(), None)));
        // The watchman sample's first answer: "/" run into the token of a second answer.
        assert_eq!(parse(b"c:1\0/c:2\0"), Some(("c:1".to_owned(), None)));
        assert_eq!(parse(b"t\0\xff\0"), Some(("t".to_owned(), None)));
        assert_eq!(parse(b"no separator"), None);
        assert_eq!(parse(b"\0a"), None);
    }

    #[test]
    fn paths_that_change_ignores_or_attributes_mean_everything() {
        let only = |paths: &[&str]| {
            let paths: Vec<String> = paths.iter().map(|p| (*p).to_owned()).collect();
            match limited(&paths, &["old.rs".to_owned()]) {
                Answer::Only(only) => Some(only),
                Answer::Everything => None,
            }
        };
        assert_eq!(
            only(&["src/a.rs", "new/"]),
            Some(vec!["new/".into(), "old.rs".into(), "src/a.rs".into()])
        );
        for unusual in [
            "src/.gitignore",
            ".gitattributes",
            "/abs",
            "a/../b",
            ".git/index",
            "",
        ] {
            assert_eq!(only(&[unusual]), None, "{unusual:?}");
        }
    }

    #[test]
    fn a_hook_past_its_time_is_not_waited_for() {
        let child = Command::new("sleep")
            .arg("5")
            .stdout(Stdio::piped())
            .spawn()
            .expect("sleep");
        assert_eq!(finish(child, Duration::from_millis(50)), None);
    }
}
