//! Judging the lines an MCP client sends over stdio, one line at a time, before the MCP
//! service sees them: which line goes to the service ([`Verdict::Forward`]), which the gate
//! answers itself ([`Verdict::Answer`], one JSON-RPC error), which gets no answer at all
//! ([`Verdict::Skip`]: a blank line, a notification or response the service could not read),
//! and how a batch is split ([`Verdict::Batch`]). Then, on the way back, which response
//! belongs to which request ([`ledger`]).
//!
//! Pure: no I/O, no MCP library. The binary's `mcp` frontend reads and writes the lines and
//! owns the session; this module lives in the library so that the fuzz target (`fuzz/`,
//! `mcp_line`) and the unit tests reach exactly the code the server runs.
//!
//! The rules: a line that is not UTF-8 or not JSON gets `-32700`; JSON that is not a request
//! (not an object, no `"jsonrpc": "2.0"` and string `method`, an `id` that is not a string
//! or an integer, a key given twice, a line over [`MAX_REQUEST`]) `-32600`. Every answer
//! carries the request's id where its bytes show one, even when the line cannot be parsed
//! (nested too deep, cut at the cap); `"id": null` only where none can be found;
//! `params` that is not an object, nesting deeper than [`MAX_DEPTH`] or a message the service
//! cannot read `-32602` with the request's id. Every answer quotes at most
//! [`crate::result::echo::MAX_ECHO`] bytes of any input, so an `id` or a progress token
//! longer than that (which a response must repeat whole) is refused.

mod batch;
pub mod ledger;
mod message;
mod scan;
mod unique;

use serde_json::{Value, json};

pub use batch::{MAX_BATCH, reads_batches};

/// How deep a request's JSON may nest.
pub const MAX_DEPTH: usize = 32;
/// The longest line the server sends (4 MiB).
pub const MAX_RESPONSE: usize = 4 << 20;
/// The longest line a client may send (8 MiB).
pub const MAX_REQUEST: usize = 8 << 20;

/// A request's id as the service reads it: `1e3` and `1000` are the same id.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Id {
    Number(i64),
    String(String),
}

impl Id {
    /// The id `value` stands for, as the service reads ids (an integer, or a string).
    pub fn read(value: &Value) -> Option<Self> {
        match value {
            Value::String(text) => Some(Self::String(text.clone())),
            Value::Number(n) => n
                .as_i64()
                .or_else(|| n.as_f64().and_then(integral))
                .map(Self::Number),
            _ => None,
        }
    }

    pub fn to_value(&self) -> Value {
        match self {
            Self::Number(n) => json!(n),
            Self::String(text) => json!(text),
        }
    }
}

/// The integer a float-form number stands for, where an `f64` holds it exactly.
fn integral(f: f64) -> Option<i64> {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    #[allow(clippy::cast_possible_truncation)]
    (f.fract() == 0.0 && f.abs() < EXACT).then_some(f as i64)
}

/// One message for the service.
#[derive(Debug, Clone, PartialEq)]
pub struct Forward {
    /// The message, as one line of JSON without the newline.
    pub text: String,
    /// The id its response will carry: `Some` for a request, `None` for a notification or a
    /// client's response (neither is answered).
    pub answer_to: Option<Id>,
    /// Whether it is `initialize` (its response names the negotiated revision).
    pub initialize: bool,
    /// The request it cancels (`notifications/cancelled`): the service sends no response to a
    /// cancelled request, so none is owed any more.
    pub cancels: Option<Id>,
}

/// What the gate decided about one line.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Nothing to send and nothing to answer.
    Skip,
    /// The gate's own answer: one JSON-RPC error.
    Answer(Value),
    /// Pass the message on to the service.
    Forward(Forward),
    /// A batch the session reads: one verdict per element (never a batch itself); the
    /// responses to its requests go back as one JSON array.
    Batch(Vec<Verdict>),
}

/// What the session knows when a line arrives.
#[derive(Debug, Clone, Copy, Default)]
pub struct Session<'a> {
    /// The revision `initialize` negotiated (what the server answered), once it has.
    pub revision: Option<&'a str>,
    /// Whether the service has left its handshake (`initialize` was forwarded, or a request
    /// was served): before, it reads only requests (a notification or a response then would
    /// end the session), so those are skipped.
    pub started: bool,
}

/// Whether the service can read a message (the MCP library's own decoding), and if not,
/// why. The frontend supplies it; a message the service could not read would be answered
/// without its id, or, for a notification, answered at all.
pub type Reads<'a> = &'a dyn Fn(&str) -> Result<(), String>;

/// A JSON-RPC error object for `id`, its message held to the echo bound.
pub fn error(id: Value, code: i64, message: &str) -> Value {
    let message = crate::result::echo::cut(message);
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}

/// Judge one line (without its newline) the client sent.
pub fn judge(line: &[u8], session: Session<'_>, reads: Reads<'_>) -> Verdict {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Skip;
    }
    // A line that cannot be read whole is answered with the id its bytes show, if they show
    // one (null only where none can be found: `scan`).
    let refuse = |code, text: &str| {
        Verdict::Answer(error(scan::id(line).unwrap_or(Value::Null), code, text))
    };
    if line.len() > MAX_REQUEST {
        let text = format!("invalid request: the request line is over {MAX_REQUEST} bytes");
        return refuse(-32600, &text);
    }
    let Ok(text) = std::str::from_utf8(line) else {
        return refuse(-32700, "parse error: the line is not UTF-8");
    };
    let value: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(e) => return refuse(-32700, &format!("parse error: {e}")),
    };
    // A key given twice leaves what the message means to the parser: refused. Its id is still
    // the client's to correlate by, unless the key given twice is `id` itself. In a batch, the
    // whole line is refused: its elements cannot be told apart by what they mean.
    if !unique::keys_unique(text) {
        return refuse(
            -32600,
            "invalid request: a key appears twice in the message",
        );
    }
    let line = text;
    match value {
        Value::Array(items) => batch::split(items, session, reads),
        value => message::judge(value, Some(line), session, reads),
    }
}

#[cfg(test)]
mod tests;
