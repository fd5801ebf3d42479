//! The MCP elicitation channel, through rmcp's own client against the real binary: where the
//! trunk allows interactive approval, `discern_accept` asks the owner one yes/no per item
//! through the client and records the channel; where it requires signatures, an
//! auto-accepting client is never even asked.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationCapability,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::{ErrorData, RoleClient};
use serde_json::{Map, Value, json};

use crate::support::Fixture;
use crate::support::config::{Config, quoted};

/// A client that answers every item of every elicitation with `answer`, counting the asks.
#[derive(Clone)]
struct Owner {
    answer: bool,
    asked: Arc<AtomicUsize>,
}

impl rmcp::ClientHandler for Owner {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation = Some(ElicitationCapability::default());
        ClientConfig::new(capabilities, rmcp::model::Implementation::from_build_env())
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        let ElicitRequestParams::FormElicitationParams {
            requested_schema, ..
        } = request
        else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let content: Map<String, Value> = requested_schema
            .required
            .unwrap_or_default()
            .into_iter()
            .map(|key| (key, Value::Bool(self.answer)))
            .collect();
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(content)))
    }
}

async fn connect(
    fixture: &Fixture,
    dir: &Path,
    answer: bool,
    asked: &Arc<AtomicUsize>,
) -> RunningService<RoleClient, Owner> {
    let owner = Owner {
        answer,
        asked: asked.clone(),
    };
    crate::mcp::connect_with(fixture, dir, owner).await
}

/// `discern_accept` refused for want of the owner's approval: its envelope.
async fn refused(client: &RunningService<RoleClient, Owner>) -> Value {
    let envelope = accept(client).await;
    assert_eq!(
        envelope["error"], "awaiting_standard_approval",
        "{envelope}"
    );
    envelope
}

async fn accept(client: &RunningService<RoleClient, Owner>) -> Value {
    let Value::Object(arguments) = json!({ "confirmed": true }) else {
        unreachable!()
    };
    let result = client
        .call_tool(CallToolRequestParams::new("discern_accept").with_arguments(arguments))
        .await
        .unwrap();
    result.structured_content.unwrap_or(Value::Null)
}

/// An effort that drops the test job (a protected change), proven: its worktree and head.
fn protected_effort(fixture: &Fixture) -> (std::path::PathBuf, String) {
    let json = fixture.run(&["start", "--name", "ask", "--json"]).json();
    let path = std::path::PathBuf::from(json["data"]["path"].as_str().unwrap());
    let config = std::fs::read_to_string(path.join("discern.toml"))
        .unwrap()
        .replace("[jobs]\ntest = \"true\"\n", "");
    std::fs::write(path.join("discern.toml"), config).unwrap();
    fixture.git_in(&path, &["commit", "-q", "-am", "drop the test job"]);
    let done = fixture.run_in(&path, &["done", "--json"], &[]).json();
    assert_eq!(done["ok"], true, "{done}");
    let head = fixture.git_out(&path, &["rev-parse", "HEAD"]);
    (path, head)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_owner_answers_through_elicitation_where_the_trunk_allows_it() {
    let fixture = Fixture::new(Config::landing());
    let (path, head) = protected_effort(&fixture);
    let trunk = || fixture.git_out(fixture.path(), &["rev-parse", "main"]);
    let before = trunk();

    // A "no" approves nothing.
    let asked = Arc::new(AtomicUsize::new(0));
    let no = connect(&fixture, &path, false, &asked).await;
    refused(&no).await;
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    assert_eq!(trunk(), before);
    no.cancel().await.unwrap();

    let yes = connect(&fixture, &path, true, &asked).await;
    let envelope = accept(&yes).await;
    assert_eq!(envelope["ok"], true, "{envelope}");
    assert_eq!(envelope["data"]["approval_channel"], "elicitation");
    assert_eq!(trunk(), head);
    let note: Value = serde_json::from_str(&fixture.git_out(
        fixture.path(),
        &["notes", "--ref", "refs/notes/discern", "show", &head],
    ))
    .unwrap();
    assert_eq!(note["approval"]["channel"], "elicitation");
    assert_eq!(note["approved_changes"][0]["key"], "jobs.test");
    yes.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_auto_accepting_client_is_never_asked_where_signatures_are_required() {
    let config = Config::landing().acceptance("allowed_signers", quoted("signers"));
    let fixture = Fixture::new(&config);
    fixture.repo.write("signers", "owner@example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA8nX6ZNPc2cvGgZ1jF7fHQBmrzZDFF5Yb9ZJ8eY6i3D\n");
    fixture.repo.commit("signers");
    let (path, _) = protected_effort(&fixture);
    let before = fixture.git_out(fixture.path(), &["rev-parse", "main"]);
    let asked = Arc::new(AtomicUsize::new(0));
    let client = connect(&fixture, &path, true, &asked).await;
    let envelope = refused(&client).await;
    assert_eq!(envelope["data"]["approval"], "signed");
    assert_eq!(
        asked.load(Ordering::SeqCst),
        0,
        "elicitation is no approval here"
    );
    assert_eq!(
        fixture.git_out(fixture.path(), &["rev-parse", "main"]),
        before
    );
    client.cancel().await.unwrap();
}
