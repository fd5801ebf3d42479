//! The worktrees as `git worktree list --porcelain` lists them, read in-process where that is
//! exact: the main checkout first, then every linked worktree registered under
//! `<common>/worktrees/`, sorted by path (git's `pathsort`). A status of a fleet asked git for the
//! list on every call, a process that cost more than reading the few files it reads.
//!
//! Anything unusual (a bare or separate common dir, a relative or unreadable `gitdir` file, a
//! HEAD that is neither a local branch with a commit nor a detached commit, case-folded paths)
//! is `None`, and the caller asks git.

use std::path::{Path, PathBuf};

use gix::ObjectId;

use super::repo::{Repo, WorktreeInfo};

impl Repo {
    /// Every worktree as git lists it, read in-process; `None`: ask git.
    pub(super) fn worktrees_read(&self) -> Option<Vec<WorktreeInfo>> {
        let common = self.common_dir();
        if common.file_name()? != ".git" || self.folds_case_or_bare() {
            return None;
        }
        let main = WorktreeInfo {
            path: common.parent()?.to_path_buf(),
            is_main: true,
            ..self.head_info(&common.join("HEAD"))?
        };
        let mut linked = Vec::new();
        let registered = match std::fs::read_dir(common.join("worktrees")) {
            Ok(registered) => registered,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(vec![main]),
            Err(_) => return None,
        };
        for entry in registered {
            linked.push(self.linked(&entry.ok()?.path())?);
        }
        // git sorts the linked worktrees by path (`strcmp`, case folding aside), the main first.
        linked.sort_by(|a, b| a.path.as_os_str().cmp(b.path.as_os_str()));
        Some(std::iter::once(main).chain(linked).collect())
    }

    /// A repository git would list differently, or whose settings cannot be read: `core.ignoreCase`
    /// (git then sorts paths case folded) or `core.bare` (no main checkout) set, or not a
    /// boolean.
    fn folds_case_or_bare(&self) -> bool {
        let local = self.local();
        let config = local.config_snapshot();
        let unset = |key: &str| matches!(config.try_boolean(key), Ok(None | Some(false)));
        !(unset("core.ignoreCase") && unset("core.bare"))
    }

    /// The linked worktree whose administrative folder is `admin`: where its `gitdir` file
    /// points (an absolute path to its `.git` file), its HEAD, and whether git would call it
    /// prunable (not locked, and its `.git` file gone).
    fn linked(&self, admin: &Path) -> Option<WorktreeInfo> {
        let gitdir = std::fs::read(admin.join("gitdir")).ok()?;
        let dot_git = PathBuf::from(std::str::from_utf8(gitdir.trim_ascii_end()).ok()?);
        if !dot_git.is_absolute() || dot_git.file_name()? != ".git" {
            return None;
        }
        let locked = std::fs::symlink_metadata(admin.join("locked")).is_ok();
        let gone = std::fs::symlink_metadata(&dot_git).is_err();
        Some(WorktreeInfo {
            path: dot_git.parent()?.to_path_buf(),
            prunable: !locked && gone,
            ..self.head_info(&admin.join("HEAD"))?
        })
    }

    /// The HEAD file at `head`: a local branch and the commit it names, or a detached commit.
    /// The path is left empty for the caller.
    fn head_info(&self, head: &Path) -> Option<WorktreeInfo> {
        let text = std::fs::read_to_string(head).ok()?;
        let text = text.trim_end();
        let (head, branch) = match text.strip_prefix("ref: ") {
            Some(name) => {
                let branch = name.strip_prefix("refs/heads/")?;
                (self.direct_commit(name)?, Some(branch.to_owned()))
            }
            None => (ObjectId::from_hex(text.as_bytes()).ok()?, None),
        };
        Some(WorktreeInfo {
            path: PathBuf::new(),
            head: Some(head),
            branch,
            is_main: false,
            bare: false,
            prunable: false,
        })
    }

    /// The commit the local branch `name` (a full ref name) points at directly; `None` when it
    /// does not exist (an unborn branch) or is symbolic.
    fn direct_commit(&self, name: &str) -> Option<ObjectId> {
        let local = self.local();
        let reference = local.try_find_reference(name).ok()??;
        reference.target().try_id().map(ToOwned::to_owned)
    }
}
