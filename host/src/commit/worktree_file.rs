//! A file the host committed, brought into the checkout that has its branch out: the work-tree
//! file and its index entry, and git's cache of trees (the index's TREE extension) told that
//! every folder above the file changed. A cached tree left valid would be written as it was by
//! the next `git commit`: the committed file gone, or its folder listed twice.

use gix::ObjectId;
use gix::bstr::ByteSlice;

use super::{CommitError, git_error, locked_or};
use crate::config::FILE;
use crate::git::Repo;

/// Make the work-tree file and its index entry match `content` (whose blob is `blob`).
pub(crate) fn sync_worktree(
    repo: &Repo,
    content: &[u8],
    blob: ObjectId,
) -> Result<(), CommitError> {
    sync_file(repo, FILE, content, blob)
}

/// Make the work-tree file `file` and its index entry match `content` (whose blob is `blob`).
pub(crate) fn sync_file(
    repo: &Repo,
    file: &str,
    content: &[u8],
    blob: ObjectId,
) -> Result<(), CommitError> {
    let path = repo.root().join(file);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| git_error(&format!("cannot write {file}"), e))?;
    }
    crate::fsutil::write_atomic_via(&path, content, &repo.admin_path("tmp"))
        .map_err(|e| git_error(&format!("cannot write {file}"), e))?;
    let local = repo.local();
    let mut index = local
        .open_index()
        .map_err(|e| git_error("cannot read the index", e))?;
    let position = index.entry_index_by_path(file.as_bytes().as_bstr());
    let metadata = gix::index::fs::Metadata::from_path_no_follow(&path)
        .map_err(|e| git_error(&format!("cannot stat {file}"), e))?;
    let stat = gix::index::entry::Stat::from_fs(&metadata)
        .map_err(|e| git_error(&format!("cannot stat {file}"), e))?;
    match position {
        Ok(position) => {
            let entry = &mut index.entries_mut()[position];
            entry.id = blob;
            entry.stat = stat;
        }
        Err(_) => {
            index.dangerously_push_entry(
                stat,
                blob,
                gix::index::entry::Flags::empty(),
                gix::index::entry::Mode::FILE,
                file.as_bytes().as_bstr(),
            );
            index.sort_entries();
        }
    }
    invalidate_cached_trees(&mut index, file);
    index
        .write(gix::index::write::Options::default())
        .map_err(|e| {
            locked_or(
                repo.git_dir().join("index.lock"),
                git_error("cannot write the index", e),
            )
        })?;
    Ok(())
}

/// Take `path` out of the index and the work tree (an approval commit unwound before its
/// branch moved leaves no file behind).
pub(crate) fn unstage(repo: &Repo, path: &str) -> Result<(), CommitError> {
    let local = repo.local();
    let mut index = local
        .open_index()
        .map_err(|e| git_error("cannot read the index", e))?;
    let before = index.entries().len();
    index.remove_entries(|_, entry_path, _| entry_path == path.as_bytes());
    if index.entries().len() != before {
        invalidate_cached_trees(&mut index, path);
        index
            .write(gix::index::write::Options::default())
            .map_err(|e| git_error("cannot write the index", e))?;
    }
    match std::fs::remove_file(repo.root().join(path)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(git_error(&format!("cannot remove {path}"), e))
        }
        _ => Ok(()),
    }
}

/// Mark the cached tree of the root and of every folder above `path` invalid (git's own
/// `cache_tree_invalidate_path`): git then builds those trees from the entries again, and keeps
/// the cached trees of every other folder.
fn invalidate_cached_trees(index: &mut gix::index::State, path: &str) {
    if let Some(root) = index.tree_mut() {
        invalidate_above(root, path);
    }
}

fn invalidate_above(root: &mut gix::index::extension::Tree, path: &str) {
    let mut tree = root;
    tree.num_entries = None;
    let mut folders = path.split('/').collect::<Vec<_>>();
    folders.pop();
    for folder in folders {
        let child = tree
            .children
            .iter_mut()
            .find(|child| child.name.as_slice() == folder.as_bytes());
        match child {
            Some(child) => {
                child.num_entries = None;
                tree = child;
            }
            None => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use gix::index::extension::Tree;

    use super::invalidate_above;

    fn tree(name: &str, children: Vec<Tree>) -> Tree {
        Tree {
            name: name.as_bytes().into(),
            id: gix::ObjectId::null(gix::hash::Kind::Sha1),
            num_entries: Some(1),
            children,
        }
    }

    #[test]
    fn every_folder_above_a_path_is_invalidated_and_no_other() {
        let approvals = tree("approvals", vec![tree("deeper", vec![])]);
        let mut root = tree(
            "",
            vec![tree(".discern", vec![approvals]), tree("src", vec![])],
        );
        invalidate_above(&mut root, ".discern/approvals/one.json");
        let discern = &root.children[0];
        assert_eq!(root.num_entries, None);
        assert_eq!(discern.num_entries, None);
        assert_eq!(discern.children[0].num_entries, None);
        assert_eq!(discern.children[0].children[0].num_entries, Some(1));
        assert_eq!(root.children[1].num_entries, Some(1));
        let mut root = tree("", vec![tree("src", vec![])]);
        invalidate_above(&mut root, "discern.toml");
        assert_eq!(
            (root.num_entries, root.children[0].num_entries),
            (None, Some(1))
        );
    }
}
