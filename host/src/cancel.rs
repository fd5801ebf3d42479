//! Cancellation: a client that gives up on a call (MCP `notifications/cancelled`, a CLI
//! Ctrl-C) stops its work. The frontend runs a call inside [`Cancel::scope`]; the measurement checks between
//! producers and a running job's process group is killed, so nothing keeps running for a
//! caller that left. A transaction already in flight is not interrupted: it finishes (or is
//! unwound by recovery), never left half-way.

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// One call's cancellation flag.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

thread_local! {
    static CURRENT: RefCell<Option<Cancel>> = const { RefCell::new(None) };
}

impl Cancel {
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// The flag itself, for a signal handler to set (a CLI Ctrl-C).
    pub fn flag(&self) -> Arc<AtomicBool> {
        self.0.clone()
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    /// Run `work` on this thread as the call this flag cancels.
    pub fn scope<R>(&self, work: impl FnOnce() -> R) -> R {
        let previous = CURRENT.with(|c| c.replace(Some(self.clone())));
        let result = work();
        CURRENT.with(|c| *c.borrow_mut() = previous);
        result
    }
}

/// The flag of the call running on this thread, if it runs in a scope.
pub fn current() -> Option<Cancel> {
    CURRENT.with(|c| c.borrow().clone())
}

/// Whether the call running on this thread was cancelled.
pub fn requested() -> bool {
    current().is_some_and(|c| c.is_cancelled())
}

/// What a step that did not run because of a cancellation says.
pub const CANCELLED: &str = "cancelled: the caller cancelled the request before this ran";
