//! The producer kit: `discern producers [NAME]` lists every producer this checkout can run (or
//! shows one with its config schema), `producers run` runs one component against a commit
//! without touching `discern.toml`, `producers new` scaffolds a producer from the example,
//! `producers fetch` and `producers publish` fetch and push registry components (`oci`).

mod catalog;
mod listing;
mod registry;
mod run;
mod scaffold;
mod show;
mod templates;

use std::path::{Path, PathBuf};

pub(crate) use listing::Configured;

use crate::result::{Refused, Reply};
use crate::runtime::Runtime;
use crate::workspace::Workspace;

pub(crate) const VERB: &str = "producers";
pub(crate) const RUN_VERB: &str = "producers run";
pub(crate) const NEW_VERB: &str = "producers new";
pub(crate) const FETCH_VERB: &str = "producers fetch";
pub(crate) const PUBLISH_VERB: &str = "producers publish";

/// `discern producers [NAME]`.
#[derive(Debug, Clone, Default, clap::Args, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProducersRequest {
    /// Show one producer with its metrics and config schema: a built-in (`builtin:pattern`),
    /// a component path discern.toml names, a Standard's name (its producer), or a `.wasm` file.
    #[serde(default)]
    pub name: Option<String>,
}

/// `discern producers run PATH.wasm --config JSON [--rev REV | --force]`.
#[derive(Debug, Clone, clap::Args, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunRequest {
    /// The component to run (a `.wasm` file, relative to the current directory).
    pub path: String,
    /// Its config, as a JSON object (what a Standard's `config` table becomes).
    #[arg(long, value_name = "JSON", default_value = "{}")]
    #[serde(default = "empty_object")]
    pub config: String,
    /// The commit to measure (default: HEAD).
    #[arg(long, value_name = "REV", conflicts_with = "force")]
    #[serde(default)]
    pub rev: Option<String>,
    /// Measure the work tree as it is, uncommitted changes included.
    #[arg(long)]
    #[serde(default)]
    pub force: bool,
}

fn empty_object() -> String {
    "{}".to_owned()
}

/// `discern producers fetch [REFERENCE]`.
#[derive(Debug, Clone, Default, clap::Args, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FetchRequest {
    /// One registry component, `oci://REGISTRY/REPOSITORY:TAG[@sha256:…]` (a tag alone is
    /// resolved to the digest to pin); default: every `oci://` producer discern.toml names.
    #[serde(default)]
    pub reference: Option<String>,
}

/// `discern producers publish COMPONENT --to oci://REGISTRY/REPOSITORY:TAG`.
#[derive(Debug, Clone, clap::Args, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PublishRequest {
    /// The component to push (a `.wasm` file, relative to the current directory).
    pub component: String,
    /// Where: `oci://REGISTRY/REPOSITORY:TAG` (plain HTTP only for a registry on this machine).
    #[arg(long, value_name = "oci://REGISTRY/REPOSITORY:TAG")]
    pub to: String,
}

/// `discern producers new NAME --lang rust|python|javascript|c [--sdk DIR]`.
#[derive(Debug, Clone, clap::Args, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NewRequest {
    /// The producer's name (lowercase letters, digits, hyphens): the folder created here and
    /// the name its describe() reports.
    pub name: String,
    /// The language to write it in.
    #[arg(long, value_enum)]
    pub lang: Lang,
    /// The discern-sdk folder a Rust producer depends on (default: the SDK this discern was
    /// built from).
    #[arg(long, value_name = "DIR")]
    #[serde(default)]
    pub sdk: Option<PathBuf>,
}

/// The languages the example, and so a scaffold, is written in.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Lang {
    Rust,
    Python,
    Javascript,
    C,
}

impl Lang {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Lang::Rust => "rust",
            Lang::Python => "python",
            Lang::Javascript => "javascript",
            Lang::C => "c",
        }
    }
}

/// `discern producers [NAME]`: the listing, or one producer. `dir` is where a file path is
/// read from; `configured` says where the repository components come from.
pub(crate) fn producers(
    runtime: &Runtime,
    configured: Configured,
    dir: &Path,
    request: &ProducersRequest,
) -> Result<Reply, Refused> {
    match &request.name {
        Some(name) => show::show(runtime, &configured, dir, name),
        None => Ok(listing::list(runtime, configured)),
    }
}

/// `discern producers run`.
pub(crate) fn run(
    ws: &Workspace,
    runtime: &Runtime,
    dir: &Path,
    request: &RunRequest,
) -> Result<Reply, Refused> {
    run::run(ws, runtime, dir, request)
}

/// `discern producers fetch`: `root` is the repository whose discern.toml names the producers
/// (none outside one).
pub(crate) fn fetch(
    settings: &crate::workspace::Settings,
    root: Option<&Path>,
    request: &FetchRequest,
) -> Result<Reply, Refused> {
    registry::fetch(settings, root, request)
}

/// `discern producers publish`.
pub(crate) fn publish(
    settings: &crate::workspace::Settings,
    runtime: &Runtime,
    dir: &Path,
    request: &PublishRequest,
) -> Result<Reply, Refused> {
    registry::publish(settings, runtime, dir, request)
}

/// `discern producers new`: writes `dir/NAME/`.
pub(crate) fn new(dir: &Path, request: &NewRequest) -> Result<Reply, Refused> {
    scaffold::new(dir, request)
}
