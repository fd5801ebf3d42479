//! The part of a SARIF 2.1.0 log this producer reads. Everything is optional and unknown
//! properties are ignored: tools write very different subsets of the format.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Default, Deserialize)]
pub struct Log {
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default)]
    pub runs: Vec<Run>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Run {
    #[serde(default)]
    pub tool: Tool,
    #[serde(default)]
    pub results: Option<Vec<SarifResult>>,
    #[serde(default)]
    pub artifacts: Vec<Artifact>,
    #[serde(default)]
    pub original_uri_base_ids: BTreeMap<String, ArtifactLocation>,
    #[serde(default)]
    pub invocations: Vec<Invocation>,
    /// How columns are counted: `utf16CodeUnits` (the default) or `unicodeCodePoints`.
    #[serde(default)]
    pub column_kind: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub struct Tool {
    #[serde(default)]
    pub driver: ToolComponent,
}

#[derive(Debug, Default, Deserialize)]
pub struct ToolComponent {
    #[serde(default)]
    pub rules: Vec<Rule>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub default_configuration: Option<RuleConfiguration>,
}

#[derive(Debug, Default, Deserialize)]
pub struct RuleConfiguration {
    #[serde(default)]
    pub level: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SarifResult {
    #[serde(default)]
    pub rule_id: Option<String>,
    #[serde(default)]
    pub rule_index: Option<i64>,
    #[serde(default)]
    pub rule: Option<RuleReference>,
    #[serde(default)]
    pub level: Option<String>,
    #[serde(default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub message: Message,
    #[serde(default)]
    pub locations: Vec<Location>,
    #[serde(default)]
    pub fingerprints: BTreeMap<String, Value>,
    #[serde(default)]
    pub partial_fingerprints: BTreeMap<String, Value>,
    #[serde(default)]
    pub suppressions: Option<Vec<Suppression>>,
}

#[derive(Debug, Default, Deserialize)]
pub struct RuleReference {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub index: Option<i64>,
}

#[derive(Debug, Default, Deserialize)]
pub struct Message {
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub markdown: Option<String>,
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub arguments: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Location {
    #[serde(default)]
    pub physical_location: Option<PhysicalLocation>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PhysicalLocation {
    #[serde(default)]
    pub artifact_location: Option<ArtifactLocation>,
    #[serde(default)]
    pub region: Option<Region>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactLocation {
    #[serde(default)]
    pub uri: Option<String>,
    #[serde(default)]
    pub uri_base_id: Option<String>,
    #[serde(default)]
    pub index: Option<i64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Region {
    #[serde(default)]
    pub start_line: Option<i64>,
    #[serde(default)]
    pub start_column: Option<i64>,
    #[serde(default)]
    pub snippet: Option<Snippet>,
}

#[derive(Debug, Default, Deserialize)]
pub struct Snippet {
    #[serde(default)]
    pub text: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub struct Artifact {
    #[serde(default)]
    pub location: Option<ArtifactLocation>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Invocation {
    #[serde(default)]
    pub working_directory: Option<ArtifactLocation>,
}

#[derive(Debug, Default, Deserialize)]
pub struct Suppression {
    #[serde(default)]
    pub status: Option<String>,
}

impl Run {
    /// The rule a result names: by `ruleIndex`/`rule.index`, else by id.
    pub fn rule_of(&self, result: &SarifResult) -> Option<&Rule> {
        let rules = &self.tool.driver.rules;
        let index = result
            .rule_index
            .or_else(|| result.rule.as_ref().and_then(|r| r.index));
        if let Some(rule) = index
            .and_then(|i| usize::try_from(i).ok())
            .and_then(|i| rules.get(i))
        {
            return Some(rule);
        }
        let id = result.id_given()?;
        rules.iter().find(|r| r.id == id)
    }

    /// The result's rule id, from the result or its rule.
    pub fn rule_id(&self, result: &SarifResult) -> String {
        result
            .id_given()
            .map(str::to_owned)
            .or_else(|| self.rule_of(result).map(|r| r.id.clone()))
            .filter(|id| !id.is_empty())
            .unwrap_or_else(|| "(no rule)".to_owned())
    }

    /// `error`, `warning`, `note` or `none`: the result's level, else its rule's default, else
    /// `warning`; a result whose `kind` is not `fail` has level `none` unless it says one.
    pub fn level(&self, result: &SarifResult) -> &'static str {
        let given = result.level.as_deref().or_else(|| {
            match result.kind.as_deref() {
                None | Some("fail") => {}
                Some(_) => return Some("none"),
            }
            self.rule_of(result)
                .and_then(|r| r.default_configuration.as_ref())
                .and_then(|c| c.level.as_deref())
        });
        match given {
            Some("error") => "error",
            Some("note") => "note",
            Some("none") => "none",
            _ => "warning",
        }
    }
}

impl SarifResult {
    fn id_given(&self) -> Option<&str> {
        self.rule_id
            .as_deref()
            .or_else(|| self.rule.as_ref().and_then(|r| r.id.as_deref()))
    }

    /// Suppressed in source or externally, with the suppression accepted (a suppression
    /// without a status is accepted; `underReview` and `rejected` ones do not suppress).
    pub fn suppressed(&self) -> bool {
        self.suppressions.as_ref().is_some_and(|list| {
            list.iter()
                .any(|s| matches!(s.status.as_deref(), None | Some("accepted")))
        })
    }

    /// A passing, not-applicable or informational result is no finding.
    pub fn is_problem(&self) -> bool {
        !matches!(
            self.kind.as_deref(),
            Some("pass" | "notApplicable" | "informational")
        )
    }

    /// The message text, `{0}`-style placeholders filled from its arguments.
    pub fn text(&self, rule: &str) -> String {
        let message = &self.message;
        let mut text = message
            .text
            .clone()
            .or_else(|| message.markdown.clone())
            .or_else(|| message.id.clone())
            .unwrap_or_else(|| rule.to_owned());
        for (i, argument) in message.arguments.iter().enumerate() {
            text = text.replace(&format!("{{{i}}}"), argument);
        }
        text
    }

    /// The first physical location.
    pub fn physical(&self) -> Option<&PhysicalLocation> {
        self.locations
            .iter()
            .find_map(|l| l.physical_location.as_ref())
    }
}
