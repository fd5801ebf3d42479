//! Published evidence in git: the ref [`REF`] holds a tree of signed bundles,
//! `<commit>/<identity key>/<bundle id>.{json,findings,sig,time}`: the entry, its findings (when
//! it has any), the signature, and when it was published (unsigned: it only says when
//! `discern sync --prune` may drop it). A bundle's id is the digest of its three signed-over
//! parts, so two clones that publish the same path publish the same bytes, and the union of two
//! trees never conflicts.

use std::collections::{BTreeMap, HashMap};

use gix::ObjectId;

use crate::digest::Digest;
use crate::evidence::bundle::Bundle;

/// The ref published evidence lives on.
pub const REF: &str = "refs/discern/evidence";
/// At most this many bundles are read for one identity on one commit (a flood is a miss, never
/// a slow run).
pub const MAX_BUNDLES: usize = 8;
/// The largest part read (an entry's findings of a very large reading fit well inside).
pub const MAX_PART: usize = 64 << 20;

/// One published bundle and the commit it was measured on.
#[derive(Debug, Clone)]
pub struct Found {
    pub commit: ObjectId,
    pub bundle: Bundle,
}

/// The folder of the bundles of `identity` measured on `commit`.
pub fn dir(commit: ObjectId, identity: &str) -> String {
    format!("{commit}/{}", crate::evidence::Store::key(identity))
}

/// A bundle's id: the digest of its entry, findings and signature.
pub fn bundle_id(bundle: &Bundle) -> Digest {
    Digest::of_parts(&[
        &bundle.entry,
        bundle.findings.as_deref().unwrap_or_default(),
        &bundle.signature,
    ])
}

/// The files of `bundle` published at `time` (seconds since the epoch): name → content, in
/// the bundle's folder.
pub fn files(bundle: &Bundle, time: u64) -> Vec<(String, Vec<u8>)> {
    let id = bundle_id(bundle).hex();
    let mut files = vec![
        (format!("{id}.json"), bundle.entry.clone()),
        (format!("{id}.sig"), bundle.signature.clone()),
        (format!("{id}.time"), format!("{time}\n").into_bytes()),
    ];
    if let Some(findings) = &bundle.findings {
        files.push((format!("{id}.findings"), findings.clone()));
    }
    files
}

/// The bundles the tree of `tip` holds for `commits`, by identity key. What cannot be read is
/// left out: a damaged or missing part is a miss, never an error.
pub fn read(
    repo: &gix::Repository,
    tip: ObjectId,
    commits: &[ObjectId],
) -> HashMap<String, Vec<Found>> {
    let mut found: HashMap<String, Vec<Found>> = HashMap::new();
    let Ok(root) = repo.find_commit(tip).and_then(|c| c.tree()) else {
        return found;
    };
    for &commit in commits {
        let Some(folder) = subtree(repo, &root, &commit.to_string()) else {
            continue;
        };
        for (key, id) in children(&folder) {
            let Ok(tree) = repo.find_tree(id) else {
                continue;
            };
            let bundles = bundles_in(repo, &tree);
            found
                .entry(key)
                .or_default()
                .extend(bundles.into_iter().map(|bundle| Found { commit, bundle }));
        }
    }
    found
}

fn subtree<'r>(
    repo: &'r gix::Repository,
    tree: &gix::Tree<'r>,
    path: &str,
) -> Option<gix::Tree<'r>> {
    let entry = tree.clone().peel_to_entry_by_path(path).ok()??;
    entry
        .mode()
        .is_tree()
        .then(|| repo.find_tree(entry.object_id()).ok())?
}

/// The (name, id) of each entry of `tree`.
fn children(tree: &gix::Tree<'_>) -> Vec<(String, ObjectId)> {
    tree.iter()
        .filter_map(Result::ok)
        .map(|e| (e.filename().to_string(), e.oid().to_owned()))
        .collect()
}

/// The complete bundles of one folder, at most [`MAX_BUNDLES`].
fn bundles_in(repo: &gix::Repository, tree: &gix::Tree<'_>) -> Vec<Bundle> {
    let mut parts: BTreeMap<String, BTreeMap<String, ObjectId>> = BTreeMap::new();
    for (name, id) in children(tree) {
        if let Some((stem, ext)) = name.rsplit_once('.') {
            parts
                .entry(stem.to_owned())
                .or_default()
                .insert(ext.to_owned(), id);
        }
    }
    parts
        .into_iter()
        .filter_map(|(stem, parts)| bundle(repo, &stem, &parts))
        .take(MAX_BUNDLES)
        .collect()
}

fn bundle(
    repo: &gix::Repository,
    stem: &str,
    parts: &BTreeMap<String, ObjectId>,
) -> Option<Bundle> {
    let read = |ext: &str| -> Option<Vec<u8>> {
        let blob = repo.find_blob(*parts.get(ext)?).ok()?;
        (blob.data.len() <= MAX_PART).then(|| blob.detach().data)
    };
    let findings = match parts.get("findings") {
        Some(_) => Some(read("findings")?),
        None => None,
    };
    let bundle = Bundle {
        entry: read("json")?,
        findings,
        signature: read("sig")?,
    };
    // A part under another bundle's name is not that bundle.
    (bundle_id(&bundle).hex() == stem).then_some(bundle)
}

/// Every published bundle in the tree of `tip` with its publication time: (the bundle's path
/// without extension, seconds since the epoch). A bundle whose time cannot be read is left out
/// (it is never pruned by mistake).
pub fn published_times(repo: &gix::Repository, tip: ObjectId) -> Vec<(String, u64)> {
    let Ok(root) = repo.find_commit(tip).and_then(|c| c.tree()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (commit, commit_tree) in children(&root) {
        let Ok(commit_tree) = repo.find_tree(commit_tree) else {
            continue;
        };
        for (key, key_tree) in children(&commit_tree) {
            let Ok(key_tree) = repo.find_tree(key_tree) else {
                continue;
            };
            for (name, id) in children(&key_tree) {
                let Some(stem) = name.strip_suffix(".time") else {
                    continue;
                };
                let time = repo
                    .find_blob(id)
                    .ok()
                    .and_then(|b| std::str::from_utf8(&b.data).ok()?.trim().parse().ok());
                if let Some(time) = time {
                    out.push((format!("{commit}/{key}/{stem}"), time));
                }
            }
        }
    }
    out
}
