//! Proof: evidence that the gate passed on one exact clean commit, stale the moment anything
//! changes. A versioned marker per worktree (`<git-dir>/discern/gate-proof`), and the one-line
//! Proof line an agent relays to the owner.

use serde::{Deserialize, Serialize};

use crate::git::Repo;

pub(crate) const FILE: &str = "gate-proof";
pub(crate) const VERSION: u32 = 1;

/// A Standard's line in the Proof.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ProvenStandard {
    pub name: String,
    pub value: f64,
    pub limit: f64,
    pub verdict: String,
}

/// A Standard the branch redefined or deleted, judged by the trunk's own definition and limit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct TrunkVerdict {
    pub name: String,
    /// `None` when it could not be measured that way (`verdict` says why).
    pub value: Option<f64>,
    pub limit: f64,
    pub verdict: String,
}

/// A proposal the Proof carries, awaiting the owner's exact approval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ProvenProposal {
    pub standard: String,
    pub trunk_limit: f64,
    pub proposed_limit: f64,
    pub token: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Proof {
    pub version: u32,
    pub commit: String,
    pub branch: String,
    pub trunk: String,
    pub trunk_commit: String,
    /// `git diff --shortstat` of the trunk's merge base..commit.
    pub diffstat: String,
    pub standards: Vec<ProvenStandard>,
    pub proposals: Vec<ProvenProposal>,
    /// Changes to the gate's own definition, each awaiting the owner's approval by token.
    #[serde(default)]
    pub protected: Vec<crate::protected::ProtectedChange>,
    /// What the trunk's definitions say of the Standards the branch redefined or deleted.
    #[serde(default)]
    pub by_trunk: Vec<TrunkVerdict>,
    /// Whether the gate ran at least one test job (a gate without one says so).
    #[serde(default = "ran_tests")]
    pub tested: bool,
    /// The one sentence an agent relays.
    pub line: String,
}

fn ran_tests() -> bool {
    true
}

/// This checkout's Proof, judged against its HEAD and tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProofState {
    /// Proof for exactly this clean HEAD.
    Honored,
    Missing,
    /// Proof for another commit.
    Stale,
    /// Proof for this HEAD, but the tree has changed since.
    Dirty,
}

impl ProofState {
    /// The wire name (as serialized).
    pub fn as_str(self) -> &'static str {
        match self {
            ProofState::Honored => "honored",
            ProofState::Missing => "missing",
            ProofState::Stale => "stale",
            ProofState::Dirty => "dirty",
        }
    }
}

pub(crate) fn load(repo: &Repo) -> Option<Proof> {
    let bytes = std::fs::read(repo.admin_path(FILE)).ok()?;
    let proof: Proof = serde_json::from_slice(&bytes).ok()?;
    (proof.version <= VERSION).then_some(proof)
}

pub(crate) fn save(repo: &Repo, proof: &Proof) -> std::io::Result<()> {
    let bytes = serde_json::to_vec_pretty(proof).map_err(std::io::Error::other)?;
    crate::fsutil::write_atomic(&repo.admin_path(FILE), &bytes)
}

pub(crate) fn clear(repo: &Repo) {
    let _ = std::fs::remove_file(repo.admin_path(FILE));
}

/// The state of `repo`'s Proof, and the Proof itself when it is honored.
pub(crate) fn state(repo: &Repo) -> (ProofState, Option<Proof>) {
    judge(repo, || repo.dirty_paths().is_ok_and(|d| d.is_empty()))
}

/// [`state`] for a checkout whose cleanliness the caller has already observed.
pub(crate) fn state_known_clean(repo: &Repo, clean: bool) -> (ProofState, Option<Proof>) {
    judge(repo, || clean)
}

fn judge(repo: &Repo, clean: impl FnOnce() -> bool) -> (ProofState, Option<Proof>) {
    let Some(proof) = load(repo) else {
        return (ProofState::Missing, None);
    };
    // The owner's approval commits on top add no code: the Proof beneath them still holds
    // (and `accept` judges HEAD's Standards again before it lands anything).
    let head = repo.head().ok().flatten();
    let Ok(commit) = proof.commit.parse::<gix::ObjectId>() else {
        return (ProofState::Stale, None);
    };
    let proven = head.is_some_and(|h| {
        h == commit || crate::approval::tree::beneath_approvals(repo, h).is_ok_and(|b| b == commit)
    });
    if !proven {
        return (ProofState::Stale, None);
    }
    if clean() {
        (ProofState::Honored, Some(proof))
    } else {
        (ProofState::Dirty, None)
    }
}

/// `Proof: agent/x at 1a2b3c4d5e6f (+12 −3 in 2 files vs main); Standards: 5 pass; proposal
/// awaiting exact owner approval: coverage 80 → 78.5`.
/// What a Proof line says besides the commit and the Standards.
pub(crate) struct LineFacts<'a> {
    pub proposals: &'a [ProvenProposal],
    pub protected: &'a [crate::protected::ProtectedChange],
    pub by_trunk: &'a [TrunkVerdict],
    pub tested: bool,
    /// Who approved the proposals and protected changes (`principal (file)`), once approved.
    pub approved_by: Option<&'a str>,
}

/// What a Proof line says of the owner's approval: still awaited, or given and by whom.
const AWAITING: &str = "awaiting exact owner approval";

/// `line` once the owner approved what it lists as awaiting: "approved by `by`".
pub(crate) fn approved(line: &str, by: &str) -> String {
    line.replace(AWAITING, &format!("approved by {by}"))
}

pub(crate) fn line(
    branch: &str,
    commit: &str,
    trunk: &str,
    diffstat: &str,
    standards: &[ProvenStandard],
    facts: &LineFacts,
) -> String {
    let mut line = format!(
        "Proof: {branch} at {} ({} vs {trunk}); Standards: {}",
        crate::git::short(commit),
        if diffstat.is_empty() {
            "no changes".to_owned()
        } else {
            diffstat.to_owned()
        },
        if standards.is_empty() {
            "none configured".to_owned()
        } else {
            format!("{} pass", standards.len())
        }
    );
    if !facts.tested {
        line.push_str("; no test job ran (none is configured)");
    }
    for p in facts.proposals {
        line.push_str(&format!(
            "; proposal {AWAITING}: {} {} → {}",
            p.standard, p.trunk_limit, p.proposed_limit
        ));
    }
    if !facts.protected.is_empty() {
        let keys: Vec<&str> = facts.protected.iter().map(|p| p.key.as_str()).collect();
        line.push_str(&format!(
            "; protected change(s) {AWAITING}: {}",
            keys.join(", ")
        ));
    }
    if let Some(by) = facts.approved_by {
        line = approved(&line, by);
    }
    if !facts.by_trunk.is_empty() {
        let verdicts: Vec<String> = facts
            .by_trunk
            .iter()
            .map(|v| match v.value {
                Some(value) => format!("{} {} {value} vs {}", v.name, v.verdict, v.limit),
                None => format!("{} {}", v.name, v.verdict),
            })
            .collect();
        line.push_str(&format!(
            "; by the trunk's definitions: {}",
            verdicts.join(", ")
        ));
    }
    line.push('.');
    line
}

/// `+12 −3 in 2 files`, from `git diff --shortstat`; empty when nothing changed, and says so
/// when git cannot tell (never a made-up 0).
pub(crate) fn diffstat(repo: &Repo, base: &str, head: &str) -> String {
    let Ok(text) = repo.git(&["diff", "--shortstat", &format!("{base}..{head}")]) else {
        return "diffstat unknown".to_owned();
    };
    if text.trim().is_empty() {
        return String::new();
    }
    // `git diff --shortstat` leaves out a count that is zero ("1 file changed, 2 insertions(+)").
    let number = |word: &str| -> Option<u64> {
        match text.split(',').find(|part| part.contains(word)) {
            None => Some(0),
            Some(part) => part.split_whitespace().next()?.parse().ok(),
        }
    };
    let (Some(files), Some(added), Some(removed)) =
        (number("changed"), number("insertion"), number("deletion"))
    else {
        return "diffstat unknown".to_owned();
    };
    format!(
        "+{added} −{removed} in {files} file{}",
        if files == 1 { "" } else { "s" }
    )
}
