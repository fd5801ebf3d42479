//! The MCP server under hostile wire input, spoken to as raw lines on stdin: every line gets
//! exactly one answer, none for a notification (`-32700` for a line that is not JSON,
//! `-32600` with `"id": null` where the id cannot be read, `-32602` for nesting past the
//! limit), the session still works afterwards, batches are answered as one array under
//! `2025-03-26` and refused under any other revision, no answer quotes an input past 4 KiB
//! per field, a request sent just before stdin closes is still answered, and a client that
//! leaves before `initialize` ends the server with exit 0.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::config::Config;
use crate::support::{Fixture, cache_dir};

/// Send `lines` to a fresh `discern mcp`, close stdin, and read every answer and the exit code.
fn session(fixture: &Fixture, lines: &[String]) -> (Vec<Value>, i32) {
    let paced: Vec<(Duration, String)> =
        lines.iter().map(|l| (Duration::ZERO, l.clone())).collect();
    paced_session(fixture, &paced)
}

/// [`session`], waiting the given time before each line.
pub(crate) fn paced_session(fixture: &Fixture, lines: &[(Duration, String)]) -> (Vec<Value>, i32) {
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
    initialize_as("2025-06-18")
}

/// The handshake, asking for `revision`.
fn initialize_as(revision: &str) -> Vec<String> {
    vec![
        json!({"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":revision,"capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}).to_string(),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}).to_string(),
    ]
}

fn call(id: Value, tool: &str, arguments: Value) -> String {
    json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":tool,"arguments":arguments}}).to_string()
}

/// `lines` after the handshake for `revision`, each line after its answer has had time to
/// come (a client waits for `initialize`'s answer before it sends anything else).
pub(crate) fn after_handshake(revision: &str, lines: &[String]) -> Vec<(Duration, String)> {
    let handshake = initialize_as(revision).into_iter();
    let pause = Duration::from_millis(300);
    handshake
        .chain(lines.iter().cloned())
        .enumerate()
        .map(|(n, line)| (if n == 1 { pause } else { Duration::ZERO }, line))
        .collect()
}

pub(crate) fn answer<'a>(answers: &'a [Value], id: &Value) -> &'a Value {
    answers
        .iter()
        .find(|a| &a["id"] == id)
        .unwrap_or_else(|| panic!("no answer for {id}: {answers:#?}"))
}

#[test]
fn every_line_gets_an_answer_and_the_session_survives() {
    let fixture = Fixture::new(Config::new());
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
    let fixture = Fixture::new(Config::new());
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
    let fixture = Fixture::new(Config::new());
    let (answers, code) = session(&fixture, &[]);
    assert_eq!(code, 0, "{answers:#?}");
    assert!(answers.is_empty());
}

/// A notification or a response before `initialize` got no answer but ended the session
/// (the MCP library reads only requests during its handshake): now it is skipped, and the
/// session starts as usual.
#[test]
fn a_notification_before_initialize_does_not_end_the_session() {
    let fixture = Fixture::new(Config::new());
    let mut lines = vec![
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}).to_string(),
        json!({"jsonrpc":"2.0","id":77,"result":{}}).to_string(),
    ];
    lines.extend(initialize());
    lines.push(json!({"jsonrpc":"2.0","id":9,"method":"ping"}).to_string());
    let (answers, code) = session(&fixture, &lines);
    assert_eq!(code, 0, "{answers:#?}");
    assert_eq!(answer(&answers, &json!(9))["result"], json!({}));
    assert_eq!(answers.len(), 2, "init and ping only: {answers:#?}");
}

#[test]
fn tool_arguments_are_held_to_their_schema_exactly_and_never_echoed_large() {
    let fixture = Fixture::new(Config::new());
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
    let slow = Config::new().staged_job("slow", "test", "sleep 3 && touch finished.marker");
    let fixture = Fixture::new(slow);
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

/// What one hostile line must get back.
enum Expect {
    /// One JSON-RPC error with this id and code.
    Error(Value, i64),
    /// One tool result for this id, refused with this error slug.
    Refused(Value, &'static str),
    /// No answer at all (a notification).
    Nothing,
}

/// The hostile lines of the wire issue, one session: each gets exactly one answer with the
/// id it can carry (none for a notification), and `tools/list` still works afterwards.
#[test]
fn the_issues_hostile_lines_each_get_one_answer_and_the_session_goes_on() {
    let fixture = Fixture::new(Config::new());
    let deep = format!("{}{}", "[".repeat(3000), "]".repeat(3000));
    let big = format!("/{}", "x".repeat(2 << 20));
    let nul = format!("/{}", "\u{0}".repeat(64 << 10));
    let cases: Vec<(Vec<u8>, Expect)> =
        vec![
        (
            b"\xff\xfe\x00\x01".to_vec(),
            Expect::Error(Value::Null, -32700),
        ),
        (
            br#"{"jsonrpc":"2.0","id":3,"id":4,"method":"tools/list"}"#.to_vec(),
            Expect::Error(Value::Null, -32600),
        ),
        (
            json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":[1,2]})
                .to_string()
                .into_bytes(),
            Expect::Error(json!(2), -32602),
        ),
        (
            call(json!(5), "discern_status", json!({ "path": big })).into_bytes(),
            Expect::Refused(json!(5), "wrong_checkout"),
        ),
        (
            call(json!(6), "discern_standards", json!({}))
                .replace(
                    "{}}}",
                    &(r#"{"action":"propose","proposals":"#.to_owned() + &deep + "}}}"),
                )
                .into_bytes(),
            // Too deep to parse, but its id is in its first bytes: answered with it.
            Expect::Error(json!(6), -32700),
        ),
        (
            // Over the 8 MiB cap: read and dropped past the cap, answered with its id.
            call(json!(14), "discern_status", json!({ "path": "x".repeat(9 << 20) }))
                .into_bytes(),
            Expect::Error(json!(14), -32600),
        ),
        (
            call(
                json!(7),
                "discern_status",
                json!({ "verbose": true, "extra": { "nested": 1 } }),
            )
            .into_bytes(),
            Expect::Refused(json!(7), "invalid_arguments"),
        ),
        (
            call(
                json!(8),
                "discern_standards",
                json!({ "action": "measure", "names": [], "nested": { "x": 1 } }),
            )
            .into_bytes(),
            Expect::Refused(json!(8), "invalid_arguments"),
        ),
        (
            call(
                json!(9),
                "discern_await",
                json!({ "trunk_moved": true, "deeper": { "y": [] } }),
            )
            .into_bytes(),
            Expect::Refused(json!(9), "invalid_arguments"),
        ),
        (
            call(json!(10), "discern_status", json!({ "path": null })).into_bytes(),
            Expect::Refused(json!(10), "invalid_arguments"),
        ),
        (
            call(json!(11), "discern_map", json!({ "path": nul })).into_bytes(),
            Expect::Refused(json!(11), "wrong_checkout"),
        ),
        (
            json!([{"jsonrpc":"2.0","id":12,"method":"ping"}])
                .to_string()
                .into_bytes(),
            Expect::Error(Value::Null, -32600),
        ),
        (
            json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{}}})
                .to_string()
                .into_bytes(),
            Expect::Nothing,
        ),
        (
            json!({"jsonrpc":"2.0","id":13,"method":"ping","params":{"_meta":7}})
                .to_string()
                .into_bytes(),
            Expect::Error(json!(13), -32602),
        ),
        (
            json!({"jsonrpc":"2.0","id":1.5,"method":"ping"})
                .to_string()
                .into_bytes(),
            Expect::Error(json!(1.5), -32600),
        ),
    ];
    let mut lines: Vec<(Duration, Vec<u8>)> = initialize()
        .into_iter()
        .map(|l| (Duration::ZERO, l.into_bytes()))
        .collect();
    lines.extend(cases.iter().map(|(line, _)| (Duration::ZERO, line.clone())));
    let list = json!({"jsonrpc":"2.0","id":99,"method":"tools/list"}).to_string();
    lines.push((Duration::from_millis(100), list.into_bytes()));
    let started = std::time::Instant::now();
    let (answers, code) = raw_session(&fixture, &lines);
    assert_eq!(code, 0, "{answers:#?}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    let expected = cases
        .iter()
        .filter(|(_, e)| !matches!(e, Expect::Nothing))
        .count();
    assert_eq!(
        answers.len(),
        1 + expected + 1,
        "one answer a line: {answers:#.300?}"
    );
    let nulls = |code: i64| {
        answers
            .iter()
            .filter(|a| a["id"].is_null() && a["error"]["code"] == code)
            .count()
    };
    for (n, (_, expect)) in cases.iter().enumerate() {
        match expect {
            Expect::Error(Value::Null, code) => assert!(nulls(*code) > 0, "case {n}"),
            Expect::Error(id, code) => {
                assert_eq!(answer(&answers, id)["error"]["code"], *code, "case {n}")
            }
            Expect::Refused(id, slug) => {
                let result = &answer(&answers, id)["result"];
                assert_eq!(result["isError"], true, "case {n}: {}", short(result));
                let envelope = &result["structuredContent"];
                assert_eq!(envelope["error"], *slug, "case {n}: {}", short(envelope));
            }
            Expect::Nothing => {}
        }
    }
    // Only the line that is not UTF-8 before its id is answered without one.
    assert_eq!(nulls(-32700), 1, "{answers:#.300?}");
    assert_eq!(nulls(-32600), 2, "{answers:#.300?}");
    for answer in &answers {
        assert!(answer.to_string().len() < 64 << 10, "{}", short(answer));
    }
    let tools = answer(&answers, &json!(99));
    assert!(
        tools["result"]["tools"].is_array(),
        "the session goes on: {}",
        short(tools)
    );
}

/// `value` as JSON, cut for a failure message.
fn short(value: &Value) -> String {
    value.to_string().chars().take(300).collect()
}

/// The longest run of `c` in any string of `value`.
fn longest_run(value: &Value, c: char) -> usize {
    match value {
        Value::String(text) => text
            .split(|x| x != c)
            .map(|run| run.chars().count())
            .max()
            .unwrap_or(0),
        Value::Array(items) => items.iter().map(|v| longest_run(v, c)).max().unwrap_or(0),
        Value::Object(map) => map.values().map(|v| longest_run(v, c)).max().unwrap_or(0),
        _ => 0,
    }
}

/// A 64 KiB path of NUL characters came back as a 1.5 MB answer, a 2 MiB path as an 8 MB one:
/// now each is answered promptly, no field quotes more than 4 KiB of it, and the cut is named.
#[test]
fn long_inputs_are_answered_promptly_and_quoted_at_most_4_kib_a_field() {
    let fixture = Fixture::new(Config::new());
    let nul = "\u{0}".repeat(64 << 10);
    let big = "x".repeat(2 << 20);
    let mut lines = initialize();
    let mut expected = Vec::new();
    for (n, tool) in ["discern_progress", "discern_status", "discern_map"]
        .into_iter()
        .enumerate()
    {
        for (m, path) in [nul.clone(), format!("/{nul}")].into_iter().enumerate() {
            let id = json!(n * 10 + m);
            lines.push(call(id.clone(), tool, json!({ "path": path })));
            expected.push((id, '\u{0}'));
        }
    }
    for (n, tool) in ["discern_status", "discern_map"].into_iter().enumerate() {
        let id = json!(100 + n);
        lines.push(call(id.clone(), tool, json!({ "path": format!("/{big}") })));
        expected.push((id, 'x'));
    }
    let started = std::time::Instant::now();
    let (answers, code) = session(&fixture, &lines);
    assert_eq!(code, 0);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    for (id, c) in expected {
        let answer = answer(&answers, &id);
        assert_eq!(answer["result"]["isError"], true, "{id}: {}", short(answer));
        let run = longest_run(answer, c);
        assert!(run <= 4096, "{id}: {run} of {c:?} quoted in one field");
        assert!(
            answer.to_string().len() < 64 << 10,
            "{id}: {} bytes",
            answer.to_string().len()
        );
    }
    let cut = answer(&answers, &json!(1))["result"]["structuredContent"]["message"].clone();
    assert!(
        cut.as_str().unwrap().contains("(cut: "),
        "the cut is named: {cut:.100}"
    );
}

/// A client that sends calls and closes its input at once still gets their answers: a quick
/// one, and one that outlasts the MCP library's own 5 s drain after end of input (the
/// server used to exit without answering it).
#[test]
fn calls_sent_just_before_stdin_closes_are_still_answered() {
    let fixture = Fixture::new(Config::new().staged_job("slow", "test", "sleep 6"));
    let mut lines = initialize();
    lines.push(call(json!("status"), "discern_status", json!({})));
    lines.push(call(json!("test"), "discern_test", json!({})));
    let (answers, code) = session(&fixture, &lines);
    assert_eq!(code, 0, "{answers:#?}");
    let status = answer(&answers, &json!("status"));
    assert_eq!(
        status["result"]["structuredContent"]["verb"],
        "status",
        "{}",
        short(status)
    );
    let test = answer(&answers, &json!("test"));
    assert_eq!(
        test["result"]["structuredContent"]["verb"],
        "test",
        "{}",
        short(test)
    );
    assert_eq!(answers.len(), 3, "{answers:#?}");
}
