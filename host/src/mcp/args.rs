//! Tool arguments: strict (unknown keys are refused), then the same library call as the CLI.

use std::path::PathBuf;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::Server;
use crate::commit::Faults;
use crate::lifecycle;
use crate::proposals::{self, ProposalRequest};
use crate::result::{Envelope, ErrorSlug, Hint, HintId};
use crate::runtime::Runtime;
use crate::standards::{self, MeasureRequest};
use crate::workspace::Workspace;

/// The default `await` budget for MCP clients, which may drop long calls.
const MCP_AWAIT_TIMEOUT_S: f64 = 45.0;

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct PathOnly {
    path: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct StatusArgs {
    #[serde(default)]
    verbose: bool,
    #[serde(default)]
    all: bool,
    #[serde(default)]
    local: bool,
    path: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct StartArgs {
    name: Option<String>,
    title: Option<String>,
    brief: Option<String>,
    from: Option<String>,
    #[serde(default)]
    dry_run: bool,
    path: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct DoneArgs {
    #[serde(default)]
    rerun: bool,
    #[serde(default)]
    dry_run: bool,
    path: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct UpdateArgs {
    from: Option<String>,
    #[serde(default)]
    dry_run: bool,
    path: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct AwaitArgs {
    green: Option<String>,
    landed: Option<String>,
    #[serde(default)]
    trunk_moved: bool,
    timeout: Option<f64>,
    resume: Option<String>,
    path: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct AcceptArgs {
    #[serde(default)]
    confirmed: bool,
    #[serde(default)]
    approve_standard: Vec<String>,
    #[serde(default)]
    dry_run: bool,
    path: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct MapArgs {
    target: Option<String>,
    search: Option<String>,
    path: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct ProgressArgs {
    handle: Option<String>,
    path: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StandardsArgs {
    action: Action,
    #[serde(default)]
    names: Vec<String>,
    #[serde(default)]
    force: bool,
    #[serde(default)]
    pin: bool,
    proposals: Option<Vec<ProposalRequest>>,
    #[serde(default)]
    dry_run: bool,
    path: Option<String>,
}

#[derive(Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum Action {
    Measure,
    Propose,
}

fn invalid(verb: &str, message: impl Into<String>) -> Envelope {
    Envelope::refusal(
        verb,
        ErrorSlug::InvalidArguments,
        message,
        Hint::next_step(
            HintId::SeeHelp,
            "Call the tool again with arguments its input schema allows.",
        ),
    )
}

fn parse<T: DeserializeOwned>(verb: &str, arguments: &Value) -> Result<T, Box<Envelope>> {
    serde_json::from_value(arguments.clone())
        .map_err(|e| Box::new(invalid(verb, format!("Invalid arguments: {e}."))))
}

impl Server {
    fn workspace(&self, verb: &str, path: Option<&str>) -> Result<Workspace, Box<Envelope>> {
        let dir = match path {
            Some(p) if !std::path::Path::new(p).is_absolute() => {
                return Err(Box::new(invalid(
                    verb,
                    format!("`path` must be absolute, got {p:?}."),
                )));
            }
            Some(p) => PathBuf::from(p),
            None => self.root(),
        };
        Workspace::open(&dir, self.settings.clone()).map_err(|e| {
            Box::new(Envelope::refusal(
                verb,
                ErrorSlug::PreconditionFailed,
                e.to_string(),
                Hint::next_step(
                    HintId::RunFromRepository,
                    "Pass `path` with an absolute path inside a git work tree.",
                ),
            ))
        })
    }

    fn runtime(&self, verb: &str) -> Result<Runtime, Box<Envelope>> {
        self.settings.runtime(verb)
    }

    /// Run one tool: strict arguments, then the library verb.
    pub(super) fn dispatch(
        &self,
        tool: &str,
        arguments: &Value,
        progress: &(dyn Fn(&str) + Sync),
    ) -> Envelope {
        self.try_dispatch(tool, arguments, progress)
            .unwrap_or_else(|refusal| *refusal)
    }

    fn try_dispatch(
        &self,
        tool: &str,
        arguments: &Value,
        progress: &(dyn Fn(&str) + Sync),
    ) -> Result<Envelope, Box<Envelope>> {
        Ok(match tool {
            "discern_status" => {
                let a: StatusArgs = parse("status", arguments)?;
                let ws = self.workspace("status", a.path.as_deref())?;
                crate::status::status(
                    &ws,
                    &crate::status::StatusRequest {
                        verbose: a.verbose,
                        all: a.all,
                        local: a.local,
                    },
                )
            }
            "discern_start" => {
                let a: StartArgs = parse("start", arguments)?;
                let ws = self.workspace("start", a.path.as_deref())?;
                let request = lifecycle::start::StartRequest {
                    name: a.name,
                    title: a.title,
                    brief: a.brief,
                    from: a.from,
                    dry_run: a.dry_run,
                };
                let envelope = lifecycle::start::start(&ws, &request);
                if envelope.ok
                    && !a.dry_run
                    && let Some(path) = envelope.data.as_ref().and_then(|d| d["path"].as_str())
                {
                    self.set_root(std::path::Path::new(path));
                }
                envelope
            }
            "discern_prepare" => {
                let a: PathOnly = parse("prepare", arguments)?;
                lifecycle::stage_verbs::prepare(
                    &self.workspace("prepare", a.path.as_deref())?,
                    progress,
                )
            }
            "discern_test" => {
                let a: PathOnly = parse("test", arguments)?;
                lifecycle::stage_verbs::test(&self.workspace("test", a.path.as_deref())?, progress)
            }
            "discern_done" => {
                let a: DoneArgs = parse("done", arguments)?;
                let ws = self.workspace("done", a.path.as_deref())?;
                let runtime = self.runtime("done")?;
                lifecycle::done::done(
                    &ws,
                    &runtime,
                    &lifecycle::done::DoneRequest {
                        rerun: a.rerun,
                        dry_run: a.dry_run,
                    },
                    progress,
                )
            }
            "discern_update" => {
                let a: UpdateArgs = parse("update", arguments)?;
                lifecycle::update::update(
                    &self.workspace("update", a.path.as_deref())?,
                    a.from.as_deref(),
                    a.dry_run,
                )
            }
            "discern_await" => {
                let a: AwaitArgs = parse("await", arguments)?;
                use lifecycle::wait::Condition;
                let conditions = usize::from(a.green.is_some())
                    + usize::from(a.landed.is_some())
                    + usize::from(a.trunk_moved);
                if conditions > 1 {
                    return Err(Box::new(invalid(
                        "await",
                        "Name exactly one condition: green, landed or trunk_moved.",
                    )));
                }
                let condition = match (a.green, a.landed, a.trunk_moved) {
                    (Some(e), _, _) => Some(Condition::Green(e)),
                    (_, Some(e), _) => Some(Condition::Landed(e)),
                    (_, _, true) => Some(Condition::TrunkMoved),
                    _ => None,
                };
                let ws = self.workspace("await", a.path.as_deref())?;
                let request = lifecycle::wait::AwaitRequest {
                    condition,
                    timeout_s: Some(a.timeout.unwrap_or(MCP_AWAIT_TIMEOUT_S)),
                    resume: a.resume,
                };
                lifecycle::wait::await_condition(&ws, &request)
            }
            "discern_accept" => {
                let a: AcceptArgs = parse("accept", arguments)?;
                let ws = self.workspace("accept", a.path.as_deref())?;
                let envelope = lifecycle::accept::accept(
                    &ws,
                    &lifecycle::accept::AcceptRequest {
                        confirmed: a.confirmed,
                        approve_standard: a.approve_standard,
                        dry_run: a.dry_run,
                    },
                );
                if envelope.ok
                    && let Some(data) = envelope.data.as_ref()
                    && data["landing"]["worktree_removed"] == true
                    && let Some(root) = data["root"].as_str()
                {
                    self.set_root(std::path::Path::new(root));
                }
                envelope
            }
            "discern_map" => {
                let a: MapArgs = parse("map", arguments)?;
                lifecycle::map::map(
                    &self.workspace("map", a.path.as_deref())?,
                    a.target.as_deref(),
                    a.search.as_deref(),
                )
            }
            "discern_progress" => {
                let a: ProgressArgs = parse("progress", arguments)?;
                lifecycle::operations::progress(
                    &self.workspace("progress", a.path.as_deref())?,
                    a.handle.as_deref(),
                )
            }
            "discern_standards" => {
                let a: StandardsArgs = parse("standards", arguments)?;
                match a.action {
                    Action::Measure if a.proposals.is_some() => {
                        return Err(Box::new(invalid(
                            "standards",
                            "action measure takes no proposals; use action propose.",
                        )));
                    }
                    Action::Propose if a.pin || a.force || !a.names.is_empty() => {
                        return Err(Box::new(invalid(
                            "standards",
                            "action propose takes proposals only (no pin, force or names).",
                        )));
                    }
                    _ => {}
                }
                let ws = self.workspace("standards", a.path.as_deref())?;
                let runtime = self.runtime("standards")?;
                match a.action {
                    Action::Measure if a.pin => {
                        standards::pin::pin(&ws, &runtime, &a.names, &Faults::from_env(), progress)
                    }
                    Action::Measure => standards::measure(
                        &ws,
                        &runtime,
                        &MeasureRequest {
                            names: a.names,
                            force: a.force,
                            dry_run: a.dry_run,
                        },
                        progress,
                    ),
                    Action::Propose => {
                        let Some(requests) = a.proposals else {
                            return Err(Box::new(invalid(
                                "standards",
                                "action propose needs proposals: [{name, reason}, …].",
                            )));
                        };
                        proposals::propose(
                            &ws,
                            &runtime,
                            &requests,
                            a.dry_run,
                            &Faults::from_env(),
                            progress,
                        )
                    }
                }
            }
            other => invalid("mcp", format!("unknown tool {other}")),
        })
    }
}
