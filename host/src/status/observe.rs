//! Observe everything once: this checkout, its Proof, the configured Standards, live
//! proposals, and the whole fleet of worktrees.

use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use super::fleet::{
    Here, Snapshots, Surveyed, Tell, changed_paths, counts, survey_fleet, unsurveyed,
};
use super::observation::{
    ApprovalFacts, GitFacts, Location, Observation, ProofFacts, ProposalFacts,
};
use crate::config::{Config, DEFAULT_BRANCH_PREFIX};
use crate::cores::{Threads, cores};
use crate::git::{Repo, WorktreeInfo};
use crate::proof;
use crate::workspace::Workspace;

/// The approval policy of the trunk tip (its committed config only).
fn approval_facts(repo: &Repo, trunk_commit: Option<gix::ObjectId>) -> ApprovalFacts {
    let policy = trunk_commit.map(|c| crate::approval::policy(repo, c));
    match policy {
        Some(Ok(p)) if p.approval == crate::config::ApprovalPolicy::Signed => ApprovalFacts {
            policy: "signed",
            note: format!(
                "only a signature by a key in {} approves (`discern approve`)",
                p.signers.map_or_else(|| "the allowed-signers file".to_owned(), |(path, _)| path)
            ),
        },
        Some(Ok(_)) => ApprovalFacts {
            policy: "interactive",
            note: "answered on a terminal or by MCP elicitation, which an agent with a shell can forge; set [acceptance].allowed_signers to require signatures".to_owned(),
        },
        Some(Err(e)) => ApprovalFacts {
            policy: "unknown",
            note: format!("cannot be told: {e}"),
        },
        None => ApprovalFacts {
            policy: "unknown",
            note: "cannot be told: the trunk cannot be read".to_owned(),
        },
    }
}

pub fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The full status observation; `with_fleet` surveys every worktree.
pub fn observe(
    ws: &Workspace,
    with_fleet: bool,
) -> Result<Observation, crate::config::ConfigError> {
    let repo = &ws.repo;
    let head = repo.head().ok().flatten();
    let now = now_secs();
    let current = std::fs::canonicalize(repo.root()).unwrap_or_else(|_| repo.root().to_owned());
    let snapshots = Snapshots::default();
    let here = Here::new(&current, head);
    let (settings, (surveyed, worktrees, fleet)) =
        survey_while_reading(ws, (&here, with_fleet), now, &snapshots);
    let Settings {
        config,
        trunk,
        prefix,
        trunk_commit,
    } = settings?;
    let location = match repo.is_main_checkout() {
        true => Location::Main,
        false => Location::Worktree,
    };
    let branch = repo.branch().ok().flatten();
    let dirty = surveyed.as_ref().ok().cloned();
    let (ahead, behind) = counts(repo, trunk_commit, head);
    let (proof_state, proof) =
        proof::state_known_clean(repo, dirty.as_ref().is_some_and(Vec::is_empty));
    let (records, proposals_unreadable) = match crate::proposals::live(repo, &trunk) {
        Ok(live) => (live.records, None),
        Err(e) => (Vec::new(), Some(e.to_string())),
    };
    let proposals: Vec<ProposalFacts> = records
        .iter()
        .map(|r| {
            let stale = crate::proposals::stale_reasons(repo, config.as_ref(), &trunk, r);
            ProposalFacts {
                standard: r.standard.clone(),
                trunk_limit: r.trunk_limit,
                proposed_limit: r.proposed_limit,
                stale: !stale.is_empty(),
                stale_reasons: stale,
            }
        })
        .collect();
    let (worktrees, fleet_unreadable) = match worktrees {
        Ok(worktrees) => (worktrees, None),
        Err(e) => (Vec::new(), Some(e.to_string())),
    };
    let unlanded = match with_fleet && location == Location::Main {
        true => unlanded_branches(repo, &prefix, &worktrees, trunk_commit),
        false => Ok(Vec::new()),
    };
    // Branches that cannot be listed are said, never shown as "none unlanded".
    let (unlanded, fleet_unreadable) = match unlanded {
        Ok(unlanded) => (unlanded, fleet_unreadable),
        Err(why) => {
            let why = fleet_unreadable.map_or(why.clone(), |before| format!("{before}; {why}"));
            (Vec::new(), Some(why))
        }
    };
    let unpushed_refs = crate::sync::unpushed(repo, &trunk);
    let mut fleet = fleet;
    super::collisions::mark(&mut fleet);
    super::activity::mark(repo, &mut fleet, now);
    Ok(Observation {
        location,
        root: repo.root().to_owned(),
        git: GitFacts {
            branch,
            trunk,
            clean: dirty.as_ref().map(Vec::is_empty),
            changed_files: dirty.as_ref().map(Vec::len),
            ahead_trunk: ahead,
            behind_trunk: behind,
        },
        proof: ProofFacts {
            status: proof_state,
            line: proof.as_ref().map(|p| p.line.clone()),
            commit: proof.as_ref().map(|p| p.commit.clone()),
        },
        standards: standard_names(config.as_ref()),
        proposals,
        proposals_unreadable,
        fleet_unreadable,
        unpushed_refs,
        approval: approval_facts(repo, trunk_commit),
        task: crate::task::load(repo),
        setup: (!repo.is_main_checkout())
            .then(|| crate::setup_record::attention(repo.git_dir()))
            .flatten(),
        fleet,
        unlanded_branches: unlanded,
    })
}

/// The Standards `config` names. Without a `discern.toml` there are none; one that cannot be
/// read was refused before the observation began (`Config::load`'s error).
fn standard_names(config: Option<&Config>) -> Vec<String> {
    match config {
        Some(config) => config.standards.iter().map(|s| s.name.clone()).collect(),
        None => Vec::new(),
    }
}

/// Read the configuration (`Settings`) while the work trees are surveyed (this checkout, and
/// with the fleet every worktree's row): a row waits for the trunk only once its survey is
/// done.
fn survey_while_reading(
    ws: &Workspace,
    (here, with_fleet): (&Here, bool),
    now: u64,
    snapshots: &Snapshots,
) -> (Result<Settings, crate::config::ConfigError>, Surveyed) {
    let repo = &ws.repo;
    let trunk_named = OnceLock::new();
    std::thread::scope(|scope| {
        let survey = scope.spawn(|| match with_fleet {
            true => survey_fleet(repo, here, (&trunk_named, now), snapshots),
            false => (
                changed_paths(repo, here.head, (snapshots, Threads::Fixed(cores()))),
                repo.worktrees(),
                Vec::new(),
            ),
        });
        let settings = {
            let _told = Tell(&trunk_named);
            let settings = Settings::read(ws);
            let named = settings.as_ref().ok().and_then(Settings::named_trunk);
            let _ = trunk_named.set(named);
            settings
        };
        (settings, survey.join().unwrap_or_else(|_| unsurveyed()))
    })
}

/// What `observe` reads of the configuration: the trunk, its commit, the effort branch prefix.
struct Settings {
    config: Option<Config>,
    trunk: String,
    prefix: String,
    trunk_commit: Option<gix::ObjectId>,
}

impl Settings {
    fn read(ws: &Workspace) -> Result<Self, crate::config::ConfigError> {
        let config = Config::load(ws.repo.root())?;
        let trunk = ws.trunk(config.as_ref());
        let prefix = config
            .as_ref()
            .map_or(DEFAULT_BRANCH_PREFIX.to_owned(), |c| {
                c.branch_prefix.clone()
            });
        let trunk_commit = ws.repo.trunk_commit(&trunk).ok().flatten();
        Ok(Self {
            config,
            trunk,
            prefix,
            trunk_commit,
        })
    }

    /// The trunk by name and commit, when it resolves.
    fn named_trunk(&self) -> Option<(String, gix::ObjectId)> {
        self.trunk_commit.map(|commit| (self.trunk.clone(), commit))
    }
}

/// Effort branches with no worktree whose work is not on the trunk; why not, when the branches
/// cannot be listed.
fn unlanded_branches(
    repo: &Repo,
    prefix: &str,
    worktrees: &[WorktreeInfo],
    trunk: Option<gix::ObjectId>,
) -> Result<Vec<String>, String> {
    if repo.no_branch_under(prefix) {
        return Ok(Vec::new());
    }
    let listed = repo
        .branches_under(prefix)
        .map_err(|e| format!("the effort branches cannot be listed: {e}"))?;
    Ok(listed
        .into_iter()
        .filter(|(branch, _)| {
            !worktrees
                .iter()
                .any(|w| w.branch.as_deref() == Some(branch.as_str()))
        })
        .filter(|(_, tip)| match trunk {
            Some(trunk) => !repo.is_ancestor(*tip, trunk),
            None => true,
        })
        .map(|(branch, _)| branch)
        .collect())
}
