//! `discern producers`: every producer this checkout can run — the built-ins and the
//! repository components `discern.toml` names — with contract version, digest and the metrics
//! `describe()` declares.

use serde::Serialize;

use super::catalog::{self, Row};
use crate::config::Config;
use crate::result::{Hint, HintId, Reply, Report, Section};
use crate::runtime::{Runtime, SUPPORTED_WIT_VERSIONS, supported_wit_versions};
use crate::workspace::Workspace;

/// `data` of `producers`: the contract versions this binary runs, and every producer.
#[derive(Debug, Serialize)]
struct ProducersData<'a> {
    /// One entry per supported contract version (`"0.2.x"`).
    wit_versions: Vec<String>,
    producers: &'a [Row],
}

/// Where the repository components come from: the work tree's `discern.toml` (none outside a
/// repository), or why it cannot be read.
pub(crate) enum Configured<'a> {
    None,
    Config(&'a Workspace, &'a Config),
    Unreadable(String),
}

/// The listing: built-ins, then the repository components (a component that fails is a row
/// with its error; a config that cannot be read is an advisory).
pub(super) fn list(runtime: &Runtime, configured: Configured) -> Reply {
    let mut rows = catalog::builtin_rows(runtime);
    let builtins = rows.len();
    let mut advisories = Vec::new();
    match configured {
        Configured::None => {}
        Configured::Config(ws, config) => {
            rows.extend(catalog::repository_rows(ws, runtime, config))
        }
        Configured::Unreadable(why) => advisories.push(format!(
            "The repository components are not listed: discern.toml cannot be read ({why})."
        )),
    }
    let (builtin_rows, repository_rows) = rows.split_at(builtins);
    let failed = repository_rows.iter().filter(|r| r.error.is_some()).count();
    let mut sections = vec![Section {
        table: None,
        title: "Built-in producers".to_owned(),
        lines: builtin_rows.iter().map(line).collect(),
    }];
    if !repository_rows.is_empty() {
        sections.push(Section {
            table: None,
            title: "Repository components".to_owned(),
            lines: repository_rows.iter().map(line).collect(),
        });
    }
    let report = Report {
        state: state(builtins, repository_rows.len(), failed),
        sections,
    };
    let mut envelope = Reply::new(ProducersData {
            wit_versions: SUPPORTED_WIT_VERSIONS
                .iter()
                .map(|(major, minor)| format!("{major}.{minor}.x"))
                .collect(),
            producers: &rows,
        },
        report,
    )
    .with_hint(Hint::next_step(
        HintId::BuildCustomProducer,
        "Scaffold your own producer with `discern producers new NAME --lang rust|python|javascript|c`, try it with `discern producers run PATH.wasm --config JSON`, and point a Standard at it with `producer = \"path/to/producer.wasm\"`.",
    ));
    envelope.advisories = advisories;
    envelope
}

fn state(builtins: usize, components: usize, failed: usize) -> String {
    let components = match (components, failed) {
        (0, _) => String::new(),
        (1, 0) => " and 1 repository component".to_owned(),
        (n, 0) => format!(" and {n} repository components"),
        (n, f) => format!(" and {n} repository component(s), {f} of which cannot be loaded"),
    };
    format!(
        "{builtins} built-in producers{components}; this discern runs components built against discern:producer {}.",
        supported_wit_versions()
    )
}

/// One row as a line: name, version, contract, digest, metrics (or the error).
pub(super) fn line(row: &Row) -> String {
    let used_by = match row.standards.is_empty() {
        true => String::new(),
        false => format!("  (used by {})", row.standards.join(", ")),
    };
    if let Some(error) = &row.error {
        return format!("{:<24} cannot be used: {error}{used_by}", row.name);
    }
    let metrics = match row.metrics.is_empty() {
        true => "(whatever the job prints)".to_owned(),
        false => row.metrics.join(", "),
    };
    let sha = row.sha256.as_deref().unwrap_or("");
    format!(
        "{:<24} v{:<8} wit {:<7} sha256:{}…  metrics: {metrics}{used_by}",
        row.name,
        row.version.as_deref().unwrap_or("?"),
        row.wit_version.as_deref().unwrap_or("?"),
        &sha[..sha.len().min(12)],
    )
}
