//! One read per blob per batch: the executions of a wave that read the same files, as many as
//! run at once, share their reads, each blob inflated once and handed to each of them
//! (`snapshot/shared.rs`).
//!
//! Sharing needs to know, before a producer runs, what it will read. The built-ins that read
//! every non-empty file they list, and list what their `paths` match, say so by their config;
//! any other producer reads by itself, with its own read-ahead, as it always did. The bytes a
//! producer gets are the same either way: only who inflated them differs.

use super::{Execution, Plan};
use crate::snapshot::runs::Counted;
use crate::snapshot::{self, Member, SharedReads, Snapshot};

/// The built-ins that read every non-empty file their `paths` match, in path order.
const READ_ALL_THEY_LIST: &[&str] = &["builtin:pattern", "builtin:extent"];

/// The shared reads of one wave, when at least two of its executions read files.
pub(super) struct Batch {
    reads: Option<SharedReads>,
    /// Per execution of the plan: its place among the members.
    member: Vec<Option<usize>>,
}

impl Batch {
    /// The shared reads of the executions of `plan` that `run` says run now, over `snapshot`,
    /// `threads` at a time: the first `threads` that read files share their reads (they start
    /// together); the others read alone, as they would start after some of them finished. None
    /// on a verifying snapshot (what runs after jobs reads alone, hashing each blob).
    pub(super) fn new(plan: &Plan, snapshot: &Snapshot, run: &[bool], threads: usize) -> Self {
        let mut member = vec![None; plan.executions.len()];
        let mut expected = Vec::new();
        if !snapshot.is_verifying() {
            let running = plan.executions.iter().zip(run).enumerate();
            for (at, (execution, _)) in running.filter(|(_, (_, run))| **run) {
                if expected.len() == threads {
                    break;
                }
                if let Some(entries) = expected_reads(execution, snapshot) {
                    member[at] = Some(expected.len());
                    expected.push(entries);
                }
            }
        }
        if expected.len() < 2 {
            return Self {
                reads: None,
                member: vec![None; plan.executions.len()],
            };
        }
        Self {
            reads: Some(snapshot.shared_reads(expected, snapshot::BUDGET)),
            member,
        }
    }

    /// Execution `at` starts: its part in the shared reads, if it has one.
    pub(super) fn join(&self, at: usize) -> Option<Member> {
        let member = self.member.get(at).copied().flatten()?;
        Some(self.reads.as_ref()?.join(member))
    }

    /// The order to start the executions in: those that share their reads first, so that they
    /// run together (no more than the cores at once: more would stretch each one's wall time
    /// towards its timeout).
    pub(super) fn order(&self) -> Vec<usize> {
        let (mut sharing, others): (Vec<usize>, Vec<usize>) =
            (0..self.member.len()).partition(|&at| self.member[at].is_some());
        sharing.extend(others);
        sharing
    }
}

/// The entries `execution` will read (indices into `snapshot.entries()`), when its producer
/// says so by its config.
fn expected_reads(execution: &Execution, snapshot: &Snapshot) -> Option<Counted> {
    if !READ_ALL_THEY_LIST.contains(&execution.producer.as_str()) || execution.component.is_err() {
        return None;
    }
    let globs = super::grouped::listed_globs(execution)?;
    let spec = snapshot.pathspec(&globs).ok()?;
    let entries = snapshot.entries();
    // No listing has 4 billion entries (one that did would not be shared), so every index of
    // one fits in four bytes.
    u32::try_from(entries.len()).ok()?;
    let matching = (entries.iter().enumerate()).filter(|(_, e)| spec.matches(e.path()));
    // As runs of consecutive entries (one over `**`), not four bytes an entry.
    Some(Counted::of_ascending(matching.map(|(at, _)| at as u32)))
}
