//! `[worktree]`: how an effort's worktree is provisioned so the gate can run in it — the
//! commands run once when `start` makes it, the idempotent ones run on every pass, the env
//! files carried from the main checkout, and the band of ports an effort's identity takes
//! its port from.

/// The validated `[worktree]` table (every key optional; all empty by default).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorktreeSettings {
    /// `setup`: shell commands run once, in order, in a worktree `start` just made (e.g.
    /// `bun install --frozen-lockfile`).
    pub setup: Vec<String>,
    /// `ensure`: idempotent shell commands run on every `start`, `update` and before `done`'s
    /// jobs (e.g. `git submodule update --init`).
    pub ensure: Vec<String>,
    /// `env_files`: repository-relative files copied from the main checkout into each new
    /// worktree (mode 0600; never committed).
    pub env_files: Vec<String>,
    /// `ports`: the inclusive band `[first, last]` an effort's port is taken from; `None`:
    /// efforts get no port.
    pub ports: Option<(u16, u16)>,
}

impl WorktreeSettings {
    /// Whether the table asks for nothing.
    pub fn is_empty(&self) -> bool {
        self == &Self::default()
    }
}
