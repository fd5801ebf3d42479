//! What a change does to the tree, as a signed approval names it: the net diff from the trunk
//! commit it was judged against to the approved head — every file entry that differs, with its
//! path, its kind and id before and after (a submodule's commit and a symlink's target blob
//! included), sorted, approvals under `.discern/approvals/` left out — hashed into one digest.
//!
//! The digest depends on the two trees only, never on the commits between them, so the same
//! change landed by a merge commit, a squash or a rebase onto the same trunk gives the same
//! digest, and a trunk that moved on other paths meanwhile does too; other code, another
//! baseline for a path the change touches, or a merge that changed what the change does to a
//! path, gives another.

use gix::ObjectId;
use gix::objs::tree::{EntryKind, EntryMode};

use crate::git::{Repo, RepoError};

/// The first line of what is hashed: another version of this encoding is another digest.
const DOMAIN: &str = "discern-net-change-v1\n";

/// One side of an entry: its kind and object.
type Side = Option<(EntryKind, ObjectId)>;

/// The digest of the net change from `from`'s tree to `to`'s (hex sha256).
pub(crate) fn net_change(repo: &Repo, from: ObjectId, to: ObjectId) -> Result<String, RepoError> {
    net_change_outside(repo, from, to, None)
}

/// [`net_change`], leaving out the file `skip` too (`discern.toml`, whose changes an approval
/// names item by item).
pub(crate) fn net_change_outside(
    repo: &Repo,
    from: ObjectId,
    to: ObjectId,
    skip: Option<&str>,
) -> Result<String, RepoError> {
    let what = format!(
        "the change {}..{}",
        crate::git::short(&from.to_string()),
        crate::git::short(&to.to_string())
    );
    let failed = |e: String| RepoError::Read {
        what: what.clone(),
        message: e,
    };
    let local = repo.local();
    let tree = |commit: ObjectId| -> Result<ObjectId, String> {
        let commit = local.find_commit(commit).map_err(|e| e.to_string())?;
        commit
            .tree_id()
            .map(|id| id.detach())
            .map_err(|e| e.to_string())
    };
    let mut entries = Vec::new();
    walk(
        &local,
        (
            Some(tree(from).map_err(failed)?),
            Some(tree(to).map_err(failed)?),
        ),
        b"",
        &mut entries,
    )
    .map_err(failed)?;
    entries.retain(|(path, _, _)| skip.is_none_or(|skip| path.as_slice() != skip.as_bytes()));
    Ok(digest(entries))
}

/// The digest of `entries` (path, before, after), in path order.
fn digest(mut entries: Vec<(Vec<u8>, Side, Side)>) -> String {
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let mut text = DOMAIN.as_bytes().to_vec();
    for (path, before, after) in entries {
        // A path holds no NUL: NUL ends it, and a line ends the entry.
        text.extend_from_slice(&path);
        text.push(0);
        text.extend_from_slice(format!("{} {}\n", side(before), side(after)).as_bytes());
    }
    crate::digest::Digest::of(&text).hex()
}

/// `mode id`, as `git diff --raw` writes a side (`000000 0000…` when absent).
fn side(side: Side) -> String {
    match side {
        Some((kind, id)) => format!("{:o} {id}", EntryMode::from(kind)),
        None => format!("000000 {}", ObjectId::null(gix::hash::Kind::Sha1)),
    }
}

/// A tree's entries by name (none for no tree).
fn entries(
    repo: &gix::Repository,
    tree: Option<ObjectId>,
) -> Result<std::collections::BTreeMap<Vec<u8>, (EntryKind, ObjectId)>, String> {
    let Some(tree) = tree else {
        return Ok(Default::default());
    };
    let tree = repo.find_tree(tree).map_err(|e| e.to_string())?;
    let decoded = tree.decode().map_err(|e| e.to_string())?;
    Ok(decoded
        .entries
        .iter()
        .map(|e| (e.filename.to_vec(), (e.mode.kind(), e.oid.to_owned())))
        .collect())
}

/// Every file entry that differs between the trees `old` and `new` below `prefix`, reading
/// only subtrees whose ids differ; the approvals' folder is not part of any change.
fn walk(
    repo: &gix::Repository,
    (old, new): (Option<ObjectId>, Option<ObjectId>),
    prefix: &[u8],
    found: &mut Vec<(Vec<u8>, Side, Side)>,
) -> Result<(), String> {
    if old == new {
        return Ok(());
    }
    let (old, new) = (entries(repo, old)?, entries(repo, new)?);
    let names: std::collections::BTreeSet<&Vec<u8>> = old.keys().chain(new.keys()).collect();
    for name in names {
        let (before, after) = (old.get(name).copied(), new.get(name).copied());
        if before == after {
            continue;
        }
        let mut path = prefix.to_vec();
        path.extend_from_slice(name);
        if path == crate::commit::approval::DIR.as_bytes() {
            continue;
        }
        let tree = |side: Side| side.filter(|(kind, _)| *kind == EntryKind::Tree);
        let file = |side: Side| side.filter(|(kind, _)| *kind != EntryKind::Tree);
        let (old_tree, new_tree) = (tree(before), tree(after));
        if old_tree.is_some() || new_tree.is_some() {
            let mut below = path.clone();
            below.push(b'/');
            walk(
                repo,
                (old_tree.map(|t| t.1), new_tree.map(|t| t.1)),
                &below,
                found,
            )?;
        }
        if file(before).is_some() || file(after).is_some() {
            found.push((path, file(before), file(after)));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> ObjectId {
        ObjectId::from_bytes_or_panic(&[n; 20])
    }

    #[test]
    fn the_digest_is_the_sorted_entries_and_nothing_else() {
        let a = (b"src/a.rs".to_vec(), Some((EntryKind::Blob, id(1))), None);
        let b = (
            b"src/b.rs".to_vec(),
            None,
            Some((EntryKind::BlobExecutable, id(2))),
        );
        assert_eq!(
            digest(vec![a.clone(), b.clone()]),
            digest(vec![b.clone(), a.clone()])
        );
        let executable = (
            b"src/a.rs".to_vec(),
            Some((EntryKind::BlobExecutable, id(1))),
            None,
        );
        assert_ne!(
            digest(vec![a.clone(), b.clone()]),
            digest(vec![executable, b])
        );
        assert_ne!(digest(vec![a]), digest(Vec::new()));
    }
}
