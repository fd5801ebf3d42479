//! The files git detects as renamed between two commits (`git diff -M`, git's own rename
//! detection, so pairing agrees with what `git log --follow` and review tools show).

use std::collections::HashMap;

use gix::ObjectId;

use crate::git::{Repo, RepoError};

/// New path → old path, for every rename from the baseline to this commit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Renames(HashMap<String, String>);

impl Renames {
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        Self(
            pairs
                .into_iter()
                .map(|(old, new)| (new.to_owned(), old.to_owned()))
                .collect(),
        )
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The path `new` had at the baseline, if it was renamed.
    pub fn old_path(&self, new: &str) -> Option<&str> {
        self.0.get(new).map(String::as_str)
    }
}

/// The renames from `base` to `head`, as `git diff -M` detects them (50 % similarity).
pub fn renames(repo: &Repo, base: ObjectId, head: ObjectId) -> Result<Renames, RepoError> {
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
    Ok(Renames(
        pairs.into_iter().map(|(old, new)| (new, old)).collect(),
    ))
}
