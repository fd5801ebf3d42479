//! `discern producers NAME`: one producer — a built-in (`builtin:pattern`), a repository
//! component by its path, the producer of a Standard by the Standard's name, or any component
//! file — with its metrics and the config schema it publishes.

use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::VERB;
use super::catalog::{self, Row, Source};
use super::listing::{self, Configured};
use crate::builtins;
use crate::config::ProducerRef;
use crate::result::{Action, ErrorSlug, Hint, HintId, Refused, Reply, Report, Section};
use crate::runtime::{ProducerComponent, Runtime};

/// `data` of `producers NAME`.
#[derive(Debug, Serialize)]
struct ShowData<'a> {
    producer: &'a Row,
    /// The config schema it publishes (`null` when it publishes none).
    config_schema: &'a Option<Value>,
}

/// Show the producer `name` names; `dir` is where a relative file path is read from.
pub(super) fn show(
    runtime: &Runtime,
    configured: &Configured,
    dir: &Path,
    name: &str,
) -> Result<Reply, Refused> {
    let Some(row) = find(runtime, configured, dir, name) else {
        return Err(unknown(runtime, configured, name));
    };
    let mut sections = vec![Section {
        table: None,
        title: "Producer".to_owned(),
        lines: vec![listing::line(&row)],
    }];
    if row.error.is_none() {
        sections.push(Section {
            table: None,
            title: "Metrics".to_owned(),
            lines: match row.metrics.is_empty() {
                true => vec!["(none declared: whatever the job prints)".to_owned()],
                false => row.metrics.clone(),
            },
        });
        sections.push(Section {
            table: None,
            title: "Config schema".to_owned(),
            lines: match &row.schema {
                Some(schema) => serde_json::to_string_pretty(schema)
                    .unwrap_or_default()
                    .lines()
                    .map(str::to_owned)
                    .collect(),
                None => {
                    vec!["(publishes none: its config is not checked before it runs)".to_owned()]
                }
            },
        });
    }
    let state = match &row.error {
        Some(_) => format!("{} ({}) cannot be used.", row.name, row.source.as_str()),
        None => format!(
            "{} v{} ({}), built against discern:producer {}.",
            row.name,
            row.version.as_deref().unwrap_or("?"),
            row.source.as_str(),
            row.wit_version.as_deref().unwrap_or("?")
        ),
    };
    let data = ShowData {
        producer: &row,
        config_schema: &row.schema,
    };
    Ok(Reply::new(data, Report { state, sections }))
}

/// The row `name` stands for: a built-in label, a configured path or Standard, or a file.
fn find(runtime: &Runtime, configured: &Configured, dir: &Path, name: &str) -> Option<Row> {
    let short = name.strip_prefix(builtins::PREFIX).unwrap_or(name);
    if let Some(component) = builtins::component(short) {
        return Some(catalog::describe(runtime, &component, Source::Builtin));
    }
    if let Configured::Config(ws, config) = configured {
        let producer = config.standard(name).map(|s| s.producer.clone());
        if let Some(ProducerRef::Builtin(builtin)) = &producer {
            let component = builtins::component(builtin)?;
            return Some(catalog::describe(runtime, &component, Source::Builtin));
        }
        let path = match &producer {
            Some(ProducerRef::Path(_) | ProducerRef::Oci(_)) => {
                producer.as_ref().map(ProducerRef::label)
            }
            _ => None,
        };
        let path = path.as_deref().unwrap_or(name.trim_start_matches("./"));
        let rows = catalog::repository_rows(ws, runtime, config);
        if let Some(row) = rows.into_iter().find(|r| r.name == path) {
            return Some(row);
        }
    }
    let file = dir.join(name);
    let component = ProducerComponent::from_file(name, &file).ok()?;
    Some(catalog::describe(runtime, &component, Source::File))
}

fn unknown(runtime: &Runtime, configured: &Configured, name: &str) -> Refused {
    let mut known: Vec<String> = catalog::builtin_rows(runtime)
        .into_iter()
        .map(|r| r.name)
        .collect();
    if let Configured::Config(_, config) = configured {
        let paths: std::collections::BTreeSet<String> = config
            .standards
            .iter()
            .filter_map(|s| match &s.producer {
                ProducerRef::Path(_) | ProducerRef::Oci(_) => Some(s.producer.label()),
                ProducerRef::Builtin(_) => None,
            })
            .collect();
        known.extend(paths);
    }
    Refused::new(
        ErrorSlug::NotFound,
        format!(
            "No producer {name:?}: it is no built-in, no component discern.toml names, no Standard and no file. The producers here: {}.",
            known.join(", ")
        ),
        Hint::next_step(HintId::SeeHelp, "List the producers, then name one")
            .with_action(Action::new(VERB)),
    )
}
