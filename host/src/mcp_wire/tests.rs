//! The hostile lines of the wire issue, judged as the server judges them, and batches
//! assembled as the gate assembles them. The same cases go through the real binary in
//! `tests/e2e/mcp_wire.rs`; this table pins the judging itself.

use serde_json::{Value, json};

use super::ledger::Ledger;
use super::*;
use crate::result::echo::MAX_ECHO;

fn reads_all(_: &str) -> Result<(), String> {
    Ok(())
}

const NEW: Session<'static> = Session {
    revision: Some("2025-06-18"),
    started: true,
};
const OLD: Session<'static> = Session {
    revision: Some("2025-03-26"),
    started: true,
};

fn call(id: Value, arguments: Value) -> String {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"discern_status","arguments":arguments}}).to_string()
}

fn nested(depth: usize) -> Value {
    let mut value = json!({});
    for _ in 0..depth {
        value = json!({ "p": value });
    }
    value
}

/// What a verdict promises: an answer is one bounded JSON-RPC error with a readable id.
fn check(verdict: &Verdict) {
    match verdict {
        Verdict::Answer(answer) => {
            assert_eq!(answer["jsonrpc"], "2.0", "{answer}");
            assert!(answer.get("id").is_some(), "{answer}");
            assert!(answer["error"]["code"].is_i64(), "{answer}");
            assert!(answer.to_string().len() < 2 * MAX_ECHO, "{answer:.200}");
        }
        Verdict::Batch(items) => items.iter().for_each(check),
        Verdict::Skip | Verdict::Forward(_) => {}
    }
}

/// `(line, session, expected)`: `Some((id, code))` for an answer, `None` for a forward.
type Case = (Vec<u8>, Session<'static>, Option<(Value, i64)>);

#[test]
fn the_hostile_lines_of_the_issue_are_each_judged_once() {
    let huge = "x".repeat(2 << 20);
    let nul_path = "\u{0}".repeat(64 << 10);
    // Built as text: a 3,000-deep `Value` would overflow a test thread's stack on drop.
    let deep = format!("{{\"proposals\":{}{}}}", "[".repeat(3000), "]".repeat(3000));
    let cases: Vec<Case> = vec![
        (b"\xff\xfe\x00\x01".to_vec(), NEW, Some((Value::Null, -32700))),
        (br#"{"jsonrpc":"2.0","id":3,"id":4,"method":"tools/list"}"#.to_vec(), NEW, Some((Value::Null, -32600))),
        (json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":[1,2]}).to_string().into_bytes(), NEW, Some((json!(2), -32602))),
        (call(json!(4), json!({ "path": huge })).into_bytes(), NEW, None),
        (call(json!(5), json!({ "path": format!("/{nul_path}") })).into_bytes(), NEW, None),
        (call(json!(6), json!({ "path": null })).into_bytes(), NEW, None),
        (call(json!(7), json!({ "verbose": { "unknown": { "deeper": 1 } } })).into_bytes(), NEW, None),
        (call(json!(8), nested(40)).into_bytes(), NEW, Some((json!(8), -32602))),
        (call(json!(9), json!({})).replace("\"arguments\":{}", &format!("\"arguments\":{deep}")).into_bytes(), NEW, Some((json!(9), -32700))),
        (json!({"jsonrpc":"2.0","id":1.5,"method":"ping"}).to_string().into_bytes(), NEW, Some((json!(1.5), -32600))),
        (json!({"jsonrpc":"2.0","id":"i".repeat(MAX_ECHO + 1),"method":"ping"}).to_string().into_bytes(), NEW, Some((Value::Null, -32600))),
        (json!({"jsonrpc":"2.0","id":10,"method":"ping","params":{"_meta":{"progressToken":huge}}}).to_string().into_bytes(), NEW, Some((json!(10), -32602))),
        (json!([{"jsonrpc":"2.0","id":11,"method":"ping"}]).to_string().into_bytes(), NEW, Some((Value::Null, -32600))),
        (json!([{"jsonrpc":"2.0","id":11,"method":"ping"}]).to_string().into_bytes(), Session::default(), Some((Value::Null, -32600))),
        (b"[]".to_vec(), OLD, Some((Value::Null, -32600))),
    ];
    for (n, (line, session, expected)) in cases.into_iter().enumerate() {
        let verdict = judge(&line, session, &reads_all);
        check(&verdict);
        match (&verdict, expected) {
            (Verdict::Answer(answer), Some((id, code))) => {
                assert_eq!(answer["id"], id, "case {n}: {answer}");
                assert_eq!(answer["error"]["code"], code, "case {n}: {answer}");
            }
            (Verdict::Forward(forward), None) => {
                assert!(forward.answer_to.is_some(), "case {n}");
            }
            (verdict, expected) => panic!("case {n}: {verdict:.300?}, expected {expected:?}"),
        }
    }
}

#[test]
fn a_refused_batch_names_the_revision() {
    let line = br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#;
    let Verdict::Answer(answer) = judge(line, NEW, &reads_all) else {
        panic!("a batch is refused under 2025-06-18");
    };
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("2025-06-18"), "{message}");
}

#[test]
fn notifications_are_never_answered_and_wait_for_the_handshake() {
    let bad = json!({"jsonrpc":"2.0","method":"notifications/x","params":[1]}).to_string();
    assert_eq!(judge(bad.as_bytes(), NEW, &reads_all), Verdict::Skip);
    let fine = json!({"jsonrpc":"2.0","method":"notifications/initialized"}).to_string();
    let before = Session::default();
    assert_eq!(judge(fine.as_bytes(), before, &reads_all), Verdict::Skip);
    assert!(matches!(
        judge(fine.as_bytes(), NEW, &reads_all),
        Verdict::Forward(_)
    ));
}

#[test]
fn a_message_the_service_cannot_read_is_answered_with_its_id() {
    let unreadable = |_: &str| Err("unknown variant".to_owned());
    let line = json!({"jsonrpc":"2.0","id":"q","method":"ping","params":{"_meta":7}}).to_string();
    let Verdict::Answer(answer) = judge(line.as_bytes(), NEW, &unreadable) else {
        panic!("answered by the gate");
    };
    assert_eq!(answer["id"], "q");
    assert_eq!(answer["error"]["code"], -32602);
}

fn ping(id: u64) -> Value {
    json!({"jsonrpc":"2.0","id":id,"method":"ping"})
}

#[test]
fn a_batch_is_answered_with_one_array_of_its_requests_responses() {
    let mut ledger = Ledger::default();
    let note = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
    let line = json!([ping(1), note, ping(2), 7]).to_string();
    let verdict = judge(line.as_bytes(), OLD, &reads_all);
    let dispatch = ledger.dispatch(verdict);
    assert_eq!(
        dispatch.forward.len(),
        3,
        "two requests and the notification"
    );
    assert!(
        dispatch.answers.is_empty(),
        "held until the responses are in"
    );
    assert_eq!(
        ledger.from_service(r#"{"jsonrpc":"2.0","id":2,"result":{}}"#.into()),
        None
    );
    let line = ledger
        .from_service(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.into())
        .expect("the batch is complete");
    let answers: Vec<Value> = serde_json::from_str(&line).unwrap();
    let mut ids: Vec<Value> = answers.iter().map(|a| a["id"].clone()).collect();
    ids.sort_by_key(|id| id.to_string());
    assert_eq!(ids, vec![json!(1), json!(2), Value::Null], "{line}");
    assert!(ledger.is_settled());
}

#[test]
fn a_batch_of_notifications_gets_no_line() {
    let mut ledger = Ledger::default();
    let note = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
    let line = json!([note, note]).to_string();
    let dispatch = ledger.dispatch(judge(line.as_bytes(), OLD, &reads_all));
    assert_eq!(dispatch.forward.len(), 2);
    assert!(dispatch.answers.is_empty());
    assert!(ledger.is_settled());
}

/// Found by the `mcp_line` fuzz target: a batch whose request is cancelled in the same batch
/// was answered by its array and then again by the service's late response.
#[test]
fn a_batch_with_a_cancelled_request_is_answered_by_one_line() {
    let mut ledger = Ledger::default();
    let cancel =
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}});
    let line = json!([ping(1), ping(1), cancel]).to_string();
    let dispatch = ledger.dispatch(judge(line.as_bytes(), OLD, &reads_all));
    assert_eq!(
        dispatch.answers.len(),
        1,
        "the in-flight refusal, as the batch's line"
    );
    let late = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
    assert_eq!(ledger.from_service(late.into()), None);
    assert!(ledger.is_settled());
}

#[test]
fn an_id_in_flight_is_refused_and_initialize_names_the_revision() {
    let mut ledger = Ledger::default();
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}).to_string();
    let dispatch = ledger.dispatch(judge(init.as_bytes(), ledger.session(), &reads_all));
    assert_eq!(dispatch.forward.len(), 1);
    let again = ledger.dispatch(judge(init.as_bytes(), ledger.session(), &reads_all));
    let refusal: Value = serde_json::from_str(&again.answers[0]).unwrap();
    assert_eq!(
        (refusal["id"].clone(), refusal["error"]["code"].clone()),
        (json!(0), json!(-32600))
    );
    let response = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-03-26"}}"#;
    assert!(ledger.from_service(response.into()).is_some());
    assert_eq!(ledger.revision(), Some("2025-03-26"));
    assert!(ledger.is_settled());
}

#[test]
fn the_services_errors_are_held_to_the_echo_bound() {
    let mut ledger = Ledger::default();
    let method = "m".repeat(1 << 20);
    let line = json!({"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":method}});
    let out = ledger.from_service(line.to_string()).unwrap();
    assert!(out.len() < 2 * MAX_ECHO, "{} bytes", out.len());
    assert!(
        out.contains("(cut: 1048576 bytes, showing the first 4096)"),
        "{out:.100}"
    );
}

/// The service sends no response to a cancelled request (rmcp drops it), so the ledger owes
/// none: a batch waiting only on it is answered at once, and nothing stays in flight.
#[test]
fn a_cancelled_request_is_owed_no_response() {
    let mut ledger = Ledger::default();
    let line = json!([ping(1), ping(2)]).to_string();
    ledger.dispatch(judge(line.as_bytes(), OLD, &reads_all));
    assert!(
        ledger
            .from_service(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.into())
            .is_none()
    );
    let cancel =
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}});
    let dispatch = ledger.dispatch(judge(cancel.to_string().as_bytes(), OLD, &reads_all));
    assert_eq!(dispatch.forward.len(), 1, "the service hears of it");
    let answers: Vec<Value> = serde_json::from_str(&dispatch.answers[0]).unwrap();
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_eq!(answers[0]["id"], 1);
    assert!(ledger.is_settled());
    let single = ping(3).to_string();
    ledger.dispatch(judge(single.as_bytes(), OLD, &reads_all));
    assert!(!ledger.is_settled());
    let cancel =
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}});
    let dispatch = ledger.dispatch(judge(cancel.to_string().as_bytes(), OLD, &reads_all));
    assert!(dispatch.answers.is_empty());
    assert!(ledger.is_settled());
    let late = r#"{"jsonrpc":"2.0","id":3,"result":{}}"#;
    assert_eq!(
        ledger.from_service(late.into()),
        None,
        "a late response is dropped"
    );
}

/// Before the handshake the service reads only requests (rmcp ends the session on anything
/// else): a ping does not open it, `initialize` does.
#[test]
fn only_the_handshake_lets_notifications_through() {
    let mut ledger = Ledger::default();
    let note = json!({"jsonrpc":"2.0","method":"notifications/initialized"}).to_string();
    let ping = ping(1).to_string();
    ledger.dispatch(judge(ping.as_bytes(), ledger.session(), &reads_all));
    assert!(
        ledger
            .from_service(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.into())
            .is_some()
    );
    assert_eq!(
        judge(note.as_bytes(), ledger.session(), &reads_all),
        Verdict::Skip
    );
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}).to_string();
    ledger.dispatch(judge(init.as_bytes(), ledger.session(), &reads_all));
    let verdict = judge(note.as_bytes(), ledger.session(), &reads_all);
    assert!(matches!(verdict, Verdict::Forward(_)), "{verdict:?}");
}

/// A line the parser cannot read whole is answered with the id its bytes show; null only where
/// none can be found.
#[test]
fn an_unreadable_line_is_answered_with_the_id_its_bytes_show() {
    let deep = |id: &str| {
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{}{}}}",
            "[".repeat(5000),
            "]".repeat(5000)
        )
    };
    let long = format!(
        "{{\"id\":\"long\",\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"params\":{{\"x\":\"{}\"}}}}",
        "y".repeat(MAX_REQUEST)
    );
    let after_deep = format!(
        "{{\"params\":{}{},\"id\":\"late\",\"jsonrpc\":\"2.0\"}}",
        "{\"a\":".repeat(4000),
        "}".repeat(4000)
    );
    let cases: Vec<(Vec<u8>, Value)> = vec![
        (deep("7").into_bytes(), json!(7)),
        (deep("\"a\\\"b\"").into_bytes(), json!("a\"b")),
        (deep("-3").into_bytes(), json!(-3)),
        (long.into_bytes(), json!("long")),
        (after_deep.into_bytes(), json!("late")),
        (
            br#"{"jsonrpc":"2.0","\u0069d":14,"method":"ping","method":"x"}"#.to_vec(),
            json!(14),
        ),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":15,\"method\":\"\xff\"}".to_vec(),
            json!(15),
        ),
        (
            br#"{"jsonrpc":"2.0","id":3,"id":4,"method":"tools/list"}"#.to_vec(),
            Value::Null,
        ),
        (
            br#"{"params":{"id":5},"method":"ping","method":"x"}"#.to_vec(),
            Value::Null,
        ),
        (
            br#"{"id":null,"method":"ping","method":"x"}"#.to_vec(),
            Value::Null,
        ),
        (
            br#"{"id":{"n":1},"method":"ping","method":"x"}"#.to_vec(),
            Value::Null,
        ),
        (
            format!(
                "{{\"id\":\"{}\",\"method\":\"ping\",\"method\":\"x\"}}",
                "i".repeat(MAX_ECHO + 1)
            )
            .into_bytes(),
            Value::Null,
        ),
        (
            br#"[{"jsonrpc":"2.0","id":11,"method":"ping"},"#.to_vec(),
            Value::Null,
        ),
        (br#"{"jsonrpc":"2.0","id":12"#.to_vec(), Value::Null),
        (br#"{"jsonrpc":"2.0","id":"cut"#.to_vec(), Value::Null),
    ];
    for (n, (line, id)) in cases.into_iter().enumerate() {
        match judge(&line, NEW, &reads_all) {
            Verdict::Answer(answer) => assert_eq!(answer["id"], id, "case {n}: {answer}"),
            other => panic!("case {n}: {other:?}"),
        }
    }
}
