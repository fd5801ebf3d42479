//! The fleet's rows: every worktree read at once, a row a core (this checkout's survey its
//! row's), each with its changed paths, its counts against the trunk, its last activity, task
//! and Proof, and what of it awaits the owner's approval. A row that cannot be read says so.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::UNIX_EPOCH;

use super::observation::{FleetRow, GitCount, RowTask};
use crate::cores::{Spare, Threads, cores};
use crate::git::{Repo, RepoError, WorktreeInfo};
use crate::proof;
use crate::snapshot::Snapshot;

/// The trunk as the rows wait for it: set once the configuration is read, to `None` when it
/// cannot be (or its reading panicked: `Tell` sets it as it is dropped), so no row waits
/// forever.
pub(super) type TrunkOnce = OnceLock<Option<(String, gix::ObjectId)>>;

pub(super) struct Tell<'a>(pub(super) &'a TrunkOnce);

impl Drop for Tell<'_> {
    fn drop(&mut self) {
        let _ = self.0.set(None);
    }
}

/// A survey whose thread panicked: "cannot tell", for the checkout and for the list.
pub(super) fn unsurveyed() -> Surveyed {
    let failed = || RepoError::Read {
        what: "the work trees".to_owned(),
        message: "their survey failed".to_owned(),
    };
    (Err(failed()), Err(failed()), Vec::new())
}

pub(super) fn counts(
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
pub(super) fn changed_paths(
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
pub(super) type Surveyed = (
    Result<Vec<String>, RepoError>,
    Result<Vec<WorktreeInfo>, RepoError>,
    Vec<FleetRow>,
);

/// This checkout's changed paths, the worktrees git lists, and every worktree's row: this
/// checkout's survey is its row's, read once and on the same cores as the other rows (it is
/// surveyed alone when no row is this checkout at this HEAD, or the list cannot be read).
pub(super) fn survey_fleet(
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
pub(super) struct Snapshots {
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
pub(super) struct Here<'a> {
    /// Canonical.
    path: &'a Path,
    pub(super) head: Option<gix::ObjectId>,
    changed: Mutex<Option<Result<Vec<String>, RepoError>>>,
}

impl<'a> Here<'a> {
    /// This checkout at `path` (canonical) on `head`, not surveyed yet.
    pub(super) fn new(path: &'a Path, head: Option<gix::ObjectId>) -> Self {
        Here {
            path,
            head,
            changed: Mutex::new(None),
        }
    }

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
        id,
        ..FleetRow::default()
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
        .map(|(name, c)| (name.to_owned(), *c));
    // An effort of a release line is counted, and judged, against its line.
    let named_trunk = match (named_trunk, w.is_main) {
        (Some(trunk), false) => Some(line_of(&repo, trunk, w.head, &mut row)),
        (named, _) => named,
    };
    let trunk = named_trunk.as_ref().map(|(_, commit)| *commit);
    let (ahead, behind) = counts(&repo, trunk, w.head);
    row.ahead = ahead;
    row.behind = behind;
    if !w.is_main && matches!(ahead, Some(GitCount::Known(n)) if n > 0) {
        match committed(&repo, trunk, w.head) {
            Ok(paths) => row.committed_paths = paths,
            // What it changed cannot be read: never "collides with nothing".
            Err(_) => row.unreadable = true,
        }
    }
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
    // No readable time: the row sorts last, shows none and is not judged idle.
    row.last_activity_secs = activity;
    row.last_activity = activity.filter(|secs| *secs > 0).map(iso8601);
    row.task = crate::task::load(&repo)
        .and_then(|t| t.title)
        .map(|title| RowTask { title });
    if !w.is_main {
        row.setup = crate::setup_record::attention(repo.git_dir());
        let (state, proof) = proof::state_known_clean(&repo, row.clean == Some(true));
        row.proof = Some(state);
        row.proof_line = proof.map(|p| p.line);
        if let (Some((name, commit)), Some(head)) = (&named_trunk, w.head) {
            (row.awaiting_approval, row.approved_by) = awaiting(&repo, name, *commit, head);
        }
    }
    row.stale = row.idle_with_work(now);
    row
}

/// The line an effort at `head` lands on: the release line it came from (named in `row`), else
/// the trunk. A line whose tip cannot be read is named all the same and counted as unknown.
fn line_of(
    repo: &Repo,
    (trunk, trunk_commit): (String, gix::ObjectId),
    head: Option<gix::ObjectId>,
    row: &mut FleetRow,
) -> (String, gix::ObjectId) {
    let Some(line) =
        head.and_then(|h| crate::measure::limits::release_line(repo, &trunk, h, false, None))
    else {
        return (trunk, trunk_commit);
    };
    row.line = Some(line.clone());
    match repo.trunk_commit(&line) {
        Ok(Some(commit)) => (line, commit),
        _ => (line, trunk_commit),
    }
}

/// What of an effort awaits the owner's approval, or who approved its change: what the effort
/// itself changed, judged from its merge base with the trunk. A lagging effort (forked from an
/// older trunk) is never blamed for the trunk's own changes since: those are not its own, and
/// `update` brings them in.
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
    let Some(base) = repo.merge_base(trunk_commit, head) else {
        let why = format!(
            "what awaits approval cannot be told: it shares no history with {trunk} that can be read (`git merge-base {trunk} HEAD` in its worktree)"
        );
        return (vec![why], None);
    };
    // An effort with no commit of its own since it forked (a trunk that only moved on).
    if head == base {
        return (Vec::new(), None);
    }
    let required = match crate::proposals::required::required(repo, trunk, base, head) {
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
    let approvals = match crate::approval::tree::added(repo, base, head) {
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
        let range = crate::approval::tree::Range {
            from: base,
            to: head,
        };
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

/// The files an effort's commits changed since it forked from the trunk (merge base to HEAD);
/// none without a trunk or a shared history; an error when the diff cannot be read (the row is
/// then unreadable, never one that collides with nothing).
fn committed(
    repo: &Repo,
    trunk: Option<gix::ObjectId>,
    head: Option<gix::ObjectId>,
) -> Result<Vec<String>, crate::git::RepoError> {
    let (Some(trunk), Some(head)) = (trunk, head) else {
        return Ok(Vec::new());
    };
    match repo.merge_base(trunk, head) {
        Some(base) => repo.changed_between(base, head),
        None => Ok(Vec::new()),
    }
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

/// `2026-11-30T04:41:21Z` for unix seconds (UTC, proleptic Gregorian).
fn iso8601(secs: u64) -> String {
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
