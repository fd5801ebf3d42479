//! Where a verb runs: the repository discovered from a directory, and the process settings
//! the frontends read from the environment (the library itself never reads it).

use std::path::{Path, PathBuf};

use crate::snapshot::{Repo, RepoError};

/// Settings a frontend gathers once per process.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// `DISCERN_TRUNK`: overrides `[repository].trunk`.
    pub trunk_override: Option<String>,
    /// `DISCERN_CACHE_DIR` / XDG: where compiled components are cached.
    pub cache_dir: Option<PathBuf>,
    /// Whether progress may be drawn on stderr (a terminal).
    pub progress: bool,
    /// `DISCERN_TRACE`: a file that receives one JSON line per producer call into the host.
    pub trace: Option<PathBuf>,
}

impl Settings {
    /// Settings from the process environment.
    pub fn from_env() -> Self {
        Self {
            trunk_override: std::env::var("DISCERN_TRUNK")
                .ok()
                .filter(|t| !t.is_empty()),
            cache_dir: crate::runtime::CompileCache::default_dir(),
            progress: std::io::IsTerminal::is_terminal(&std::io::stderr()),
            trace: std::env::var_os("DISCERN_TRACE")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Workspace {
    pub repo: Repo,
    pub settings: Settings,
}

impl Workspace {
    pub fn open(dir: &Path, settings: Settings) -> Result<Self, RepoError> {
        Ok(Self {
            repo: Repo::discover(dir)?,
            settings,
        })
    }

    pub fn root(&self) -> &Path {
        self.repo.root()
    }
}
