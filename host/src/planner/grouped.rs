//! Built-ins whose reading is a sum over the files they read, run group by group: the entries
//! their `paths` match are cut into groups (about [`GROUPS`] of them, cut where a path's hash
//! says, so adding or deleting a file changes its own group only), the producer runs over each
//! group alone, and each group's part is remembered by the digest of the group's entries
//! (`evidence/memo.rs`). A new run runs only the groups whose entries changed and adds the
//! remembered parts of the others.
//!
//! It is exact or it is not used: a part is what the producer gives over those files alone,
//! which is their share of a whole run for these built-ins (each file's counts and findings
//! depend on that file alone, the findings come file by file in listing order, every metric is
//! a sum or, where [`MAXED`] says, a maximum). The findings are the parts' in order, cut where
//! a whole run cuts them (the producer's `max_findings`, then the host's cap), except a
//! maximum's, which names the file behind it: the finding of the part that holds the maximum
//! (the first such part, as a whole run names the first file by path); the read set is
//! the parts' reads and the listings matched on the whole snapshot. Anything else — a part that
//! listed other globs than `paths` or read outside its group, wrote to stderr, disagrees on its
//! metrics, a budget the parts together exceed — runs the execution whole instead.

use std::collections::HashSet;
use std::ops::Range;
use std::sync::Arc;

use super::Execution;

use crate::evidence::Store;
use crate::evidence::findings::{Kept, Records};
use crate::evidence::memo::{Part, PartMetric};
use crate::runtime::{
    Artifacts, MAX_FINDINGS, Metric, ProducerComponent, ReadSet, RunOutput, Runtime,
};
use crate::snapshot::runs::Counted;
use crate::snapshot::{Entries, EntryKind, Snapshot};

/// The built-ins whose every file's part depends on that file alone.
const GROUPED: &[&str] = &["builtin:pattern", "builtin:extent"];
/// Metrics that are the largest part rather than the sum of the parts.
const MAXED: &[(&str, &str)] = &[("builtin:extent", "max_lines")];
/// About how many groups the listed entries are cut into, up to [`MAX_SPREAD`] entries each:
/// each run pays a fixed cost per group, and a change runs its group again.
const GROUPS: usize = 64;
/// The longest a group gets, in spreads (see [`groups`]).
const LONGEST: usize = 2;
/// The fewest entries a group holds on average.
const MIN_SPREAD: u64 = 64;
/// The most entries a group holds on average: past `GROUPS * MAX_SPREAD` files there are more
/// groups, not longer ones, so a change of one file runs about this many again (at 200,000
/// files, 512 rather than 4,096; each more group costs a memo part read back, well under a
/// millisecond).
const MAX_SPREAD: u64 = 512;

/// Whether `execution` may run by groups.
pub(super) fn applies(execution: &Execution) -> bool {
    GROUPED.contains(&execution.producer.as_str())
        && execution.needs.is_empty()
        && execution.artifact.is_none()
}

/// A grouped run's output, and its findings kept encoded (`None`: it has none), as a reused
/// reading's are (`ExecutionOutcome::kept`).
pub(super) type Output = (RunOutput, Option<Kept>);

/// What one grouped run needs.
pub(super) struct Grouped<'a> {
    pub runtime: &'a Runtime,
    pub execution: &'a Execution,
    pub component: &'a ProducerComponent,
    pub snapshot: &'a Snapshot,
}

impl Grouped<'_> {
    /// The execution's output over the whole snapshot, from the parts `store` remembers and
    /// runs over the groups it does not; the new parts are remembered. `None` when that could
    /// differ from a whole run (the caller then runs it whole).
    pub(super) fn run(&self, store: &Store) -> Option<Output> {
        if !applies(self.execution) || !store.reads() || self.snapshot.is_worktree() {
            return None;
        }
        let cap = findings_cap(self.execution)?;
        let globs = listed_globs(self.execution)?;
        let spec = self.snapshot.pathspec(&globs).ok()?;
        let entries = self.snapshot.entries();
        // The matched entries' indices as runs (one over `**`); no listing has 4 billion
        // entries (one that did would run whole), so each fits in four bytes.
        u32::try_from(entries.len()).ok()?;
        let matching = (entries.iter().enumerate()).filter(|(_, e)| spec.matches(e.path()));
        let listed = Counted::of_ascending(matching.map(|(i, _)| i as u32));
        let groups = groups(entries, &listed);
        if groups.is_empty() {
            return None;
        }
        let mut memo = store.memo(&self.execution.identity);
        let keys: Vec<String> = groups
            .iter()
            .map(|g| key(entries, listed.places(g.clone())))
            .collect();
        let producer = self.execution.producer.as_str();
        let mut combined = Combined::new(cap, producer);
        let mut parts = Vec::with_capacity(groups.len());
        let mut ran = HashSet::new();
        for (group, key) in groups.iter().zip(&keys) {
            let need = cap.saturating_sub(combined.listed);
            let part = match memo.parts.remove(key) {
                Some(part)
                    if part.listings == [globs.clone()] && suffices(&part, need, producer) =>
                {
                    part
                }
                _ => {
                    ran.insert(key.clone());
                    let group: Vec<u32> = listed.places(group.clone()).collect();
                    self.part(&group, need, cap)?
                }
            };
            if part.listings != [globs.clone()] {
                return None;
            }
            combined.add((parts.len(), &part), need)?;
            parts.push(strip(part, need, producer));
        }
        let read_set = read_set(&parts, &groups, (&globs, &listed), self.snapshot)?;
        let output = combined.output(self, &parts, read_set)?;
        // The parts of the groups that ran are written, and those of groups gone removed: the
        // others are on disk as they were read.
        if !ran.is_empty() || !memo.parts.is_empty() {
            memo.parts = keys.into_iter().zip(parts).collect();
            store.save_memo(memo, &ran);
        }
        Some(output)
    }

    /// Run the producer over `group` alone, listing at most `need` findings (the whole run's
    /// room left); `None` when its part is not its share of a whole run (a failure, stderr, an
    /// artifact, a read outside the group).
    fn part(&self, group: &[u32], need: usize, cap: usize) -> Option<Part> {
        let restricted = self.snapshot.restricted_to(group);
        let config = match need < cap {
            true => with_max_findings(&self.execution.config, need)?,
            false => self.execution.config.clone(),
        };
        let output = self
            .runtime
            .run(
                self.component,
                &config,
                &restricted,
                Arc::new(Artifacts::new()),
                &self.execution.limits,
            )
            .ok()?;
        // A read of a path the group does not hold is a read outside it.
        let read_set = &output.read_set;
        if !output.stderr.is_empty() || !read_set.artifacts.is_empty() || read_set.read_absent() {
            return None;
        }
        Some(Part {
            metrics: output
                .metrics
                .into_iter()
                .map(PartMetric::new)
                .collect::<Option<_>>()?,
            reads: output.read_set.read_indices(),
            listings: output
                .read_set
                .listings
                .into_iter()
                .map(|l| l.globs)
                .collect(),
            fuel: output.fuel_consumed,
            room: need.min(cap),
        })
    }
}

/// Whether `producer`'s metric `name` is the largest part rather than the sum of the parts.
fn maxed(producer: &str, name: &str) -> bool {
    MAXED.contains(&(producer, name))
}

/// The findings a part listed, over all its summed metrics.
fn listed(part: &Part, producer: &str) -> usize {
    part.metrics
        .iter()
        .filter(|m| !maxed(producer, &m.name))
        .map(|m| m.kept + m.dropped)
        .sum()
}

/// Whether `part` gives the `need` findings a whole run lists from its group: it listed every
/// finding its group has (fewer than its room), or at least `need`, and holds those it kept;
/// and it holds its maximum's finding, which every run may need.
fn suffices(part: &Part, need: usize, producer: &str) -> bool {
    let held = |m: &PartMetric| m.kept == 0 || m.records.is_some();
    let maxima_held = part
        .metrics
        .iter()
        .filter(|m| maxed(producer, &m.name))
        .all(held);
    if need == 0 {
        return maxima_held;
    }
    let all_listed = listed(part, producer) < part.room || part.room >= need;
    all_listed && maxima_held && part.metrics.iter().all(held)
}

/// `part` as remembered: without the findings of its sums when the whole run needed none of
/// them (a maximum's finding is kept: a later run may find the maximum in this part).
fn strip(mut part: Part, need: usize, producer: &str) -> Part {
    if need == 0 {
        for metric in &mut part.metrics {
            if !maxed(producer, &metric.name) {
                metric.records = None;
            }
        }
    }
    part
}

/// The parts added so far, in order.
struct Combined<'a> {
    producer: &'a str,
    /// The producer's findings cap.
    cap: usize,
    /// The findings the whole run lists from the parts so far (at most `cap`).
    listed: usize,
    /// The findings kept (at most the host's cap), part by part: the index of the part in the
    /// run's parts, and its first findings where it gives only those (else all of its own).
    kept: Vec<(usize, Option<Records>)>,
    /// How many findings `kept` holds.
    kept_count: usize,
    /// The metric they belong to.
    column: Option<usize>,
    /// Each maximum's largest part so far (the first on a tie) and its findings, by column.
    maxima: std::collections::BTreeMap<usize, (f64, Records)>,
}

impl<'a> Combined<'a> {
    fn new(cap: usize, producer: &'a str) -> Self {
        Self {
            producer,
            cap,
            listed: 0,
            kept: Vec::new(),
            kept_count: 0,
            column: None,
            maxima: std::collections::BTreeMap::new(),
        }
    }

    /// Add the findings of `part`, the run's part number `at`, a whole run lists (`need` at
    /// most); `None` where more than one summed metric has findings, or a producer that lists
    /// none lists some.
    fn add(&mut self, (at, part): (usize, &Part), need: usize) -> Option<()> {
        self.add_maxima(part)?;
        let producer = self.producer;
        let mut with = part
            .metrics
            .iter()
            .enumerate()
            .filter(|(_, m)| !maxed(producer, &m.name) && m.kept + m.dropped > 0);
        let Some((column, metric)) = with.next() else {
            return Some(());
        };
        if with.next().is_some() || self.cap == 0 || *self.column.get_or_insert(column) != column {
            return None;
        }
        let take = need.min(metric.kept + metric.dropped);
        let room = MAX_FINDINGS.saturating_sub(self.kept_count).min(take);
        if room > 0 {
            let records = metric.records.as_ref()?;
            match records.len().cmp(&room) {
                std::cmp::Ordering::Less => return None,
                std::cmp::Ordering::Equal => self.kept.push((at, None)),
                std::cmp::Ordering::Greater => {
                    self.kept.push((at, Some(records.clone().first(room)?)));
                }
            }
            self.kept_count += room;
        }
        self.listed += take;
        Some(())
    }

    /// Keep the findings of each maximum `part` holds when it is larger than every part before
    /// it; `None` where a part names more than one file behind a maximum, or lost its finding.
    fn add_maxima(&mut self, part: &Part) -> Option<()> {
        let producer = self.producer;
        let maxima = part
            .metrics
            .iter()
            .enumerate()
            .filter(|(_, m)| maxed(producer, &m.name) && m.kept + m.dropped > 0);
        for (column, metric) in maxima {
            if metric.kept != 1 || metric.dropped != 0 {
                return None;
            }
            let records = metric.records.as_ref()?;
            let larger = self
                .maxima
                .get(&column)
                .is_none_or(|(most, _)| metric.value > *most);
            if larger {
                self.maxima.insert(column, (metric.value, records.clone()));
            }
        }
        Some(())
    }

    /// The records of the findings kept, in order: each part's own, or its first findings.
    fn kept_records<'p>(&'p self, parts: &'p [Part]) -> Option<Vec<&'p Records>> {
        let column = self.column;
        (self.kept.iter())
            .map(|(at, first)| match (first, column) {
                (Some(first), _) => Some(first),
                (None, Some(column)) => parts.get(*at)?.metrics.get(column)?.records.as_ref(),
                (None, None) => None,
            })
            .collect()
    }

    /// The whole run's output: the parts' sums (or maxima) and `read_set`, with the findings
    /// kept apart, still encoded (the metrics' own lists are empty).
    fn output(self, grouped: &Grouped, parts: &[Part], read_set: ReadSet) -> Option<Output> {
        let first = parts.first()?;
        let fuel: u64 = parts.iter().map(|p| p.fuel).sum();
        let same_shape = parts.iter().all(|p| {
            p.metrics.len() == first.metrics.len()
                && p.metrics
                    .iter()
                    .zip(&first.metrics)
                    .all(|(a, b)| a.name == b.name && a.counted == b.counted)
        });
        if !same_shape || fuel > grouped.execution.limits.fuel() {
            return None;
        }
        let producer = grouped.execution.producer.as_str();
        let mut metrics = Vec::with_capacity(first.metrics.len());
        for (column, head) in first.metrics.iter().enumerate() {
            let values = parts
                .iter()
                .filter_map(|p| p.metrics.get(column))
                .map(|m| m.value);
            let value = match MAXED.contains(&(producer, head.name.as_str())) {
                true => values.fold(head.value, f64::max),
                false => values.sum(),
            };
            let dropped = match self.column == Some(column) {
                true => self.listed.checked_sub(self.kept_count)?,
                false => 0,
            };
            metrics.push(Metric {
                name: head.name.clone(),
                value,
                findings: Vec::new(),
                findings_dropped: dropped,
                counted: head.counted,
            });
        }
        let kept = self.kept_records(parts)?;
        let mut columns: Vec<(&str, usize, &[&Records])> = match self.column {
            Some(column) => {
                let metric = metrics.get(column)?;
                vec![(metric.name.as_str(), metric.findings_dropped, &kept)]
            }
            None => Vec::new(),
        };
        let maxima: Vec<(usize, [&Records; 1])> = (self.maxima.iter())
            .map(|(column, (value, records))| {
                // The part that holds the maximum is the one whose finding names it.
                let metric = metrics.get(*column)?;
                let holds = metric.value == *value && self.column != Some(*column);
                holds.then_some((*column, [records]))
            })
            .collect::<Option<_>>()?;
        for (column, records) in &maxima {
            columns.push((metrics.get(*column)?.name.as_str(), 0, records));
        }
        let findings = Kept::of_records(&columns).ok()?;
        let output = RunOutput {
            read_set,
            stderr: String::new(),
            fuel_consumed: fuel,
            metrics,
        };
        Some((output, findings))
    }
}

/// `config` with `max_findings` set to `room` (a part run that lists only what a whole run
/// still keeps).
fn with_max_findings(config: &str, room: usize) -> Option<String> {
    let mut value: serde_json::Value = serde_json::from_str(config).ok()?;
    value
        .as_object_mut()?
        .insert("max_findings".to_owned(), serde_json::json!(room));
    serde_json::to_string(&value).ok()
}

/// The whole run's read set: every part's reads (each an entry of its group, by its place in
/// the group), and the listing of `globs`, which matched the entries `listed` of `snapshot`
/// (each group a stretch of them).
fn read_set(
    parts: &[Part],
    groups: &[Range<usize>],
    (globs, listed): (&[String], &Counted),
    snapshot: &Snapshot,
) -> Option<ReadSet> {
    let mut read_set = ReadSet::over(snapshot.shared_entries());
    for (part, group) in parts.iter().zip(groups) {
        for &at in &part.reads {
            // A read is a place in its group: one past the group is no read of it.
            let at = usize::try_from(at).ok().filter(|&at| at < group.len())?;
            read_set.record_entry(listed.nth(group.start + at)? as usize);
        }
    }
    read_set.record_listing(globs, listed.iter().map(|i| i as usize));
    Some(read_set.sealed())
}

/// The most findings the producer lists per metric: `builtin:pattern`'s `max_findings`, none
/// for the others (a part that lists any runs the execution whole).
fn findings_cap(execution: &Execution) -> Option<usize> {
    if execution.producer != "builtin:pattern" {
        return Some(0);
    }
    crate::builtins::pattern_findings_cap(&execution.config)
}

/// The globs the execution's config lists (`paths`, a string or a list), as the SDK reads them.
pub(super) fn listed_globs(execution: &Execution) -> Option<Vec<String>> {
    let config: serde_json::Value = serde_json::from_str(&execution.config).ok()?;
    let strings = match config.get("paths")? {
        serde_json::Value::String(one) => vec![one.clone()],
        serde_json::Value::Array(items) => items
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()?,
        _ => return None,
    };
    let usable = !strings.is_empty() && strings.iter().all(|s| !s.is_empty());
    usable.then_some(strings)
}

/// The `listed` entries (indices into `entries`) cut into groups, each a stretch of `listed`,
/// where a path's hash says: a group ends after an entry whose path hashes to 0 modulo the
/// spread, a power of two near `listed.len() / GROUPS` (within [`MIN_SPREAD`] and
/// [`MAX_SPREAD`]), or once it holds [`LONGEST`] spreads. Cut by hash alone, a group's
/// length would be geometric, and the group a changed file is in twice the spread long on
/// average (the long ones hold more files); the bound keeps re-running it short. A file added
/// or removed moves the cuts of its own stretch between two hash cuts only.
fn groups(entries: &Entries, listed: &Counted) -> Vec<Range<usize>> {
    let spread = ((listed.len() / GROUPS) as u64)
        .next_power_of_two()
        .clamp(MIN_SPREAD, MAX_SPREAD);
    let longest = usize::try_from(spread)
        .unwrap_or(usize::MAX)
        .saturating_mul(LONGEST);
    let mut groups = Vec::new();
    let mut start = 0;
    for (at, i) in listed.iter().enumerate() {
        let cut = entries
            .get(i as usize)
            .is_some_and(|e| fnv(e.path().as_bytes()).is_multiple_of(spread));
        if cut || at + 1 - start >= longest {
            groups.push(start..at + 1);
            start = at + 1;
        }
    }
    if start < listed.len() {
        groups.push(start..listed.len());
    }
    groups
}

/// FNV-1a: a fixed hash, the same in every process.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The digest of everything a producer sees of a group: each entry's path, blob id, mode.
fn key(entries: &Entries, group: impl Iterator<Item = u32>) -> String {
    let mut digest = crate::digest::Parts::default();
    for entry in group.filter_map(|i| entries.get(i as usize)) {
        let kind = match entry.kind {
            EntryKind::Blob => b'b',
            EntryKind::Symlink => b'l',
            EntryKind::Submodule => b's',
        };
        digest.part(&[entry.path().as_bytes()]);
        digest.part(&[entry.id.as_bytes(), &[kind, u8::from(entry.executable)]]);
    }
    digest.finish().hex()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::snapshot::Entry;

    #[test]
    fn a_group_boundary_moves_only_with_its_own_path() {
        let entry = |path: String| {
            Entry::new(
                &path,
                gix::ObjectId::null(gix::hash::Kind::Sha1),
                false,
                EntryKind::Blob,
            )
        };
        let all: Vec<Entry> = (0..5000)
            .map(|i| entry(format!("src/f{i:05}.rs")))
            .collect();
        let keys = |entries: &[Entry]| -> Vec<String> {
            let entries = &Entries::from(entries.to_vec());
            let listed = Counted::of_ascending(0..entries.len() as u32);
            let groups = groups(entries, &listed);
            assert!(groups.len() > 5 && groups.len() < 100, "{}", groups.len());
            let longest = groups.iter().map(ExactSizeIterator::len).max().unwrap_or(0);
            assert!(longest <= 128 * LONGEST, "a group of {longest}");
            let covered: Vec<u32> = groups
                .iter()
                .flat_map(Clone::clone)
                .map(|i| i as u32)
                .collect();
            assert!(
                covered.iter().copied().eq(listed.iter()),
                "the groups are the listing, in order, once"
            );
            groups
                .iter()
                .map(|g| key(entries, listed.places(g.clone())))
                .collect()
        };
        let mut fewer = all.clone();
        fewer.remove(2500);
        let (old, new) = (keys(&all), keys(&fewer));
        let kept = new.iter().filter(|k| old.contains(k)).count();
        assert!(kept + 2 >= old.len(), "{kept} of {} groups kept", old.len());
    }
}
