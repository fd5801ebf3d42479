//! The terminal channel: the owner answers yes or no to each item on an interactive terminal.
//! No default, nothing assumed: anything but `yes`/`y` or `no`/`n` asks again, and the end of
//! input approves nothing.

use std::io::{BufRead, Write};

/// Ask about each of `items`; `true` only if every one is answered yes.
pub(crate) fn ask_on_terminal(title: &str, items: &[String]) -> bool {
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{title}");
    items.iter().enumerate().all(|(n, item)| {
        let _ = writeln!(err, "  [{}/{}] {item}", n + 1, items.len());
        ask(&mut input, &mut err)
    })
}

fn ask(input: &mut impl BufRead, err: &mut impl Write) -> bool {
    loop {
        let _ = write!(err, "  Approve? (yes/no, no default): ");
        let _ = err.flush();
        let mut line = String::new();
        match input.read_line(&mut line) {
            Ok(0) | Err(_) => return false,
            Ok(_) => match line.trim().to_ascii_lowercase().as_str() {
                "y" | "yes" => return true,
                "n" | "no" => return false,
                _ => continue,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ask;

    #[test]
    fn only_an_explicit_yes_approves() {
        let answer = |text: &str| ask(&mut text.as_bytes(), &mut Vec::new());
        assert!(answer("yes\n"));
        assert!(answer("maybe\n\nY\n"));
        assert!(!answer("no\n"));
        assert!(!answer(""));
        assert!(!answer("maybe\n"));
    }
}
