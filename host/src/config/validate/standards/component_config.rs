//! A repository component's `config`, checked before it runs against the config schema the
//! component publishes through `describe()`: the component must be loaded to know its schema,
//! so this runs when a batch is planned, not when `discern.toml` is read, but it refuses the
//! same way (table, key, line, what to write).

use toml_edit::Item;

use super::super::line_at;
use super::schema::ConfigSchema;
use crate::config::{Config, ConfigIssue};

impl Config {
    /// Every problem of Standard `standard`'s `config` against `schema`, each with the line of
    /// its key (or of `config`, or of the Standard's header).
    pub fn component_config_issues(
        &self,
        standard: &str,
        schema: &ConfigSchema,
    ) -> Vec<ConfigIssue> {
        let Some(def) = self.standard(standard) else {
            return Vec::new();
        };
        let Some(config) = def.config.as_object() else {
            return Vec::new();
        };
        let document = toml_edit::Document::parse(self.source.as_str()).ok();
        let table = document
            .as_ref()
            .and_then(|d| d.as_table().get("standards"))
            .and_then(Item::as_table_like)
            .and_then(|t| t.get(standard))
            .and_then(Item::as_table_like);
        let config_item = table.and_then(|t| t.get("config"));
        schema
            .problems(config)
            .into_iter()
            .map(|problem| {
                let key_item = problem.key.as_deref().and_then(|k| {
                    config_item
                        .and_then(Item::as_table_like)
                        .and_then(|c| c.get(k))
                });
                let span = key_item
                    .and_then(Item::span)
                    .or_else(|| config_item.and_then(Item::span));
                ConfigIssue {
                    table: format!("standards.{standard}"),
                    key: Some(match &problem.key {
                        Some(k) => format!("config.{k}"),
                        None => "config".to_owned(),
                    }),
                    line: span.map(|s| line_at(&self.source, s.start)).or(def.line),
                    message: problem.message,
                }
            })
            .collect()
    }
}
