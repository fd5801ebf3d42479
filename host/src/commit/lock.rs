//! One lock for writers: the journal, commit and ref phase of every transaction holds an OS
//! file lock on `<common-dir>/discern/writer.lock`, so concurrent writers serialise instead of
//! sharing a journal. The kernel releases it when the process dies, so a crash never leaves it
//! held; long work (measurement, the gate's jobs) runs outside it.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::git::Repo;

pub const FILE: &str = "writer.lock";
/// How long a writer waits for another one before it refuses.
const WAIT: Duration = Duration::from_secs(60);

#[derive(Debug, thiserror::Error)]
pub(crate) enum LockError {
    #[error(
        "another discern writer has held {path} for over {secs} s; check which process holds it (`fuser {path}` or `lsof {path}`) and let it finish",
        path = .0.display(), secs = WAIT.as_secs()
    )]
    Held(PathBuf),
    #[error("cannot open the writer lock {path}: {err}", path = .0.display(), err = .1)]
    Open(PathBuf, std::io::Error),
}

/// The writer lock, held until dropped.
#[derive(Debug)]
pub(crate) struct WriterLock {
    _file: File,
}

impl WriterLock {
    /// Wait (bounded) for the writer lock of `repo`'s repository.
    pub(crate) fn acquire(repo: &Repo) -> Result<Self, LockError> {
        Self::acquire_named(repo, FILE)
    }

    /// Wait (bounded) for the lock `file` of `repo`'s repository (`sync.lock`: two local syncs
    /// take turns, while landings go on).
    pub(crate) fn acquire_named(repo: &Repo, file: &str) -> Result<Self, LockError> {
        let path = repo.shared_path(file);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| LockError::Open(path.clone(), e))?;
        }
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| LockError::Open(path.clone(), e))?;
        let started = Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(Self { _file: file }),
                Err(TryLockError::WouldBlock) if started.elapsed() < WAIT => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(TryLockError::WouldBlock) => return Err(LockError::Held(path)),
                Err(TryLockError::Error(e)) => return Err(LockError::Open(path, e)),
            }
        }
    }
}
