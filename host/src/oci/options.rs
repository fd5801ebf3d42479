//! How discern talks to registries, read once per process by the frontend: who it is
//! (`auth::Credentials`) and how long it waits for an answer.

use std::time::Duration;

use super::auth::Credentials;

/// The environment variable bounding the wait for a registry's answer, in seconds.
pub(crate) const TIMEOUT_ENV: &str = "DISCERN_OCI_TIMEOUT";
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Debug, Clone)]
pub struct Options {
    pub(crate) credentials: Credentials,
    /// The longest wait for a registry to start answering (connecting takes at most 10 s
    /// more; a whole exchange at most ten times this).
    pub(crate) answer_timeout: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            credentials: Credentials::default(),
            answer_timeout: DEFAULT_TIMEOUT,
        }
    }
}

impl Options {
    /// Credentials and `DISCERN_OCI_TIMEOUT` from the process environment (an unreadable
    /// timeout is the default).
    pub fn from_env() -> Self {
        let seconds = std::env::var(TIMEOUT_ENV)
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|s| (1..=3600).contains(s));
        Self {
            credentials: Credentials::from_env(),
            answer_timeout: seconds.map_or(DEFAULT_TIMEOUT, Duration::from_secs),
        }
    }
}
