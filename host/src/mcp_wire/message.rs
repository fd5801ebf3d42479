//! One JSON-RPC message (a line, or one element of a batch): forwarded, answered, or skipped.

use serde_json::{Map, Value, json};

use super::{Forward, Id, MAX_DEPTH, Reads, Session, Verdict, error};
use crate::result::echo::MAX_ECHO;

fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// The message's id: `Ok(None)` when it has none, `Err` with the refusal when it has one the
/// service cannot read or an answer cannot repeat.
fn id_of(message: &Map<String, Value>) -> Result<Option<Id>, Verdict> {
    let Some(raw) = message.get("id") else {
        return Ok(None);
    };
    if raw.as_str().is_some_and(|text| text.len() > MAX_ECHO) {
        let text = format!("invalid request: an `id` over {MAX_ECHO} bytes cannot be answered");
        return Err(Verdict::Answer(error(Value::Null, -32600, &text)));
    }
    match Id::read(raw) {
        Some(id) => Ok(Some(id)),
        None => {
            let text = "invalid request: `id` must be a string or an integer";
            // A number the service cannot take is still the client's id to correlate by.
            let shown = if raw.is_number() {
                raw.clone()
            } else {
                Value::Null
            };
            Err(Verdict::Answer(error(shown, -32600, text)))
        }
    }
}

/// `answer` to a request; nothing to a notification, however malformed.
fn refuse(id: Option<Id>, code: i64, text: &str) -> Verdict {
    match id {
        Some(id) => Verdict::Answer(error(id.to_value(), code, text)),
        None => Verdict::Skip,
    }
}

fn is_request(message: &Map<String, Value>) -> bool {
    message.get("method").is_some_and(Value::is_string)
}

/// A progress token an answer (each progress notification) would repeat whole.
fn token_too_long(message: &Map<String, Value>) -> bool {
    message
        .get("params")
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get("progressToken"))
        .and_then(Value::as_str)
        .is_some_and(|token| token.len() > MAX_ECHO)
}

/// The request a `notifications/cancelled` names.
fn cancelled(message: &Map<String, Value>) -> Option<Id> {
    if message.get("method")? != "notifications/cancelled" || message.contains_key("id") {
        return None;
    }
    Id::read(message.get("params")?.get("requestId")?)
}

/// Judge one message: `line` is its text when it is the whole line.
pub(super) fn judge(
    value: Value,
    line: Option<&str>,
    session: Session<'_>,
    reads: Reads<'_>,
) -> Verdict {
    let Value::Object(message) = &value else {
        let text = "invalid request: a JSON-RPC message is an object";
        return Verdict::Answer(error(Value::Null, -32600, text));
    };
    let id = match id_of(message) {
        Ok(id) => id,
        Err(refusal) => return refusal,
    };
    let well_formed = message.get("jsonrpc") == Some(&json!("2.0"))
        && (is_request(message) || message.contains_key("result") || message.contains_key("error"));
    if !well_formed {
        let text = "invalid request: needs \"jsonrpc\": \"2.0\" and a string `method`";
        let id = id.map_or(Value::Null, |id| id.to_value());
        return Verdict::Answer(error(id, -32600, text));
    }
    // A client's response (to the server's own request) is never answered.
    let id = id.filter(|_| is_request(message));
    if !session.started && id.is_none() {
        return Verdict::Skip;
    }
    if message.get("params").is_some_and(|p| !p.is_object()) {
        return refuse(id, -32602, "invalid params: `params` must be an object");
    }
    if depth(&value) > MAX_DEPTH {
        let text = format!("invalid params: nested deeper than {MAX_DEPTH} levels");
        return refuse(id, -32602, &text);
    }
    if token_too_long(message) {
        let text = format!("invalid params: a `progressToken` over {MAX_ECHO} bytes");
        return refuse(id, -32602, &text);
    }
    let initialize = message.get("method") == Some(&json!("initialize"));
    let cancels = cancelled(message);
    let text = line.map_or_else(|| value.to_string(), str::to_owned);
    if let Err(why) = reads(&text) {
        return refuse(id, -32602, &format!("invalid params: {why}"));
    }
    Verdict::Forward(Forward {
        text,
        answer_to: id,
        initialize,
        cancels,
    })
}
