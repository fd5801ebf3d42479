//! A work tree's settled record: which racily clean entries of one index (named by its
//! checksum) were found, by their content, to hold exactly what the index records, and when
//! that settling started. `git status` refreshes a racily clean entry by rewriting the index
//! (taking `index.lock`, which could make an agent's own `git commit` fail at that moment);
//! discern never writes the index and keeps this record beside it instead, in the work tree's
//! own git folder (`.git/discern-settled`, `.git/worktrees/ID/discern-settled`), so that the
//! next walk trusts those entries' stat data as git trusts a refreshed entry.
//!
//! An entry is trusted only while the index is byte for byte the one settled (its checksum),
//! its `lstat` still matches the entry to the nanosecond (the walk checks that first), and its
//! ctime and mtime are at least [`MARGIN`] whole seconds older than the settling: any later
//! write to the file changes its ctime, so its stat no longer matches and it is read again.
//! A record that is missing, unreadable, of another index or malformed trusts nothing; writing
//! one is a best effort (a temporary file renamed into place, never half-written), and failing
//! to write it only costs the next walk the same reads.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use gix::ObjectId;
use gix::index::entry::Stat;

/// The record's first line; another version trusts nothing.
const MAGIC: &str = "discern settled v1";

/// Whole seconds a file's ctime and mtime must precede the settling: timestamps on coarse file
/// systems are rounded down (by up to two seconds), so a write just after the read could
/// otherwise look older than it.
pub(super) const MARGIN: u64 = 2;

/// The record's path for the work tree whose own git folder is `git_dir`.
pub(super) fn path(git_dir: &Path) -> PathBuf {
    git_dir.join("discern-settled")
}

/// Entries of one index settled unchanged by content, and when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Record {
    index: ObjectId,
    started: u64,
    bits: Vec<u64>,
}

impl Record {
    /// An empty record of the index with `checksum`, settled from `started` (seconds since
    /// the epoch) over `entries` entries.
    pub(super) fn new(checksum: ObjectId, started: u64, entries: usize) -> Self {
        Self {
            index: checksum,
            started,
            bits: vec![0; entries.div_ceil(64)],
        }
    }

    /// Seconds since the epoch now, for [`Record::new`]; `None` before 1970.
    pub(super) fn now() -> Option<u64> {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .ok()
            .map(|d| d.as_secs())
    }

    /// The record at `file` when it is of the index with `checksum` and `entries` entries.
    pub(super) fn load(file: &Path, checksum: ObjectId, entries: usize) -> Option<Self> {
        let text = std::fs::read_to_string(file).ok()?;
        let record = Self::parse(&text)?;
        (record.index == checksum && record.bits.len() == entries.div_ceil(64)).then_some(record)
    }

    fn parse(text: &str) -> Option<Self> {
        let mut lines = text.lines();
        (lines.next()? == MAGIC).then_some(())?;
        let index = ObjectId::from_hex(lines.next()?.strip_prefix("index ")?.as_bytes()).ok()?;
        let started = lines.next()?.strip_prefix("started ")?.parse().ok()?;
        let hex = lines.next()?;
        (hex.len() % 16 == 0 && lines.next().is_none()).then_some(())?;
        let bits = (0..hex.len() / 16)
            .map(|i| u64::from_str_radix(hex.get(i * 16..i * 16 + 16)?, 16).ok())
            .collect::<Option<Vec<u64>>>()?;
        Some(Self {
            index,
            started,
            bits,
        })
    }

    fn render(&self) -> String {
        let mut text = format!("{MAGIC}\nindex {}\nstarted {}\n", self.index, self.started);
        for word in &self.bits {
            text.push_str(&format!("{word:016x}"));
        }
        text.push('\n');
        text
    }

    /// Whether entry `index`, whose stat data is `stat` (and matches the file's), was settled
    /// unchanged long enough after its last write.
    pub(super) fn trusts(&self, index: usize, stat: &Stat) -> bool {
        let set = self
            .bits
            .get(index / 64)
            .is_some_and(|word| word & (1 << (index % 64)) != 0);
        let old = |secs: u32| u64::from(secs) + MARGIN <= self.started;
        set && old(stat.mtime.secs) && old(stat.ctime.secs)
    }

    /// Mark entry `index`, whose stat data is `stat`, settled unchanged by content; an entry
    /// written too close to the settling is not marked (it is read again next time).
    pub(super) fn mark(&mut self, index: usize, stat: &Stat) {
        let old = |secs: u32| u64::from(secs) + MARGIN <= self.started;
        if let Some(word) = self.bits.get_mut(index / 64)
            && old(stat.mtime.secs)
            && old(stat.ctime.secs)
        {
            *word |= 1 << (index % 64);
        }
    }

    /// Entries marked in either record (both of the same index): each was settled unchanged
    /// at some time after its last write, which is all [`Record::trusts`] needs.
    pub(super) fn union(mut self, other: &Self) -> Self {
        for (word, more) in self.bits.iter_mut().zip(&other.bits) {
            *word |= more;
        }
        self.started = self.started.max(other.started);
        self
    }

    /// Whether every entry `self` marks is marked in `other` too.
    pub(super) fn within(&self, other: &Self) -> bool {
        self.bits.iter().zip(&other.bits).all(|(a, b)| a & !b == 0)
    }

    /// Write the record to `file`: a temporary file in the same folder, renamed into place.
    /// A failure is ignored (the next walk reads those files again).
    pub(super) fn save(&self, file: &Path) {
        let Some(dir) = file.parent() else {
            return;
        };
        let Ok(mut temp) = tempfile::NamedTempFile::new_in(dir) else {
            return;
        };
        if temp.write_all(self.render().as_bytes()).is_ok() {
            let _ = temp.persist(file);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gix::index::entry::stat::Time;

    fn stat(secs: u32) -> Stat {
        let time = Time { secs, nsecs: 5 };
        Stat {
            mtime: time,
            ctime: time,
            ..Stat::default()
        }
    }

    fn checksum(byte: u8) -> ObjectId {
        ObjectId::from_bytes_or_panic(&[byte; 20])
    }

    #[test]
    fn a_record_trusts_only_marked_entries_written_before_the_margin() {
        let mut record = Record::new(checksum(1), 1_000, 130);
        record.mark(0, &stat(990));
        record.mark(129, &stat(998));
        // Written within the margin: not marked.
        record.mark(64, &stat(999));
        assert!(record.trusts(0, &stat(990)));
        assert!(record.trusts(129, &stat(998)));
        assert!(!record.trusts(64, &stat(990)));
        assert!(!record.trusts(1, &stat(990)));
        // The same entry rewritten since (a newer ctime): read again.
        assert!(!record.trusts(0, &stat(1_000)));
        let mut ctime_only = stat(990);
        ctime_only.ctime.secs = 1_001;
        assert!(!record.trusts(0, &ctime_only));
    }

    #[test]
    fn a_record_reads_back_only_for_its_own_index() {
        let dir = tempfile::tempdir().unwrap();
        let file = path(dir.path());
        let mut record = Record::new(checksum(7), 5_000, 70);
        record.mark(3, &stat(10));
        record.mark(69, &stat(10));
        record.save(&file);
        assert_eq!(Record::load(&file, checksum(7), 70), Some(record.clone()));
        assert_eq!(Record::load(&file, checksum(8), 70), None);
        assert_eq!(Record::load(&file, checksum(7), 200), None);
        for broken in [
            "",
            "discern settled v2\n",
            "discern settled v1\nindex 07\nstarted 1\n\n",
            &record.render().replace("started", "begun"),
            &format!("{}extra\n", record.render()),
            &record.render().replacen("00000", "0000g", 1),
        ] {
            std::fs::write(&file, broken).unwrap();
            assert_eq!(Record::load(&file, checksum(7), 70), None, "{broken:?}");
        }
    }

    #[test]
    fn a_union_keeps_both_records_marks() {
        let mut a = Record::new(checksum(1), 100, 10);
        a.mark(1, &stat(50));
        let mut b = Record::new(checksum(1), 200, 10);
        b.mark(2, &stat(150));
        assert!(!b.within(&a));
        let both = a.clone().union(&b);
        assert!(both.trusts(1, &stat(50)) && both.trusts(2, &stat(150)));
        assert!(a.within(&both) && b.within(&both));
    }
}
