//! `discern.toml`: read, strictly validate, and (later) edit limits in place.
//!
//! Validation happens before anything runs and reports every problem at once, each with the
//! table, the key, the line, and what is allowed. The parsed `toml_edit` document is kept so
//! that limit edits touch nothing but the limit values.

mod error;
mod jobs;
mod standard;
mod validate;
mod value;

use std::path::Path;

pub use error::{ConfigError, ConfigIssue};
pub use jobs::{Job, Stage};
pub use standard::{Direction, ExtentKind, Per, ProducerRef, StandardDef};
pub use value::{canonical_json, toml_to_json};

/// The config file's name at the repository root.
pub const FILE: &str = "discern.toml";
pub const DEFAULT_TRUNK: &str = "main";
pub const DEFAULT_BRANCH_PREFIX: &str = "agent/";
pub const DEFAULT_MAP_DIR: &str = "docs/map";

/// A validated `discern.toml`.
#[derive(Debug, Clone)]
pub struct Config {
    /// `[repository].trunk` as written (see [`Config::trunk`] for the effective one).
    pub trunk: String,
    pub branch_prefix: String,
    pub jobs: Vec<Job>,
    pub pre_authorized: Vec<String>,
    pub map_dir: String,
    /// In declaration order: plan order and result order.
    pub standards: Vec<StandardDef>,
    /// The editable document, for limit edits that preserve everything else byte for byte.
    pub document: toml_edit::DocumentMut,
    pub source: String,
}

impl Config {
    /// Parse and validate `source` (the content of `discern.toml`).
    pub fn parse(source: &str) -> Result<Self, ConfigError> {
        validate::parse(source)
    }

    /// Parse trunk's config tolerantly: keys and tables this discern does not know are
    /// ignored, so that a config another version wrote can still be compared.
    pub fn parse_tolerant(source: &str) -> Result<Self, ConfigError> {
        validate::parse_with(source, validate::Mode::Tolerant)
    }

    /// Read `discern.toml` from the repository root; `Ok(None)` when there is none.
    pub fn load(root: &Path) -> Result<Option<Self>, ConfigError> {
        let path = root.join(FILE);
        match std::fs::read_to_string(&path) {
            Ok(source) => Self::parse(&source).map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(ConfigError::single(ConfigIssue {
                table: String::new(),
                key: None,
                line: None,
                message: format!("cannot read {}: {e}", path.display()),
            })),
        }
    }

    /// The effective trunk: `override_` (from `DISCERN_TRUNK`) wins over the config.
    pub fn trunk<'a>(&'a self, override_: Option<&'a str>) -> &'a str {
        override_.filter(|t| !t.is_empty()).unwrap_or(&self.trunk)
    }

    pub fn standard(&self, name: &str) -> Option<&StandardDef> {
        self.standards.iter().find(|s| s.name == name)
    }

    pub fn job(&self, name: &str) -> Option<&Job> {
        self.jobs.iter().find(|j| j.name == name)
    }
}
