//! Where a finding is, as the host reads it from the snapshot the finding was measured on: its
//! file's blob, its line, and that line's normalized content and rank among the identical lines
//! of the file (`lines.rs`).
//!
//! A finding has no place when it names no path or no line, when its path is not a file of the
//! snapshot (an artifact, a submodule), when its line is past the file's end, or when the blob
//! cannot be read: then its identity is the producer's fingerprint alone.
//!
//! A file unchanged since the baseline is not read at first: the diff pairs its findings by line
//! alone. [`complete`] reads the lines of the few findings a result then shows.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use gix::ObjectId;

use super::lines;
use crate::runtime::Finding;
use crate::snapshot::{EntryKind, Reader, Snapshot};

/// One finding's place in its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Place {
    pub path: String,
    /// The file's blob at the commit measured: two places in the same blob are in one version.
    pub blob: ObjectId,
    /// 1-based, as the finding says.
    pub line: u32,
    /// The line's normalized content and rank; `None` while its file is unread.
    pub text: Option<lines::Line>,
}

/// The lines read so far, by blob: the two sides of a comparison share most files, and a file
/// unchanged since the baseline is read once.
#[derive(Debug, Default)]
pub(crate) struct ReadLines {
    by_blob: HashMap<ObjectId, Lines>,
}

/// The lines asked for in one blob, and what they are (a line past the end has no entry).
#[derive(Debug, Default)]
struct Lines {
    wanted: BTreeSet<u32>,
    found: HashMap<u32, lines::Line>,
}

impl ReadLines {
    /// The lines `wanted` of `path` (blob `blob`), read through `reader` unless known already;
    /// `None` when the blob cannot be read.
    fn get(
        &mut self,
        reader: &mut Reader,
        (path, blob): (&str, ObjectId),
        wanted: BTreeSet<u32>,
    ) -> Option<&Lines> {
        let known = self
            .by_blob
            .get(&blob)
            .is_some_and(|lines| wanted.is_subset(&lines.wanted));
        if !known {
            // What was asked of the same blob before stays answered (two paths, one content).
            let mut wanted = wanted;
            if let Some(before) = self.by_blob.remove(&blob) {
                wanted.extend(before.wanted);
            }
            let (_, content) = reader.read(path).ok()?;
            let found = lines::lines(&content, &wanted);
            self.by_blob.insert(blob, Lines { wanted, found });
        }
        self.by_blob.get(&blob)
    }
}

/// The place of each of `findings` (by index) in `snapshot`. A file for which `unread(path,
/// blob)` holds is not read (its places have no text); another is read once, and not at all
/// when `read` has its lines already.
pub(crate) fn places(
    snapshot: &Snapshot,
    findings: &[Finding],
    read: &mut ReadLines,
    unread: &dyn Fn(&str, ObjectId) -> bool,
) -> Vec<Option<Place>> {
    let all: Vec<usize> = (0..findings.len()).collect();
    places_at(snapshot, (findings, &all), read, unread)
}

/// [`places`] of the findings `indices` alone: every other finding's place is `None` (a
/// comparison that pairs a few files' findings reads and places those, not every finding).
pub(crate) fn places_at(
    snapshot: &Snapshot,
    (findings, indices): (&[Finding], &[usize]),
    read: &mut ReadLines,
    unread: &dyn Fn(&str, ObjectId) -> bool,
) -> Vec<Option<Place>> {
    let mut reader = snapshot.reader();
    let mut files: HashMap<&str, (ObjectId, bool)> = HashMap::new();
    for (path, numbers) in wanted(findings, indices.iter().copied()) {
        let Some(entry) = snapshot
            .entry(path)
            .filter(|e| matches!(e.kind, EntryKind::Blob | EntryKind::Symlink))
        else {
            continue;
        };
        if unread(path, entry.id) {
            files.insert(path, (entry.id, false));
        } else if read.get(&mut reader, (path, entry.id), numbers).is_some() {
            // An unreadable blob leaves its findings without a place: they are still compared,
            // by the producer's fingerprint.
            files.insert(path, (entry.id, true));
        }
    }
    let mut placed = vec![None; findings.len()];
    for &i in indices {
        placed[i] = place_of(&findings[i], &files, read);
    }
    placed
}

/// `finding`'s place, from the blobs of its file (`files`: read or not) and the lines read.
fn place_of(
    finding: &Finding,
    files: &HashMap<&str, (ObjectId, bool)>,
    read: &ReadLines,
) -> Option<Place> {
    let (path, number) = (finding.path.as_deref()?, finding.line?);
    let &(blob, is_read) = files.get(path)?;
    let text = match is_read {
        true => Some(*read.by_blob.get(&blob)?.found.get(&number)?),
        false => None,
    };
    Some(Place {
        path: path.to_owned(),
        blob,
        line: number,
        text,
    })
}

/// Read the lines of the findings `indices` whose files `places` left unread; a line past its
/// file's end leaves the finding without a place.
pub(crate) fn complete(
    snapshot: &Snapshot,
    (findings, places): (&[Finding], &mut [Option<Place>]),
    indices: &[usize],
    read: &mut ReadLines,
) {
    let unread: Vec<usize> = indices
        .iter()
        .copied()
        .filter(|&i| places[i].as_ref().is_some_and(|p| p.text.is_none()))
        .collect();
    let mut reader = snapshot.reader();
    for (path, numbers) in wanted(findings, unread.iter().copied()) {
        let blob = unread
            .iter()
            .find_map(|&i| places[i].as_ref().filter(|p| p.path == path))
            .map(|p| p.blob);
        if let Some(blob) = blob {
            read.get(&mut reader, (path, blob), numbers);
        }
    }
    for i in unread {
        let text = places[i]
            .as_ref()
            .and_then(|p| read.by_blob.get(&p.blob)?.found.get(&p.line).copied());
        match (text, places[i].as_mut()) {
            (Some(text), Some(place)) => place.text = Some(text),
            _ => places[i] = None,
        }
    }
}

/// The lines each file's findings among `indices` name, by path.
fn wanted(
    findings: &[Finding],
    indices: impl Iterator<Item = usize>,
) -> BTreeMap<&str, BTreeSet<u32>> {
    let mut wanted: BTreeMap<&str, BTreeSet<u32>> = BTreeMap::new();
    for i in indices {
        if let (Some(path), Some(line)) = (&findings[i].path, findings[i].line) {
            wanted.entry(path).or_default().insert(line);
        }
    }
    wanted
}

#[cfg(test)]
mod tests;
