//! The repository around a snapshot: where it is, what HEAD and the trunk point at, whether
//! the work tree is clean, and where discern keeps its per-worktree and shared state.

use std::path::{Path, PathBuf};
use std::process::Command;

use gix::ObjectId;

use crate::cores::{Threads, cores};
use crate::snapshot::{Snapshot, SnapshotError};

#[derive(Debug, thiserror::Error)]
pub enum RepoError {
    #[error("{path}: not inside a git repository ({message}); run discern from a git work tree")]
    NotARepository { path: PathBuf, message: String },
    #[error("{0}: a bare repository has no work tree to measure; run discern in a checkout")]
    Bare(PathBuf),
    #[error("cannot read {what}: {message}")]
    Read { what: String, message: String },
    #[error("`git status` failed in {root}: {message}")]
    Status { root: PathBuf, message: String },
    #[error(
        "the local trunk {branch} and {upstream} have diverged, so which one the team is on cannot be told; fetch (`git fetch`), then push or rebase the local commits (`git rebase {upstream} {branch}`), or reset to the team's (`git branch -f {branch} {upstream}`)"
    )]
    TrunkDiverged { branch: String, upstream: String },
}

/// A discovered repository with a work tree.
#[derive(Clone)]
pub struct Repo {
    repo: gix::ThreadSafeRepository,
    root: PathBuf,
    /// The common dir, resolved once: a linked worktree names it relative to its own git dir
    /// (`.git/worktrees/<id>/../..`), a path that stops resolving once that worktree is gone.
    common: PathBuf,
}

impl std::fmt::Debug for Repo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Repo").field("root", &self.root).finish()
    }
}

impl Repo {
    /// Find the repository containing `dir` (searching upwards), isolated from the machine's
    /// global and system git config.
    pub fn discover(dir: &Path) -> Result<Self, RepoError> {
        let trust = gix::sec::trust::Mapping {
            full: crate::snapshot::open_options(),
            reduced: crate::snapshot::open_options(),
        };
        let repo = gix::ThreadSafeRepository::discover_opts(dir, Default::default(), trust)
            .map_err(|e| RepoError::NotARepository {
                path: dir.to_owned(),
                message: e.to_string(),
            })?;
        let root = repo
            .work_dir()
            .ok_or_else(|| RepoError::Bare(dir.to_owned()))?
            .to_owned();
        let root = std::fs::canonicalize(&root).unwrap_or(root);
        let common = repo.to_thread_local().common_dir().to_owned();
        let common = std::fs::canonicalize(&common).unwrap_or(common);
        Ok(Self { repo, root, common })
    }

    /// The work tree's top directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// This worktree's git dir (per-worktree state lives below it).
    pub fn git_dir(&self) -> &Path {
        self.repo.git_dir()
    }

    /// The common dir shared by all worktrees.
    pub fn common_dir(&self) -> PathBuf {
        self.common.clone()
    }

    /// `<git-dir>/discern/<name>`: per-worktree state.
    pub fn admin_path(&self, name: &str) -> PathBuf {
        self.git_dir().join("discern").join(name)
    }

    /// `<common-dir>/discern/<name>`: state shared by every worktree.
    pub fn shared_path(&self, name: &str) -> PathBuf {
        self.common_dir().join("discern").join(name)
    }

    pub fn local(&self) -> gix::Repository {
        self.repo.to_thread_local()
    }

    /// The commit HEAD points at; `None` on an unborn branch.
    pub fn head(&self) -> Result<Option<ObjectId>, RepoError> {
        let repo = self.local();
        let mut head = repo.head().map_err(|e| read_error("HEAD", e))?;
        if head.is_unborn() {
            return Ok(None);
        }
        head.try_peel_to_id()
            .map(|id| id.map(|id| id.detach()))
            .map_err(|e| read_error("HEAD", e))
    }

    /// The branch HEAD is on (`main`, `agent/x`); `None` when detached.
    pub fn branch(&self) -> Result<Option<String>, RepoError> {
        let repo = self.local();
        let name = repo.head_name().map_err(|e| read_error("HEAD", e))?;
        Ok(name.map(|n| n.shorten().to_string()))
    }

    /// The commit the local branch `refs/heads/<name>` points at; `None` when there is none.
    pub fn local_branch_commit(&self, name: &str) -> Result<Option<ObjectId>, RepoError> {
        let full = format!("refs/heads/{name}");
        let repo = self.local();
        let found = repo
            .try_find_reference(full.as_str())
            .map_err(|e| read_error(&full, e))?;
        match found {
            Some(mut reference) => {
                let id = reference.peel_to_id().map_err(|e| read_error(&full, e))?;
                Ok(Some(id.detach()))
            }
            None => Ok(None),
        }
    }

    /// The commit a branch points at: `refs/heads/<name>`, else `refs/remotes/origin/<name>`.
    pub fn branch_commit(&self, name: &str) -> Result<Option<ObjectId>, RepoError> {
        let repo = self.local();
        for full in [
            format!("refs/heads/{name}"),
            format!("refs/remotes/origin/{name}"),
        ] {
            let found = repo
                .try_find_reference(full.as_str())
                .map_err(|e| read_error(&full, e))?;
            if let Some(mut reference) = found {
                let id = reference.peel_to_id().map_err(|e| read_error(&full, e))?;
                return Ok(Some(id.detach()));
            }
        }
        Ok(None)
    }

    /// The mode and id of the entry at `path` in `commit`'s tree (`None`: nothing there).
    pub(crate) fn entry_at(
        &self,
        commit: ObjectId,
        path: &str,
    ) -> Result<Option<(gix::objs::tree::EntryMode, ObjectId)>, RepoError> {
        let repo = self.local();
        let what = format!("{path} at {commit}");
        let tree = repo
            .find_commit(commit)
            .and_then(|c| c.tree())
            .map_err(|e| read_error(&what, e))?;
        Ok(tree
            .lookup_entry_by_path(path)
            .map_err(|e| read_error(&what, e))?
            .map(|entry| (entry.mode(), entry.object_id())))
    }

    /// The content of `path` in `commit`'s tree; `None` when the commit has no such file.
    pub fn file_at(&self, commit: ObjectId, path: &str) -> Result<Option<Vec<u8>>, RepoError> {
        let Some((_, id)) = self.entry_at(commit, path)? else {
            return Ok(None);
        };
        let what = format!("{path} at {commit}");
        let repo = self.local();
        let blob = repo.find_blob(id).map_err(|e| read_error(&what, e))?;
        Ok(Some(blob.detach().data))
    }

    /// The snapshot of `commit`.
    pub fn snapshot(&self, commit: ObjectId) -> Result<Snapshot, SnapshotError> {
        Snapshot::of_rev(self.repo.clone(), &commit.to_string())
    }

    /// A snapshot of the work tree as it is — tracked and untracked files, ignored ones left
    /// out — hashed into a temporary tree object on top of `head`, so that producers still
    /// read only a snapshot. Nothing but loose objects is written; the index is untouched.
    pub fn worktree_snapshot(&self, head: ObjectId) -> Result<Snapshot, RepoError> {
        let dir = self.git_dir().join("discern");
        std::fs::create_dir_all(&dir).map_err(|e| read_error("the git admin dir", e))?;
        let index = tempfile::Builder::new()
            .prefix("worktree-index-")
            .tempfile_in(&dir)
            .map_err(|e| read_error("a temporary index", e))?;
        let index_path = index.path().to_owned();
        let git = |args: &[&str]| -> Result<String, RepoError> {
            let output = super::command()
                .args(args)
                .current_dir(&self.root)
                .env("GIT_INDEX_FILE", &index_path)
                .output()
                .map_err(|e| read_error("the work tree", e))?;
            if !output.status.success() {
                return Err(read_error(
                    "the work tree",
                    String::from_utf8_lossy(&output.stderr).trim(),
                ));
            }
            Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
        };
        git(&["read-tree", &head.to_string()])?;
        git(&["add", "-A", "--", "."])?;
        let tree = git(&["write-tree"])?;
        let tree =
            ObjectId::from_hex(tree.as_bytes()).map_err(|e| read_error("the work tree", e))?;
        Snapshot::of_tree(self.repo.clone(), head, tree, true)
            .map_err(|e| read_error("the work tree snapshot", e))
    }

    /// Paths with staged changes (the index differs from HEAD).
    pub fn staged_paths(&self) -> Result<Vec<String>, RepoError> {
        Ok(self
            .status()?
            .into_iter()
            .filter(|(x, _)| *x != b' ' && *x != b'?')
            .map(|(_, path)| path)
            .collect())
    }

    /// Paths of tracked files with changes (staged or not); untracked files left out.
    pub fn tracked_changes(&self) -> Result<Vec<String>, RepoError> {
        Ok(self
            .status()?
            .into_iter()
            .filter(|(x, _)| *x != b'?')
            .map(|(_, path)| path)
            .collect())
    }

    /// Tracked changes and untracked files (ignored files excluded), as paths.
    ///
    /// Uses `git status`, which applies every ignore rule and filter exactly as the user's git does.
    pub fn dirty_paths(&self) -> Result<Vec<String>, RepoError> {
        Ok(self.status()?.into_iter().map(|(_, path)| path).collect())
    }

    /// Whether the in-process check proves the index and work tree identical to `head` (the
    /// snapshot of HEAD), every untracked name ignored; `false` means "cannot tell".
    pub fn proves_clean(&self, head: &Snapshot) -> bool {
        let head = super::clean::Head::Snapshot(head);
        super::clean::proves_clean(&self.repo.to_thread_local(), &self.root, head)
    }

    /// [`Repo::proves_clean`] against the commit `head`, whose snapshot `open` opens only when
    /// the index's cache-tree cannot vouch for its tree (a commit that cannot be read: "cannot
    /// tell").
    pub fn proves_clean_at(&self, head: ObjectId, open: &dyn Fn() -> Option<Snapshot>) -> bool {
        let Ok(tree) = self.tree_of(head) else {
            return false;
        };
        let head = super::clean::Head::Tree(tree, open);
        super::clean::proves_clean(&self.repo.to_thread_local(), &self.root, head)
    }

    /// The tree of `commit`.
    pub(crate) fn tree_of(&self, commit: ObjectId) -> Result<ObjectId, RepoError> {
        let repo = self.local();
        let commit = repo
            .find_commit(commit)
            .map_err(|e| read_error("a commit", e))?;
        commit
            .tree_id()
            .map(|id| id.detach())
            .map_err(|e| read_error("a commit's tree", e))
    }

    /// What [`Repo::dirty_paths`] lists (tracked changes, then untracked files), read in-process
    /// where the survey can tell (`changes.rs`: git is asked only about the names it found),
    /// else from `git status`. `head` is the snapshot of HEAD. An error is "cannot tell".
    pub fn changed_paths(&self, head: &Snapshot) -> Result<Vec<String>, RepoError> {
        self.survey(super::clean::Head::Snapshot(head), Threads::Fixed(cores()))
    }

    /// [`Repo::changed_paths`] against HEAD's tree `tree` (the caller read its id: a survey of
    /// many worktrees on one commit reads it once), whose snapshot `open` opens only when the
    /// index's cache-tree cannot vouch for it, its folders read on `threads` (where the caller
    /// surveys many work trees at once, each on a thread of its own, on the cores the others
    /// lend it).
    pub(crate) fn changed_paths_in(
        &self,
        tree: ObjectId,
        open: &dyn Fn() -> Option<Snapshot>,
        threads: Threads,
    ) -> Result<Vec<String>, RepoError> {
        self.survey(super::clean::Head::Tree(tree, open), threads)
    }

    /// The in-process survey against `head` on `threads`, else `git status`.
    fn survey(&self, head: super::clean::Head, threads: Threads) -> Result<Vec<String>, RepoError> {
        let local = self.repo.to_thread_local();
        match super::changes::changed_paths(&local, &self.root, head, threads) {
            Some(changed) => Ok(changed),
            None => self.dirty_paths(),
        }
    }

    /// The dirty paths of the work tree and index against `head` (the snapshot of HEAD): none
    /// when the in-process check proves them clean (`clean.rs`), else what `git status` reports,
    /// untracked folders named as folders (`dir/`) as `git status` shows them.
    pub fn dirty_against(&self, head: &Snapshot) -> Result<Vec<String>, RepoError> {
        if self.proves_clean(head) {
            return Ok(Vec::new());
        }
        self.dirty_by_git()
    }

    /// What [`Repo::dirty_against`] reads when the in-process check cannot prove the tree
    /// clean: `git status`'s paths.
    pub fn dirty_by_git(&self) -> Result<Vec<String>, RepoError> {
        let output = self
            .status_command("normal")
            .output()
            .map_err(|e| self.status_error(e.to_string()))?;
        Ok(parse_status(&self.root, output)?
            .into_iter()
            .map(|(_, path)| path)
            .collect())
    }

    /// `git status` entries: the index status letter and the path.
    fn status(&self) -> Result<Vec<(u8, String)>, RepoError> {
        let output = self
            .status_command("all")
            .output()
            .map_err(|e| self.status_error(e.to_string()))?;
        parse_status(&self.root, output)
    }

    fn status_command(&self, untracked: &str) -> Command {
        let mut cmd = super::command();
        cmd.args([
            "status",
            "--porcelain=v1",
            "-z",
            &format!("--untracked-files={untracked}"),
            "--ignore-submodules=none",
        ])
        .current_dir(&self.root)
        .env("GIT_OPTIONAL_LOCKS", "0");
        cmd
    }

    fn status_error(&self, message: String) -> RepoError {
        RepoError::Status {
            root: self.root.clone(),
            message,
        }
    }
}

fn parse_status(root: &Path, output: std::process::Output) -> Result<Vec<(u8, String)>, RepoError> {
    if !output.status.success() {
        return Err(RepoError::Status {
            root: root.to_path_buf(),
            message: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        });
    }
    let mut paths = Vec::new();
    let mut fields = output.stdout.split(|&b| b == 0).filter(|f| !f.is_empty());
    while let Some(field) = fields.next() {
        if field.len() < 4 {
            continue;
        }
        let (status, path) = field.split_at(3);
        paths.push((status[0], String::from_utf8_lossy(path).into_owned()));
        // A rename or copy is followed by its source path.
        if status[0] == b'R' || status[0] == b'C' {
            fields.next();
        }
    }
    Ok(paths)
}

/// One worktree of the repository, as `git worktree list` sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorktreeInfo {
    pub path: PathBuf,
    pub head: Option<ObjectId>,
    /// The branch checked out (short name); `None` when detached.
    pub branch: Option<String>,
    pub is_main: bool,
    pub bare: bool,
    pub prunable: bool,
}

impl Repo {
    /// Whether the repository provably has no local branch named `<prefix>…` (loose or
    /// packed); `false` when it has one or cannot tell.
    pub fn no_branch_under(&self, prefix: &str) -> bool {
        let repo = self.local();
        let Ok(references) = repo.references() else {
            return false;
        };
        references
            .prefixed(format!("refs/heads/{prefix}").as_str())
            .is_ok_and(|mut found| found.next().is_none())
    }

    /// The branches `git for-each-ref refs/heads/<prefix>` lists (the name equal to it, or below
    /// it at a `/`), by their names under `refs/heads/`, with the commits they point at; read
    /// in-process.
    pub fn branches_under(&self, prefix: &str) -> Result<Vec<(String, ObjectId)>, RepoError> {
        let pattern = format!("refs/heads/{prefix}");
        let repo = self.local();
        let references = repo
            .references()
            .map_err(|e| read_error("the branches", e))?;
        let mut branches = Vec::new();
        for reference in references
            .prefixed(pattern.as_str())
            .map_err(|e| read_error("the branches", e))?
        {
            let mut reference = reference.map_err(|e| read_error("a branch", e))?;
            let name = reference.name().as_bstr().to_string();
            let below = name
                .as_bytes()
                .get(pattern.len())
                .is_none_or(|b| *b == b'/');
            if !(pattern.ends_with('/') || below) {
                continue;
            }
            let id = reference
                .peel_to_id()
                .map_err(|e| read_error(&format!("the branch {name}"), e))?;
            let short = name.strip_prefix("refs/heads/").unwrap_or(&name).to_owned();
            branches.push((short, id.detach()));
        }
        // As git lists them: by name.
        branches.sort();
        Ok(branches)
    }

    /// Whether this checkout is the main one (not a linked worktree).
    pub fn is_main_checkout(&self) -> bool {
        let common = std::fs::canonicalize(self.common_dir()).ok();
        common.is_some() && common == std::fs::canonicalize(self.git_dir()).ok()
    }

    pub fn merge_base(&self, a: ObjectId, b: ObjectId) -> Option<ObjectId> {
        self.local()
            .merge_base(a, b)
            .ok()
            .flatten()
            .map(|id| id.detach())
    }

    /// Whether `ancestor` is reachable from `descendant` (or equal to it).
    pub fn is_ancestor(&self, ancestor: ObjectId, descendant: ObjectId) -> bool {
        ancestor == descendant || self.merge_base(ancestor, descendant) == Some(ancestor)
    }

    /// Commits in `head` not in `base`, and in `base` not in `head`.
    pub fn ahead_behind(&self, base: ObjectId, head: ObjectId) -> Result<(u64, u64), RepoError> {
        // The common case of a fleet (an effort just started, the main checkout on its trunk)
        // needs no git.
        if base == head {
            return Ok((0, 0));
        }
        // So is an effort a few plain commits off a trunk that moved plainly.
        if let Some(counts) = self.linear_ahead_behind(base, head) {
            return Ok(counts);
        }
        let out = self.git(&[
            "rev-list",
            "--left-right",
            "--count",
            &format!("{base}...{head}"),
        ])?;
        let counts: Vec<u64> = out
            .split_whitespace()
            .map(str::parse::<u64>)
            .collect::<Result<_, _>>()
            .map_err(|e| read_error("the output of git rev-list --count", e))?;
        match counts[..] {
            [behind, ahead] => Ok((ahead, behind)),
            _ => Err(read_error(
                "the output of git rev-list --count",
                format!("expected two counts, got {out:?}"),
            )),
        }
    }

    /// Every worktree (the main checkout first).
    pub fn worktrees(&self) -> Result<Vec<WorktreeInfo>, RepoError> {
        match self.worktrees_read() {
            Some(listed) => Ok(listed),
            None => self.worktrees_by_git(),
        }
    }

    /// Every worktree as `git worktree list --porcelain` prints them.
    pub(super) fn worktrees_by_git(&self) -> Result<Vec<WorktreeInfo>, RepoError> {
        let out = self.git(&["worktree", "list", "--porcelain"])?;
        let mut list = Vec::new();
        for block in out.split("\n\n").filter(|b| !b.trim().is_empty()) {
            let mut info = WorktreeInfo {
                path: PathBuf::new(),
                head: None,
                branch: None,
                is_main: list.is_empty(),
                bare: false,
                prunable: false,
            };
            for line in block.lines() {
                if let Some(path) = line.strip_prefix("worktree ") {
                    info.path = PathBuf::from(path);
                } else if let Some(head) = line.strip_prefix("HEAD ") {
                    info.head = ObjectId::from_hex(head.as_bytes()).ok();
                } else if let Some(branch) = line.strip_prefix("branch ") {
                    info.branch = Some(branch.trim_start_matches("refs/heads/").to_owned());
                } else if line == "bare" {
                    info.bare = true;
                } else if line.starts_with("prunable") {
                    info.prunable = true;
                }
            }
            list.push(info);
        }
        Ok(list)
    }

    /// Run git in the work tree; its stdout exactly as printed, or its stderr as the error.
    pub fn git_bytes(&self, args: &[&str]) -> Result<Vec<u8>, RepoError> {
        let output = super::command()
            .args(args)
            .current_dir(&self.root)
            .output()
            .map_err(|e| read_error(&format!("git {}", args.join(" ")), e))?;
        if !output.status.success() {
            return Err(read_error(
                &format!("git {}", args.join(" ")),
                String::from_utf8_lossy(&output.stderr).trim(),
            ));
        }
        Ok(output.stdout)
    }

    /// Run git in the work tree; its trimmed stdout, or its stderr as the error.
    pub fn git(&self, args: &[&str]) -> Result<String, RepoError> {
        let stdout = self.git_bytes(args)?;
        Ok(String::from_utf8_lossy(&stdout).trim().to_owned())
    }
}

pub(super) fn read_error(what: &str, e: impl std::fmt::Display) -> RepoError {
    RepoError::Read {
        what: what.to_owned(),
        message: e.to_string(),
    }
}
