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

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use gix::ObjectId;

use super::objects::Objects;
use super::runs::Counted;
use super::shared_state::{State, Step};

/// The most bytes of inflated blobs a batch holds (each thread may go over by one blob).
pub(crate) const BUDGET: u64 = 16 << 20;

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
    /// The batch's entry after the last one this member asked about: a member reads in
    /// listing order, so the next is usually there (a reader's listing may be a part of the
    /// batch's, as a group's is, and its indices then differ).
    next: Arc<AtomicUsize>,
}

/// What a reader does for one blob.
pub(super) enum Take {
    /// The blob, inflated once for all.
    Ready(Arc<Vec<u8>>),
    /// Read it directly: nobody else is waiting for it (or there is no room to keep it).
    Direct,
    /// Read it directly, then hand it over with the ticket: others expect it.
    Share(Ticket),
    /// The blob is being inflated elsewhere: meanwhile inflate the ticket's (another the
    /// members expect next) and hand it over, then ask again. A reader that would wait works.
    Help(Ticket),
}

/// Who waits on the batch's state.
#[derive(Clone, Copy)]
enum Sleeper {
    Reader = 0,
    Worker = 1,
}

/// A blob a reader inflates for the others too; dropped unfulfilled, the others read it
/// themselves.
pub(super) struct Ticket {
    inner: Arc<Inner>,
    index: usize,
    done: bool,
}

struct Inner {
    objects: Arc<Objects>,
    tree: ObjectId,
    entries: super::Entries,
    budget: u64,
    state: Mutex<State>,
    /// Readers wait here for a blob being inflated, or for room: woken when a blob is ready,
    /// room is made, a member leaves.
    readers: Condvar,
    /// Workers wait here for a blob to inflate and room to hold it: woken when that may be so.
    workers: Condvar,
    /// How many wait on each (changed only with `state` locked): nobody is woken, and no
    /// system call made, when nobody waits.
    sleeping: [AtomicUsize; 2],
    /// Blobs inflated for the batch's members (by workers, or by readers directly).
    inflations: AtomicUsize,
}

impl SharedReads {
    /// Shared reads over the snapshot of `tree`: `expected[c]` are the entries (indices into
    /// `entries`) execution `c` will read. Submodules and empty blobs are left out.
    pub(super) fn new(
        (objects, tree): (Arc<Objects>, ObjectId),
        entries: super::Entries,
        expected: Vec<Counted>,
        budget: u64,
    ) -> Self {
        let state = State::new(expected, &entries);
        let inner = Arc::new(Inner {
            objects,
            tree,
            entries,
            budget,
            state: Mutex::new(state),
            readers: Condvar::new(),
            workers: Condvar::new(),
            sleeping: [AtomicUsize::new(0), AtomicUsize::new(0)],
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
        self.inner.lock().join(consumer);
        self.inner.wake(Sleeper::Worker, true);
        Member {
            share: Share {
                inner: Arc::clone(&self.inner),
                consumer,
                next: Arc::new(AtomicUsize::new(0)),
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
        self.inner.lock().peak()
    }
}

impl Drop for SharedReads {
    fn drop(&mut self) {
        self.inner.lock().close();
        self.inner.wake(Sleeper::Worker, true);
        self.inner.wake(Sleeper::Reader, true);
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
        inner.lock().leave(self.share.consumer);
        inner.wake(Sleeper::Worker, true);
        inner.wake(Sleeper::Reader, true);
    }
}

impl Share {
    /// Entry `index` of a reader's listing, `path`, in the batch's listing: the same index when
    /// the listings agree there, else found near the one after the last asked about
    /// ([`super::position_near`]).
    fn position(&self, index: usize, path: &str) -> Option<usize> {
        let entries = &self.inner.entries;
        let at = match entries.get(index).is_some_and(|e| *e.path() == *path) {
            true => index,
            false => super::position_near(entries, path, self.next.load(Ordering::Relaxed))?,
        };
        self.next.store(at + 1, Ordering::Relaxed);
        Some(at)
    }

    /// Whether the member will still read `path`, entry `index` of the reader's listing (it
    /// has not gone past it), so the batch reads it ahead.
    pub(super) fn expects(&self, index: usize, path: &str) -> bool {
        let Some(index) = self.position(index, path) else {
            return false;
        };
        self.inner.lock().expects(self.consumer, index)
    }

    /// How the reader gets the blob `id` at `path`, entry `index` of its listing.
    pub(super) fn take(&self, index: usize, path: &str, id: ObjectId) -> Take {
        let inner = &self.inner;
        let direct = || {
            inner.inflations.fetch_add(1, Ordering::Relaxed);
            Take::Direct
        };
        let Some(index) = self.position(index, path) else {
            return direct();
        };
        if inner.entries[index].id != id {
            return direct();
        }
        let (step, state) = match self.settle(inner.lock(), index) {
            Ok(settled) => settled,
            Err(help) => {
                inner.inflations.fetch_add(1, Ordering::Relaxed);
                return Take::Help(help);
            }
        };
        // What it went past may have made room for the workers, or let a reader ahead on.
        let room = state.may_claim(inner.budget);
        drop(state);
        inner.wake(Sleeper::Worker, room);
        inner.wake(Sleeper::Reader, true);
        match step {
            Step::Ready(bytes) => Take::Ready(bytes),
            Step::Share => {
                inner.inflations.fetch_add(1, Ordering::Relaxed);
                Take::Share(Ticket {
                    inner: Arc::clone(inner),
                    index,
                    done: false,
                })
            }
            Step::Direct | Step::Wait(_) | Step::Again => direct(),
        }
    }

    /// Step this member's read of entry `index` until it neither waits nor looks again: the
    /// step, or (while its blob is inflated elsewhere) another blob to inflate meanwhile.
    fn settle<'a>(
        &'a self,
        mut state: MutexGuard<'a, State>,
        index: usize,
    ) -> Result<(Step, MutexGuard<'a, State>), Ticket> {
        let inner = &self.inner;
        loop {
            match state.step(self.consumer, index, inner.budget) {
                Step::Wait(None) => match state.claim(inner.budget) {
                    Some(other) => {
                        return Err(Ticket {
                            inner: Arc::clone(inner),
                            index: other,
                            done: false,
                        });
                    }
                    None => state = inner.wait(Sleeper::Reader, state, None),
                },
                Step::Wait(timeout) => state = inner.wait(Sleeper::Reader, state, timeout),
                Step::Again => {}
                step => return Ok((step, state)),
            }
        }
    }
}

impl Ticket {
    /// The path and blob id of the entry to inflate.
    pub(super) fn entry(&self) -> (&str, ObjectId) {
        let entry = &self.inner.entries[self.index];
        (entry.path(), entry.id)
    }

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

    fn condvar(&self, who: Sleeper) -> &Condvar {
        match who {
            Sleeper::Reader => &self.readers,
            Sleeper::Worker => &self.workers,
        }
    }

    /// Wait as `who` for a change (at most `timeout`).
    fn wait<'a>(
        &self,
        who: Sleeper,
        state: MutexGuard<'a, State>,
        timeout: Option<Duration>,
    ) -> MutexGuard<'a, State> {
        let (condvar, sleeping) = (self.condvar(who), &self.sleeping[who as usize]);
        sleeping.fetch_add(1, Ordering::Relaxed);
        let state = match timeout {
            None => condvar
                .wait(state)
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
            Some(timeout) => {
                condvar
                    .wait_timeout(state, timeout)
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .0
            }
        };
        sleeping.fetch_sub(1, Ordering::Relaxed);
        state
    }

    /// Wake those waiting as `who`, when `changed` says a change may let them on and any
    /// waits. Called after the change was made under the lock: a waiter counted itself under
    /// the lock before it waited, so it is seen here or it saw the change.
    fn wake(&self, who: Sleeper, changed: bool) {
        if changed && self.sleeping[who as usize].load(Ordering::Relaxed) > 0 {
            self.condvar(who).notify_all();
        }
    }

    /// The blob at `index` is inflated (or could not be): hand it to those waiting.
    fn finish(&self, index: usize, bytes: Option<Arc<Vec<u8>>>) {
        let mut state = self.lock();
        let held = state.held();
        state.finish(index, bytes);
        // A blob nobody waits for any more is dropped as it is finished: no more room taken.
        let room = state.held() <= held && state.may_claim(self.budget);
        drop(state);
        self.wake(Sleeper::Reader, true);
        self.wake(Sleeper::Worker, room);
    }

    /// One worker: inflate, in path order, what the members expect, while there is room.
    fn work(&self) {
        let mut objects = self.objects.handle(0);
        loop {
            let mut state = self.lock();
            let claimed = loop {
                if state.is_closed() {
                    return;
                }
                if let Some(index) = state.claim(self.budget) {
                    break index;
                }
                state = self.wait(Sleeper::Worker, state, None);
            };
            drop(state);
            self.inflations.fetch_add(1, Ordering::Relaxed);
            let id = self.entries[claimed].id;
            // A panic in the object database must not leave a reader waiting: the reader then
            // reads the blob itself, and meets the same problem in its own thread.
            let inflated = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                objects.blob(id).ok().map(Arc::new)
            }))
            .ok()
            .flatten();
            self.finish(claimed, inflated);
        }
    }
}
