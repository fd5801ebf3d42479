//! `discern producers`: every producer this discern can run, with its contract version,
//! digest and the metrics its `describe()` declares.

use serde::Serialize;

use crate::builtins;
use crate::result::{Envelope, ErrorSlug, Hint, HintId, Report, Section};
use crate::runtime::{Runtime, supported_wit_versions};

pub const VERB: &str = "producers";

/// `data` of `producers`: the contract versions this binary runs, and every built-in.
#[derive(Debug, Serialize)]
struct ProducersData<'a> {
    wit_versions: [String; 1],
    producers: &'a [ProducerRow],
}

/// `discern producers` takes no arguments.
#[derive(Debug, Clone, Default, clap::Args, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProducersRequest {}

#[derive(Debug, Serialize)]
struct ProducerRow {
    name: String,
    source: &'static str,
    version: String,
    wit_version: String,
    sha256: String,
    bytes: usize,
    metrics: Vec<String>,
}

pub fn producers(runtime: &Runtime) -> Envelope {
    let mut rows = Vec::new();
    for name in builtins::names() {
        let Some(component) = builtins::component(name) else {
            continue;
        };
        let described = runtime
            .load(&component)
            .and_then(|loaded| Ok((loaded, runtime.describe(&component)?)));
        let (loaded, info) = match described {
            Ok(ok) => ok,
            Err(e) => {
                return Envelope::refusal(
                    "producers",
                    ErrorSlug::ProducerFailed,
                    format!("The built-in {e}. This build of discern is broken."),
                    Hint::next_step(
                        HintId::SeeHelp,
                        "Rebuild discern from a clean checkout (`cargo build --release`).",
                    ),
                );
            }
        };
        rows.push(ProducerRow {
            name: component.label().to_owned(),
            source: "builtin",
            version: info.version,
            wit_version: loaded.wit_version.clone(),
            sha256: component.digest().hex(),
            bytes: component.bytes().len(),
            metrics: info.metrics,
        });
    }
    let lines = rows
        .iter()
        .map(|r| {
            format!(
                "{:<24} v{:<8} wit {:<7} sha256:{}…  metrics: {}",
                r.name,
                r.version,
                r.wit_version,
                &r.sha256[..12],
                if r.metrics.is_empty() {
                    "(whatever the job prints)".to_owned()
                } else {
                    r.metrics.join(", ")
                }
            )
        })
        .collect();
    let report = Report {
        state: format!(
            "{} built-in producers; this discern runs components built against discern:producer {}.",
            rows.len(),
            supported_wit_versions()
        ),
        sections: vec![Section {
            table: None,
            title: "Built-in producers".to_owned(),
            lines,
        }],
    };
    Envelope::ok(
        "producers",
        serde_json::to_value(ProducersData {
            wit_versions: [supported_wit_versions()],
            producers: &rows,
        })
        .unwrap_or(serde_json::Value::Null),
        report,
    )
    .with_hint(Hint::next_step(
        HintId::BuildCustomProducer,
        "Write your own producer with the SDK (sdk/README.md) and point a Standard at it with `producer = \"path/to/producer.wasm\"`.",
    ))
}
