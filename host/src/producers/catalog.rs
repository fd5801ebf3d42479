//! Every producer this checkout can run, described: the built-ins embedded in the binary and the
//! repository components `discern.toml` names, each loaded and asked `describe()`. A component
//! that cannot be read, loaded or described is a row with its error, never a refusal.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::builtins;
use crate::config::{Config, ProducerRef};
use crate::measure::Components;
use crate::planner::ComponentSource;
use crate::runtime::{ProducerComponent, Runtime};
use crate::workspace::Workspace;

/// Where a producer comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Source {
    /// Embedded in this binary (`builtin:<name>`).
    Builtin,
    /// A `.wasm` path a Standard of `discern.toml` names.
    Repository,
    /// An `oci://` component a Standard of `discern.toml` pins.
    Registry,
    /// A component file named on the command line.
    File,
}

impl Source {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Source::Builtin => "builtin",
            Source::Repository => "repository",
            Source::Registry => "registry",
            Source::File => "file",
        }
    }
}

/// One producer, as `describe()` and the loader report it.
#[derive(Debug, Clone, Serialize)]
pub(super) struct Row {
    /// `builtin:<name>`, or the component's path.
    pub name: String,
    pub source: Source,
    /// The Standards that name it (repository components).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub standards: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wit_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<usize>,
    pub metrics: Vec<String>,
    /// Whether it publishes a JSON Schema of its `config`.
    pub config_schema: bool,
    /// Why it cannot be read, loaded or described.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The published schema, parsed (shown by `discern producers NAME`).
    #[serde(skip)]
    pub schema: Option<Value>,
}

impl Row {
    fn failed(name: String, source: Source, error: String) -> Self {
        Self {
            name,
            source,
            standards: Vec::new(),
            version: None,
            wit_version: None,
            sha256: None,
            bytes: None,
            metrics: Vec::new(),
            config_schema: false,
            error: Some(error),
            schema: None,
        }
    }
}

/// `component` loaded (contract version checked) and described.
pub(super) fn describe(runtime: &Runtime, component: &ProducerComponent, source: Source) -> Row {
    let described = runtime
        .load(component)
        .and_then(|loaded| Ok((loaded, runtime.describe(component)?)));
    let mut row = Row::failed(component.label().to_owned(), source, String::new());
    row.sha256 = Some(component.digest().hex());
    row.bytes = Some(component.bytes().len());
    match described {
        Ok((loaded, info)) => {
            row.error = None;
            row.version = Some(info.version);
            row.wit_version = Some(loaded.wit_version.clone());
            row.metrics = info.metrics;
            row.config_schema = info.config_schema.is_some();
            row.schema = info
                .config_schema
                .map(|text| serde_json::from_str(&text).unwrap_or(Value::String(text)));
        }
        Err(e) => row.error = Some(e.to_string()),
    }
    row
}

/// Every built-in, in the order `builtins` lists them.
pub(super) fn builtin_rows(runtime: &Runtime) -> Vec<Row> {
    builtins::names()
        .filter_map(builtins::component)
        .map(|component| describe(runtime, &component, Source::Builtin))
        .collect()
}

/// The repository and registry components `config` names, one row per path or reference (with
/// every Standard using it), read from the work tree as `discern standards --force` would load
/// them (a registry component from the per-user store, fetched on a miss).
pub(super) fn repository_rows(ws: &Workspace, runtime: &Runtime, config: &Config) -> Vec<Row> {
    let mut users: BTreeMap<String, (&ProducerRef, Vec<String>)> = BTreeMap::new();
    for standard in &config.standards {
        if matches!(
            standard.producer,
            ProducerRef::Path(_) | ProducerRef::Oci(_)
        ) {
            let entry = users
                .entry(standard.producer.label())
                .or_insert((&standard.producer, Vec::new()));
            entry.1.push(standard.name.clone());
        }
    }
    let components = Components {
        repo: &ws.repo,
        snapshot: None,
        settings: &ws.settings,
        origin: crate::measure::ComponentOrigin::WorkTree,
    };
    users
        .into_iter()
        .map(|(label, (producer, standards))| {
            let source = match producer {
                ProducerRef::Oci(_) => Source::Registry,
                _ => Source::Repository,
            };
            let mut row = match components.component(producer) {
                Ok(component) => describe(runtime, &component, source),
                Err(e) => Row::failed(label, source, e),
            };
            row.standards = standards;
            row
        })
        .collect()
}
