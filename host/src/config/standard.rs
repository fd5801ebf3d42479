use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Value, json};

use super::value::canonical_json;

/// `up`: the limit is a floor; `down`: a ceiling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    Up,
    Down,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Up => "up",
            Direction::Down => "down",
        }
    }

    /// "floor" or "ceiling".
    pub fn bound(self) -> &'static str {
        match self {
            Direction::Up => "floor",
            Direction::Down => "ceiling",
        }
    }
}

/// How a `down` Standard without `per` judges its findings: `fingerprints` (the default) fails
/// a swap (new findings that fixed ones hid from the count); `count` judges the count alone.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingsMode {
    #[default]
    Fingerprints,
    Count,
}

impl FindingsMode {
    pub const NAMES: &'static str =
        "\"fingerprints\" (the default: a swap fails), \"count\" (the count alone)";

    pub fn as_str(self) -> &'static str {
        match self {
            FindingsMode::Fingerprints => "fingerprints",
            FindingsMode::Count => "count",
        }
    }
}

/// Where a Standard's producer comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum ProducerRef {
    /// `builtin:<name>`.
    Builtin(String),
    /// A `.wasm` component, relative to the repository root.
    Path(String),
    /// A component in an OCI registry, pinned by its manifest's digest.
    Oci(crate::oci::Reference),
}

impl ProducerRef {
    pub fn label(&self) -> String {
        match self {
            ProducerRef::Builtin(name) => format!("builtin:{name}"),
            ProducerRef::Path(path) => path.clone(),
            ProducerRef::Oci(reference) => reference.to_string(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExtentKind {
    Files,
    Lines,
    Words,
    Bytes,
}

impl ExtentKind {
    pub const NAMES: &'static str = "files, lines, words, bytes";

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "files" => Some(ExtentKind::Files),
            "lines" => Some(ExtentKind::Lines),
            "words" => Some(ExtentKind::Words),
            "bytes" => Some(ExtentKind::Bytes),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ExtentKind::Files => "files",
            ExtentKind::Lines => "lines",
            ExtentKind::Words => "words",
            ExtentKind::Bytes => "bytes",
        }
    }
}

/// The denominator of a rate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Per {
    /// An extent over pathspecs, computed from the same snapshot (by `builtin:extent`).
    Extent {
        kind: ExtentKind,
        paths: Vec<String>,
    },
    /// Another metric the same producer emits.
    Metric(String),
}

impl Per {
    pub fn describe(&self) -> String {
        match self {
            Per::Extent { kind, paths } => format!("{} of {}", kind.as_str(), paths.join(", ")),
            Per::Metric(metric) => format!("metric {metric}"),
        }
    }
}

/// One `[standards.<name>]` table, validated, defaults applied.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StandardDef {
    pub name: String,
    pub direction: Direction,
    pub limit: f64,
    pub producer: ProducerRef,
    /// The `config` table as a JSON object (`{}` when absent).
    pub config: Value,
    /// The metric to read; defaults to the Standard's name.
    pub metric: String,
    pub per: Option<Per>,
    pub scale: f64,
    pub margin: f64,
    /// Seconds of producer budget; 0 = the default.
    pub timeout: f64,
    /// Jobs to run first: `jobs.<name>`.
    pub needs: Vec<String>,
    pub artifact: Option<String>,
    pub inputs: Option<Vec<String>>,
    /// Compatibility: a command whose stdout carries `DISCERN_METRIC` lines (unsandboxed).
    pub run: Option<String>,
    /// Whether a swap fails (`fingerprints`) or the count alone is judged (`count`).
    pub findings: FindingsMode,
    /// 1-based line of the table header.
    pub line: Option<usize>,
}

impl StandardDef {
    /// The fields that give the limit its meaning, normalized (defaults applied, lists
    /// canonical). Any difference versus trunk is a redefinition. `limit`, `margin` and
    /// `timeout` are deliberately absent.
    pub fn definition(&self) -> BTreeMap<&'static str, Value> {
        let mut needs = self.needs.clone();
        needs.sort();
        needs.dedup();
        BTreeMap::from([
            ("metric", json!(self.metric)),
            ("direction", json!(self.direction.as_str())),
            ("producer", json!(self.producer.label())),
            ("config", self.config.clone()),
            (
                "per",
                match &self.per {
                    None => Value::Null,
                    Some(Per::Metric(m)) => json!(m),
                    Some(Per::Extent { kind, paths }) => json!({ kind.as_str(): paths }),
                },
            ),
            ("scale", json!(self.scale)),
            ("needs", json!(needs)),
            ("artifact", json!(self.artifact)),
            ("inputs", json!(self.inputs)),
            ("run", json!(self.run)),
        ])
        .into_iter()
        // Only a non-default mode is written, so a definition from before the field existed
        // keeps its fingerprint.
        .chain(
            (self.findings != FindingsMode::default())
                .then(|| ("findings", json!(self.findings.as_str()))),
        )
        .collect()
    }

    /// A stable fingerprint of [`StandardDef::definition`] (sha256 of its canonical JSON).
    pub fn definition_fingerprint(&self) -> String {
        let definition: serde_json::Map<String, Value> = self
            .definition()
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect();
        crate::digest::Digest::of(canonical_json(&Value::Object(definition)).as_bytes()).hex()
    }
}
