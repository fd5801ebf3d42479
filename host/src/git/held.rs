//! What a path holds at a commit, whatever it is — a file, a symbolic link and its target's
//! text, a submodule's commit, a folder — read in-process, for the protected set: a path that
//! is not a plain file must not read as "no change" when what it holds changed.

use gix::ObjectId;

use super::repo::{Repo, RepoError, read_error};

/// What a tree lists at one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Held {
    /// A file: its blob and whether it is executable.
    File { id: ObjectId, executable: bool },
    /// A symbolic link and the text it points at.
    Link { target: String },
    /// A submodule (gitlink): the commit it pins.
    Gitlink(ObjectId),
    /// A folder: its tree.
    Folder(ObjectId),
}

impl Repo {
    /// What `path` holds at `commit` (`None`: nothing there).
    pub(crate) fn held_at(&self, commit: ObjectId, path: &str) -> Result<Option<Held>, RepoError> {
        let Some((mode, id)) = self.entry_at(commit, path)? else {
            return Ok(None);
        };
        let what = format!("{path} at {commit}");
        Ok(Some(held(&self.local(), mode, id, &what)?))
    }

    /// Every symbolic link at `commit` that `wanted` says may hold what is protected (the link's
    /// own path matches, or a protected path may lie below it), with its target's text, sorted
    /// by path. Only folders `wanted` may reach into are read.
    pub(crate) fn links_where(
        &self,
        commit: ObjectId,
        wanted: &dyn Fn(&str) -> bool,
    ) -> Result<Vec<(String, String)>, RepoError> {
        let repo = self.local();
        let what = format!("the tree of {commit}");
        let root = repo
            .find_commit(commit)
            .and_then(|c| c.tree_id())
            .map_err(|e| read_error(&what, e))?
            .detach();
        let mut found = Vec::new();
        let mut folders = vec![(root, String::new())];
        while let Some((tree, prefix)) = folders.pop() {
            let tree = repo.find_tree(tree).map_err(|e| read_error(&what, e))?;
            let decoded = tree.decode().map_err(|e| read_error(&what, e))?;
            for entry in &decoded.entries {
                // A name that is not UTF-8 matches no pathspec.
                let Ok(name) = std::str::from_utf8(entry.filename) else {
                    continue;
                };
                let path = format!("{prefix}{name}");
                if !wanted(&path) {
                    continue;
                }
                if entry.mode.is_tree() {
                    folders.push((entry.oid.to_owned(), format!("{path}/")));
                } else if entry.mode.is_link() {
                    let target = link_text(&repo, entry.oid.to_owned(), &path)?;
                    found.push((path, target));
                }
            }
        }
        found.sort();
        Ok(found)
    }
}

fn held(
    repo: &gix::Repository,
    mode: gix::objs::tree::EntryMode,
    id: ObjectId,
    what: &str,
) -> Result<Held, RepoError> {
    Ok(if mode.is_tree() {
        Held::Folder(id)
    } else if mode.is_commit() {
        Held::Gitlink(id)
    } else if mode.is_link() {
        Held::Link {
            target: link_text(repo, id, what)?,
        }
    } else {
        Held::File {
            id,
            executable: mode.is_executable(),
        }
    })
}

/// The text a link's blob holds (its target), lossily as UTF-8.
fn link_text(repo: &gix::Repository, id: ObjectId, what: &str) -> Result<String, RepoError> {
    let blob = repo.find_blob(id).map_err(|e| read_error(what, e))?;
    Ok(String::from_utf8_lossy(&blob.data).into_owned())
}
