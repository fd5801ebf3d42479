//! JSON-RPC batches (a JSON array of messages on one line). MCP revision `2025-03-26` says a
//! server MUST read them; `2025-06-18` removed them, and no other revision has them. So a
//! batch is split only once `initialize` has negotiated `2025-03-26`; anywhere else it gets
//! one `-32600` (id null) naming the revision.

use serde_json::Value;

use super::{Reads, Session, Verdict, error, message};

/// The one revision whose sessions read batches.
const BATCH_REVISION: &str = "2025-03-26";
/// The most messages one batch may hold: their responses go back as one line, which must
/// stay under the response limit even when each is an error repeating a 4 KiB id.
pub const MAX_BATCH: usize = 256;

/// Whether a session that negotiated `revision` reads batches.
pub fn reads_batches(revision: Option<&str>) -> bool {
    revision == Some(BATCH_REVISION)
}

fn refusal(revision: Option<&str>) -> Verdict {
    let text = match revision {
        Some(revision) => format!(
            "invalid request: batches are not supported in the negotiated revision {revision} (only {BATCH_REVISION} has them); send each message on its own line"
        ),
        None => format!(
            "invalid request: batches are not supported before `initialize` has negotiated a revision (only {BATCH_REVISION} has them); send each message on its own line"
        ),
    };
    Verdict::Answer(error(Value::Null, -32600, &text))
}

/// One element of a batch: a message judged on its own, except that a batch holds no batch
/// and no `initialize` (which must come alone).
fn element(item: Value, session: Session<'_>, reads: Reads<'_>) -> Verdict {
    if item.is_array() {
        let text = "invalid request: a batch element is a message, not a batch";
        return Verdict::Answer(error(Value::Null, -32600, text));
    }
    match message::judge(item, None, session, reads) {
        Verdict::Forward(forward) if forward.initialize => {
            let id = forward.answer_to.map_or(Value::Null, |id| id.to_value());
            let text = "invalid request: `initialize` cannot be part of a batch";
            Verdict::Answer(error(id, -32600, text))
        }
        verdict => verdict,
    }
}

/// A batch line's elements, judged; or its refusal.
pub(super) fn split(items: Vec<Value>, session: Session<'_>, reads: Reads<'_>) -> Verdict {
    if !reads_batches(session.revision) {
        return refusal(session.revision);
    }
    if items.is_empty() {
        let text = "invalid request: an empty batch";
        return Verdict::Answer(error(Value::Null, -32600, text));
    }
    if items.len() > MAX_BATCH {
        let text = format!(
            "invalid request: a batch of {} messages, over the limit of {MAX_BATCH}",
            items.len()
        );
        return Verdict::Answer(error(Value::Null, -32600, &text));
    }
    Verdict::Batch(
        items
            .into_iter()
            .map(|item| element(item, session, reads))
            .collect(),
    )
}
