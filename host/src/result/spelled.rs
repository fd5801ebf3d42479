//! The steps a message names in its prose (a report line, a refusal's way out, a diagnostic's
//! command), spelled for the surface of the call running on this thread. Spelling reads the
//! verb table, which sits above every room that writes such a message: the table sets the
//! spellers for each call it runs ([`within`]), and the rooms ask [`spell`].

use std::cell::Cell;

use super::Action;

/// How a step is spelled: a command line, or a tool call.
pub type Speller = fn(&Action) -> String;

/// The spellers of one call: for its own surface, and the command line (a step only the
/// owner takes at a terminal is a command line on every surface).
#[derive(Clone, Copy)]
pub struct Spellers {
    pub here: Speller,
    pub command_line: Speller,
}

thread_local! {
    static CURRENT: Cell<Option<Spellers>> = const { Cell::new(None) };
}

/// Run `work` on this thread with its steps spelled by `spellers`.
pub fn within<R>(spellers: Spellers, work: impl FnOnce() -> R) -> R {
    struct Restore(Option<Spellers>);
    impl Drop for Restore {
        fn drop(&mut self) {
            CURRENT.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(CURRENT.with(|c| c.replace(Some(spellers))));
    work()
}

/// `action` spelled for the surface of the call running on this thread.
pub fn spell(action: &Action) -> String {
    match CURRENT.with(Cell::get) {
        Some(spellers) => (spellers.here)(action),
        None => plain(action),
    }
}

/// `action` as a command line, whatever the surface (the owner's route at a terminal).
pub fn command_line(action: &Action) -> String {
    match CURRENT.with(Cell::get) {
        Some(spellers) => (spellers.command_line)(action),
        None => plain(action),
    }
}

/// Outside any call (a library caller, a unit test): every argument as a `--flag`.
fn plain(action: &Action) -> String {
    let mut words = vec!["discern".to_owned(), action.verb.clone()];
    for (name, value) in &action.arguments {
        let flag = format!("--{}", name.replace('_', "-"));
        match value {
            serde_json::Value::Bool(true) => words.push(flag),
            serde_json::Value::String(s) => words.push(format!("{flag} {s}")),
            other => words.push(format!("{flag} {other}")),
        }
    }
    words.join(" ")
}
