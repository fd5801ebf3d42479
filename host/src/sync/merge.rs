//! Merging two tips of one of discern's refs without conflicts: a three-way merge of their
//! trees against their merge base, path by path. What one side added is added, what one side
//! deleted (and the other left as the base had it) is deleted, what both made the same is
//! kept. Entries are content-addressed (published evidence) or one per commit (notes), so a
//! path both sides wrote differently is rare; it is settled by a rule, counted, and reported,
//! never a stopped sync.

use std::collections::{BTreeMap, BTreeSet};

use gix::ObjectId;
use gix::objs::tree::{Entry, EntryMode};

use super::SyncError;

/// How a path both sides wrote differently is settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rule {
    /// Keep this clone's (a note: the other side's stays in the merge's history).
    Ours,
    /// Keep the smaller content (a publication time: the earlier one).
    Smaller,
}

/// What a merge did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Merged {
    pub tree: Option<ObjectId>,
    /// Paths both sides wrote differently, settled by the rule.
    pub settled: Vec<String>,
}

type Side = Option<(EntryMode, ObjectId)>;

/// Merge the trees `ours` and `theirs` against `base` (`None`: no common history, a union).
pub(crate) fn trees(
    repo: &gix::Repository,
    base: Option<ObjectId>,
    ours: ObjectId,
    theirs: ObjectId,
    rule: Rule,
) -> Result<Merged, SyncError> {
    let mut merged = Merged::default();
    let tree = merge_dir(repo, base, Some(ours), Some(theirs), rule, "", &mut merged)?;
    merged.tree = Some(tree.unwrap_or_else(|| ObjectId::empty_tree(gix::hash::Kind::Sha1)));
    Ok(merged)
}

fn merge_dir(
    repo: &gix::Repository,
    base: Option<ObjectId>,
    ours: Option<ObjectId>,
    theirs: Option<ObjectId>,
    rule: Rule,
    prefix: &str,
    merged: &mut Merged,
) -> Result<Option<ObjectId>, SyncError> {
    let (b, o, t) = (
        entries(repo, base)?,
        entries(repo, ours)?,
        entries(repo, theirs)?,
    );
    let names: BTreeSet<&Vec<u8>> = b.keys().chain(o.keys()).chain(t.keys()).collect();
    let mut out = Vec::new();
    for name in names {
        let (bs, os, ts) = (
            b.get(name).copied(),
            o.get(name).copied(),
            t.get(name).copied(),
        );
        let path = format!("{prefix}{}", String::from_utf8_lossy(name));
        if let Some((mode, oid)) = merge_entry(repo, bs, os, ts, rule, &path, merged)? {
            out.push(Entry {
                mode,
                filename: name.clone().into(),
                oid,
            });
        }
    }
    if out.is_empty() {
        return Ok(None);
    }
    out.sort();
    let id = repo
        .write_object(&gix::objs::Tree { entries: out })
        .map_err(|e| SyncError::Git(format!("cannot write a merged tree: {e}")))?;
    Ok(Some(id.detach()))
}

fn merge_entry(
    repo: &gix::Repository,
    base: Side,
    ours: Side,
    theirs: Side,
    rule: Rule,
    path: &str,
    merged: &mut Merged,
) -> Result<Side, SyncError> {
    if ours == theirs || theirs == base {
        return Ok(ours);
    }
    if ours == base {
        return Ok(theirs);
    }
    let tree = |side: Side| side.filter(|(m, _)| m.is_tree()).map(|(_, id)| id);
    match (ours, theirs) {
        (Some((om, _)), Some((tm, _))) if om.is_tree() && tm.is_tree() => {
            let prefix = format!("{path}/");
            let id = merge_dir(
                repo,
                tree(base),
                tree(ours),
                tree(theirs),
                rule,
                &prefix,
                merged,
            )?;
            Ok(id.map(|id| (om, id)))
        }
        // Deleted on one side, changed on the other: what was changed is kept.
        (None, kept) | (kept, None) => Ok(kept),
        (Some(o), Some(t)) => {
            merged.settled.push(path.to_owned());
            settle(repo, o, t, rule).map(Some)
        }
    }
}

fn settle(
    repo: &gix::Repository,
    ours: (EntryMode, ObjectId),
    theirs: (EntryMode, ObjectId),
    rule: Rule,
) -> Result<(EntryMode, ObjectId), SyncError> {
    match rule {
        Rule::Ours => Ok(ours),
        Rule::Smaller => {
            // A blob that cannot be read is an error, never an empty side that wins.
            let data = |id: ObjectId| {
                repo.find_blob(id)
                    .map(|b| b.data.clone())
                    .map_err(|e| SyncError::Git(format!("cannot read blob {id} to merge: {e}")))
            };
            Ok(match data(theirs.1)? < data(ours.1)? {
                true => theirs,
                false => ours,
            })
        }
    }
}

/// The entries of the tree `id` (none for `None`) by name.
fn entries(
    repo: &gix::Repository,
    id: Option<ObjectId>,
) -> Result<BTreeMap<Vec<u8>, (EntryMode, ObjectId)>, SyncError> {
    let Some(id) = id else {
        return Ok(BTreeMap::new());
    };
    let tree = repo
        .find_tree(id)
        .map_err(|e| SyncError::Git(format!("cannot read the tree {id}: {e}")))?;
    let decoded = tree
        .decode()
        .map_err(|e| SyncError::Git(format!("cannot read the tree {id}: {e}")))?;
    Ok(decoded
        .entries
        .iter()
        .map(|e| (e.filename.to_vec(), (e.mode, e.oid.to_owned())))
        .collect())
}
