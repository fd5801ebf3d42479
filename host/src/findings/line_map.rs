//! Which lines of a file git's diff keeps from the baseline's version to this commit's, and
//! where they were: the unchanged lines of `git diff -U0 <old blob> <new blob>`.
//!
//! The diff is git's own, with the algorithm pinned to git's default (Myers with the indent
//! heuristic, the text diff even for a file git would call binary), so a user's
//! `diff.algorithm` cannot change which findings are new, and the lines a pull request shows
//! as added are the lines discern calls new.

use gix::ObjectId;

use crate::git::{Repo, RepoError};

/// One change of `git diff -U0`: `old_len` lines at `old_start` became `new_len` lines at
/// `new_start` (a start names the line before the change when its length is 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hunk {
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
pub struct LineMap {
    hunks: Vec<Hunk>,
    /// How many lines the file grew by before each hunk.
    growth_before: Vec<i64>,
}

#[derive(Debug, thiserror::Error)]
pub enum LineMapError {
    #[error(transparent)]
    Git(#[from] RepoError),
    #[error("`git diff` printed a hunk header discern cannot read: {0:?}")]
    Header(String),
}

impl LineMap {
    /// The map of a file that did not change: every line is where it was.
    pub fn unchanged() -> Self {
        Self::default()
    }

    /// The map of `hunks`, in the order git prints them.
    pub fn from_hunks(hunks: Vec<Hunk>) -> Self {
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
    pub fn old_line(&self, new: u32) -> Option<u32> {
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
    pub fn change_of_new(&self, new: u32) -> Option<usize> {
        let at = self
            .hunks
            .partition_point(|h| h.new_start + h.new_len <= new);
        let hunk = self.hunks.get(at)?;
        (hunk.new_len > 0 && hunk.new_start <= new).then_some(at)
    }

    /// The change (its index, in git's order) that deleted or rewrote the baseline's line `old`.
    pub fn change_of_old(&self, old: u32) -> Option<usize> {
        let at = self
            .hunks
            .partition_point(|h| h.old_start + h.old_len <= old);
        let hunk = self.hunks.get(at)?;
        (hunk.old_len > 0 && hunk.old_start <= old).then_some(at)
    }
}

/// The map from blob `old` to blob `new`, by `git diff`.
pub fn line_map(repo: &Repo, old: ObjectId, new: ObjectId) -> Result<LineMap, LineMapError> {
    if old == new {
        return Ok(LineMap::unchanged());
    }
    let out = repo.git_bytes(&[
        "diff",
        "--no-ext-diff",
        "--no-textconv",
        "--no-color",
        "--text",
        "--diff-algorithm=myers",
        "--indent-heuristic",
        "-U0",
        &old.to_string(),
        &new.to_string(),
    ])?;
    parse(&out)
}

/// The hunks of `git diff -U0` output: its `@@ -a,b +c,d @@` lines (a missing length is 1).
pub fn parse(out: &[u8]) -> Result<LineMap, LineMapError> {
    let mut hunks = Vec::new();
    for line in out.split(|&b| b == b'\n') {
        if let Some(rest) = line.strip_prefix(b"@@ -") {
            let header = || LineMapError::Header(String::from_utf8_lossy(line).into_owned());
            let text = std::str::from_utf8(rest).map_err(|_| header())?;
            hunks.push(hunk(text).ok_or_else(header)?);
        }
    }
    Ok(LineMap::from_hunks(hunks))
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
mod tests {
    use super::*;
    use discern_tests::TestRepo;

    fn mapped(map: &LineMap, lines: u32) -> Vec<Option<u32>> {
        (1..=lines).map(|n| map.old_line(n)).collect()
    }

    #[test]
    fn hunk_headers_are_read_with_and_without_lengths() {
        let out = b"diff --git a/x b/x\n@@ -0,0 +1,2 @@\n+a\n+b\n@@ -5 +7 @@ fn x() {\n-c\n+d\n@@ -9,2 +10,0 @@\n-e\n-f\n";
        let map = parse(out).unwrap();
        assert_eq!(
            map.hunks,
            [
                Hunk {
                    old_start: 0,
                    old_len: 0,
                    new_start: 1,
                    new_len: 2
                },
                Hunk {
                    old_start: 5,
                    old_len: 1,
                    new_start: 7,
                    new_len: 1
                },
                Hunk {
                    old_start: 9,
                    old_len: 2,
                    new_start: 10,
                    new_len: 0
                },
            ]
        );
        // Two added at the top; old 5 changed (new 7); old 9 and 10 deleted after new 10.
        assert_eq!(
            mapped(&map, 12),
            [
                None,
                None,
                Some(1),
                Some(2),
                Some(3),
                Some(4),
                None,
                Some(6),
                Some(7),
                Some(8),
                Some(11),
                Some(12)
            ]
        );
        // Which change each line belongs to, on either side.
        let new_changes: Vec<Option<usize>> = (1..=12).map(|n| map.change_of_new(n)).collect();
        assert_eq!(
            new_changes[..8],
            [Some(0), Some(0), None, None, None, None, Some(1), None]
        );
        let old_changes: Vec<Option<usize>> = (1..=11).map(|n| map.change_of_old(n)).collect();
        assert_eq!(
            old_changes,
            [
                None,
                None,
                None,
                None,
                Some(1),
                None,
                None,
                None,
                Some(2),
                Some(2),
                None
            ]
        );
        assert!(matches!(
            parse(b"@@ -x +1 @@\n"),
            Err(LineMapError::Header(_))
        ));
    }

    /// Against git itself: every line git's diff keeps is mapped to where it was, and no line
    /// it adds is mapped at all.
    #[test]
    fn unchanged_lines_map_to_where_they_were_in_git_s_diff() {
        let repo = TestRepo::new();
        let old = "// TODO\nfn a() {}\n// TODO\nfn b() {}\nfn c() {}\n";
        let new = "fn z() {}\n// TODO\nfn a() {}\n// TODO\n// TODO\nfn b() {}\n";
        let blob = |text: &str| -> ObjectId {
            repo.write("f", text);
            repo.git(&["hash-object", "-w", "f"])
                .trim()
                .parse()
                .unwrap()
        };
        let (old_id, new_id) = (blob(old), blob(new));
        repo.commit("one commit, for a repository to discover");
        let git = Repo::discover(repo.path()).unwrap();
        let map = line_map(&git, old_id, new_id).unwrap();
        let mapped = mapped(&map, 6);
        assert_eq!(
            mapped,
            [None, Some(1), Some(2), Some(3), None, Some(4)],
            "the TODO added is the second of the pair, as git's diff shows it"
        );
        let (old_lines, new_lines): (Vec<&str>, Vec<&str>) =
            (old.lines().collect(), new.lines().collect());
        for (n, old_line) in mapped.iter().enumerate() {
            if let Some(o) = old_line {
                assert_eq!(new_lines[n], old_lines[*o as usize - 1]);
            }
        }
        assert_eq!(
            line_map(&git, old_id, old_id).unwrap(),
            LineMap::unchanged()
        );
    }
}
