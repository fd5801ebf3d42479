//! What `status` observed, once, typed: this checkout against its trunk, its Proof, the trunk's
//! approval policy, the live proposals and the fleet's rows. The projector serializes it last.

use std::path::PathBuf;

use serde::Serialize;

pub use crate::proof::ProofState;

/// A count against the trunk: a number, `"unknown"` when it could not be computed, or null
/// (serialized by the caller) when there is no trunk to count against. Never a made-up 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GitCount {
    Known(u64),
    Unknown,
}

impl Serialize for GitCount {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            GitCount::Known(n) => s.serialize_u64(*n),
            GitCount::Unknown => s.serialize_str("unknown"),
        }
    }
}

/// Where `status` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Location {
    Main,
    Worktree,
}

/// Everything `status` observed, once; the projector serializes it last.
#[derive(Debug, Clone, Serialize)]
pub struct Observation {
    pub location: Location,
    pub root: PathBuf,
    pub git: GitFacts,
    pub proof: ProofFacts,
    pub standards: Vec<String>,
    pub proposals: Vec<ProposalFacts>,
    /// Why the proposals cannot be read, when they cannot (never shown as none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proposals_unreadable: Option<String>,
    /// Why the worktrees (the fleet) cannot be listed, when they cannot: never an empty fleet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fleet_unreadable: Option<String>,
    /// discern's refs (notes, published evidence) this clone has and its remote lacks, and a
    /// landing on the local trunk its remote's trunk lacks.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unpushed_refs: Vec<String>,
    /// How the trunk's owner approves loosenings and protected changes.
    pub approval: ApprovalFacts,
    pub task: Option<crate::task::TaskMetadata>,
    /// This effort's `[worktree]` setup failed or was interrupted: what happened.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub setup: Option<String>,
    pub fleet: Vec<FleetRow>,
    pub unlanded_branches: Vec<String>,
}

/// This checkout against its trunk. `clean` and `changed_files` are null when git cannot say.
#[derive(Debug, Clone, Serialize)]
pub struct GitFacts {
    pub branch: Option<String>,
    pub trunk: String,
    pub clean: Option<bool>,
    pub changed_files: Option<usize>,
    pub ahead_trunk: Option<GitCount>,
    pub behind_trunk: Option<GitCount>,
}

/// This checkout's Proof.
#[derive(Debug, Clone, Serialize)]
pub struct ProofFacts {
    pub status: ProofState,
    pub line: Option<String>,
    pub commit: Option<String>,
}

/// The trunk's approval policy, and what it means, plainly.
#[derive(Debug, Clone, Serialize)]
pub struct ApprovalFacts {
    /// `signed`, `interactive`, or `unknown` when the trunk cannot be read.
    pub policy: &'static str,
    pub note: String,
}

/// One recorded proposal of this checkout.
#[derive(Debug, Clone, Serialize)]
pub struct ProposalFacts {
    pub standard: String,
    pub trunk_limit: f64,
    pub proposed_limit: f64,
    pub stale: bool,
    pub stale_reasons: Vec<String>,
}

/// One worktree of the fleet.
#[derive(Debug, Clone, Default, Serialize)]
pub struct FleetRow {
    pub path: String,
    pub is_main: bool,
    pub is_current: bool,
    pub branch: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clean: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changed_files: Option<usize>,
    pub ahead: Option<GitCount>,
    pub behind: Option<GitCount>,
    /// The release line it came from and lands on (`[repository].release`), when not the
    /// trunk: `ahead`, `behind`, collisions and approvals are counted against that line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_activity: Option<String>,
    /// Seconds since the epoch of the latest activity; `None` when no time could be read.
    #[serde(skip)]
    pub last_activity_secs: Option<u64>,
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<RowTask>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proof: Option<ProofState>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub proof_line: Option<String>,
    /// Registered, but its folder is gone.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub broken: bool,
    /// Its folder exists but git cannot read it: never reported as clean.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unreadable: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changed_paths: Vec<String>,
    /// Idle for a week with unlanded work.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stale: bool,
    /// The effort's loosenings and protected changes that await the owner's approval (none
    /// once a signed approval in its tree covers them, see `approved_by`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub awaiting_approval: Vec<String>,
    /// Who approved them, when an approval in the effort's tree covers them all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approved_by: Option<String>,
    /// Its `[worktree]` setup failed or was interrupted: what happened (`discern setup` in the
    /// worktree runs it again).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub setup: Option<String>,
    /// The files its commits changed since it forked from the trunk (merge base to HEAD, what
    /// collisions compare); empty when it has no commit of its own or they cannot be read.
    #[serde(skip)]
    pub committed_paths: Vec<String>,
    /// The other efforts whose committed changes touch the same files (ADR 0306 bounds it).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub collisions: Vec<Collision>,
    /// A journalled verb running in it now (the operation journal), and for how long.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub running: Option<Running>,
}

/// Another effort whose committed changes overlap this one's: its id, how many files both
/// changed, and which (the orientation projection keeps the count, full mode the paths).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Collision {
    pub effort: String,
    pub files: usize,
    pub paths: Vec<String>,
}

/// A verb running in an effort's worktree now, read from the operation journal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Running {
    pub verb: String,
    pub phase: String,
    /// Seconds since it started.
    pub seconds: u64,
}

/// What a fleet row says of its effort's task.
#[derive(Debug, Clone, Serialize)]
pub struct RowTask {
    pub title: String,
}

impl FleetRow {
    pub fn dirty(&self) -> bool {
        self.clean == Some(false)
    }

    /// Idle for a week with unlanded work. A row whose last activity cannot be read is not
    /// judged idle: that would be a guess.
    pub fn idle_with_work(&self, now: u64) -> bool {
        let idle =
            (self.last_activity_secs).is_some_and(|secs| now.saturating_sub(secs) >= 7 * 24 * 3600);
        let unlanded = self.dirty() || matches!(self.ahead, Some(GitCount::Known(n)) if n > 0);
        !self.is_main && !self.broken && idle && unlanded
    }
}

#[cfg(test)]
mod tests {
    use super::{FleetRow, GitCount};

    #[test]
    fn a_row_whose_last_activity_cannot_be_read_is_not_judged_idle() {
        let week = 7 * 24 * 3600;
        let row = |last_activity_secs| FleetRow {
            ahead: Some(GitCount::Known(2)),
            last_activity_secs,
            ..FleetRow::default()
        };
        let now = 10 * week;
        assert!(row(Some(now - week)).idle_with_work(now));
        assert!(!row(Some(now - week + 1)).idle_with_work(now));
        assert!(
            !row(None).idle_with_work(now),
            "no time read: not a guess of idle"
        );
    }
}
