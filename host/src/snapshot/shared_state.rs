//! The bookkeeping of shared reads (`shared.rs`): what each member will read and has read,
//! the blobs held and for whom, what a read does next. No threads, no waiting: the caller holds
//! the lock and waits as [`Step`] says.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gix::ObjectId;

use super::EntryKind;
use super::runs::Counted;

/// How long an execution may read nothing before what is held for it is let go.
const STALLED: Duration = Duration::from_millis(500);

/// What a reader's read does next, as the batch's state says.
pub(super) enum Step {
    Ready(Arc<Vec<u8>>),
    Direct,
    /// Read it directly for the others too (its slot is open).
    Share,
    /// Wait for a change (at most this long).
    Wait(Option<Duration>),
    /// Look again (room was made).
    Again,
}

pub(super) struct State {
    consumers: Vec<Consumer>,
    /// Blobs being inflated or held, by entry index.
    slots: HashMap<usize, Slot>,
    /// Bytes held in `slots`.
    held: u64,
    /// The most bytes ever held at once.
    peak: u64,
    closed: bool,
}

struct Consumer {
    /// The entries it will read, ascending, as runs (a run over `**` expects one).
    expected: Counted,
    /// Position in `expected` of the next entry it reads: those before are passed.
    read: usize,
    /// Position in `expected` of the next entry the workers inflate for it (at least `read`).
    ahead: usize,
    joined: bool,
    left: bool,
    /// Read nothing for [`STALLED`] while others needed room: nothing is held for it.
    stalled: bool,
    /// When it last read.
    progress: Instant,
    /// How many slots wait for it.
    holds: usize,
}

impl Consumer {
    /// The entry it expects at position `at`.
    fn at(&self, at: usize) -> Option<usize> {
        self.expected.nth(at).map(|index| index as usize)
    }

    /// Whether it expects entry `index` at position `from` or after.
    fn expects_from(&self, from: usize, index: usize) -> bool {
        (u32::try_from(index).ok())
            .and_then(|index| self.expected.position(index))
            .is_some_and(|at| at >= from)
    }
}

struct Slot {
    /// The blob, once inflated (`None` while it is, or when it could not be).
    bytes: Option<Arc<Vec<u8>>>,
    done: bool,
    /// The consumers that will read it.
    waiting: Vec<usize>,
}

impl State {
    /// `expected[c]`: the entries (indices into `entries`) member `c` will read; submodules and
    /// empty blobs are left out (nothing to inflate).
    pub(super) fn new(expected: Vec<Counted>, entries: &super::Entries) -> Self {
        let now = Instant::now();
        let consumers = expected
            .into_iter()
            .map(|indices| {
                let inflated = indices.iter().filter(|&i| {
                    entries.get(i as usize).is_some_and(|e| {
                        e.kind != EntryKind::Submodule && e.id != ObjectId::empty_blob(e.id.kind())
                    })
                });
                Consumer {
                    expected: Counted::of_ascending(inflated),
                    read: 0,
                    ahead: 0,
                    joined: false,
                    left: false,
                    stalled: false,
                    progress: now,
                    holds: 0,
                }
            })
            .collect();
        Self {
            consumers,
            slots: HashMap::new(),
            held: 0,
            peak: 0,
            closed: false,
        }
    }

    /// Member `c` starts.
    pub(super) fn join(&mut self, c: usize) {
        let Some(consumer) = self.consumers.get_mut(c) else {
            return;
        };
        consumer.joined = true;
        consumer.progress = Instant::now();
        // What is being inflated or held for the others already is held for it too: a blob
        // opened before it joined is not inflated a second time for it.
        let mut holds = 0;
        for (index, slot) in &mut self.slots {
            if consumer.expects_from(0, *index) && !slot.waiting.contains(&c) {
                slot.waiting.push(c);
                holds += 1;
            }
        }
        consumer.holds += holds;
    }

    /// Member `c` finished: nothing is held for it any more.
    pub(super) fn leave(&mut self, c: usize) {
        if let Some(consumer) = self.consumers.get_mut(c) {
            consumer.left = true;
        }
        self.release_all(c);
    }

    /// The batch is over: nothing is held, nothing inflated any more.
    pub(super) fn close(&mut self) {
        self.closed = true;
        self.slots.clear();
        self.held = 0;
    }

    pub(super) fn is_closed(&self) -> bool {
        self.closed
    }

    /// The most bytes held at once.
    #[cfg(test)]
    pub(super) fn peak(&self) -> u64 {
        self.peak
    }

    /// Bytes held now.
    pub(super) fn held(&self) -> u64 {
        self.held
    }

    /// Whether a worker may find a blob to inflate and room to hold it: there is room, and a
    /// live member's read-ahead has not reached the end of what it expects.
    pub(super) fn may_claim(&self, budget: u64) -> bool {
        self.held < budget
            && !self.closed
            && self.consumers.iter().any(|c| {
                c.joined && !c.left && !c.stalled && c.ahead.max(c.read) < c.expected.len()
            })
    }

    /// Whether member `c` will still read entry `index` (it has not gone past it).
    pub(super) fn expects(&self, c: usize, index: usize) -> bool {
        self.consumers.get(c).is_some_and(|consumer| {
            consumer.joined && !consumer.left && consumer.expects_from(consumer.read, index)
        })
    }

    /// The blob at `index` is inflated (`None`: it could not be): held for those waiting.
    pub(super) fn finish(&mut self, index: usize, bytes: Option<Arc<Vec<u8>>>) {
        let Some(slot) = self.slots.get_mut(&index) else {
            return;
        };
        let size = bytes.as_ref().map_or(0, |b| b.len() as u64);
        slot.bytes = bytes;
        slot.done = true;
        let unwanted = slot.waiting.is_empty();
        self.held += size;
        self.peak = self.peak.max(self.held);
        if unwanted {
            self.drop_slot(index);
        }
    }

    /// What consumer `c` does to read entry `index`, at most `budget` bytes held.
    pub(super) fn step(&mut self, c: usize, index: usize, budget: u64) -> Step {
        let live = self.consumers.get(c).is_some_and(|c| c.joined && !c.left);
        if self.closed || !live {
            return Step::Direct;
        }
        self.pass(c, index);
        if self.consumers[c].at(self.consumers[c].read) != Some(index) {
            // Not what it said it would read: a blob held for others is still the blob.
            return match self.slots.get(&index).and_then(|s| s.bytes.clone()) {
                Some(bytes) => Step::Ready(bytes),
                None => Step::Direct,
            };
        }
        match self.slots.get_mut(&index) {
            Some(slot) if slot.done => {
                let bytes = slot.bytes.clone();
                self.consume(c, index);
                bytes.map_or(Step::Direct, Step::Ready)
            }
            Some(slot) => {
                if !slot.waiting.contains(&c) {
                    slot.waiting.push(c);
                    self.consumers[c].holds += 1;
                }
                Step::Wait(None)
            }
            None => self.unread(c, index, budget),
        }
    }

    /// [`State::step`] for a blob nobody inflated: read it directly, for the others too when
    /// there is room, or wait for a member behind that holds the room and still reads.
    fn unread(&mut self, c: usize, index: usize, budget: u64) -> Step {
        let others = self.awaiting(index, Some(c));
        if others.is_empty() {
            self.consume(c, index);
            return Step::Direct;
        }
        if self.held < budget {
            self.open(index, others);
            self.consume(c, index);
            return Step::Share;
        }
        let now = Instant::now();
        if let Some(until) = self.pace(c, index, now) {
            return Step::Wait(Some(until - now));
        }
        if self.release_stalled(c, now) {
            return Step::Again;
        }
        self.consume(c, index);
        Step::Direct
    }

    /// The live consumers (but `except`) that will read `index` and have not passed it.
    fn awaiting(&self, index: usize, except: Option<usize>) -> Vec<usize> {
        (0..self.consumers.len())
            .filter(|&d| Some(d) != except)
            .filter(|&d| {
                let c = &self.consumers[d];
                c.joined && !c.left && !c.stalled && c.expects_from(c.read, index)
            })
            .collect()
    }

    /// A slot for `index`, being inflated, for `waiting`.
    fn open(&mut self, index: usize, waiting: Vec<usize>) {
        for &d in &waiting {
            self.consumers[d].holds += 1;
        }
        let slot = Slot {
            bytes: None,
            done: false,
            waiting,
        };
        self.slots.insert(index, slot);
    }

    /// The next blob a worker inflates: the lowest next entry of the live consumers'
    /// read-aheads that no slot holds yet (slots on the way are taken on for them).
    pub(super) fn claim(&mut self, budget: u64) -> Option<usize> {
        if self.held >= budget {
            return None;
        }
        loop {
            let (c, index) = (0..self.consumers.len())
                .filter_map(|d| {
                    let c = &mut self.consumers[d];
                    if !c.joined || c.left || c.stalled {
                        return None;
                    }
                    c.ahead = c.ahead.max(c.read);
                    c.at(c.ahead).map(|index| (d, index))
                })
                .min_by_key(|&(_, index)| index)?;
            self.consumers[c].ahead += 1;
            match self.slots.get_mut(&index) {
                Some(slot) => {
                    if !slot.waiting.contains(&c) {
                        slot.waiting.push(c);
                        self.consumers[c].holds += 1;
                    }
                }
                None => {
                    let waiting = self.awaiting(index, None);
                    self.open(index, waiting);
                    return Some(index);
                }
            }
        }
    }

    /// Consumer `c` goes past every entry it expects before `index`.
    fn pass(&mut self, c: usize, index: usize) {
        loop {
            let consumer = &self.consumers[c];
            match consumer.at(consumer.read) {
                Some(next) if next < index => {
                    self.release(c, next);
                    self.consumers[c].read += 1;
                }
                _ => break,
            }
        }
    }

    /// Consumer `c` reads `index`, its next expected entry.
    fn consume(&mut self, c: usize, index: usize) {
        self.release(c, index);
        let consumer = &mut self.consumers[c];
        consumer.read += 1;
        consumer.progress = Instant::now();
        consumer.stalled = false;
    }

    /// Nothing at `index` is held for `c` any more.
    fn release(&mut self, c: usize, index: usize) {
        let Some(slot) = self.slots.get_mut(&index) else {
            return;
        };
        let Some(at) = slot.waiting.iter().position(|&d| d == c) else {
            return;
        };
        slot.waiting.swap_remove(at);
        self.consumers[c].holds -= 1;
        if slot.waiting.is_empty() && slot.done {
            self.drop_slot(index);
        }
    }

    /// Nothing at all is held for `c` any more.
    fn release_all(&mut self, c: usize) {
        let held: Vec<usize> = self
            .slots
            .iter()
            .filter(|(_, s)| s.waiting.contains(&c))
            .map(|(&index, _)| index)
            .collect();
        for index in held {
            self.release(c, index);
        }
    }

    fn drop_slot(&mut self, index: usize) {
        if let Some(slot) = self.slots.remove(&index) {
            let size = slot.bytes.as_ref().map_or(0, |b| b.len() as u64);
            self.held = self.held.saturating_sub(size);
        }
    }

    /// When `c`, at `index` with no room, should stop waiting for a consumer behind it that
    /// holds blobs and still reads (`None`: there is none).
    fn pace(&self, c: usize, index: usize, now: Instant) -> Option<Instant> {
        self.consumers
            .iter()
            .enumerate()
            .filter(|&(d, other)| {
                d != c
                    && other.joined
                    && !other.left
                    && !other.stalled
                    && other.holds > 0
                    && other.at(other.read).is_some_and(|at| at < index)
            })
            .map(|(_, other)| other.progress + STALLED)
            .filter(|&until| until > now)
            .min()
    }

    /// Let go of what is held for consumers (but `c`) that read nothing for [`STALLED`];
    /// whether any was.
    fn release_stalled(&mut self, c: usize, now: Instant) -> bool {
        let stalled: Vec<usize> = (0..self.consumers.len())
            .filter(|&d| {
                let other = &self.consumers[d];
                d != c && !other.stalled && other.holds > 0 && other.progress + STALLED <= now
            })
            .collect();
        for &d in &stalled {
            let other = &mut self.consumers[d];
            other.stalled = true;
            // Its read-ahead starts again from where it reads, when it reads again.
            other.ahead = other.read;
            self.release_all(d);
        }
        !stalled.is_empty()
    }
}
