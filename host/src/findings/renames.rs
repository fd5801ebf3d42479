//! The files git detects as renamed between two commits (`git diff -M`, git's own rename
//! detection, so pairing agrees with what `git log --follow` and review tools show).

use std::collections::HashMap;

use gix::ObjectId;

use crate::git::{Repo, RepoError};

/// Every rename from the baseline to this commit, both ways.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Renames {
    /// New path → old path.
    old: HashMap<String, String>,
    /// Old path → new path.
    new: HashMap<String, String>,
}

impl Renames {
    pub(crate) fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let pairs: Vec<(&str, &str)> = pairs.into_iter().collect();
        let owned = |(a, b): &(&str, &str)| (a.to_string(), b.to_string());
        Self {
            old: pairs.iter().map(|(o, n)| owned(&(n, o))).collect(),
            new: pairs.iter().map(owned).collect(),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.old.is_empty()
    }

    /// The path `new` had at the baseline, if it was renamed.
    pub(crate) fn old_path(&self, new: &str) -> Option<&str> {
        self.old.get(new).map(String::as_str)
    }

    /// The path the baseline's `old` has now, if it was renamed.
    pub(crate) fn new_path(&self, old: &str) -> Option<&str> {
        self.new.get(old).map(String::as_str)
    }
}

/// The renames from `base` to `head`, as `git diff -M` detects them (50 % similarity).
pub(crate) fn renames(repo: &Repo, base: ObjectId, head: ObjectId) -> Result<Renames, RepoError> {
    let (base, head) = (base.to_string(), head.to_string());
    let out = repo.git_bytes(&[
        "-c",
        "core.quotePath=false",
        "diff",
        "--no-ext-diff",
        "-M",
        "--diff-filter=R",
        "--name-status",
        "-z",
        &base,
        &head,
    ])?;
    // `R<score>\0old\0new\0` per rename.
    let fields: Vec<&[u8]> = out.split(|&b| b == 0).collect();
    let mut pairs = Vec::new();
    let mut rest = fields.as_slice();
    while let [status, old, new, tail @ ..] = rest {
        if status.starts_with(b"R") {
            pairs.push((
                String::from_utf8_lossy(old).into_owned(),
                String::from_utf8_lossy(new).into_owned(),
            ));
        }
        rest = tail;
    }
    Ok(Renames::from_pairs(
        pairs.iter().map(|(old, new)| (old.as_str(), new.as_str())),
    ))
}
