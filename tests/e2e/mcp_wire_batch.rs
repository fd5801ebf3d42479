//! JSON-RPC batches on the wire: answered as one array under the revision that has them,
//! refused where the revision has none.

use std::time::Duration;

use serde_json::{Value, json};

use crate::mcp_wire::{after_handshake, answer, paced_session};
use crate::support::Fixture;
use crate::support::config::Config;

/// Under `2025-03-26` a batch is split and its requests' responses come back as one JSON
/// array; an all-notification batch gets nothing, an empty one a single `-32600`.
#[test]
fn a_batch_is_answered_as_one_array_under_2025_03_26() {
    let fixture = Fixture::new(Config::new());
    let note = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
    let batch = json!([
        {"jsonrpc":"2.0","id":1,"method":"ping"},
        note,
        {"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"discern_status","arguments":{}}},
        {"jsonrpc":"2.0","id":2,"method":"tools/list"},
        5
    ]);
    let lines = [
        batch.to_string(),
        json!([note, note]).to_string(),
        "[]".to_owned(),
        json!({"jsonrpc":"2.0","id":9,"method":"ping"}).to_string(),
    ];
    let (answers, code) = paced_session(&fixture, &after_handshake("2025-03-26", &lines));
    assert_eq!(code, 0, "{answers:#.300?}");
    assert_eq!(
        answer(&answers, &json!("init"))["result"]["protocolVersion"],
        "2025-03-26"
    );
    let arrays: Vec<&Vec<Value>> = answers.iter().filter_map(Value::as_array).collect();
    assert_eq!(
        arrays.len(),
        1,
        "one array line for the batch: {answers:#.300?}"
    );
    let mut ids: Vec<String> = arrays[0].iter().map(|a| a["id"].to_string()).collect();
    ids.sort();
    assert_eq!(ids, ["\"s\"", "1", "2", "null"], "{:#.300?}", arrays[0]);
    let status = arrays[0].iter().find(|a| a["id"] == "s").unwrap();
    assert_eq!(status["result"]["structuredContent"]["verb"], "status");
    let empty: Vec<&Value> = answers
        .iter()
        .filter(|a| a["id"].is_null() && a["error"]["code"] == -32600)
        .collect();
    assert_eq!(empty.len(), 1, "the empty batch: {answers:#.300?}");
    assert_eq!(answer(&answers, &json!(9))["result"], json!({}));
    assert_eq!(
        answers.len(),
        4,
        "init, the batch, the empty batch, ping: {answers:#.300?}"
    );
}

/// Under `2025-06-18` (which removed batches), and before `initialize`, a batch gets one
/// `-32600` with `"id": null` that names why, and the session goes on.
#[test]
fn a_batch_is_refused_where_the_revision_has_none() {
    let fixture = Fixture::new(Config::new());
    let batch = json!([{"jsonrpc":"2.0","id":1,"method":"ping"}]).to_string();
    let mut lines = vec![(Duration::ZERO, batch.clone())];
    lines.extend(after_handshake(
        "2025-06-18",
        &[
            batch,
            json!({"jsonrpc":"2.0","id":3,"method":"tools/list"}).to_string(),
        ],
    ));
    let (answers, code) = paced_session(&fixture, &lines);
    assert_eq!(code, 0, "{answers:#.300?}");
    let refusals: Vec<&str> = answers
        .iter()
        .filter(|a| a["id"].is_null() && a["error"]["code"] == -32600)
        .filter_map(|a| a["error"]["message"].as_str())
        .collect();
    assert_eq!(refusals.len(), 2, "{answers:#.300?}");
    assert!(
        refusals[0].contains("before `initialize`"),
        "{}",
        refusals[0]
    );
    assert!(
        refusals[1].contains("negotiated revision 2025-06-18"),
        "{}",
        refusals[1]
    );
    assert!(
        answers.iter().all(|a| a["id"] != json!(1)),
        "nothing of the batch ran"
    );
    assert!(answer(&answers, &json!(3))["result"]["tools"].is_array());
}
