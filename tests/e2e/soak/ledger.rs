//! What the agents share: the repository and the runtime they work in, and the ledger every
//! agent records its calls in and the checks read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::support::Fixture;

#[derive(Default)]
pub(super) struct Counts {
    pub(super) ok: u64,
    pub(super) refused: u64,
    pub(super) killed: u64,
}

/// What every agent records, read by the checks.
#[derive(Default)]
pub(super) struct Ledger {
    pub(super) counts: BTreeMap<String, Counts>,
    /// Every commit an agent made: (effort, commit).
    pub(super) work: Vec<(String, String)>,
    /// Refusals by verb and slug.
    pub(super) slugs: BTreeMap<String, u64>,
    pub(super) landed: u64,
    /// Landings a later call finished after the accept that began them was killed.
    pub(super) landed_by_recovery: u64,
    pub(super) started: u64,
    /// Every effort started, landed or not.
    pub(super) names: Vec<String>,
    pub(super) abandoned: u64,
    /// Efforts the owner abandoned with `--force`: their work was discarded on purpose.
    pub(super) given_up: std::collections::BTreeSet<String>,
    pub(super) failures: Vec<String>,
    /// Refusals that named no step past them.
    pub(super) wayless: Vec<String>,
}

pub(super) struct Shared<'a> {
    pub(super) fixture: &'a Fixture,
    pub(super) rt: &'a tokio::runtime::Runtime,
    pub(super) scratch: PathBuf,
    pub(super) kill_percent: u64,
    pub(super) ledger: Mutex<Ledger>,
}

impl Shared<'_> {
    pub(super) fn ledger(&self) -> std::sync::MutexGuard<'_, Ledger> {
        self.ledger.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn main(&self) -> &Path {
        self.fixture.path()
    }

    /// The bare repository the owner publishes to (`origin` of the main checkout).
    pub(super) fn forge(&self) -> PathBuf {
        self.fixture.repo.parent().join("forge.git")
    }

    pub(super) fn worktree(&self, name: &str) -> PathBuf {
        self.fixture.repo.parent().join("repo.worktrees").join(name)
    }

    pub(super) fn branch_exists(&self, name: &str) -> bool {
        !self
            .fixture
            .git_out(
                self.main(),
                &[
                    "rev-parse",
                    "--verify",
                    "-q",
                    &format!("refs/heads/agent/{name}"),
                ],
            )
            .is_empty()
    }
}
