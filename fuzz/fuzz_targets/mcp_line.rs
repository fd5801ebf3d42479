//! Any bytes as one line an MCP client sends (the first byte picks the session: before
//! `initialize`, under `2025-06-18`, or under `2025-03-26`, which reads batches): judging it
//! never panics; every answer is one JSON-RPC error object with `"jsonrpc": "2.0"`, an `id`
//! that is the request's (or one of the batch's; `1e3` read as `1000`) or null, and a
//! bounded size; and once the service has answered every forwarded request, exactly the owed
//! responses come back (one line, an array for a batch) and nothing stays in flight.
#![no_main]

use std::collections::HashSet;

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};

use discern::mcp_wire::{self, Id, Session, Verdict, ledger::Ledger};
use discern::result::echo::MAX_ECHO;

/// The most an answer of the gate's own may weigh: an id and a message, each at most
/// `MAX_ECHO` bytes (plus the cut's note), and the envelope around them.
const MAX_ANSWER: usize = 3 * MAX_ECHO;

/// The service's decoding, stood in for: it cannot read a message whose params carry `"!"`.
fn reads(text: &str) -> Result<(), String> {
    match text.contains("\"!\"") {
        true => Err(format!("cannot read {text}")),
        false => Ok(()),
    }
}

/// The ids the line's messages carry (the line's own, or each batch element's).
fn ids_in(line: &[u8]) -> Vec<Value> {
    match serde_json::from_slice::<Value>(line) {
        Ok(Value::Array(items)) => items.iter().filter_map(|i| i.get("id").cloned()).collect(),
        Ok(value) => value.get("id").cloned().into_iter().collect(),
        Err(_) => Vec::new(),
    }
}

fn check_answer(answer: &Value, ids: &[Value]) {
    let object = answer.as_object().expect("an answer is one JSON object");
    assert_eq!(object.get("jsonrpc"), Some(&json!("2.0")), "{answer}");
    let id = object.get("id").expect("an answer carries an id, or null");
    // The request's id as sent, or as the service reads it (`1e3` is `1000`, as rmcp answers).
    let same = |request: &Value| {
        request == id || Id::read(request).is_some_and(|r| Id::read(id) == Some(r))
    };
    assert!(
        id.is_null() || ids.iter().any(same),
        "{id} is not the request's: {ids:?}"
    );
    assert!(object["error"]["code"].is_i64(), "{answer}");
    let size = answer.to_string().len();
    assert!(size <= MAX_ANSWER, "an answer of {size} bytes");
}

fn check_forward(forward: &mcp_wire::Forward) {
    let value: Value = serde_json::from_str(&forward.text).expect("forwarded text is JSON");
    if let Some(id) = &forward.answer_to {
        assert_eq!(Id::read(&value["id"]).as_ref(), Some(id));
    }
}

fn check(verdict: &Verdict, ids: &[Value], in_batch: bool) {
    match verdict {
        Verdict::Answer(answer) => check_answer(answer, ids),
        Verdict::Forward(forward) => check_forward(forward),
        Verdict::Batch(items) => {
            assert!(!in_batch, "a batch inside a batch");
            assert!(!items.is_empty() && items.len() <= mcp_wire::MAX_BATCH);
            items.iter().for_each(|item| check(item, ids, true));
        }
        Verdict::Skip => {}
    }
}

/// How many responses `verdict` owes the client: the gate's own answers and the requests',
/// less those a cancellation in the same line released.
fn owed(verdict: &Verdict) -> usize {
    let items: Vec<&Verdict> = match verdict {
        Verdict::Batch(items) => items.iter().collect(),
        verdict => vec![verdict],
    };
    let mut requested = HashSet::new();
    let mut owed = 0;
    for item in items {
        match item {
            Verdict::Answer(_) => owed += 1,
            Verdict::Forward(forward) => {
                if let Some(id) = &forward.answer_to {
                    requested.insert(id.clone());
                    owed += 1;
                }
                if let Some(id) = &forward.cancels
                    && requested.remove(id)
                {
                    owed -= 1;
                }
            }
            Verdict::Skip | Verdict::Batch(_) => {}
        }
    }
    owed
}

/// Run `verdict` through a ledger, the service answering each forwarded request at once.
fn settle(verdict: Verdict) {
    let is_batch = matches!(verdict, Verdict::Batch(_));
    let owed = owed(&verdict);
    let mut ledger = Ledger::default();
    let dispatch = ledger.dispatch(verdict);
    let mut lines: Vec<String> = dispatch.answers;
    for text in &dispatch.forward {
        let message: Value = serde_json::from_str(text).expect("forwarded text is JSON");
        if message.get("method").is_none() {
            continue;
        }
        let Some(id) = message.get("id").and_then(Id::read) else {
            continue;
        };
        let response = json!({ "jsonrpc": "2.0", "id": id.to_value(), "result": {} });
        lines.extend(ledger.from_service(response.to_string()));
    }
    assert!(ledger.is_settled(), "a request is left in flight");
    let answered: usize = lines
        .iter()
        .map(|line| match serde_json::from_str::<Value>(line) {
            Ok(Value::Array(items)) => items.len(),
            _ => 1,
        })
        .sum();
    if is_batch {
        assert!(
            lines.len() <= 1,
            "a batch is answered by one line: {lines:?}"
        );
    }
    assert_eq!(answered, owed, "every owed response, once: {lines:?}");
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, line)) = data.split_first() else {
        return;
    };
    let session = match pick % 3 {
        0 => Session::default(),
        1 => Session {
            revision: Some("2025-06-18"),
            started: true,
        },
        _ => Session {
            revision: Some("2025-03-26"),
            started: true,
        },
    };
    let verdict = mcp_wire::judge(line, session, &reads);
    check(&verdict, &ids_in(line), false);
    settle(verdict);
});
