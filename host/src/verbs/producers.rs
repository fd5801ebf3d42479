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
use crate::result::{Refused, Reply};

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
        Ok(match matches.subcommand() {
            Some(("run", sub)) => {
                let request = <RunRequest as clap::FromArgMatches>::from_arg_matches(sub)?;
                let ran = ctx.workspace().and_then(|ws| {
                    let runtime = ctx.runtime()?;
                    producers::run(&ws, &runtime, ctx.dir, &request)
                });
                super::answered(producers::RUN_VERB, ran)
            }
            Some(("new", sub)) => {
                let request = <NewRequest as clap::FromArgMatches>::from_arg_matches(sub)?;
                super::answered(producers::NEW_VERB, producers::new(ctx.dir, &request))
            }
            Some(("fetch", sub)) => {
                let request = <FetchRequest as clap::FromArgMatches>::from_arg_matches(sub)?;
                let ws = ctx.workspace().ok();
                let root = ws.as_ref().map(|ws| ws.root());
                let fetched = producers::fetch(ctx.settings, root, &request);
                super::answered(producers::FETCH_VERB, fetched)
            }
            Some(("publish", sub)) => {
                let request = <PublishRequest as clap::FromArgMatches>::from_arg_matches(sub)?;
                let published = ctx.runtime().and_then(|runtime| {
                    producers::publish(ctx.settings, &runtime, ctx.dir, &request)
                });
                super::answered(producers::PUBLISH_VERB, published)
            }
            _ => {
                let request =
                    <ProducersRequest as clap::FromArgMatches>::from_arg_matches(matches)?;
                super::answered(PRODUCERS.name, list(ctx, &request))
            }
        })
    }

    fn input_schema(&self) -> JsonMap<String, Value> {
        schema_of::<ProducersRequest>()
    }

    fn run_tool(&self, ctx: &Context, arguments: Value) -> Outcome {
        let listed = super::parse::<ProducersRequest>(arguments).and_then(|r| list(ctx, &r));
        super::answered(PRODUCERS.name, listed)
    }

    fn decodes(&self, arguments: Value) -> bool {
        super::parse::<ProducersRequest>(arguments).is_ok()
    }
}

/// The listing or one producer: built-ins anywhere, the repository's components inside one.
fn list(ctx: &Context, request: &ProducersRequest) -> Result<Reply, Refused> {
    let runtime = ctx.runtime()?;
    let Ok(ws) = ctx.workspace() else {
        return producers::producers(&runtime, Configured::None, ctx.dir, request);
    };
    let loaded = Config::load(ws.root());
    let configured = match &loaded {
        Ok(Some(config)) => Configured::Config(&ws, config),
        Ok(None) => Configured::None,
        Err(e) => Configured::Unreadable(e.to_string()),
    };
    producers::producers(&runtime, configured, ctx.dir, request)
}
