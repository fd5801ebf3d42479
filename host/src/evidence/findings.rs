//! An execution's findings, kept beside its evidence entry (`<entry>.findings`), so that a
//! reused reading explains itself as a fresh one does. Loaded only with the entry it belongs
//! to; an entry whose findings file is gone or damaged is a miss (measure again), never a
//! reading without its findings.
//!
//! Compact and binary (evidence format 4): a long list (100,000 findings, megabytes) is read
//! back at the speed of copying its strings, where JSON took several times that. The layout,
//! all integers little-endian, every string a `u32` length and UTF-8 bytes:
//!
//! ```text
//! MAGIC  u32 metrics
//!   per metric:  name  u64 dropped  u32 findings
//!     per finding:  fingerprint  u8 flags  [path]  [u32 line]  [u32 column]  message
//! ```
//!
//! `flags`: bit 0 a path, bit 1 a line, bit 2 a column follow; bits 3–4 the severity (0 none,
//! 1 error, 2 warning, 3 note). Anything else — a wrong magic, a short or long file, a string
//! that is not UTF-8 — reads as damaged.
//!
//! A reused entry's findings are read as [`Kept`]: the whole file checked, each finding decoded
//! only when asked for. A reading whose comparison is known to be empty needs its counts and
//! the first few findings a result shows, not a hundred thousand strings built and freed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::runtime::{Finding, Metric, Severity};

/// The first bytes of a findings file: its format and version.
const MAGIC: &[u8; 8] = b"dfind\x00\x00\x01";

const PATH: u8 = 1;
const LINE: u8 = 2;
const COLUMN: u8 = 4;

/// Where the findings of the entry at `entry` are kept.
pub(crate) fn path_of(entry: &Path) -> PathBuf {
    entry.with_extension("findings")
}

/// The findings of `metrics` as a findings file holds them; `None` when no metric has any.
pub fn encode(metrics: &[Metric]) -> std::io::Result<Option<Vec<u8>>> {
    let mut kept: Vec<&Metric> = metrics
        .iter()
        .filter(|m| !m.findings.is_empty() || m.findings_dropped > 0)
        .collect();
    if kept.is_empty() {
        return Ok(None);
    }
    kept.sort_by(|a, b| a.name.cmp(&b.name));
    let size: usize = kept
        .iter()
        .flat_map(|m| &m.findings)
        .map(|f| {
            32 + f.fingerprint.len() + f.message.len() + f.path.as_ref().map_or(0, String::len)
        })
        .sum();
    let mut out = Vec::with_capacity(MAGIC.len() + size + 64);
    out.extend_from_slice(MAGIC);
    put_len(&mut out, kept.len())?;
    for metric in kept {
        put_str(&mut out, &metric.name)?;
        out.extend_from_slice(&(metric.findings_dropped as u64).to_le_bytes());
        put_len(&mut out, metric.findings.len())?;
        for finding in &metric.findings {
            put_finding(&mut out, finding)?;
        }
    }
    Ok(Some(out))
}

fn put_finding(out: &mut Vec<u8>, finding: &Finding) -> std::io::Result<()> {
    put_str(out, &finding.fingerprint)?;
    let severity = match finding.severity {
        None => 0,
        Some(Severity::Error) => 1,
        Some(Severity::Warning) => 2,
        Some(Severity::Note) => 3,
    };
    let flag = |set: bool, bit: u8| if set { bit } else { 0 };
    let flags = flag(finding.path.is_some(), PATH)
        | flag(finding.line.is_some(), LINE)
        | flag(finding.column.is_some(), COLUMN)
        | (severity << 3);
    out.push(flags);
    if let Some(path) = &finding.path {
        put_str(out, path)?;
    }
    for number in [finding.line, finding.column].into_iter().flatten() {
        out.extend_from_slice(&number.to_le_bytes());
    }
    put_str(out, &finding.message)
}

fn put_len(out: &mut Vec<u8>, len: usize) -> std::io::Result<()> {
    let len = u32::try_from(len).map_err(std::io::Error::other)?;
    out.extend_from_slice(&len.to_le_bytes());
    Ok(())
}

fn put_str(out: &mut Vec<u8>, text: &str) -> std::io::Result<()> {
    put_len(out, text.len())?;
    out.extend_from_slice(text.as_bytes());
    Ok(())
}

/// A findings file checked whole, its findings decoded only when asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct Kept {
    bytes: Vec<u8>,
    /// Metric name → where its findings are in `bytes`.
    metrics: BTreeMap<String, Span>,
}

/// One metric's findings in a [`Kept`] file.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Span {
    dropped: usize,
    count: usize,
    /// The byte offset of its first finding.
    start: usize,
}

/// One metric's kept findings, still encoded.
#[derive(Debug, Clone, Copy, Default)]
pub struct Of<'k> {
    bytes: &'k [u8],
    dropped: usize,
    count: usize,
}

impl Kept {
    /// The findings file `bytes`, every finding checked (lengths, flags, UTF-8) but none
    /// decoded; `None` when it is damaged.
    pub fn parse(bytes: Vec<u8>) -> Option<Kept> {
        let mut input = Input(bytes.strip_prefix(MAGIC)?);
        let mut metrics = BTreeMap::new();
        for _ in 0..input.u32()? {
            let name = input.str()?.to_owned();
            let dropped = usize::try_from(input.u64()?).ok()?;
            let count = input.u32()? as usize;
            let start = bytes.len() - input.0.len();
            for _ in 0..count {
                input.parts()?;
            }
            let span = Span {
                dropped,
                count,
                start,
            };
            if metrics.insert(name, span).is_some() {
                return None;
            }
        }
        input.0.is_empty().then_some(Kept { bytes, metrics })
    }

    /// Metric `name`'s findings (none when the file holds none for it).
    pub fn of(&self, name: &str) -> Of<'_> {
        match self.metrics.get(name) {
            Some(span) => self.of_span(*span),
            None => Of::default(),
        }
    }

    fn of_span(&self, span: Span) -> Of<'_> {
        // `parse` checked every span against the bytes; one out of range anyway reads as no
        // bytes, where its `count` findings cannot be decoded: an error, never "none".
        Of {
            bytes: self.bytes.get(span.start..).unwrap_or_default(),
            dropped: span.dropped,
            count: span.count,
        }
    }

    /// Give each of `metrics` its findings, all decoded; `None` when they cannot be.
    pub fn fill(&self, metrics: &mut [Metric]) -> Option<()> {
        for metric in metrics {
            let of = self.of(&metric.name);
            metric.findings_dropped = of.dropped;
            metric.findings = of.first(of.count)?;
        }
        Some(())
    }
}

impl<'k> Of<'k> {
    /// How many findings are kept.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// How many the producer reported past its cap.
    pub fn dropped(&self) -> usize {
        self.dropped
    }

    /// The first `n` findings (all when there are fewer), decoded; `None` when they cannot be.
    pub fn first(&self, n: usize) -> Option<Vec<Finding>> {
        let mut input = Input(self.bytes);
        // Sized once: collected through `Option`, the list would grow by doubling (a quarter
        // of 100,000 findings' room left over, and a copy of it all at each step).
        let mut findings = Vec::with_capacity(n.min(self.count));
        for _ in 0..n.min(self.count) {
            findings.push(input.parts()?.finding());
        }
        Some(findings)
    }

    /// Whether `test` holds for every finding's path (`None` for a finding without one);
    /// `false` when a finding cannot be read.
    pub fn every_path(&self, mut test: impl FnMut(Option<&'k str>) -> bool) -> bool {
        let mut input = Input(self.bytes);
        (0..self.count).all(|_| input.skim().is_some_and(|(path, _)| test(path)))
    }

    /// Every finding, still encoded; `None` when one cannot be read.
    pub fn records(&self) -> Option<Vec<Record<'k>>> {
        self.iter().collect()
    }

    /// Every finding in order, still encoded, one at a time: an item is `None` where a finding
    /// cannot be read, and none follows it.
    pub fn iter(&self) -> RecordIter<'k> {
        RecordIter {
            input: Input(self.bytes),
            left: self.count,
        }
    }

    /// Whether the findings that name a file come in the order of their paths (a producer that
    /// reports file by file in listing order gives them so); `false` when one cannot be read.
    pub fn in_path_order(&self) -> bool {
        let mut last = None;
        self.every_path(|path| match path {
            None => true,
            Some(path) => last.replace(path).is_none_or(|last| last <= path),
        })
    }
}

/// The findings of an [`Of`], one at a time ([`Of::iter`]).
#[derive(Debug, Clone)]
pub struct RecordIter<'k> {
    input: Input<'k>,
    left: usize,
}

impl<'k> Iterator for RecordIter<'k> {
    type Item = Option<Record<'k>>;

    fn next(&mut self) -> Option<Self::Item> {
        self.left = self.left.checked_sub(1)?;
        let start = self.input.0;
        let record = self.input.skim().and_then(|(path, line)| {
            let bytes = start.get(..start.len() - self.input.0.len())?;
            Some(Record { bytes, path, line })
        });
        if record.is_none() {
            self.left = 0;
        }
        Some(record)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.left))
    }
}

/// One finding still encoded: its bytes, equal exactly when the findings are (the encoding is
/// one-to-one), its path, and whether it names a line.
#[derive(Debug, Clone, Copy)]
pub struct Record<'k> {
    bytes: &'k [u8],
    pub path: Option<&'k str>,
    pub line: bool,
}

impl Record<'_> {
    /// The finding; `None` when it cannot be read.
    pub fn decode(&self) -> Option<Finding> {
        Input(self.bytes).parts().map(Parts::finding)
    }

    /// Whether it is the same finding as `other`.
    pub fn same(&self, other: &Record) -> bool {
        self.bytes == other.bytes
    }
}

/// Findings encoded one after another as a findings file holds one metric's, without its
/// header: a group's part of a reading, remembered, cut and joined without being decoded
/// (`memo.rs`, `planner/grouped.rs`).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Records {
    count: usize,
    bytes: Vec<u8>,
}

impl Records {
    /// `findings`, encoded.
    pub(crate) fn encode(findings: &[Finding]) -> std::io::Result<Records> {
        let mut bytes = Vec::new();
        for finding in findings {
            put_finding(&mut bytes, finding)?;
        }
        Ok(Records {
            count: findings.len(),
            bytes,
        })
    }

    /// `bytes` read as `count` findings, each checked (lengths, flags, UTF-8) but none
    /// decoded; `None` when they are not exactly that.
    pub(crate) fn checked(bytes: Vec<u8>, count: usize) -> Option<Records> {
        let mut input = Input(&bytes);
        for _ in 0..count {
            input.parts()?;
        }
        input.0.is_empty().then_some(Records { count, bytes })
    }

    pub(crate) fn len(&self) -> usize {
        self.count
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The first `n` findings (all when there are fewer); `None` when they cannot be read.
    pub(crate) fn first(mut self, n: usize) -> Option<Records> {
        if n >= self.count {
            return Some(self);
        }
        let mut input = Input(&self.bytes);
        for _ in 0..n {
            input.parts()?;
        }
        let end = self.bytes.len() - input.0.len();
        self.bytes.truncate(end);
        self.count = n;
        Some(self)
    }

    /// Each finding, still encoded; `None` when one cannot be read.
    pub(crate) fn records(&self) -> Option<Vec<Record<'_>>> {
        let of = Of {
            bytes: &self.bytes,
            dropped: 0,
            count: self.count,
        };
        of.records()
    }

    /// `record` after these.
    pub(crate) fn push(&mut self, record: &Record) {
        self.count += 1;
        self.bytes.extend_from_slice(record.bytes);
    }
}

impl Kept {
    /// The findings file of `metrics` (name, dropped, the records of its parts in order), as
    /// [`encode`] writes one of the same findings: the records are copied once, into it, not
    /// joined first nor decoded. `None` when no metric has any.
    pub(crate) fn of_records(
        metrics: &[(&str, usize, &[&Records])],
    ) -> std::io::Result<Option<Kept>> {
        let count = |parts: &[&Records]| parts.iter().map(|r| r.count).sum::<usize>();
        let mut kept: Vec<&(&str, usize, &[&Records])> = metrics
            .iter()
            .filter(|(_, dropped, parts)| count(parts) > 0 || *dropped > 0)
            .collect();
        if kept.is_empty() {
            return Ok(None);
        }
        kept.sort_by(|a, b| a.0.cmp(b.0));
        let held = |parts: &[&Records]| parts.iter().map(|r| r.bytes.len()).sum::<usize>();
        let size: usize = kept.iter().map(|(_, _, parts)| held(parts) + 64).sum();
        let mut bytes = Vec::with_capacity(MAGIC.len() + size);
        bytes.extend_from_slice(MAGIC);
        put_len(&mut bytes, kept.len())?;
        let mut spans = BTreeMap::new();
        for (name, dropped, parts) in kept {
            put_str(&mut bytes, name)?;
            bytes.extend_from_slice(&(*dropped as u64).to_le_bytes());
            put_len(&mut bytes, count(parts))?;
            let span = Span {
                dropped: *dropped,
                count: count(parts),
                start: bytes.len(),
            };
            spans.insert((*name).to_owned(), span);
            for records in *parts {
                bytes.extend_from_slice(&records.bytes);
            }
        }
        Ok(Some(Kept {
            bytes,
            metrics: spans,
        }))
    }

    /// The file's bytes, as [`encode`] writes them.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// What is left to decode.
#[derive(Debug, Clone)]
struct Input<'a>(&'a [u8]);

/// One finding as it is encoded, its strings borrowed.
struct Parts<'a> {
    fingerprint: &'a str,
    path: Option<&'a str>,
    line: Option<u32>,
    column: Option<u32>,
    severity: Option<Severity>,
    message: &'a str,
}

impl Parts<'_> {
    fn finding(self) -> Finding {
        Finding {
            fingerprint: self.fingerprint.to_owned(),
            path: self.path.map(str::to_owned),
            line: self.line,
            column: self.column,
            severity: self.severity,
            message: self.message.to_owned(),
        }
    }
}

impl<'a> Input<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn str(&mut self) -> Option<&'a str> {
        let len = self.u32()? as usize;
        std::str::from_utf8(self.take(len)?).ok()
    }

    /// Skip a string (its UTF-8 was checked when the file was parsed).
    fn skip_str(&mut self) -> Option<()> {
        let len = self.u32()? as usize;
        self.take(len).map(drop)
    }

    /// The next finding's path and whether it names a line, the rest of it skipped: what
    /// [`Input::parts`] reads, where the file was parsed whole before.
    fn skim(&mut self) -> Option<(Option<&'a str>, bool)> {
        self.skip_str()?;
        let flags = *self.take(1)?.first()?;
        let path = match flags & PATH {
            0 => None,
            _ => Some(self.str()?),
        };
        let numbers = [LINE, COLUMN]
            .iter()
            .filter(|&&bit| flags & bit != 0)
            .count();
        self.take(4 * numbers)?;
        self.skip_str()?;
        Some((path, flags & LINE != 0))
    }

    fn parts(&mut self) -> Option<Parts<'a>> {
        let fingerprint = self.str()?;
        let flags = *self.take(1)?.first()?;
        let severity = match flags >> 3 {
            0 => None,
            1 => Some(Severity::Error),
            2 => Some(Severity::Warning),
            3 => Some(Severity::Note),
            _ => return None,
        };
        let path = match flags & PATH {
            0 => None,
            _ => Some(self.str()?),
        };
        let line = match flags & LINE {
            0 => None,
            _ => Some(self.u32()?),
        };
        let column = match flags & COLUMN {
            0 => None,
            _ => Some(self.u32()?),
        };
        Some(Parts {
            fingerprint,
            path,
            line,
            column,
            severity,
            message: self.str()?,
        })
    }
}

/// Write the encoded findings (`encode`) of the entry at `entry`.
pub(crate) fn write(entry: &Path, bytes: &[u8]) -> std::io::Result<()> {
    crate::fsutil::write_cache(&path_of(entry), bytes)
}

/// The findings kept for the entry at `entry`, or `None` when they are gone or damaged.
pub(crate) fn read(entry: &Path) -> Option<Kept> {
    Kept::parse(std::fs::read(path_of(entry)).ok()?)
}

#[cfg(test)]
mod tests;
