//! The elicitation channel's seam. A frontend that can ask the owner itself (the MCP server,
//! through `elicitation/create`) runs a call inside [`scope`]; the approval step asks through
//! [`current`]. Like a terminal prompt this is a convenience, never the boundary: an agent that
//! runs its own MCP client answers its own questions, so only the interactive policy uses it.

use std::cell::RefCell;
use std::sync::Arc;

/// Asks the owner one yes/no question per item.
pub trait Asker: Send + Sync {
    /// `Some(true)` only when every item was answered yes; `Some(false)` for any no, a
    /// decline, a cancel or an error; `None` when this client cannot be asked at all.
    fn ask(&self, title: &str, items: &[String]) -> Option<bool>;
}

thread_local! {
    static CURRENT: RefCell<Option<Arc<dyn Asker>>> = const { RefCell::new(None) };
}

/// Run `work` on this thread with `asker` as the way to ask the owner.
pub fn scope<R>(asker: Arc<dyn Asker>, work: impl FnOnce() -> R) -> R {
    let previous = CURRENT.with(|c| c.replace(Some(asker)));
    let result = work();
    CURRENT.with(|c| *c.borrow_mut() = previous);
    result
}

/// The asker of the call running on this thread, if its frontend can ask.
pub fn current() -> Option<Arc<dyn Asker>> {
    CURRENT.with(|c| c.borrow().clone())
}
