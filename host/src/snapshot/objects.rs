//! The object store a snapshot's blobs are inflated from, opened afresh as reading goes on.
//!
//! gix maps each pack file whole, and every page a read touches stays resident for as long as
//! the store that mapped it lives. Reading every blob of a repository once then holds the whole
//! pack in the process's resident memory (at 200,000 files, about 560 MB: more than all else a
//! first run holds). So blobs are read through a store that is opened again after every
//! [`REMAP`] bytes inflated: the old one, and the pages it mapped, go when the last thread that
//! read from it takes the new one, at its next blob. The bytes are the same either way (blobs
//! are named by id); a store that cannot be opened again is kept, which only holds more memory.
//! The snapshot's trees are listed through the same store.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use gix::ObjectId;

/// Inflated bytes after which the store is opened again: a few tens of megabytes of pack, the
/// most a store holds mapped; opening one costs about a millisecond, and its pack index is
/// paged in again as lookups touch it. At 400,000 files 32 MiB held a first run's peak 6 MiB
/// lower than 64 at the same CPU time; 16 saved 2 MiB more for 1-2 % more CPU.
const REMAP: u64 = 32 << 20;

/// The store blobs are read from, and how much was inflated from it.
pub(crate) struct Objects {
    /// The repository the snapshot was taken in: its store lives as long as the repository is
    /// open, and with it every page it mapped, so blobs are read through a store of their own.
    origin: gix::ThreadSafeRepository,
    /// That store, opened when the snapshot's trees are listed through it (so the pack index
    /// pages a listing touches, nearly all of them, are mapped by this store alone).
    current: Mutex<Option<gix::ThreadSafeRepository>>,
    /// Bumped each time `current` is replaced: a handle of an older one takes the new one.
    generation: AtomicU64,
    inflated: AtomicU64,
}

impl Objects {
    pub(super) fn new(repo: &gix::ThreadSafeRepository) -> Arc<Self> {
        Arc::new(Self {
            origin: repo.clone(),
            current: Mutex::new(None),
            generation: AtomicU64::new(0),
            inflated: AtomicU64::new(0),
        })
    }

    /// A handle for one thread; `cache` is its object cache in bytes.
    pub(super) fn handle(self: &Arc<Self>, cache: usize) -> Handle {
        let (generation, repo) = self.current(cache);
        Handle {
            objects: Arc::clone(self),
            generation,
            repo,
            cache,
        }
    }

    fn current(&self, cache: usize) -> (u64, gix::Repository) {
        let mut current = self
            .current
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let store =
            current.get_or_insert_with(|| self.open().unwrap_or_else(|| self.origin.clone()));
        let mut repo = store.to_thread_local();
        repo.object_cache_size_if_unset(cache);
        (self.generation.load(Ordering::Acquire), repo)
    }

    /// The repository opened again, with a store of its own.
    fn open(&self) -> Option<gix::ThreadSafeRepository> {
        gix::ThreadSafeRepository::open_opts(self.origin.git_dir(), super::open_options()).ok()
    }

    /// Count `bytes` inflated; past each [`REMAP`], open the store again.
    fn inflated(&self, bytes: u64) {
        let before = self.inflated.fetch_add(bytes, Ordering::Relaxed);
        if before / REMAP == (before + bytes) / REMAP {
            return;
        }
        let Some(fresh) = self.open() else {
            return;
        };
        let mut current = self
            .current
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        *current = Some(fresh);
        self.generation.fetch_add(1, Ordering::AcqRel);
    }
}

/// One thread's way into [`Objects`].
pub(super) struct Handle {
    objects: Arc<Objects>,
    generation: u64,
    repo: gix::Repository,
    cache: usize,
}

impl Handle {
    /// The repository to read from: the current store's.
    pub(super) fn repo(&mut self) -> &gix::Repository {
        if self.objects.generation.load(Ordering::Acquire) != self.generation {
            (self.generation, self.repo) = self.objects.current(self.cache);
        }
        &self.repo
    }

    /// The content of blob `id`.
    pub(super) fn blob(&mut self, id: ObjectId) -> gix::Result<Vec<u8>> {
        let data = self.repo().find_blob(id)?.detach().data;
        self.objects.inflated(data.len() as u64);
        Ok(data)
    }
}
