//! The MCP server under hostile wire input, spoken to as raw lines on stdin: every line gets
//! an answer (`-32700` for a line that is not JSON, `-32600` with `"id": null` where the id
//! cannot be read, `-32602` for nesting past the limit), the session still works afterwards,
//! and a client that leaves before `initialize` ends the server with exit 0.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{Fixture, cache_dir};

const CONFIG: &str = "";

/// Send `lines` to a fresh `discern mcp`, close stdin, and read every answer and the exit code.
fn session(fixture: &Fixture, lines: &[String]) -> (Vec<Value>, i32) {
    let paced: Vec<(Duration, String)> =
        lines.iter().map(|l| (Duration::ZERO, l.clone())).collect();
    paced_session(fixture, &paced)
}

/// [`session`], waiting the given time before each line.
fn paced_session(fixture: &Fixture, lines: &[(Duration, String)]) -> (Vec<Value>, i32) {
    let raw: Vec<(Duration, Vec<u8>)> = lines
        .iter()
        .map(|(pause, line)| (*pause, line.clone().into_bytes()))
        .collect();
    raw_session(fixture, &raw)
}

/// [`paced_session`] with lines as raw bytes (any bytes, UTF-8 or not).
fn raw_session(fixture: &Fixture, lines: &[(Duration, Vec<u8>)]) -> (Vec<Value>, i32) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_discern"));
    cmd.arg("mcp").current_dir(fixture.path());
    discern_tests::hermetic(&mut cmd, fixture.repo.home());
    cmd.env("DISCERN_CACHE_DIR", cache_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for (pause, line) in lines {
        std::thread::sleep(*pause);
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let answers = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    (answers, out.status.code().unwrap_or(-1))
}

fn initialize() -> Vec<String> {
    vec![
        json!({"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}).to_string(),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}).to_string(),
    ]
}

fn answer<'a>(answers: &'a [Value], id: &Value) -> &'a Value {
    answers
        .iter()
        .find(|a| &a["id"] == id)
        .unwrap_or_else(|| panic!("no answer for {id}: {answers:#?}"))
}

#[test]
fn every_line_gets_an_answer_and_the_session_survives() {
    let fixture = Fixture::new(CONFIG);
    let mut nested = json!("leaf");
    for _ in 0..120 {
        nested = json!([nested]);
    }
    let mut lines = initialize();
    lines.extend([
        "this is not json".to_owned(),
        "[1, 2]".to_owned(),
        json!({"jsonrpc":"2.0","id":1}).to_string(),
        json!({"jsonrpc":"2.0","id":{"x":1},"method":"ping"}).to_string(),
        json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"discern_status","arguments":{"deep":nested}}}).to_string(),
        json!({"jsonrpc":"2.0","id":3,"method":"tools/list"}).to_string(),
    ]);
    let (answers, code) = session(&fixture, &lines);
    assert_eq!(code, 0, "{answers:#?}");
    let by_code = |code: i64| {
        answers
            .iter()
            .filter(|a| a["error"]["code"] == code)
            .collect::<Vec<_>>()
    };
    let parse = by_code(-32700);
    assert_eq!(parse.len(), 1, "{answers:#?}");
    assert_eq!(parse[0]["id"], Value::Null);
    assert!(
        parse[0].as_object().unwrap().contains_key("id"),
        "\"id\": null is present"
    );
    let invalid = by_code(-32600);
    assert_eq!(invalid.len(), 3, "{answers:#?}");
    assert!(invalid.iter().any(|a| a["id"] == json!(1)));
    assert_eq!(invalid.iter().filter(|a| a["id"].is_null()).count(), 2);
    assert_eq!(answer(&answers, &json!(2))["error"]["code"], -32602);
    let tools = answer(&answers, &json!(3));
    assert!(
        tools["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty()),
        "the session still works: {tools}"
    );
}

/// A line of bytes that are not UTF-8 is answered as unparsable (`id` null), and the session
/// goes on: it never ends the server.
#[test]
fn a_line_that_is_not_utf8_is_answered_and_the_session_goes_on() {
    let fixture = Fixture::new(CONFIG);
    let mut lines: Vec<(Duration, Vec<u8>)> = initialize()
        .into_iter()
        .map(|l| (Duration::ZERO, l.into_bytes()))
        .collect();
    lines.push((Duration::ZERO, b"\xff\xfe\x00\x01".to_vec()));
    let ping = json!({"jsonrpc":"2.0","id":9,"method":"ping"}).to_string();
    lines.push((Duration::from_millis(200), ping.into_bytes()));
    let (answers, code) = raw_session(&fixture, &lines);
    assert_eq!(code, 0, "{answers:#?}");
    let parse: Vec<&Value> = answers
        .iter()
        .filter(|a| a["error"]["code"] == -32700)
        .collect();
    assert_eq!(parse.len(), 1, "{answers:#?}");
    assert_eq!(parse[0]["id"], Value::Null);
    assert_eq!(answer(&answers, &json!(9))["result"], json!({}));
}

#[test]
fn a_client_that_leaves_before_initialize_ends_the_server_cleanly() {
    let fixture = Fixture::new(CONFIG);
    let (answers, code) = session(&fixture, &[]);
    assert_eq!(code, 0, "{answers:#?}");
    assert!(answers.is_empty());
}

#[test]
fn tool_arguments_are_held_to_their_schema_exactly_and_never_echoed_large() {
    let fixture = Fixture::new(CONFIG);
    let call = |id: u64, tool: &str, arguments: Value| {
        json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":tool,"arguments":arguments}}).to_string()
    };
    let huge = "x".repeat(1 << 20);
    let mut lines = initialize();
    lines.extend([
        call(1, "discern_start", json!({ "from": null, "dry_run": true })),
        call(
            2,
            "discern_await",
            json!({ "trunk_moved": true, "timeout": -1 }),
        ),
        call(3, "discern_start", json!({ "title": 7, "dry_run": true })),
        call(4, "discern_status", json!({ "verbose": huge })),
    ]);
    let (answers, code) = session(&fixture, &lines);
    assert_eq!(code, 0);
    for id in 1..=4 {
        let result = &answer(&answers, &json!(id))["result"];
        assert_eq!(result["isError"], true, "{id}: {result}");
        let envelope = &result["structuredContent"];
        assert_eq!(envelope["error"], "invalid_arguments", "{id}: {envelope}");
        let message = envelope["message"].as_str().unwrap();
        assert!(
            message.len() < 2_000,
            "{id}: the input is not echoed: {} bytes",
            message.len()
        );
    }
    // Nothing was started by the refused `from: null`.
    assert!(!fixture.repo.parent().join("repo.worktrees").exists());
}

#[test]
fn a_cancelled_call_stops_its_job_and_the_session_goes_on() {
    let fixture =
        Fixture::new("[jobs.slow]\nstage = \"test\"\nrun = \"sleep 3 && touch finished.marker\"\n");
    let now = Duration::ZERO;
    let mut lines: Vec<(Duration, String)> = initialize().into_iter().map(|l| (now, l)).collect();
    lines.extend([
        (now, json!({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"discern_test","arguments":{}}}).to_string()),
        (Duration::from_millis(700), json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"reason":"gave up"}}).to_string()),
        (Duration::from_millis(3500), json!({"jsonrpc":"2.0","id":6,"method":"tools/list"}).to_string()),
    ]);
    let (answers, _) = paced_session(&fixture, &lines);
    assert!(
        !fixture.path().join("finished.marker").exists(),
        "the cancelled job's process group was killed"
    );
    assert!(
        answer(&answers, &json!(6))["result"]["tools"].is_array(),
        "{answers:#?}"
    );
}

/// Messages a JSON parser would read one way or another are refused, each with the id it can
/// carry: `params` that is not an object (with its id), a key given twice (`id` null), and a
/// `path` of `null` where the schema says string.
#[test]
fn ambiguous_messages_are_refused_with_the_id_they_can_carry() {
    let fixture = Fixture::new(CONFIG);
    let mut lines = initialize();
    lines.extend([
        json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":[1,2]}).to_string(),
        r#"{"jsonrpc":"2.0","id":3,"id":4,"method":"tools/list"}"#.to_owned(),
        json!({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"discern_status","arguments":{"path":null}}}).to_string(),
        json!({"jsonrpc":"2.0","id":9,"method":"ping"}).to_string(),
    ]);
    let (answers, code) = session(&fixture, &lines);
    assert_eq!(code, 0, "{answers:#?}");
    assert_eq!(answer(&answers, &json!(2))["error"]["code"], -32602);
    assert!(
        answers
            .iter()
            .any(|a| a["id"].is_null() && a["error"]["code"] == -32600),
        "{answers:#?}"
    );
    assert!(
        answers
            .iter()
            .all(|a| a.as_object().unwrap().contains_key("id")),
        "{answers:#?}"
    );
    let null_path = answer(&answers, &json!(5));
    assert_eq!(null_path["result"]["isError"], true, "{null_path}");
    assert_eq!(answer(&answers, &json!(9))["result"], json!({}));
}
