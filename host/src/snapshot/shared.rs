//! Blobs inflated once per batch, for every execution that reads them.
//!
//! Before any producer runs, the planner knows which entries each execution of a batch will
//! read (the built-ins that read every file they list: the files their `paths` match). The
//! executions then share one read-ahead: worker threads inflate, in path order, the blobs the
//! running executions expect, each once, and hold each until every running execution that
//! expects it has read it, gone past it, or finished, within a byte budget. An execution that
//! reaches a blob nobody inflated yet reads it itself and leaves it for the others.
//!
//! Nobody waits on anybody for long. A reader waits for a blob being inflated (which always
//! ends), or, when the budget is full of blobs held for an execution behind it, for that one to
//! read on, while it does; an execution that has read nothing for [`STALLED`] is stalled: what
//! is held for it is let go, and it reads by itself until it reads again. The bytes handed over
//! are those of the blob the snapshot names by id, whoever inflated them (the reader checks the
//! id), so a producer sees exactly what it would read alone.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use gix::ObjectId;

use super::{Entry, EntryKind};

/// The most bytes of inflated blobs a batch holds (each thread may go over by one blob).
pub(crate) const BUDGET: u64 = 64 << 20;

/// How long an execution may read nothing before what is held for it is let go.
const STALLED: Duration = Duration::from_millis(500);

/// The most worker threads a batch starts.
const MAX_WORKERS: usize = 4;

/// The shared reads of one batch over one snapshot; dropping it stops its workers.
pub(crate) struct SharedReads {
    inner: Arc<Inner>,
}

/// One execution's part in the shared reads, from [`SharedReads::join`] until it is dropped
/// (the execution finished): nothing is held for it any more.
pub(crate) struct Member {
    share: Share,
}

/// What a snapshot read by a member carries to its readers.
#[derive(Clone)]
pub(super) struct Share {
    inner: Arc<Inner>,
    consumer: usize,
}

/// What a reader does for one blob.
pub(super) enum Take {
    /// The blob, inflated once for all.
    Ready(Arc<Vec<u8>>),
    /// Read it directly: nobody else is waiting for it (or there is no room to keep it).
    Direct,
    /// Read it directly, then hand it over with the ticket: others expect it.
    Share(Ticket),
}

/// A blob a reader inflates for the others too; dropped unfulfilled, the others read it
/// themselves.
pub(super) struct Ticket {
    inner: Arc<Inner>,
    index: usize,
    done: bool,
}

struct Inner {
    repo: gix::ThreadSafeRepository,
    tree: ObjectId,
    entries: Arc<[Entry]>,
    budget: u64,
    state: Mutex<State>,
    /// Signalled when a blob is ready, room is made, a member joins or leaves.
    changed: Condvar,
    /// Blobs inflated for the batch's members (by workers, or by readers directly).
    inflations: AtomicUsize,
}

struct State {
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
    /// The entries it will read, ascending.
    expected: Vec<usize>,
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

struct Slot {
    /// The blob, once inflated (`None` while it is, or when it could not be).
    bytes: Option<Arc<Vec<u8>>>,
    done: bool,
    /// The consumers that will read it.
    waiting: Vec<usize>,
}

impl SharedReads {
    /// Shared reads over the snapshot of `tree`: `expected[c]` are the entries (indices into
    /// `entries`) execution `c` will read. Submodules and empty blobs are left out.
    pub(super) fn new(
        (repo, tree): (gix::ThreadSafeRepository, ObjectId),
        entries: Arc<[Entry]>,
        expected: Vec<Vec<usize>>,
        budget: u64,
    ) -> Self {
        let now = Instant::now();
        let consumers = expected
            .into_iter()
            .map(|mut indices| {
                indices.retain(|&i| {
                    entries.get(i).is_some_and(|e| {
                        e.kind != EntryKind::Submodule && e.id != ObjectId::empty_blob(e.id.kind())
                    })
                });
                indices.sort_unstable();
                indices.dedup();
                Consumer {
                    expected: indices,
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
        let inner = Arc::new(Inner {
            repo,
            tree,
            entries,
            budget,
            state: Mutex::new(State {
                consumers,
                slots: HashMap::new(),
                held: 0,
                peak: 0,
                closed: false,
            }),
            changed: Condvar::new(),
            inflations: AtomicUsize::new(0),
        });
        for _ in 0..crate::cores::cores().clamp(1, MAX_WORKERS) {
            let inner = Arc::clone(&inner);
            let spawned = std::thread::Builder::new()
                .name("discern-shared-reads".to_owned())
                .spawn(move || inner.work());
            // Without a worker, every member reads by itself: slower, never different.
            if spawned.is_err() {
                break;
            }
        }
        Self { inner }
    }

    /// Execution `consumer` starts: from now on what it expects is held for it too.
    pub(crate) fn join(&self, consumer: usize) -> Member {
        let mut state = self.inner.lock();
        if let Some(c) = state.consumers.get_mut(consumer) {
            c.joined = true;
            c.progress = Instant::now();
        }
        self.inner.changed.notify_all();
        Member {
            share: Share {
                inner: Arc::clone(&self.inner),
                consumer,
            },
        }
    }

    /// How many blobs were inflated for the members, by workers or by themselves.
    #[cfg(test)]
    pub(crate) fn inflations(&self) -> usize {
        self.inner.inflations.load(Ordering::Relaxed)
    }

    /// The most bytes held at once.
    #[cfg(test)]
    pub(crate) fn peak(&self) -> u64 {
        self.inner.lock().peak
    }
}

impl Drop for SharedReads {
    fn drop(&mut self) {
        let mut state = self.inner.lock();
        state.closed = true;
        state.slots.clear();
        state.held = 0;
        self.inner.changed.notify_all();
    }
}

impl Member {
    /// What a snapshot of `tree` read by this member carries (`None` for another tree).
    pub(super) fn share(&self, tree: ObjectId) -> Option<Share> {
        (self.share.inner.tree == tree).then(|| self.share.clone())
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        let inner = &self.share.inner;
        let mut state = inner.lock();
        let consumer = self.share.consumer;
        if let Some(c) = state.consumers.get_mut(consumer) {
            c.left = true;
        }
        state.release_all(consumer);
        inner.changed.notify_all();
    }
}

impl Share {
    /// Whether the member will still read `path` (it has not gone past it), so the batch
    /// reads it ahead.
    pub(super) fn expects(&self, path: &str) -> bool {
        let inner = &self.inner;
        let Ok(index) = inner
            .entries
            .binary_search_by(|e| e.path.as_str().cmp(path))
        else {
            return false;
        };
        let state = inner.lock();
        state.consumers.get(self.consumer).is_some_and(|c| {
            c.joined
                && !c.left
                && c.expected[c.read.min(c.expected.len())..]
                    .binary_search(&index)
                    .is_ok()
        })
    }

    /// How the reader gets the blob `id` at `path`.
    pub(super) fn take(&self, path: &str, id: ObjectId) -> Take {
        let inner = &self.inner;
        let direct = || {
            inner.inflations.fetch_add(1, Ordering::Relaxed);
            Take::Direct
        };
        let Ok(index) = inner
            .entries
            .binary_search_by(|e| e.path.as_str().cmp(path))
        else {
            return direct();
        };
        if inner.entries[index].id != id {
            return direct();
        }
        let c = self.consumer;
        let mut state = inner.lock();
        loop {
            let Some(consumer) = state.consumers.get(c) else {
                return direct();
            };
            if state.closed || !consumer.joined || consumer.left {
                return direct();
            }
            state.pass(c, index);
            if state.consumers[c].expected.get(state.consumers[c].read) != Some(&index) {
                // Not what it said it would read: a blob held for others is still the blob.
                return match state.slots.get(&index).and_then(|s| s.bytes.clone()) {
                    Some(bytes) => Take::Ready(bytes),
                    None => direct(),
                };
            }
            let slot = state.slots.get_mut(&index);
            match slot {
                Some(slot) if slot.done => {
                    let bytes = slot.bytes.clone();
                    state.consume(c, index);
                    inner.changed.notify_all();
                    return bytes.map_or_else(direct, Take::Ready);
                }
                Some(slot) => {
                    if !slot.waiting.contains(&c) {
                        slot.waiting.push(c);
                        state.consumers[c].holds += 1;
                    }
                    state = inner.wait(state, None);
                }
                None => {
                    let others = state.awaiting(index, Some(c));
                    if others.is_empty() {
                        state.consume(c, index);
                        return direct();
                    }
                    if state.held < inner.budget {
                        state.open(index, others);
                        state.consume(c, index);
                        inner.inflations.fetch_add(1, Ordering::Relaxed);
                        return Take::Share(Ticket {
                            inner: Arc::clone(inner),
                            index,
                            done: false,
                        });
                    }
                    let now = Instant::now();
                    if let Some(until) = state.pace(c, index, now) {
                        state = inner.wait(state, Some(until - now));
                        continue;
                    }
                    if state.release_stalled(c, now) {
                        continue;
                    }
                    state.consume(c, index);
                    return direct();
                }
            }
        }
    }
}

impl Ticket {
    /// Hand the blob over (`None`: it could not be read; the others read it themselves).
    pub(super) fn fulfil(mut self, bytes: Option<Arc<Vec<u8>>>) {
        self.done = true;
        self.inner.finish(self.index, bytes);
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if !self.done {
            self.inner.finish(self.index, None);
        }
    }
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn wait<'a>(
        &self,
        state: MutexGuard<'a, State>,
        timeout: Option<Duration>,
    ) -> MutexGuard<'a, State> {
        match timeout {
            None => self
                .changed
                .wait(state)
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
            Some(timeout) => {
                self.changed
                    .wait_timeout(state, timeout)
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .0
            }
        }
    }

    /// The blob at `index` is inflated (or could not be): hand it to those waiting.
    fn finish(&self, index: usize, bytes: Option<Arc<Vec<u8>>>) {
        let mut state = self.lock();
        self.changed.notify_all();
        let Some(slot) = state.slots.get_mut(&index) else {
            return;
        };
        let size = bytes.as_ref().map_or(0, |b| b.len() as u64);
        slot.bytes = bytes;
        slot.done = true;
        let unwanted = slot.waiting.is_empty();
        state.held += size;
        state.peak = state.peak.max(state.held);
        if unwanted {
            state.drop_slot(index);
        }
        self.changed.notify_all();
    }

    /// One worker: inflate, in path order, what the members expect, while there is room.
    fn work(&self) {
        let mut repo = self.repo.to_thread_local();
        repo.object_cache_size_if_unset(0);
        loop {
            let mut state = self.lock();
            let claimed = loop {
                if state.closed {
                    return;
                }
                if state.held < self.budget
                    && let Some(index) = state.claim()
                {
                    break index;
                }
                state = self.wait(state, None);
            };
            drop(state);
            self.inflations.fetch_add(1, Ordering::Relaxed);
            let id = self.entries[claimed].id;
            // A panic in the object database must not leave a reader waiting: the reader then
            // reads the blob itself, and meets the same problem in its own thread.
            let inflated = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                repo.find_blob(id)
                    .ok()
                    .map(|blob| Arc::new(blob.detach().data))
            }))
            .ok()
            .flatten();
            self.finish(claimed, inflated);
        }
    }
}

impl State {
    /// The live consumers (but `except`) that will read `index` and have not passed it.
    fn awaiting(&self, index: usize, except: Option<usize>) -> Vec<usize> {
        (0..self.consumers.len())
            .filter(|&d| Some(d) != except)
            .filter(|&d| {
                let c = &self.consumers[d];
                c.joined
                    && !c.left
                    && !c.stalled
                    && c.expected[c.read.min(c.expected.len())..]
                        .binary_search(&index)
                        .is_ok()
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
    fn claim(&mut self) -> Option<usize> {
        loop {
            let (c, index) = (0..self.consumers.len())
                .filter_map(|d| {
                    let c = &mut self.consumers[d];
                    if !c.joined || c.left || c.stalled {
                        return None;
                    }
                    c.ahead = c.ahead.max(c.read);
                    c.expected.get(c.ahead).map(|&index| (d, index))
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
            match consumer.expected.get(consumer.read) {
                Some(&next) if next < index => {
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
                    && other.expected.get(other.read).is_some_and(|&at| at < index)
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
