//! Which lines of a file git's diff keeps from the baseline's version to this commit's, and
//! where they were: the unchanged lines of `git diff -U0 <old blob> <new blob>`.
//!
//! The diff is git's own, with the algorithm pinned to git's default (Myers with the indent
//! heuristic, the text diff even for a file git would call binary), so a user's
//! `diff.algorithm` cannot change which findings are new, and the lines a pull request shows
//! as added are the lines discern calls new.

use std::collections::HashMap;

use gix::ObjectId;

use crate::git::{Repo, RepoError};

/// One change of `git diff -U0`: `old_len` lines at `old_start` became `new_len` lines at
/// `new_start` (a start names the line before the change when its length is 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Hunk {
    pub old_start: u32,
    pub old_len: u32,
    pub new_start: u32,
    pub new_len: u32,
}

impl Hunk {
    /// The first new line after this change.
    fn new_end(&self) -> u32 {
        self.new_start + self.new_len.max(1)
    }

    fn growth(&self) -> i64 {
        i64::from(self.new_len) - i64::from(self.old_len)
    }
}

/// The unchanged lines from one version of a file to the next.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct LineMap {
    hunks: Vec<Hunk>,
    /// How many lines the file grew by before each hunk.
    growth_before: Vec<i64>,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum LineMapError {
    #[error(transparent)]
    Git(#[from] RepoError),
    #[error("`git diff` printed a hunk header discern cannot read: {0:?}")]
    Header(String),
    #[error("{0}: changed, but `git diff` gave no line map for it")]
    Unmapped(String),
}

impl LineMap {
    /// The map of a file that did not change: every line is where it was.
    pub(crate) fn unchanged() -> Self {
        Self::default()
    }

    /// The map of `hunks`, in the order git prints them.
    pub(crate) fn from_hunks(hunks: Vec<Hunk>) -> Self {
        let mut growth_before = Vec::with_capacity(hunks.len());
        let mut growth = 0;
        for hunk in &hunks {
            growth_before.push(growth);
            growth += hunk.growth();
        }
        Self {
            hunks,
            growth_before,
        }
    }

    /// The baseline's line that this commit's line `new` (1-based) is, when the diff kept it;
    /// `None` when the diff added it (or changed it, which is a deletion and an addition).
    pub(crate) fn old_line(&self, new: u32) -> Option<u32> {
        let before = self.hunks.partition_point(|h| h.new_end() <= new);
        if let Some(hunk) = self.hunks.get(before)
            && hunk.new_len > 0
            && hunk.new_start <= new
        {
            return None;
        }
        let growth = match before {
            0 => 0,
            n => self.growth_before[n - 1] + self.hunks[n - 1].growth(),
        };
        u32::try_from(i64::from(new) - growth).ok()
    }
}

impl LineMap {
    /// The change (its index, in git's order) that added or rewrote this commit's line `new`.
    pub(crate) fn change_of_new(&self, new: u32) -> Option<usize> {
        let at = self
            .hunks
            .partition_point(|h| h.new_start + h.new_len <= new);
        let hunk = self.hunks.get(at)?;
        (hunk.new_len > 0 && hunk.new_start <= new).then_some(at)
    }

    /// The change (its index, in git's order) that deleted or rewrote the baseline's line `old`.
    pub(crate) fn change_of_old(&self, old: u32) -> Option<usize> {
        let at = self
            .hunks
            .partition_point(|h| h.old_start + h.old_len <= old);
        let hunk = self.hunks.get(at)?;
        (hunk.old_len > 0 && hunk.old_start <= old).then_some(at)
    }
}

/// How git is asked for a diff: the text diff (even of a file it would call binary, through no
/// external driver or textconv), Myers with the indent heuristic, no context.
const DIFF: [&str; 9] = [
    "diff",
    "--no-ext-diff",
    "--no-textconv",
    "--no-color",
    "--text",
    "--diff-algorithm=myers",
    "--indent-heuristic",
    "-U0",
    "--full-index",
];

/// How many paths one `git diff` names (well under any command-line limit).
const PATHS_PER_RUN: usize = 500;

/// One file's two versions: its path at the baseline and here, and its blob at each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Versions {
    pub old_path: String,
    pub new_path: String,
    pub old: ObjectId,
    pub new: ObjectId,
}

/// The line map of each of `files` (by its pair of blobs), from the tree `old_tree` to
/// `new_tree`: files that kept their path by one `git diff` of the two trees per
/// [`PATHS_PER_RUN`] paths, a renamed one (or one the tree diff did not show) by a diff of its
/// two blobs.
pub(super) fn line_maps(
    repo: &Repo,
    (old_tree, new_tree): (ObjectId, ObjectId),
    files: &[Versions],
) -> Result<HashMap<(ObjectId, ObjectId), LineMap>, LineMapError> {
    let changed: Vec<&Versions> = files.iter().filter(|f| f.old != f.new).collect();
    let kept_path: Vec<&str> = changed
        .iter()
        .filter(|f| f.old_path == f.new_path)
        .map(|f| f.new_path.as_str())
        .collect();
    let mut maps = tree_maps(repo, (old_tree, new_tree), &kept_path)?;
    for file in changed {
        if let std::collections::hash_map::Entry::Vacant(entry) = maps.entry((file.old, file.new)) {
            entry.insert(line_map(repo, file.old, file.new)?);
        }
    }
    Ok(maps)
}

/// The maps of the files at `paths` from `old_tree` to `new_tree`, by their blob pairs: one
/// `git diff` per [`PATHS_PER_RUN`] paths, literal (no glob), without rename detection.
fn tree_maps(
    repo: &Repo,
    (old_tree, new_tree): (ObjectId, ObjectId),
    paths: &[&str],
) -> Result<HashMap<(ObjectId, ObjectId), LineMap>, LineMapError> {
    let mut maps = HashMap::new();
    let trees = [old_tree.to_string(), new_tree.to_string()];
    for paths in paths.chunks(PATHS_PER_RUN) {
        let mut args = vec!["--literal-pathspecs"];
        args.extend(DIFF);
        args.extend(["--no-renames", &trees[0], &trees[1], "--"]);
        args.extend(paths);
        maps.extend(parse(&repo.git_bytes(&args)?)?);
    }
    Ok(maps)
}

/// The map from blob `old` to blob `new`, by `git diff`.
pub(super) fn line_map(repo: &Repo, old: ObjectId, new: ObjectId) -> Result<LineMap, LineMapError> {
    if old == new {
        return Ok(LineMap::unchanged());
    }
    let (old_id, new_id) = (old.to_string(), new.to_string());
    let mut args = DIFF.to_vec();
    args.extend([old_id.as_str(), new_id.as_str()]);
    let out = repo.git_bytes(&args)?;
    // A diff of two blobs has no `index` line: its hunks are the one file's.
    let mut hunks = Vec::new();
    for line in out.split(|&b| b == b'\n') {
        if let Some(hunk) = hunk_line(line)? {
            hunks.push(hunk);
        }
    }
    Ok(LineMap::from_hunks(hunks))
}

/// The maps in `git diff --full-index -U0` output of whole trees: each file's hunks, under the
/// blob pair of its `index <old>..<new>` line.
pub(super) fn parse(out: &[u8]) -> Result<HashMap<(ObjectId, ObjectId), LineMap>, LineMapError> {
    let mut maps = HashMap::new();
    let mut file: Option<((ObjectId, ObjectId), Vec<Hunk>)> = None;
    for line in out.split(|&b| b == b'\n') {
        if line.starts_with(b"diff --git ") {
            if let Some((key, hunks)) = file.take() {
                maps.insert(key, LineMap::from_hunks(hunks));
            }
        } else if let Some(ids) = line.strip_prefix(b"index ") {
            file = blob_pair(ids).map(|key| (key, Vec::new()));
        } else if let Some(hunk) = hunk_line(line)?
            && let Some((_, hunks)) = file.as_mut()
        {
            hunks.push(hunk);
        }
    }
    if let Some((key, hunks)) = file {
        maps.insert(key, LineMap::from_hunks(hunks));
    }
    Ok(maps)
}

/// `<old>..<new>` (then, maybe, ` <mode>`) of an `index` line.
fn blob_pair(ids: &[u8]) -> Option<(ObjectId, ObjectId)> {
    let text = std::str::from_utf8(ids).ok()?;
    let pair = text.split(' ').next()?;
    let (old, new) = pair.split_once("..")?;
    Some((old.parse().ok()?, new.parse().ok()?))
}

/// The hunk of a `@@ -a,b +c,d @@` line (a missing length is 1); `None` for any other line.
fn hunk_line(line: &[u8]) -> Result<Option<Hunk>, LineMapError> {
    let Some(rest) = line.strip_prefix(b"@@ -") else {
        return Ok(None);
    };
    let header = || LineMapError::Header(String::from_utf8_lossy(line).into_owned());
    let text = std::str::from_utf8(rest).map_err(|_| header())?;
    hunk(text).ok_or_else(header).map(Some)
}

/// `a,b +c,d @@ …` (the header after `@@ -`).
fn hunk(text: &str) -> Option<Hunk> {
    let (ranges, _) = text.split_once(" @@")?;
    let (old, new) = ranges.split_once(" +")?;
    let range = |range: &str| -> Option<(u32, u32)> {
        match range.split_once(',') {
            Some((start, len)) => Some((start.parse().ok()?, len.parse().ok()?)),
            None => Some((range.parse().ok()?, 1)),
        }
    };
    let ((old_start, old_len), (new_start, new_len)) = (range(old)?, range(new)?);
    Some(Hunk {
        old_start,
        old_len,
        new_start,
        new_len,
    })
}

#[cfg(test)]
mod tests;
