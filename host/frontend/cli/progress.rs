//! Progress on stderr: on a terminal one line, rewritten in place; elsewhere (a CI log, an
//! agent's shell) one line per step for a long operation (`done`, `accept`, `test`, `await`),
//! so a call that takes a minute is never silent; nothing for the others.

use std::io::Write;
use std::sync::Mutex;

/// How the steps are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Off,
    InPlace,
    Lines,
}

pub struct Progress {
    mode: Mode,
    /// The width of the line drawn in place, or the last line printed (never twice in a row).
    last: Mutex<(usize, String)>,
}

impl Progress {
    /// `terminal`: stderr is a terminal; `long`: the verb is a long operation.
    pub fn new(terminal: bool, long: bool) -> Self {
        let mode = match (terminal, long) {
            (true, _) => Mode::InPlace,
            (false, true) => Mode::Lines,
            (false, false) => Mode::Off,
        };
        Self {
            mode,
            last: Mutex::new((0, String::new())),
        }
    }

    pub fn step(&self, what: &str) {
        let line = format!("discern: {what}");
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        match self.mode {
            Mode::Off => {}
            Mode::InPlace => {
                let pad = last.0.saturating_sub(line.chars().count());
                let _ = write!(std::io::stderr(), "\r{line}{}", " ".repeat(pad));
                last.0 = line.chars().count();
            }
            Mode::Lines if last.1 != line => {
                let _ = writeln!(std::io::stderr(), "{line}");
                last.1 = line;
            }
            Mode::Lines => {}
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        let width = self.last.lock().unwrap_or_else(|e| e.into_inner()).0;
        if self.mode == Mode::InPlace && width > 0 {
            let _ = write!(std::io::stderr(), "\r{}\r", " ".repeat(width));
        }
    }
}
