//! Where a finding is, as the host reads it from the snapshot the finding was measured on: its
//! file's blob, its line, and that line's normalized content and rank among the identical lines
//! of the file (`lines.rs`).
//!
//! A finding has no place when it names no path or no line, when its path is not a file of the
//! snapshot (an artifact, a submodule), when its line is past the file's end, or when the blob
//! cannot be read: then its identity is the producer's fingerprint alone.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use gix::ObjectId;

use super::lines::{self, Content};
use crate::runtime::Finding;
use crate::snapshot::{EntryKind, Reader, Snapshot};

/// One finding's place in its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub path: String,
    /// The file's blob at the commit measured: two places in the same blob are in one version.
    pub blob: ObjectId,
    /// 1-based, as the finding says.
    pub line: u32,
    /// The sha256 of the line's normalized content.
    pub content: Content,
    /// How many earlier lines of the file have the same normalized content.
    pub rank: u32,
}

/// The lines read so far, by blob: the two sides of a comparison share most files, and a file
/// unchanged since the baseline is read once.
#[derive(Debug, Default)]
pub struct ReadLines {
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

/// The place of each of `findings` (by index) in `snapshot`; each file is read once, and not
/// at all when `read` has its lines already.
pub fn places(
    snapshot: &Snapshot,
    findings: &[Finding],
    read: &mut ReadLines,
) -> Vec<Option<Place>> {
    let mut wanted: BTreeMap<&str, BTreeSet<u32>> = BTreeMap::new();
    for finding in findings {
        if let (Some(path), Some(line)) = (&finding.path, finding.line) {
            wanted.entry(path).or_default().insert(line);
        }
    }
    let mut reader = snapshot.reader();
    let mut files: HashMap<&str, ObjectId> = HashMap::new();
    for (path, numbers) in wanted {
        let Some(entry) = snapshot
            .entry(path)
            .filter(|e| matches!(e.kind, EntryKind::Blob | EntryKind::Symlink))
        else {
            continue;
        };
        // An unreadable blob leaves its findings without a place: they are still compared, by
        // the producer's fingerprint.
        if read.get(&mut reader, (path, entry.id), numbers).is_some() {
            files.insert(path, entry.id);
        }
    }
    findings
        .iter()
        .map(|finding| {
            let (path, number) = (finding.path.as_deref()?, finding.line?);
            let blob = files.get(path)?;
            let line = read.by_blob.get(blob)?.found.get(&number)?;
            Some(Place {
                path: path.to_owned(),
                blob: *blob,
                line: number,
                content: line.content,
                rank: line.rank,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use discern_tests::TestRepo;

    fn finding(path: Option<&str>, line: Option<u32>) -> Finding {
        Finding {
            fingerprint: "p".into(),
            path: path.map(str::to_owned),
            line,
            column: None,
            severity: None,
            message: "TODO".into(),
        }
    }

    #[test]
    fn findings_are_placed_on_their_lines_and_the_unplaceable_are_not() {
        let repo = TestRepo::new();
        repo.write("a.rs", "// TODO\nfn a() {}\n  // TODO\n");
        let head = repo.commit("a");
        let snapshot = Snapshot::open(repo.path(), &head).unwrap();
        let findings = [
            finding(Some("a.rs"), Some(3)),
            finding(Some("a.rs"), Some(1)),
            finding(Some("a.rs"), Some(4)),
            finding(Some("a.rs"), None),
            finding(Some("target/report.txt"), Some(1)),
            finding(None, None),
        ];
        let mut read = ReadLines::default();
        let placed = places(&snapshot, &findings, &mut read);
        let first = placed[1].as_ref().unwrap();
        let third = placed[0].as_ref().unwrap();
        assert_eq!((first.line, first.rank), (1, 0));
        assert_eq!((third.line, third.rank), (3, 1));
        assert_eq!(first.content, third.content);
        assert_eq!(first.blob, third.blob);
        assert!(placed[2..].iter().all(Option::is_none), "{placed:?}");
        // A second list read through the same lines: the blob is known, and a copy of the file
        // under another path with other lines asked keeps the first path's lines answered.
        repo.write("b.rs", "// TODO\nfn a() {}\n  // TODO\n");
        let head = repo.commit("b");
        let snapshot = Snapshot::open(repo.path(), &head).unwrap();
        let both = [
            finding(Some("a.rs"), Some(3)),
            finding(Some("b.rs"), Some(1)),
        ];
        let again = places(&snapshot, &both, &mut read);
        assert_eq!(again[0].as_ref().map(|p| p.rank), Some(1));
        assert_eq!(again[1].as_ref().map(|p| p.rank), Some(0));
        assert_eq!(read.by_blob.len(), 1);
    }
}
