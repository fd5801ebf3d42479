//! `discern producers fetch [REFERENCE]` and `discern producers publish COMPONENT --to
//! oci://…`: the registry side of the kit. `fetch` brings every `oci://` producer of
//! `discern.toml` into the per-user store (or one reference, a tag resolved to the digest to
//! pin); `publish` pushes a component in the CNCF Wasm layout and prints the line to write.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use super::{FetchRequest, PublishRequest};
use crate::config::{Config, ProducerRef};
use crate::oci::{OciError, Reference, Unpinned};
use crate::result::{ErrorSlug, Hint, HintId, Refusal, Refused, Reply, Report, Section};
use crate::runtime::{ProducerComponent, Runtime};
use crate::workspace::Settings;

/// Why `fetch` or `publish` did nothing (or not all).
#[derive(Debug, thiserror::Error)]
pub(super) enum NotFetched {
    #[error(transparent)]
    Reference(#[from] crate::oci::ReferenceError),
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Registry(Vec<OciError>),
    #[error("discern.toml cannot be read: {0}")]
    Config(String),
    #[error("there is no discern.toml here, so no registry producer to fetch")]
    NoConfig,
    #[error("cannot read the component {path}: {why}")]
    Component { path: String, why: String },
    #[error("{path} is not a producer discern can run: {why}")]
    NotAProducer { path: String, why: String },
}

impl Refusal for NotFetched {
    fn slug(&self) -> ErrorSlug {
        match self {
            NotFetched::Reference(_) => ErrorSlug::InvalidArguments,
            NotFetched::Config(_) => ErrorSlug::InvalidConfig,
            NotFetched::NoConfig | NotFetched::Component { .. } => ErrorSlug::NotFound,
            NotFetched::NotAProducer { .. } => ErrorSlug::ProducerFailed,
            NotFetched::Registry(_) => ErrorSlug::PreconditionFailed,
        }
    }

    fn hint(&self) -> Hint {
        let text = match self {
            NotFetched::Reference(_) => {
                "Name it as oci://REGISTRY/REPOSITORY:TAG (publish, or fetch to learn its digest) or oci://REGISTRY/REPOSITORY:TAG@sha256:… (fetch)."
            }
            NotFetched::Config(_) => "Fix discern.toml, then fetch again.",
            NotFetched::NoConfig => {
                "Run it in a repository whose discern.toml names an oci:// producer, or name one: `discern producers fetch oci://…`."
            }
            NotFetched::Component { .. } => "Build the component, then name its .wasm file.",
            NotFetched::NotAProducer { .. } => {
                "Try it first with `discern producers run COMPONENT`, fix it, then publish."
            }
            NotFetched::Registry(_) => "Do what the message says, then run the same command again.",
        };
        Hint::next_step(HintId::SeeHelp, text)
    }

    fn refused(&self) -> Refused {
        Refused::new(self.slug(), format!("{self}."), self.hint())
    }
}

/// One registry component `fetch` handled.
#[derive(Debug, Serialize)]
struct Fetched {
    reference: String,
    /// `cached` (already in the store) or `fetched`.
    source: &'static str,
    bytes: usize,
    /// The Standards of discern.toml that name it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    standards: Vec<String>,
    /// The line to write in discern.toml (a tag resolved to its digest).
    #[serde(skip_serializing_if = "Option::is_none")]
    producer: Option<String>,
}

/// `discern producers fetch [REFERENCE]`.
pub(super) fn fetch(
    settings: &Settings,
    root: Option<&Path>,
    request: &FetchRequest,
) -> Result<Reply, Refused> {
    let wanted = match &request.reference {
        Some(text) => one(settings, text),
        None => configured(root),
    };
    let wanted = wanted?;
    let mut rows = Vec::new();
    let mut failed = Vec::new();
    for (reference, (standards, producer)) in wanted {
        let cache = settings.cache_dir.as_deref();
        match crate::oci::component(&reference, cache, &settings.oci) {
            Ok((bytes, source)) => rows.push(Fetched {
                reference: reference.to_string(),
                source: source.as_str(),
                bytes: bytes.len(),
                standards,
                producer,
            }),
            Err(e) => failed.push(e),
        }
    }
    if !failed.is_empty() {
        return Err(NotFetched::Registry(failed).into());
    }
    Ok(fetched(rows))
}

/// The references to fetch, each with the Standards naming it and (resolved from a tag) the
/// line to write.
type Wanted = BTreeMap<Reference, (Vec<String>, Option<String>)>;

/// A reference given on the command line: pinned as it is, a tag resolved to its digest.
fn one(settings: &Settings, text: &str) -> Result<Wanted, NotFetched> {
    let unpinned = Unpinned::parse(text)?;
    let (reference, line) = match &unpinned.digest {
        Some(_) => (Reference::parse(text)?, None),
        None => {
            let pinned = crate::oci::resolve(&unpinned, &settings.oci)
                .map_err(|e| NotFetched::Registry(vec![e]))?;
            let line = format!("producer = \"{pinned}\"");
            (pinned, Some(line))
        }
    };
    Ok(BTreeMap::from([(reference, (Vec::new(), line))]))
}

/// Every `oci://` producer the work tree's discern.toml names.
fn configured(root: Option<&Path>) -> Result<Wanted, NotFetched> {
    let root = root.ok_or(NotFetched::NoConfig)?;
    let config = Config::load(root)
        .map_err(|e| NotFetched::Config(e.to_string()))?
        .ok_or(NotFetched::NoConfig)?;
    let mut wanted = Wanted::new();
    for standard in &config.standards {
        if let ProducerRef::Oci(reference) = &standard.producer {
            let entry = wanted.entry(reference.clone()).or_default();
            entry.0.push(standard.name.clone());
        }
    }
    Ok(wanted)
}

fn fetched(rows: Vec<Fetched>) -> Reply {
    let state = match rows.len() {
        0 => "discern.toml names no registry producer; nothing to fetch.".to_owned(),
        n => format!(
            "{n} registry component{} in the per-user cache, verified against {}.",
            if n == 1 { " is" } else { "s are" },
            if n == 1 {
                "its digest"
            } else {
                "their digests"
            }
        ),
    };
    let lines: Vec<String> = rows
        .iter()
        .map(|r| {
            let standards = match r.standards.is_empty() {
                true => String::new(),
                false => format!(" (for {})", r.standards.join(", ")),
            };
            format!(
                "{}: {}, {} bytes{standards}",
                r.reference, r.source, r.bytes
            )
        })
        .collect();
    let mut sections = vec![Section {
        table: None,
        title: "Components".to_owned(),
        lines,
    }];
    let producers: Vec<String> = rows.iter().filter_map(|r| r.producer.clone()).collect();
    if !producers.is_empty() {
        sections.push(Section {
            table: None,
            title: "Pin it in discern.toml (the tag resolved to its digest)".to_owned(),
            lines: producers,
        });
    }
    Reply::new(FetchedData { components: rows }, Report { state, sections })
}

/// `data` of `producers fetch`.
#[derive(serde::Serialize)]
struct FetchedData {
    components: Vec<Fetched>,
}

/// `data` of `producers publish`: where the component went, and the line that names it.
#[derive(serde::Serialize)]
struct PublishedData {
    reference: String,
    producer: String,
    component_sha256: String,
    bytes: usize,
}

/// `discern producers publish COMPONENT --to oci://REGISTRY/REPOSITORY:TAG`.
pub(super) fn publish(
    settings: &Settings,
    runtime: &Runtime,
    dir: &Path,
    request: &PublishRequest,
) -> Result<Reply, Refused> {
    push(settings, runtime, dir, request).map_err(Refused::from)
}

fn push(
    settings: &Settings,
    runtime: &Runtime,
    dir: &Path,
    request: &PublishRequest,
) -> Result<Reply, NotFetched> {
    let to = Unpinned::parse(&request.to)?;
    if to.digest.is_some() {
        return Err(NotFetched::Reference(
            crate::oci::ReferenceError::Malformed {
                text: request.to.clone(),
                why: "a push names a tag, and the registry gives the digest",
            },
        ));
    }
    let path = request.component.as_str();
    let component =
        ProducerComponent::from_file(path, &dir.join(path)).map_err(|e| NotFetched::Component {
            path: path.to_owned(),
            why: e.to_string(),
        })?;
    let info = runtime
        .describe(&component)
        .map_err(|e| NotFetched::NotAProducer {
            path: path.to_owned(),
            why: e.to_string(),
        })?;
    let pinned = crate::oci::push(component.bytes(), &to, &request.to, &settings.oci)
        .map_err(|e| NotFetched::Registry(vec![e]))?;
    let line = format!("producer = \"{pinned}\"");
    let report = Report {
        state: format!(
            "Published {path} ({} v{}, {} bytes) as {pinned}.",
            info.name,
            info.version,
            component.bytes().len()
        ),
        sections: vec![Section {
            table: None,
            title: "Name it in discern.toml (pinned by its digest; changing it needs the owner's approval)".to_owned(),
            lines: vec![line.clone()],
        }],
    };
    let data = PublishedData {
        reference: pinned.to_string(),
        producer: line,
        component_sha256: component.digest().hex(),
        bytes: component.bytes().len(),
    };
    Ok(Reply::new(data, report))
}
