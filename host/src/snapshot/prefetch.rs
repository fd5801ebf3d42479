//! Blobs inflated ahead of a producer's reads, on the other cores.
//!
//! A producer lists files and then, nearly always, reads them in listing order on its one
//! thread. Inflating a blob (zlib, delta chains) costs more than most producers spend on its
//! bytes, so once a producer reads the first listed file, worker threads inflate the next
//! ones in order, at most [`BUDGET`] bytes ahead of the reader. A read that is not the next
//! one (out of order, a file not listed, a second read of one file) is served directly, as
//! without prefetching; a producer that lists files without reading them (sizes only) starts
//! no worker. Each blob is the one the snapshot names by id: the bytes are the same either way.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use gix::ObjectId;

/// The most bytes inflated ahead of the reader (one larger blob is still inflated alone).
const BUDGET: u64 = 64 << 20;

/// The most worker threads one reader starts.
const MAX_WORKERS: usize = 4;

/// The read-ahead plan of one listing.
pub(super) struct Prefetch {
    shared: Arc<Shared>,
    /// Entry index (in the snapshot) → position in the plan.
    positions: HashMap<usize, usize>,
    started: bool,
}

struct Shared {
    objects: Arc<super::objects::Objects>,
    /// The planned blobs, in listing order, with their sizes.
    blobs: Vec<(ObjectId, u64)>,
    state: Mutex<State>,
    /// Signalled when a blob is ready (the reader waits) or room is made (workers wait).
    changed: Condvar,
}

#[derive(Default)]
struct State {
    /// The next position a worker inflates.
    next: usize,
    /// Positions before this one are behind the reader: never waited for, dropped if ready.
    consumed: usize,
    /// The positions being inflated (`None`), and inflated blobs not yet read (`Some`; its
    /// `None` when the worker could not read the blob: the reader then reads it directly and
    /// reports the error as it always does).
    slots: HashMap<usize, Option<Option<Arc<Vec<u8>>>>>,
    /// Bytes held in or reserved for `slots`.
    ahead: u64,
    cancelled: bool,
}

impl Prefetch {
    /// A plan over `listed` (entry index, blob id, size), in the order the producer sees them.
    /// Empty blobs and submodules are left out by the caller.
    pub(super) fn new(
        objects: Arc<super::objects::Objects>,
        listed: Vec<(usize, ObjectId, u64)>,
    ) -> Self {
        let positions = listed
            .iter()
            .enumerate()
            .map(|(position, (index, _, _))| (*index, position))
            .collect();
        let blobs = listed.into_iter().map(|(_, id, size)| (id, size)).collect();
        Self {
            shared: Arc::new(Shared {
                objects,
                blobs,
                state: Mutex::new(State::default()),
                changed: Condvar::new(),
            }),
            positions,
            started: false,
        }
    }

    /// The content of entry `index` if a worker inflated it; `None` means "read it directly".
    pub(super) fn take(&mut self, index: usize) -> Option<Arc<Vec<u8>>> {
        let position = *self.positions.get(&index)?;
        if !self.started {
            self.started = true;
            self.start(position);
        }
        let shared = &self.shared;
        let mut state = shared.lock();
        if position < state.consumed {
            return None;
        }
        state.skip_to(position, &shared.blobs);
        if position >= state.next {
            // Not claimed by a worker yet: the reader inflates it itself, the workers go on
            // after it.
            state.next = position + 1;
            state.consumed = position + 1;
            shared.changed.notify_all();
            return None;
        }
        loop {
            if let Some(Some(_)) = state.slots.get(&position) {
                let ready = state.slots.remove(&position).flatten().flatten();
                state.ahead = state.ahead.saturating_sub(shared.blobs[position].1);
                state.consumed = position + 1;
                shared.changed.notify_all();
                return ready;
            }
            state = shared
                .changed
                .wait(state)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }

    fn start(&self, from: usize) {
        {
            let mut state = self.shared.lock();
            state.next = from;
            state.consumed = from;
        }
        let workers = crate::cores::cores().min(MAX_WORKERS);
        for _ in 0..workers {
            let shared = Arc::clone(&self.shared);
            let spawned = std::thread::Builder::new()
                .name("discern-prefetch".to_owned())
                .spawn(move || shared.work());
            // Without a worker, every read is served directly: slower, never different.
            if spawned.is_err() {
                break;
            }
        }
    }
}

impl Drop for Prefetch {
    fn drop(&mut self) {
        let mut state = self.shared.lock();
        state.cancelled = true;
        state.slots.clear();
        self.shared.changed.notify_all();
    }
}

impl State {
    /// Drop what the reader passed without reading.
    fn skip_to(&mut self, position: usize, blobs: &[(ObjectId, u64)]) {
        let passed = blobs
            .iter()
            .enumerate()
            .take(position.min(self.next))
            .skip(self.consumed);
        for (skipped, (_, size)) in passed {
            if let Some(Some(_)) = self.slots.get(&skipped) {
                self.slots.remove(&skipped);
                self.ahead = self.ahead.saturating_sub(*size);
            }
        }
        self.consumed = self.consumed.max(position);
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// One worker: claim the next position while there is room, inflate it, hand it over.
    fn work(&self) {
        let mut objects = self.objects.handle(0);
        while let Some((position, id)) = self.claim() {
            // A panic in the object database must not leave the reader waiting: the reader
            // then reads the blob itself, and meets the same problem in its own thread.
            let inflated = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                objects.blob(id).ok().map(Arc::new)
            }))
            .ok()
            .flatten();
            let mut state = self.lock();
            if state.cancelled {
                return;
            }
            if position < state.consumed {
                // The reader went past it (and read it directly, or not at all).
                state.slots.remove(&position);
                state.ahead = state.ahead.saturating_sub(self.blobs[position].1);
            } else {
                state.slots.insert(position, Some(inflated));
            }
            self.changed.notify_all();
        }
    }

    fn claim(&self) -> Option<(usize, ObjectId)> {
        let mut state = self.lock();
        loop {
            if state.cancelled || state.next >= self.blobs.len() {
                return None;
            }
            let (id, size) = self.blobs[state.next];
            // Room for it, or nothing ahead at all (a blob larger than the budget).
            if state.ahead == 0 || state.ahead + size <= BUDGET {
                let position = state.next;
                state.next += 1;
                state.ahead += size;
                state.slots.insert(position, None);
                return Some((position, id));
            }
            state = self
                .changed
                .wait(state)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }
}
