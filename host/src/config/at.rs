//! The config committed at a commit: the one way every room reads a `discern.toml` that is not
//! the work tree's (the trunk's, a merge base's, HEAD's own).

use gix::ObjectId;

use super::{Config, ConfigError, FILE};
use crate::git::{Repo, RepoError};

/// Why the config at a commit could not be read.
#[derive(Debug, thiserror::Error)]
pub enum AtError {
    /// The commit or its tree could not be read: the repository's state, not the config's.
    #[error(transparent)]
    Unreadable(#[from] RepoError),
    #[error("it is not UTF-8")]
    NotUtf8,
    /// The file is there but is not a config.
    #[error("{0}")]
    Invalid(ConfigError),
}

impl Config {
    /// The config committed at `commit`, read tolerantly (keys another version of discern
    /// wrote are ignored, so it can still be compared); `None` where the commit has none.
    pub fn at(repo: &Repo, commit: ObjectId) -> Result<Option<Config>, AtError> {
        let Some(text) = text_at(repo, commit)? else {
            return Ok(None);
        };
        Config::parse_tolerant(&text)
            .map(Some)
            .map_err(AtError::Invalid)
    }

    /// [`Config::at`], with every default where the commit has no config.
    pub fn at_or_absent(repo: &Repo, commit: ObjectId) -> Result<Config, AtError> {
        Ok(Config::at(repo, commit)?.unwrap_or_else(Config::absent))
    }

    /// The config committed at `commit`, validated as strictly as the work tree's (what a verb
    /// runs on); `None` where the commit has none.
    pub fn at_strict(repo: &Repo, commit: ObjectId) -> Result<Option<Config>, AtError> {
        let Some(text) = text_at(repo, commit)? else {
            return Ok(None);
        };
        Config::parse(&text).map(Some).map_err(AtError::Invalid)
    }
}

fn text_at(repo: &Repo, commit: ObjectId) -> Result<Option<String>, AtError> {
    let Some(bytes) = repo.file_at(commit, FILE)? else {
        return Ok(None);
    };
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| AtError::NotUtf8)
}
