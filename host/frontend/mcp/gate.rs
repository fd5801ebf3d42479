//! The line gate between stdio and the MCP service: every line a client sends is answered.
//! A line that is not JSON gets `-32700`, JSON that is not a request `-32600` (with
//! `"id": null` when the id cannot be read, as JSON-RPC requires), nesting deeper than
//! [`MAX_DEPTH`] `-32602`; everything else goes to the service. Every line the service sends
//! back is bounded: one over [`MAX_RESPONSE`] bytes becomes an error naming the limit.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// How deep a request's JSON may nest.
pub const MAX_DEPTH: usize = 32;
/// The longest line the server sends (4 MiB).
pub const MAX_RESPONSE: usize = 4 << 20;
/// The longest line a client may send (8 MiB).
const MAX_REQUEST: usize = 8 << 20;

/// Whether the client's input ended (what tells a client that left from a broken server).
#[derive(Clone, Default)]
pub struct Ended(Arc<AtomicBool>);

impl Ended {
    pub fn get(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// What the gate decided about one line.
enum Verdict {
    Forward,
    Skip,
    Answer(Value),
}

fn error(id: Value, code: i64, message: String) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}

fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// A JSON object whose top-level keys are unique (deserializing it fails on a repeated key).
struct Unique;

impl<'de> serde::Deserialize<'de> for Unique {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Keys;
        impl<'de> serde::de::Visitor<'de> for Keys {
            type Value = Unique;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Unique, A::Error> {
                let mut seen = std::collections::HashSet::new();
                while let Some(key) = map.next_key::<String>()? {
                    if !seen.insert(key.clone()) {
                        return Err(serde::de::Error::custom(format!("duplicate key {key:?}")));
                    }
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
                Ok(Unique)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Unique, A::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Unique)
            }
        }
        deserializer.deserialize_any(Keys)
    }
}

fn judge(line: &str) -> Verdict {
    if line.trim().is_empty() {
        return Verdict::Skip;
    }
    if line.len() > MAX_REQUEST {
        let message = format!("the request line is over {MAX_REQUEST} bytes");
        return Verdict::Answer(error(Value::Null, -32600, message));
    }
    let value: Value = match serde_json::from_str(line) {
        Ok(value) => value,
        Err(e) => return Verdict::Answer(error(Value::Null, -32700, format!("parse error: {e}"))),
    };
    let Value::Object(message) = &value else {
        let text = "invalid request: a JSON-RPC message is an object".to_owned();
        return Verdict::Answer(error(Value::Null, -32600, text));
    };
    // A key given twice (two `id`s, say) leaves what the message means to the parser: refused,
    // its id unreadable.
    if serde_json::from_str::<Unique>(line).is_err() {
        let text = "invalid request: a key appears twice in the message".to_owned();
        return Verdict::Answer(error(Value::Null, -32600, text));
    }
    let id = match message.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => Some(id.clone()),
        None => None,
        Some(_) => {
            let text = "invalid request: `id` must be a string or a number".to_owned();
            return Verdict::Answer(error(Value::Null, -32600, text));
        }
    };
    let well_formed = message.get("jsonrpc") == Some(&json!("2.0"))
        && (message.get("method").is_some_and(Value::is_string)
            || message.contains_key("result")
            || message.contains_key("error"));
    if !well_formed {
        let text = "invalid request: needs \"jsonrpc\": \"2.0\" and a string `method`".to_owned();
        return Verdict::Answer(error(id.unwrap_or(Value::Null), -32600, text));
    }
    if message.get("params").is_some_and(|p| !p.is_object()) {
        let text = "invalid params: `params` must be an object".to_owned();
        return match id {
            Some(id) => Verdict::Answer(error(id, -32602, text)),
            None => Verdict::Skip,
        };
    }
    if depth(&value) > MAX_DEPTH {
        let text = format!("invalid params: nested deeper than {MAX_DEPTH} levels");
        return match id {
            Some(id) => Verdict::Answer(error(id, -32602, text)),
            // A notification gets no answer, however malformed its params.
            None => Verdict::Skip,
        };
    }
    Verdict::Forward
}

/// Read the client's lines from `input`: forward the valid ones to `service`, answer the rest
/// through `answers`. Marks `ended` when the input ends.
pub async fn read(
    input: impl AsyncRead + Unpin,
    mut service: impl AsyncWrite + Unpin,
    answers: mpsc::UnboundedSender<String>,
    ended: Ended,
) {
    let mut input = BufReader::new(input);
    let mut bytes = Vec::new();
    loop {
        bytes.clear();
        match input.read_until(b'\n', &mut bytes).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        // A line that is not UTF-8 is answered as unparsable; the session goes on.
        let Ok(line) = std::str::from_utf8(&bytes) else {
            let text = "parse error: the line is not UTF-8".to_owned();
            let _ = answers.send(error(Value::Null, -32700, text).to_string());
            continue;
        };
        let line = line.trim_end_matches(['\n', '\r']);
        match judge(line) {
            Verdict::Skip => {}
            Verdict::Answer(answer) => {
                let _ = answers.send(answer.to_string());
            }
            Verdict::Forward => {
                let forwarded = async {
                    service.write_all(line.as_bytes()).await?;
                    service.write_all(b"\n").await?;
                    service.flush().await
                };
                if forwarded.await.is_err() {
                    break;
                }
            }
        }
    }
    ended.0.store(true, Ordering::SeqCst);
    let _ = service.shutdown().await;
}

/// Copy the service's lines to `output`, bounded, interleaved whole with the gate's answers.
pub async fn write(
    from_service: impl AsyncRead + Unpin,
    mut answers: mpsc::UnboundedReceiver<String>,
    mut output: impl AsyncWrite + Unpin,
) {
    let mut lines = BufReader::new(from_service).lines();
    loop {
        let line = tokio::select! {
            line = lines.next_line() => match line {
                Ok(Some(line)) => bounded(line),
                _ => break,
            },
            Some(answer) = answers.recv() => answer,
        };
        let written = async {
            output.write_all(line.as_bytes()).await?;
            output.write_all(b"\n").await?;
            output.flush().await
        };
        if written.await.is_err() {
            break;
        }
    }
    while let Ok(answer) = answers.try_recv() {
        let _ = output.write_all(format!("{answer}\n").as_bytes()).await;
    }
    let _ = output.flush().await;
}

/// A response line over the limit becomes an error for the same id naming the limit.
fn bounded(line: String) -> String {
    if line.len() <= MAX_RESPONSE {
        return line;
    }
    let id = serde_json::from_str::<Value>(&line)
        .ok()
        .and_then(|v| v.get("id").cloned())
        .unwrap_or(Value::Null);
    let message = format!(
        "the response would be {} bytes, over the limit of {MAX_RESPONSE} bytes",
        line.len()
    );
    error(id, -32603, message).to_string()
}
