//! `discern mcp` through rmcp's own client, against the real binary as a child process.

use std::path::{Path, PathBuf};

use rmcp::model::{CallToolRequestParams, ReadResourceRequestParams};
use rmcp::service::RunningService;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

use crate::support::config::{Config, Standard};
use crate::support::{Fixture, cache_dir};

fn config() -> Config {
    let files = Standard::pattern("todo_files", "TODO", &["src/**"]).metric("files");
    Config::new()
        .job("test", "true")
        .standard(Standard::todo(2))
        .standard(files.limit(1))
}

pub(crate) async fn connect(fixture: &Fixture, dir: &Path) -> RunningService<RoleClient, ()> {
    connect_with(fixture, dir, ()).await
}

/// A session of `discern mcp` in `dir` whose client is `handler`.
pub(crate) async fn connect_with<H: rmcp::ClientHandler>(
    fixture: &Fixture,
    dir: &Path,
    handler: H,
) -> RunningService<RoleClient, H> {
    let home = fixture.repo.home().to_owned();
    let dir = dir.to_owned();
    let transport = TokioChildProcess::new(
        tokio::process::Command::new(env!("CARGO_BIN_EXE_discern")).configure(|cmd| {
            cmd.arg("mcp").current_dir(&dir);
            cmd.env_clear()
                .envs(discern_tests::hermetic_env(&home))
                .env("DISCERN_CACHE_DIR", cache_dir());
        }),
    )
    .unwrap();
    handler.serve(transport).await.unwrap()
}

pub(crate) async fn call(
    client: &RunningService<RoleClient, ()>,
    tool: &str,
    arguments: Value,
) -> (bool, Value, String) {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object")
    };
    let result = client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e}"));
    let text = result
        .content
        .first()
        .and_then(|c| c.as_text())
        .map(|t| t.text.clone())
        .unwrap_or_default();
    (
        result.is_error.unwrap_or(false),
        result.structured_content.unwrap_or(Value::Null),
        text,
    )
}

fn git_in(fixture: &Fixture, dir: &Path, args: &[&str]) {
    let mut cmd = std::process::Command::new("git");
    cmd.args(args).current_dir(dir);
    discern_tests::hermetic(&mut cmd, fixture.repo.home());
    assert!(cmd.status().unwrap().success(), "git {args:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tool_surface_is_ordered_strict_and_snapshotted() {
    let fixture = Fixture::new(config());
    let client = connect(&fixture, fixture.path()).await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, discern::verbs::tool_names());
    assert!(names.iter().all(|n| n.len() <= 24), "{names:?}");
    for tool in &tools {
        assert_eq!(
            tool.input_schema["additionalProperties"], false,
            "{} is strict",
            tool.name
        );
        assert!(
            tool.output_schema.is_some(),
            "{} declares its output",
            tool.name
        );
    }
    let listing = serde_json::to_string_pretty(&tools).unwrap();
    println!(
        "tools/list: {} bytes of tools (pretty JSON), {} compact",
        listing.len(),
        serde_json::to_string(&tools).unwrap().len()
    );
    insta::assert_snapshot!("mcp_tools_list", listing);
    // Agents pay for the listing in every session: it stays within 13 KB on the wire (12 KB
    // until discern_setup, which an effort whose setup failed needs on both surfaces).
    let wire = serde_json::to_string(&json!({ "tools": tools }))
        .unwrap()
        .len();
    assert!(wire <= 13_000, "tools/list is {wire} bytes on the wire");

    // An unknown key is refused as a tool result with its slug, not a protocol error.
    let (is_error, envelope, text) =
        call(&client, "discern_status", json!({ "bogus": true })).await;
    assert!(is_error);
    assert_eq!(envelope["error"], "invalid_arguments");
    assert!(text.contains("'bogus' was unexpected"), "{text}");
    // Relative paths are refused.
    let (is_error, envelope, _) =
        call(&client, "discern_status", json!({ "path": "relative/dir" })).await;
    assert!(is_error);
    assert!(
        envelope["message"]
            .as_str()
            .unwrap()
            .contains("must be absolute")
    );
    // The action rules of discern_standards.
    for arguments in [
        json!({}),
        json!({ "action": "measure", "proposals": [] }),
        json!({ "action": "propose", "pin": true, "proposals": [] }),
        json!({ "action": "propose", "names": ["todo"], "proposals": [] }),
        json!({ "action": "fly" }),
    ] {
        let (is_error, envelope, _) = call(&client, "discern_standards", arguments.clone()).await;
        assert!(is_error, "{arguments}");
        assert_eq!(envelope["error"], "invalid_arguments", "{arguments}");
    }
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_through_a_real_session() {
    let fixture = Fixture::new(config());
    std::fs::create_dir_all(fixture.path().join("docs/map")).unwrap();
    fixture.repo.write(
        "docs/map/index.md",
        "# Map\n\nThe runtime lives in host/src/runtime.\n",
    );
    fixture.repo.commit("map");
    let client = connect(&fixture, fixture.path()).await;

    let (is_error, envelope, text) = call(&client, "discern_status", json!({})).await;
    assert!(!is_error, "{text}");
    assert_eq!(envelope["data"]["projection"]["mode"], "orientation");
    assert!(text.starts_with("# discern status"));
    let (_, envelope, _) = call(&client, "discern_standards", json!({ "action": "measure" })).await;
    assert_eq!(envelope["ok"], true, "{envelope}");
    assert_eq!(
        envelope["data"]["producer_executions"]
            .as_object()
            .unwrap()
            .len(),
        1
    );
    let (_, envelope, _) = call(&client, "discern_map", json!({ "search": "runtime" })).await;
    assert_eq!(envelope["data"]["results"][0]["target"], "index");

    // start moves the working root into the new effort.
    let (_, envelope, _) = call(
        &client,
        "discern_start",
        json!({ "name": "mcp-effort", "title": "Through MCP" }),
    )
    .await;
    assert_eq!(envelope["ok"], true, "{envelope}");
    let effort = PathBuf::from(envelope["data"]["path"].as_str().unwrap());
    let (_, envelope, _) = call(&client, "discern_status", json!({})).await;
    assert_eq!(envelope["data"]["location"], "worktree");
    assert_eq!(envelope["data"]["task"]["title"], "Through MCP");

    // Work that breaches two Standards sharing one producer; one proposal batch, one commit.
    std::fs::write(effort.join("src/new.rs"), "// TODO one\n// TODO two\n").unwrap();
    git_in(&fixture, &effort, &["add", "-A"]);
    git_in(&fixture, &effort, &["commit", "-q", "-m", "new module"]);
    let (_, envelope, _) = call(&client, "discern_prepare", json!({})).await;
    assert_eq!(envelope["ok"], true);
    let (_, envelope, _) = call(&client, "discern_test", json!({})).await;
    assert_eq!(envelope["ok"], true);
    let reason = "The new module records two planned extension points as TODO markers.";
    let (is_error, envelope, _) = call(&client, "discern_standards", json!({ "action": "propose", "proposals": [ { "name": "todo", "reason": reason }, { "name": "todo_files", "reason": reason } ] })).await;
    assert!(!is_error, "{envelope}");
    assert_eq!(envelope["data"]["proposal_batch"]["status"], "recorded");
    let tokens: Vec<String> = envelope["data"]["proposal_batch"]["proposals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["approval_token"].as_str().unwrap().to_owned())
        .collect();

    let (is_error, envelope, text) = call(&client, "discern_done", json!({})).await;
    assert!(!is_error, "{text}");
    let handle = envelope["data"]["operation"].as_str().unwrap().to_owned();
    let (_, envelope, _) = call(&client, "discern_progress", json!({ "handle": handle })).await;
    assert_eq!(envelope["data"]["outcome"]["ok"], true);
    let (_, envelope, _) = call(&client, "discern_update", json!({})).await;
    assert_eq!(envelope["data"]["merged"], false);
    let (_, envelope, _) = call(
        &client,
        "discern_await",
        json!({ "green": "mcp-effort", "timeout": 0 }),
    )
    .await;
    assert_eq!(envelope["data"]["met"], true);

    // A refusal: no consent given.
    let (is_error, envelope, _) = call(&client, "discern_accept", json!({})).await;
    assert!(is_error);
    assert_eq!(envelope["error"], "awaiting_consent");
    // Tokens are no argument of the tool: the agent cannot approve by passing them.
    let (is_error, envelope, _) = call(
        &client,
        "discern_accept",
        json!({ "confirmed": true, "approve_standard": tokens }),
    )
    .await;
    assert!(is_error, "{envelope}");
    let (is_error, envelope, _) =
        call(&client, "discern_accept", json!({ "confirmed": true })).await;
    assert!(is_error);
    assert_eq!(
        envelope["error"], "awaiting_standard_approval",
        "{envelope}"
    );
    // The owner answers on their terminal; then the landing goes through.
    let run = fixture.on_terminal(
        fixture.path(),
        &["approve", "--effort", "mcp-effort"],
        "yes\nyes\n",
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
    let (is_error, envelope, _) =
        call(&client, "discern_accept", json!({ "confirmed": true })).await;
    assert!(!is_error, "{envelope}");
    assert_eq!(envelope["data"]["landing"]["worktree_removed"], true);
    assert!(!effort.exists());

    // accept moved the working root back to the main checkout.
    let (_, envelope, _) = call(&client, "discern_status", json!({})).await;
    assert_eq!(envelope["data"]["location"], "main");
    let resource = client
        .read_resource(ReadResourceRequestParams::new("discern://status"))
        .await
        .unwrap();
    let text = match &resource.contents[0] {
        rmcp::model::ResourceContents::TextResourceContents { text, .. } => text.clone(),
        other => panic!("{other:?}"),
    };
    let data: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(data["projection"]["mode"], "orientation");
    assert_eq!(data["location"], "main");
    client.cancel().await.unwrap();
}

#[derive(Clone, Default)]
struct ProgressCounter {
    seen: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl rmcp::ClientHandler for ProgressCounter {
    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        let total = params.total.map_or(String::new(), |t| format!(" of {t}"));
        self.seen
            .lock()
            .unwrap()
            .push(format!("{}{total}", params.message.unwrap_or_default()));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_calls_report_progress_when_asked() {
    let fixture = Fixture::new(config());
    let counter = ProgressCounter::default();
    let home = fixture.repo.home().to_owned();
    let dir = fixture.path().to_owned();
    let transport = TokioChildProcess::new(
        tokio::process::Command::new(env!("CARGO_BIN_EXE_discern")).configure(|cmd| {
            cmd.arg("mcp").current_dir(&dir);
            cmd.env_clear()
                .envs(discern_tests::hermetic_env(&home))
                .env("DISCERN_CACHE_DIR", cache_dir());
        }),
    )
    .unwrap();
    let client = counter.clone().serve(transport).await.unwrap();
    call_with_progress(&client, "discern_standards", json!({ "action": "measure" })).await;
    let seen = counter.seen.lock().unwrap().clone();
    assert!(
        seen.iter()
            .any(|m| m.contains("producer builtin:pattern") && m.ends_with(" of 1")),
        "a producer step carries its total: {seen:?}"
    );
    client.cancel().await.unwrap();
}

/// A server started inside an effort follows it to the main checkout once the owner landed it
/// from there: the next call works in the main checkout instead of failing with "not inside a
/// git repository".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_in_an_effort_follows_its_landing_to_the_main_checkout() {
    let fixture = Fixture::new(config());
    let json = fixture
        .run(&["start", "--name", "followed", "--title", "Follow", "--json"])
        .json();
    let effort = std::path::PathBuf::from(json["data"]["path"].as_str().unwrap());
    std::fs::write(effort.join("src/followed.rs"), "pub fn f() {}\n").unwrap();
    git_in(&fixture, &effort, &["add", "-A"]);
    git_in(&fixture, &effort, &["commit", "-q", "-m", "followed"]);
    let client = connect(&fixture, &effort).await;
    let (error, data, text) = call(&client, "discern_done", json!({})).await;
    assert!(!error, "{text}");
    assert_eq!(data["ok"], true, "{data}");
    // The owner lands it from the main checkout: the server's worktree is removed.
    let landed = fixture
        .run(&["accept", "--effort", "followed", "--confirmed", "--json"])
        .json();
    assert_eq!(landed["ok"], true, "{landed}");
    assert!(!effort.exists());
    let (error, data, text) = call(&client, "discern_status", json!({})).await;
    assert!(!error, "{text}");
    assert_eq!(data["data"]["location"], "main", "{data}");
    client.cancel().await.unwrap();
}

/// A server started elsewhere with `-C <worktree>` follows its effort the same way once it is
/// landed from the main checkout, and once it is abandoned from there, even when something
/// wrote into the worktree's folder after git removed it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_started_with_c_follows_its_effort_to_the_main_checkout() {
    let fixture = Fixture::new(config());
    for (name, land) in [("landed", true), ("dropped", false)] {
        let json = fixture
            .run(&["start", "--name", name, "--title", name, "--json"])
            .json();
        let effort = PathBuf::from(json["data"]["path"].as_str().unwrap());
        std::fs::write(effort.join(format!("src/{name}.rs")), "pub fn f() {}\n").unwrap();
        git_in(&fixture, &effort, &["add", "-A"]);
        git_in(&fixture, &effort, &["commit", "-q", "-m", name]);
        let home = fixture.repo.home().to_owned();
        let elsewhere = fixture.repo.parent().to_owned();
        let transport = TokioChildProcess::new(
            tokio::process::Command::new(env!("CARGO_BIN_EXE_discern")).configure(|cmd| {
                cmd.arg("-C")
                    .arg(&effort)
                    .arg("mcp")
                    .current_dir(&elsewhere);
                cmd.env_clear()
                    .envs(discern_tests::hermetic_env(&home))
                    .env("DISCERN_CACHE_DIR", cache_dir());
            }),
        )
        .unwrap();
        let client = ().serve(transport).await.unwrap();
        let (error, data, text) = call(&client, "discern_done", json!({})).await;
        assert!(!error, "{text}");
        assert_eq!(data["ok"], true, "{data}");
        let args: &[&str] = match land {
            true => &["accept", "--effort", name, "--confirmed", "--json"],
            false => &["abandon", name, "--force", "--json"],
        };
        let ended = fixture.run(args).json();
        assert_eq!(ended["ok"], true, "{ended}");
        assert!(!effort.exists(), "{name}: the worktree is gone");
        // What the effort's dev server or editor writes there afterwards makes a folder that
        // is no work tree: the server follows all the same.
        std::fs::create_dir_all(effort.join(".cache")).unwrap();
        std::fs::write(effort.join(".cache/late"), "written after the landing\n").unwrap();
        let (error, data, text) = call(&client, "discern_status", json!({})).await;
        assert!(!error, "{name}: {text}");
        assert_eq!(data["data"]["location"], "main", "{name}: {data}");
        client.cancel().await.unwrap();
    }
}

/// A step a result names in prose is spelled for the surface that called: a tool call over MCP,
/// a command line on the CLI.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_name_tool_calls_over_mcp_and_commands_on_the_cli() {
    let fixture = Fixture::new(config());
    fixture.repo.write("src/more.rs", "// TODO: three\n");
    fixture.repo.commit("a third TODO");
    let client = connect(&fixture, fixture.path()).await;
    let (error, data, text) =
        call(&client, "discern_standards", json!({"action": "measure"})).await;
    assert!(error, "the ceiling is breached: {text}");
    let reproduce = |data: &Value| {
        data["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["tool"] == "standard:todo")
            .map(|d| d["reproduce_cmd"].clone())
            .unwrap_or_else(|| panic!("{data}"))
    };
    assert_eq!(
        reproduce(&data),
        r#"discern_standards {"explain":"todo","action":"measure"}"#
    );
    assert!(!text.contains("discern standards --explain"), "{text}");
    client.cancel().await.unwrap();
    let cli = fixture.run(&["standards", "--json"]).json();
    assert_eq!(reproduce(&cli), "discern standards --explain todo");
}

/// Call `tool` with `arguments` asking for progress (a token; the timeout reset by each
/// notification), wait for its answer, then a moment for late notifications to arrive.
pub(crate) async fn call_with_progress<S: rmcp::Service<RoleClient>>(
    client: &RunningService<RoleClient, S>,
    tool: &str,
    arguments: Value,
) {
    let Value::Object(arguments) = arguments else {
        panic!("tool arguments are an object")
    };
    let request = rmcp::model::ClientRequest::CallToolRequest(rmcp::model::Request::new(
        CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments),
    ));
    let options =
        rmcp::service::PeerRequestOptions::with_timeout(std::time::Duration::from_secs(120))
            .reset_timeout_on_progress();
    let response = client
        .send_request_with_option(request, options)
        .await
        .unwrap()
        .await_response()
        .await;
    assert!(response.is_ok(), "{response:?}");
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
}
