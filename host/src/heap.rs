//! How the process's allocator holds memory it was given back.
//!
//! glibc's `malloc` serves a block of 128 KiB or more with its own mapping, returned to the
//! system when the block is freed, until such a block is freed: it then raises that
//! threshold to the freed block's size (up to 32 MiB), so that later blocks as large are carved
//! from its arenas instead, and freed memory stays there (one arena a thread). Inflated blobs,
//! listings and findings are such blocks, allocated on many threads: at 200,000 files a first
//! run's peak memory was a fifth larger than with the threshold held where it starts.
//! [`settle`] holds it there, which also holds the arenas' trimming where it starts.

/// Hold the allocator's thresholds where they start (see the module). Call it first in `main`,
/// before any thread starts; elsewhere than glibc it does nothing.
pub fn settle() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    glibc::hold_mmap_threshold();
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod glibc {
    /// The threshold glibc starts with (`M_MMAP_THRESHOLD`'s default).
    const MMAP_THRESHOLD: libc::c_int = 128 * 1024;

    #[allow(unsafe_code)]
    pub(super) fn hold_mmap_threshold() {
        // SAFETY: `mallopt` only sets a parameter of the allocator; it takes the allocator's
        // own lock. A refusal (0) leaves glibc's default, which is only more memory.
        let _ = unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD) };
    }
}
