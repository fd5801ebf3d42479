//! The measurement record of this worktree: the readings of the last clean-HEAD run, so that
//! a following `--pin` on the same commit does not measure again.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::git::Repo;

pub(crate) const FILE: &str = "standard-measurements.json";
pub(crate) const VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Record {
    pub version: u32,
    /// The clean commit the readings describe.
    pub head: String,
    /// Standard → reading and the definition fingerprint it was measured under.
    pub values: BTreeMap<String, RecordedValue>,
    /// Standards whose measurement failed on this commit.
    pub failed: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct RecordedValue {
    pub value: f64,
    pub definition: String,
}

/// Read the record; `Err` only names a record a newer discern wrote (a miss otherwise: none,
/// torn or unreadable).
pub(crate) fn load(repo: &Repo) -> Result<Option<Record>, String> {
    let Ok(bytes) = std::fs::read(repo.admin_path(FILE)) else {
        return Ok(None);
    };
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        return Ok(None);
    };
    let version = value.get("version").and_then(serde_json::Value::as_u64);
    if let Some(version) = version.filter(|&v| v > u64::from(VERSION)) {
        return Err(format!(
            "{} was written by a newer discern (format version {version}); upgrade discern or delete the file",
            repo.admin_path(FILE).display(),
        ));
    }
    Ok(serde_json::from_value(value).ok())
}

/// Write the record, unless the file already holds exactly it (a run that reused every
/// reading). Written as a cache is, without waiting for the disk: a kill leaves the previous
/// record whole (the rename is atomic), and the torn file a power loss may leave does not
/// parse, so [`load`] reads it as no record and the next pin measures again. A record that
/// survives is true of the commit it names.
pub(crate) fn save(repo: &Repo, record: &Record) -> std::io::Result<()> {
    let bytes = serde_json::to_vec_pretty(record).map_err(std::io::Error::other)?;
    let path = repo.admin_path(FILE);
    if std::fs::read(&path).is_ok_and(|held| held == bytes) {
        return Ok(());
    }
    crate::fsutil::write_cache(&path, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo() -> (tempfile::TempDir, Repo) {
        let dir = tempfile::tempdir().expect("temp dir");
        let init = std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(dir.path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .status()
            .expect("git init");
        assert!(init.success());
        let repo = Repo::discover(dir.path()).expect("repo");
        (dir, repo)
    }

    fn record() -> Record {
        let value = RecordedValue {
            value: 42.0,
            definition: "d".repeat(16),
        };
        Record {
            version: VERSION,
            head: "a".repeat(40),
            values: BTreeMap::from([("todo".to_owned(), value)]),
            failed: vec!["lines".to_owned()],
        }
    }

    /// The record is written without fsync, so a power loss may tear it: cut short, or its
    /// blocks never written (zeros). Every such file is no record, never another reading.
    #[test]
    fn a_torn_record_reads_as_none() {
        let (_dir, repo) = repo();
        save(&repo, &record()).expect("save");
        assert_eq!(load(&repo), Ok(Some(record())));
        let path = repo.admin_path(FILE);
        let bytes = std::fs::read(&path).expect("read");
        for len in 0..bytes.len() {
            std::fs::write(&path, &bytes[..len]).expect("write");
            assert_eq!(load(&repo), Ok(None), "cut at {len} of {}", bytes.len());
        }
        std::fs::write(&path, vec![0; bytes.len()]).expect("write");
        assert_eq!(load(&repo), Ok(None));
    }

    /// Saving what the file already holds leaves it untouched; anything else replaces it.
    #[test]
    fn saving_the_same_record_again_writes_nothing() {
        let (_dir, repo) = repo();
        let path = repo.admin_path(FILE);
        save(&repo, &record()).expect("save");
        let inode = |p: &std::path::Path| {
            std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(p).expect("stat"))
        };
        let before = inode(&path);
        save(&repo, &record()).expect("save again");
        assert_eq!(inode(&path), before, "the same record was written again");
        let mut moved = record();
        moved.head = "b".repeat(40);
        save(&repo, &moved).expect("save another");
        assert_ne!(inode(&path), before);
        assert_eq!(load(&repo), Ok(Some(moved)));
    }
}
