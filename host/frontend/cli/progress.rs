//! Progress on stderr, only when stderr is a terminal: one line, rewritten in place.

use std::io::Write;
use std::sync::Mutex;

pub struct Progress {
    enabled: bool,
    width: Mutex<usize>,
}

impl Progress {
    pub fn new(enabled: bool) -> Self {
        Self {
            enabled,
            width: Mutex::new(0),
        }
    }

    pub fn step(&self, what: &str) {
        if !self.enabled {
            return;
        }
        let line = format!("discern: {what}");
        let mut width = self.width.lock().unwrap_or_else(|e| e.into_inner());
        let pad = width.saturating_sub(line.chars().count());
        let _ = write!(std::io::stderr(), "\r{line}{}", " ".repeat(pad));
        *width = line.chars().count();
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        let width = *self.width.lock().unwrap_or_else(|e| e.into_inner());
        if self.enabled && width > 0 {
            let _ = write!(std::io::stderr(), "\r{}\r", " ".repeat(width));
        }
    }
}
