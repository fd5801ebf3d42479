//! The top-level `"id"` of a line the parser cannot read whole — nested too deep, cut at the
//! length cap, not UTF-8 elsewhere, a key given twice — found by one pass over its bytes that
//! builds nothing and recurses nowhere, so that the client that sent it gets its answer.
//! JSON-RPC allows `"id": null` only where the id cannot be detected.

use serde_json::Value;

use crate::result::echo::MAX_ECHO;

/// The id of the object `line` opens: a string (at most [`MAX_ECHO`] bytes, which an answer
/// can repeat) or a number. `None` when the line does not open an object, has no top-level
/// `"id"`, has it twice (which one is meant cannot be told), or its value is anything else.
/// A line cut short still gives an id that came before the cut.
pub(super) fn id(line: &[u8]) -> Option<Value> {
    let mut at = blank(line, 0);
    if line.get(at) != Some(&b'{') {
        return None;
    }
    at += 1;
    let (mut depth, mut key_next, mut found) = (1_usize, true, None);
    loop {
        at = blank(line, at);
        let Some(&byte) = line.get(at) else {
            return found;
        };
        match byte {
            b'"' if depth == 1 && key_next => {
                let Some(end) = string_end(line, at) else {
                    return found;
                };
                let is_id = key(&line[at..end]).as_deref() == Some("id");
                at = blank(line, end);
                if line.get(at) != Some(&b':') {
                    return found;
                }
                at = blank(line, at + 1);
                key_next = false;
                if is_id {
                    if found.is_some() {
                        return None;
                    }
                    let end = scalar_end(line, at)?;
                    found = Some(value(&line[at..end])?);
                    at = end;
                }
            }
            b'"' => match string_end(line, at) {
                Some(end) => at = end,
                None => return found,
            },
            b'{' | b'[' => (depth, at) = (depth + 1, at + 1),
            b'}' | b']' => {
                depth -= 1;
                at += 1;
                if depth == 0 {
                    return found;
                }
            }
            b',' => (key_next, at) = (key_next || depth == 1, at + 1),
            _ => at += 1,
        }
    }
}

/// The first byte at or after `at` that is not JSON whitespace.
fn blank(line: &[u8], mut at: usize) -> usize {
    while line
        .get(at)
        .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
    {
        at += 1;
    }
    at
}

/// Just past the string that opens at `at` (its closing quote), or `None` when the line ends
/// first.
fn string_end(line: &[u8], at: usize) -> Option<usize> {
    let mut i = at + 1;
    while let Some(&byte) = line.get(i) {
        match byte {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// A key as the parser reads it (escapes decoded), when it is valid JSON text.
fn key(quoted: &[u8]) -> Option<String> {
    if quoted.contains(&b'\\') {
        serde_json::from_slice(quoted).ok()
    } else {
        std::str::from_utf8(&quoted[1..quoted.len() - 1])
            .ok()
            .map(str::to_owned)
    }
}

/// Just past the string or number that starts at `at`; `None` for another kind of value, or
/// one the line cuts.
fn scalar_end(line: &[u8], at: usize) -> Option<usize> {
    match line.get(at)? {
        b'"' => string_end(line, at),
        b'-' | b'0'..=b'9' => {
            let len = line[at..]
                .iter()
                .position(|b| !matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))?;
            Some(at + len)
        }
        _ => None,
    }
}

/// The id a string or number token stands for, when an answer can repeat it.
fn value(token: &[u8]) -> Option<Value> {
    match serde_json::from_slice::<Value>(token).ok()? {
        Value::String(text) if text.len() > MAX_ECHO => None,
        id @ (Value::String(_) | Value::Number(_)) => Some(id),
        _ => None,
    }
}
