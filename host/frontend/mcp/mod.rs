//! `discern mcp`: the MCP server over stdio. Its tools and their dispatch come from the verb
//! table, so each tool calls the same library function as its CLI verb; every result is the
//! envelope as `structuredContent` plus its Markdown as text, with `isError = !ok`. Refusals
//! are tool results, never JSON-RPC errors. Only this module (and `cli`) knows about a
//! frontend protocol.

mod elicit;
mod gate;
mod tools;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use discern::result::{self, Envelope, ErrorSlug, Hint, HintId};
use discern::verbs::{self, Context, Outcome, Surface};
use discern::workspace::{Settings, Workspace};

pub const STATUS_URI: &str = "discern://status";

/// The server: a working root that `start` and `accept` move, and the process settings.
#[derive(Clone)]
pub struct Server {
    place: Arc<Mutex<Place>>,
    settings: Settings,
    /// Whether the client's input ended: nobody is left to answer an elicitation.
    input_ended: gate::Ended,
}

/// Where the server works: the root, the top of the work tree it is in, and the main checkout
/// that work tree belongs to, read while the root exists: where the server follows to once the
/// root's worktree is gone (its effort landed or abandoned, from here or from elsewhere).
struct Place {
    root: PathBuf,
    top: Option<PathBuf>,
    main: Option<PathBuf>,
}

impl Place {
    fn of(root: &Path) -> Self {
        let repo = discern::Repo::discover(root).ok();
        Place {
            root: root.to_owned(),
            top: repo.as_ref().map(|r| r.root().to_owned()),
            main: repo.as_ref().and_then(main_checkout_of),
        }
    }

    /// Whether the root's work tree is gone: its folder, or its `.git` link (git removed the
    /// worktree, and something wrote into the folder since: a dev server, an editor).
    fn gone(&self) -> bool {
        !self.root.exists() || self.top.as_ref().is_some_and(|t| !t.join(".git").exists())
    }
}

impl Server {
    pub fn new(root: PathBuf, settings: Settings, input_ended: gate::Ended) -> Self {
        Self {
            place: Arc::new(Mutex::new(Place::of(&root))),
            settings,
            input_ended,
        }
    }

    /// The working root; when its work tree is gone (the effort it was landed or was abandoned
    /// from elsewhere), the main checkout it belonged to, which becomes the root. However the
    /// server was started (in the worktree, or `-C` it), the process's own directory follows:
    /// git (and gix) cannot work from a directory that no longer exists.
    fn root(&self) -> PathBuf {
        let mut place = self.place.lock().unwrap_or_else(|e| e.into_inner());
        if place.gone()
            && let Some(main) = place.main.clone().filter(|m| m.join(".git").exists())
        {
            *place = Place::of(&main);
            place.main.get_or_insert(main);
        }
        let root = place.root.clone();
        drop(place);
        if std::env::current_dir().is_err() || !cwd_is_live() {
            let _ = std::env::set_current_dir(&root);
        }
        root
    }

    fn set_root(&self, root: &Path) {
        let mut place = self.place.lock().unwrap_or_else(|e| e.into_inner());
        let main = place.main.take();
        *place = Place::of(root);
        if place.main.is_none() {
            place.main = main;
        }
    }

    /// Run one tool from the table: `path` taken out of the arguments (it names the checkout
    /// to act on), the rest parsed strictly by the verb; a landing or a start moves the root.
    fn dispatch(&self, tool: &str, arguments: Value, progress: &(dyn Fn(&str) + Sync)) -> Outcome {
        let Some(entry) = verbs::by_tool(tool) else {
            return Outcome::refused(
                "mcp",
                verbs::invalid_arguments(format!("unknown tool {tool}")),
            );
        };
        let verb = entry.info().name;
        let Value::Object(mut arguments) = arguments else {
            let refused = verbs::invalid_arguments("Invalid arguments: expected an object.");
            return Outcome::refused(verb, refused);
        };
        // Read first, even when `path` is given: it moves the process out of a removed folder.
        let root = self.root();
        // `path` is a string where given (the schema says so; `null` is not one).
        let dir = match arguments.remove(tools::PATH) {
            None => root,
            Some(Value::String(p)) if Path::new(&p).is_absolute() => PathBuf::from(p),
            Some(other) => {
                let shown: String = other.to_string().chars().take(200).collect();
                let refused = verbs::invalid_arguments(format!(
                    "`path` must be absolute (a string path), got {shown}."
                ));
                return Outcome::refused(verb, refused);
            }
        };
        let ctx = Context {
            dir: &dir,
            settings: &self.settings,
            surface: Surface::Mcp,
            progress,
        };
        let outcome = entry.run_tool(&ctx, Value::Object(arguments));
        if let Some(root) = &outcome.root {
            self.set_root(root);
        }
        outcome
    }
}

/// The main checkout of the repository `repo` is in.
fn main_checkout_of(repo: &discern::Repo) -> Option<PathBuf> {
    let worktrees = repo.worktrees().ok()?;
    worktrees.into_iter().find(|w| w.is_main).map(|w| w.path)
}

/// Whether the process's directory is still the folder its path names (not a removed folder
/// that something made again at the same path).
fn cwd_is_live() -> bool {
    use std::os::unix::fs::MetadataExt;
    let (Ok(here), Ok(named)) = (
        std::fs::metadata("."),
        std::env::current_dir().and_then(std::fs::metadata),
    ) else {
        return false;
    };
    (here.dev(), here.ino()) == (named.dev(), named.ino())
}

/// Serve MCP on stdin/stdout until the client disconnects; the process exit code.
pub fn serve(settings: Settings) -> i32 {
    let root = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("discern mcp: cannot start the async runtime: {e}");
            return 70;
        }
    };
    let gate = gate::Gate::default();
    let server = Server::new(
        root,
        Settings {
            progress: false,
            terminal: false,
            ..settings
        },
        gate.input_ended.clone(),
    );
    runtime.block_on(async move {
        // Every line passes the gate both ways: the service sees only well-formed requests,
        // and the client gets an answer to every line it sends.
        let (gate_in, service_in) = tokio::io::duplex(1 << 16);
        let (service_out, gate_out) = tokio::io::duplex(1 << 16);
        let (answers, answered) = tokio::sync::mpsc::unbounded_channel();
        let reader = tokio::spawn(gate::read(
            tokio::io::stdin(),
            gate_in,
            answers,
            gate.clone(),
        ));
        let writer = tokio::spawn(gate::write(
            gate_out,
            answered,
            tokio::io::stdout(),
            gate.clone(),
        ));
        let code = match server.serve((service_in, service_out)).await {
            Ok(service) => match service.waiting().await {
                Ok(_) => 0,
                Err(e) => {
                    eprintln!("discern mcp: {e}");
                    70
                }
            },
            // A client that left before `initialize` is a normal end, not a failure.
            Err(_) if gate.input_ended.get() => 0,
            Err(e) => {
                eprintln!("discern mcp: cannot start: {e}");
                70
            }
        };
        reader.abort();
        let _ = writer.await;
        code
    })
}

/// How often a long step is said to be still running.
const HEARTBEAT: std::time::Duration = std::time::Duration::from_secs(4);

/// Forward each step of a call as a progress notification for `token`, and between steps a
/// heartbeat every [`HEARTBEAT`] naming the step still running and for how long. Progress only
/// grows: a step is the next whole number (or its `[done/total]`), a heartbeat a fraction
/// beyond the step it repeats.
async fn forward_progress(
    peer: rmcp::Peer<RoleServer>,
    token: rmcp::model::ProgressToken,
    mut receiver: tokio::sync::mpsc::UnboundedReceiver<String>,
) {
    let (mut step, mut total) = (0.0_f64, None);
    let mut current: Option<(String, std::time::Instant)> = None;
    let mut beats = 0u32;
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + HEARTBEAT, HEARTBEAT);
    loop {
        let (progress, message) = tokio::select! {
            received = receiver.recv() => {
                let Some(message) = received else { return };
                (step, total) = match counted(&message) {
                    Some((done, of)) => (done, Some(of)),
                    None => (step.floor() + 1.0, None),
                };
                beats = 0;
                ticks.reset();
                current = Some((message.clone(), std::time::Instant::now()));
                (step, message)
            }
            _ = ticks.tick() => {
                let Some((what, since)) = &current else { continue };
                beats += 1;
                let secs = since.elapsed().as_secs();
                let beyond = 1.0 - 1.0 / f64::from(beats + 1);
                (step + beyond, format!("{what} (still running, {secs} s)"))
            }
        };
        let mut param = ProgressNotificationParam::new(token.clone(), progress);
        // A heartbeat past the last step of a known total says no total rather than a wrong one.
        if let Some(of) = total.filter(|of| progress <= *of) {
            param = param.with_total(of);
        }
        let _ = peer.notify_progress(param.with_message(message)).await;
    }
}

/// `(3, 7)` from a progress message that starts with `[3/7]`.
fn counted(message: &str) -> Option<(f64, f64)> {
    let inner = message.strip_prefix('[')?.split(']').next()?;
    let (done, total) = inner.split_once('/')?;
    Some((done.trim().parse().ok()?, total.trim().parse().ok()?))
}

/// The tool result for `envelope`, every field held to the echo bound first
/// ([`discern::result::echo`]): both renderings come from the bounded envelope.
fn tool_result(mut envelope: Envelope) -> CallToolResult {
    result::echo::bound_envelope(&mut envelope);
    let envelope = &envelope;
    let text = ContentBlock::text(result::markdown(envelope, &verbs::steps::tool_call));
    let mut out = if envelope.ok {
        CallToolResult::success(vec![text])
    } else {
        CallToolResult::error(vec![text])
    };
    out.structured_content = serde_json::to_value(envelope).ok();
    out
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("discern", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "discern keeps this repository's Standards honest. Start each session with discern_status; work in one effort (discern_start once per task); commit, then discern_done; land only with the owner's consent (discern_accept).",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::all()))
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        tools::all().into_iter().find(|t| t.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        if verbs::by_tool(&name).is_none() {
            return Err(ErrorData::invalid_params(
                format!("unknown tool {name}"),
                None,
            ));
        }
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        // Progress: forward each step to the client if it asked for it, and between steps say
        // every few seconds that the step is still running (a job can take minutes).
        let (sender, receiver) = tokio::sync::mpsc::unbounded_channel::<String>();
        if let Some(token) = context.meta.get_progress_token() {
            tokio::spawn(forward_progress(context.peer.clone(), token, receiver));
        }
        // `notifications/cancelled` for this call stops its work: the verb runs in the cancel
        // scope, so measurement stops between producers and a running job's group is killed.
        let cancel = discern::cancel::Cancel::default();
        let watcher = {
            let (cancel, ct) = (cancel.clone(), context.ct.clone());
            tokio::spawn(async move {
                ct.cancelled().await;
                cancel.cancel();
            })
        };
        let server = self.clone();
        // The owner may be asked through this client (elicitation), on this call's progress.
        let asker: Arc<dyn discern::asker::Asker> = Arc::new(elicit::Elicit {
            peer: context.peer.clone(),
            runtime: tokio::runtime::Handle::current(),
            cancelled: cancel.clone(),
            input_ended: self.input_ended.clone(),
            progress: sender.clone(),
        });
        let envelope = tokio::task::spawn_blocking(move || {
            let progress = move |step: &str| {
                let _ = sender.send(step.to_owned());
            };
            discern::asker::scope(asker, || {
                cancel.scope(|| server.dispatch(&name, arguments, &progress).envelope)
            })
        })
        .await
        .unwrap_or_else(|e| {
            discern::result::Refused::new(
                ErrorSlug::Internal,
                format!("the tool call failed: {e}"),
                Hint::next_step(HintId::ReportBug, "Report this as a bug in discern."),
            )
            .into_envelope("mcp")
        });
        watcher.abort();
        Ok(tool_result(envelope).into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![
            Resource::new(STATUS_URI, "discern-status")
                .with_description("The bounded orientation status of the working root, computed fresh on every read.")
                .with_mime_type("application/json"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if request.uri != STATUS_URI {
            return Err(ErrorData::resource_not_found(
                format!("no resource {}", request.uri),
                None,
            ));
        }
        let root = self.root();
        let settings = self.settings.clone();
        let data = tokio::task::spawn_blocking(move || match Workspace::open(&root, settings) {
            Ok(ws) => discern::status::resource(&ws),
            Err(e) => serde_json::json!({ "error": e.to_string(), "projection": { "mode": "orientation" } }),
        })
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let text = serde_json::to_string_pretty(&data)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(text, STATUS_URI).with_mime_type("application/json"),
        ])
        .into())
    }
}
