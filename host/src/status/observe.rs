//! Observe everything once: this checkout, its Proof, the configured Standards, live
//! proposals, and the whole fleet of worktrees.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::config::{Config, DEFAULT_BRANCH_PREFIX};
use crate::cores::{Spare, Threads, cores};
use crate::git::{Repo, RepoError, WorktreeInfo};
use crate::proof::{self, ProofState};
use crate::snapshot::Snapshot;
use crate::workspace::Workspace;

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
    /// discern's refs (notes, published evidence) this clone has and its remote lacks.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unpushed_refs: Vec<String>,
    /// How the trunk's owner approves loosenings and protected changes.
    pub approval: ApprovalFacts,
    pub task: Option<crate::task::TaskMetadata>,
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
#[derive(Debug, Clone, Serialize)]
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
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_activity: Option<String>,
    #[serde(skip)]
    pub last_activity_secs: u64,
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

    /// Idle for a week with unlanded work.
    pub fn idle_with_work(&self, now: u64) -> bool {
        let idle = now.saturating_sub(self.last_activity_secs) >= 7 * 24 * 3600;
        let unlanded = self.dirty() || matches!(self.ahead, Some(GitCount::Known(n)) if n > 0);
        !self.is_main && !self.broken && idle && unlanded
    }
}

pub fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `2026-11-30T04:41:21Z` for unix seconds (UTC, proleptic Gregorian).
pub fn iso8601(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's civil-from-days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn mtime(path: &Path) -> Option<u64> {
    std::fs::metadata(path)
        .ok()?
        .modified()
        .ok()?
        .duration_since(UNIX_EPOCH)
        .ok()
        .map(|d| d.as_secs())
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
    let here = Here {
        path: &current,
        head,
        changed: Mutex::new(None),
    };
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
        standards: config
            .as_ref()
            .map(|c| c.standards.iter().map(|s| s.name.clone()).collect())
            .unwrap_or_default(),
        proposals,
        proposals_unreadable,
        fleet_unreadable,
        unpushed_refs: crate::sync::unpushed(repo),
        approval: approval_facts(repo, trunk_commit),
        task: crate::task::load(repo),
        fleet,
        unlanded_branches: unlanded,
    })
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

/// The trunk as the rows wait for it: set once the configuration is read, to `None` when it
/// cannot be (or its reading panicked: `Tell` sets it as it is dropped), so no row waits
/// forever.
type TrunkOnce = OnceLock<Option<(String, gix::ObjectId)>>;

struct Tell<'a>(&'a TrunkOnce);

impl Drop for Tell<'_> {
    fn drop(&mut self) {
        let _ = self.0.set(None);
    }
}

/// A survey whose thread panicked: "cannot tell", for the checkout and for the list.
fn unsurveyed() -> Surveyed {
    let failed = || RepoError::Read {
        what: "the work trees".to_owned(),
        message: "their survey failed".to_owned(),
    };
    (Err(failed()), Err(failed()), Vec::new())
}

fn counts(
    repo: &Repo,
    trunk: Option<gix::ObjectId>,
    head: Option<gix::ObjectId>,
) -> (Option<GitCount>, Option<GitCount>) {
    match (trunk, head) {
        (None, _) => (None, None),
        (Some(_), None) => (Some(GitCount::Unknown), Some(GitCount::Unknown)),
        (Some(trunk), Some(head)) => match repo.ahead_behind(trunk, head) {
            Ok((a, b)) => (Some(GitCount::Known(a)), Some(GitCount::Known(b))),
            Err(_) => (Some(GitCount::Unknown), Some(GitCount::Unknown)),
        },
    }
}

/// The changed paths of `repo` at `head`: the in-process survey (its folders read on `threads`,
/// HEAD's snapshot from `snapshots`), `git status` where it cannot tell (an unborn
/// HEAD, a snapshot that cannot be read, anything unusual). An error is "cannot tell", never
/// clean.
fn changed_paths(
    repo: &Repo,
    head: Option<gix::ObjectId>,
    (snapshots, threads): (&Snapshots, Threads),
) -> Result<Vec<String>, RepoError> {
    let Some(head) = head else {
        return repo.dirty_paths();
    };
    // A commit whose tree cannot be read: `git status` decides.
    let Some(tree) = snapshots.tree(repo, head) else {
        return repo.dirty_paths();
    };
    repo.changed_paths_in(tree, &|| snapshots.of(repo, head), threads)
}

/// This checkout's changed paths, the worktrees git lists, and every worktree's row.
type Surveyed = (
    Result<Vec<String>, RepoError>,
    Result<Vec<WorktreeInfo>, RepoError>,
    Vec<FleetRow>,
);

/// This checkout's changed paths, the worktrees git lists, and every worktree's row: this
/// checkout's survey is its row's, read once and on the same cores as the other rows (it is
/// surveyed alone when no row is this checkout at this HEAD, or the list cannot be read).
fn survey_fleet(
    repo: &Repo,
    here: &Here,
    (trunk, now): (&TrunkOnce, u64),
    snapshots: &Snapshots,
) -> Surveyed {
    let worktrees = repo.worktrees();
    let fleet = match &worktrees {
        Ok(worktrees) => fleet_rows(worktrees, here, trunk, now, snapshots),
        Err(_) => Vec::new(),
    };
    let surveyed = here
        .changed
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()
        .unwrap_or_else(|| changed_paths(repo, here.head, (snapshots, Threads::Fixed(cores()))));
    (surveyed, worktrees, fleet)
}

/// HEAD trees and snapshots by commit, shared by the rows: the efforts forked from one trunk
/// commit read its commit and tree once (the worktrees share one object database).
#[derive(Default)]
struct Snapshots {
    trees: Mutex<HashMap<gix::ObjectId, gix::ObjectId>>,
    snapshots: Mutex<HashMap<gix::ObjectId, Snapshot>>,
}

impl Snapshots {
    /// The snapshot of `commit` (read through `repo` the first time); `None` if unreadable.
    fn of(&self, repo: &Repo, commit: gix::ObjectId) -> Option<Snapshot> {
        known(&self.snapshots, commit, || repo.snapshot(commit).ok())
    }

    /// The tree id of `commit` (read through `repo` the first time); `None` if unreadable.
    fn tree(&self, repo: &Repo, commit: gix::ObjectId) -> Option<gix::ObjectId> {
        known(&self.trees, commit, || repo.tree_of(commit).ok())
    }
}

/// The value `map` holds for `commit`, else what `read` reads (kept when it reads one).
fn known<T: Clone>(
    map: &Mutex<HashMap<gix::ObjectId, T>>,
    commit: gix::ObjectId,
    read: impl FnOnce() -> Option<T>,
) -> Option<T> {
    let lock = || map.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(value) = lock().get(&commit).cloned() {
        return Some(value);
    }
    let value = read()?;
    lock().insert(commit, value.clone());
    Some(value)
}

/// This checkout as `observe` sees it: the row of this checkout at this HEAD surveys it for
/// `observe` too, and leaves what it read in `changed`.
struct Here<'a> {
    /// Canonical.
    path: &'a Path,
    head: Option<gix::ObjectId>,
    changed: Mutex<Option<Result<Vec<String>, RepoError>>>,
}

impl Here<'_> {
    /// Whether the worktree at `path` (canonical) on `head` is this checkout, as observed.
    fn is(&self, path: &Path, head: Option<gix::ObjectId>) -> bool {
        path == self.path && head.is_some() && head == self.head
    }

    /// Survey this checkout through its row's `repo`: its changed paths, for the row, and
    /// the whole result (its error too) kept for `observe`.
    fn survey(&self, repo: &Repo, reading: (&Snapshots, Threads)) -> Result<Vec<String>, ()> {
        let surveyed = changed_paths(repo, self.head, reading);
        let row = surveyed.as_ref().map(Vec::clone).map_err(|_| ());
        *self.changed.lock().unwrap_or_else(PoisonError::into_inner) = Some(surveyed);
        row
    }
}

/// Every worktree's row, observed in parallel (each row reads its own work tree and repository
/// files; the threads share nothing but HEAD snapshots and idle cores). A row whose observation
/// panicked is unreadable.
fn fleet_rows(
    worktrees: &[WorktreeInfo],
    here: &Here,
    trunk: &TrunkOnce,
    now: u64,
    snapshots: &Snapshots,
) -> Vec<FleetRow> {
    let current = here.path;
    // A row a core, this thread's among them: a thread that finds no row left lends its core
    // to the surveys still reading (`cores.rs`), so the last rows are read on every core. A
    // thread that cannot be started leaves its rows to the others.
    let workers = cores().min(worktrees.len()).max(1);
    let spare = Spare::new(cores() - workers);
    let reading = (snapshots, Threads::Lent(&spare));
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let at = next.fetch_add(1, Ordering::Relaxed);
            let Some(w) = worktrees.get(at) else {
                spare.give();
                return done;
            };
            let observe = || row(w, here, (trunk, now), reading);
            let observed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(observe));
            done.extend(observed.ok().map(|row| (at, row)));
        }
    };
    let mut rows: Vec<Option<FleetRow>> = vec![None; worktrees.len()];
    std::thread::scope(|scope| {
        let others: Vec<_> = (1..workers)
            .filter_map(|_| std::thread::Builder::new().spawn_scoped(scope, work).ok())
            .collect();
        let mine = work();
        let theirs = others.into_iter().filter_map(|t| t.join().ok()).flatten();
        for (at, row) in mine.into_iter().chain(theirs) {
            rows[at] = Some(row);
        }
    });
    rows.into_iter()
        .zip(worktrees)
        .map(|(row, w)| {
            row.unwrap_or_else(|| FleetRow {
                unreadable: true,
                ..blank_row(w, current)
            })
        })
        .collect()
}

/// A row that says nothing yet of its worktree's state.
fn blank_row(w: &WorktreeInfo, current: &Path) -> FleetRow {
    let path = std::fs::canonicalize(&w.path).unwrap_or_else(|_| w.path.clone());
    let id = if w.is_main {
        "main".to_owned()
    } else {
        w.path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    };
    FleetRow {
        path: w.path.display().to_string(),
        is_main: w.is_main,
        is_current: path == current,
        branch: w.branch.clone(),
        clean: None,
        changed_files: None,
        ahead: None,
        behind: None,
        last_activity: None,
        last_activity_secs: 0,
        id,
        task: None,
        proof: None,
        proof_line: None,
        broken: false,
        unreadable: false,
        changed_paths: Vec::new(),
        stale: false,
        awaiting_approval: Vec::new(),
        approved_by: None,
    }
}

fn row(
    w: &WorktreeInfo,
    here: &Here,
    (trunk_once, now): (&TrunkOnce, u64),
    reading: (&Snapshots, Threads),
) -> FleetRow {
    let mut row = blank_row(w, here.path);
    if !w.path.exists() || w.prunable {
        row.broken = true;
        return row;
    }
    let Ok(repo) = Repo::discover(&w.path) else {
        row.unreadable = true;
        return row;
    };
    let surveyed = match here.is(repo.root(), w.head) {
        true => here.survey(&repo, reading),
        false => changed_paths(&repo, w.head, reading).map_err(|_| ()),
    };
    match surveyed {
        Ok(dirty) => {
            row.clean = Some(dirty.is_empty());
            row.changed_files = Some(dirty.len());
            row.changed_paths = dirty;
        }
        Err(_) => {
            row.unreadable = true;
            return row;
        }
    }
    let named_trunk = trunk_once
        .wait()
        .as_ref()
        .map(|(name, c)| (name.as_str(), *c));
    let trunk = named_trunk.map(|(_, commit)| commit);
    let (ahead, behind) = counts(&repo, trunk, w.head);
    row.ahead = ahead;
    row.behind = behind;
    let git_dir = repo.git_dir();
    let activity = [
        git_dir.join("index"),
        git_dir.join("HEAD"),
        git_dir.join("logs/HEAD"),
        repo.admin_path(proof::FILE),
    ]
    .iter()
    .filter_map(|p| mtime(p))
    .max()
    .map(|secs| secs.min(now));
    // No readable time: the row sorts last and shows none.
    row.last_activity_secs = activity.unwrap_or_default();
    row.last_activity = activity.filter(|secs| *secs > 0).map(iso8601);
    row.task = crate::task::load(&repo)
        .and_then(|t| t.title)
        .map(|title| RowTask { title });
    if !w.is_main {
        let (state, proof) = proof::state_known_clean(&repo, row.clean == Some(true));
        row.proof = Some(state);
        row.proof_line = proof.map(|p| p.line);
        if let (Some((name, commit)), Some(head)) = (named_trunk, w.head) {
            (row.awaiting_approval, row.approved_by) = awaiting(&repo, name, commit, head);
        }
    }
    row.stale = row.idle_with_work(now);
    row
}

/// What of an effort awaits the owner's approval, or who approved its change (from the merge base).
fn awaiting(
    repo: &Repo,
    trunk: &str,
    trunk_commit: gix::ObjectId,
    head: gix::ObjectId,
) -> (Vec<String>, Option<String>) {
    // An effort still on the trunk's commit changes nothing there is to approve (the common
    // case of a fleet: efforts just started), and needs neither config read nor tree diffed.
    if head == trunk_commit {
        return (Vec::new(), None);
    }
    // What cannot be told is shown as such, never as nothing awaiting the owner.
    let required = match crate::proposals::required::required(repo, trunk, trunk_commit, head) {
        Ok(required) => required,
        Err(e) => {
            return (
                vec![format!("what awaits approval cannot be told: {e}")],
                None,
            );
        }
    };
    if required.changes.is_empty() {
        return (Vec::new(), None);
    }
    let approvals = match crate::approval::tree::added(repo, trunk_commit, head) {
        Ok(approvals) => approvals,
        Err(e) => {
            return (
                vec![format!("whether it is approved cannot be told: {e}")],
                None,
            );
        }
    };
    let policy = crate::approval::anchored_policy(repo, trunk_commit);
    let approving = (!approvals.is_empty()).then(|| {
        let from = repo.merge_base(trunk_commit, head).unwrap_or(trunk_commit);
        let range = crate::approval::tree::Range { from, to: head };
        crate::approval::tree::approving(
            repo,
            &approvals,
            policy.as_ref(),
            range,
            &required.changes,
        )
    });
    match approving {
        Some(Ok(approval)) => (Vec::new(), Some(approval.principal.clone())),
        _ => {
            let mut lines = required.lines();
            lines.extend(required.unexplained.iter().cloned());
            (lines, None)
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_dates() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso8601(1_767_225_600), "2026-01-01T00:00:00Z");
        assert_eq!(iso8601(951_782_400), "2000-02-29T00:00:00Z");
    }
}
