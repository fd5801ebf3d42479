//! The `producers` row: the listing (or one producer) and its subcommands, `run`, `new`,
//! `fetch` and `publish`.
//! CLI only: no MCP tool lists, runs or scaffolds producers (`new` writes files, and an agent
//! measures through `discern_standards`).

use serde_json::{Map as JsonMap, Value};

use super::{Annotations, Context, Entry, Info, Outcome, schema_of};
use crate::config::Config;
use crate::preflight::Cleanliness;
use crate::producers::{
    self, Configured, FetchRequest, NewRequest, ProducersRequest, PublishRequest, RunRequest,
};

pub(super) struct Producers;

static PRODUCERS: Info = Info {
    name: producers::VERB,
    tool: None,
    summary: "The producers discern can run (built-ins and the repository's components), one with its config schema, or run or scaffold one",
    tool_description: "",
    annotations: Annotations {
        read_only: true,
        destructive: false,
        idempotent: true,
    },
    cleanliness: Cleanliness::Any,
    writes: false,
    journal: false,
};

impl Entry for Producers {
    fn info(&self) -> &'static Info {
        &PRODUCERS
    }

    fn command(&self) -> clap::Command {
        let run = <RunRequest as clap::Args>::augment_args(clap::Command::new("run")).about(
            "Run one component against a commit (default HEAD; --force: the work tree) and print its metrics, findings and stderr, without editing discern.toml",
        );
        let new = <NewRequest as clap::Args>::augment_args(clap::Command::new("new"))
            .about("Scaffold a buildable producer folder NAME/ from the license-header example");
        let fetch = <FetchRequest as clap::Args>::augment_args(clap::Command::new("fetch")).about(
            "Fetch every oci:// producer discern.toml names (or one reference) into the per-user cache, verified against its digest",
        );
        let publish = <PublishRequest as clap::Args>::augment_args(clap::Command::new("publish"))
            .about("Push a component to an OCI registry and print the producer line that pins it by digest");
        <ProducersRequest as clap::Args>::augment_args(clap::Command::new(PRODUCERS.name))
            .about(PRODUCERS.summary)
            .args_conflicts_with_subcommands(true)
            .subcommand_precedence_over_arg(true)
            .subcommand(run)
            .subcommand(new)
            .subcommand(fetch)
            .subcommand(publish)
    }

    fn run_cli(&self, ctx: &Context, matches: &clap::ArgMatches) -> Result<Outcome, clap::Error> {
        match matches.subcommand() {
            Some(("run", sub)) => {
                let request = <RunRequest as clap::FromArgMatches>::from_arg_matches(sub)?;
                let ws = match ctx.workspace(producers::RUN_VERB) {
                    Ok(ws) => ws,
                    Err(refusal) => return Ok(refusal.into()),
                };
                Ok(match ctx.runtime(producers::RUN_VERB) {
                    Ok(runtime) => producers::run(&ws, &runtime, ctx.dir, &request).into(),
                    Err(refusal) => refusal.into(),
                })
            }
            Some(("new", sub)) => {
                let request = <NewRequest as clap::FromArgMatches>::from_arg_matches(sub)?;
                Ok(producers::new(ctx.dir, &request).into())
            }
            Some(("fetch", sub)) => {
                let request = <FetchRequest as clap::FromArgMatches>::from_arg_matches(sub)?;
                let ws = ctx.workspace(producers::FETCH_VERB).ok();
                let root = ws.as_ref().map(|ws| ws.root());
                Ok(producers::fetch(ctx.settings, root, &request).into())
            }
            Some(("publish", sub)) => {
                let request = <PublishRequest as clap::FromArgMatches>::from_arg_matches(sub)?;
                Ok(match ctx.runtime(producers::PUBLISH_VERB) {
                    Ok(runtime) => {
                        producers::publish(ctx.settings, &runtime, ctx.dir, &request).into()
                    }
                    Err(refusal) => refusal.into(),
                })
            }
            _ => {
                let request =
                    <ProducersRequest as clap::FromArgMatches>::from_arg_matches(matches)?;
                Ok(list(ctx, &request))
            }
        }
    }

    fn input_schema(&self) -> JsonMap<String, Value> {
        schema_of::<ProducersRequest>()
    }

    fn run_tool(&self, ctx: &Context, arguments: Value) -> Outcome {
        match super::parse::<ProducersRequest>(PRODUCERS.name, arguments) {
            Ok(request) => list(ctx, &request),
            Err(refusal) => refusal.into(),
        }
    }

    fn decodes(&self, arguments: Value) -> bool {
        super::parse::<ProducersRequest>(PRODUCERS.name, arguments).is_ok()
    }
}

/// The listing or one producer: built-ins anywhere, the repository's components inside one.
fn list(ctx: &Context, request: &ProducersRequest) -> Outcome {
    let runtime = match ctx.runtime(PRODUCERS.name) {
        Ok(runtime) => runtime,
        Err(refusal) => return refusal.into(),
    };
    let Ok(ws) = ctx.workspace(PRODUCERS.name) else {
        return producers::producers(&runtime, Configured::None, ctx.dir, request).into();
    };
    let loaded = Config::load(ws.root());
    let configured = match &loaded {
        Ok(Some(config)) => Configured::Config(&ws, config),
        Ok(None) => Configured::None,
        Err(e) => Configured::Unreadable(e.to_string()),
    };
    producers::producers(&runtime, configured, ctx.dir, request).into()
}
