//! Never loosen: every branch limit versus trunk's, read from the trunk commit (never the work
//! tree). Not configurable; no escape hatch.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::config::{Config, Direction, StandardDef};
use crate::git::Repo;
use crate::result::{Diagnostic, Severity};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitsStatus {
    /// Every limit is equal to or tighter than trunk's (or trunk has no config).
    Verified,
    /// Some limits are looser, each explained by an active proposal.
    Proposed,
    /// Some Standards are redefined, loosened or deleted versus trunk: blocked.
    Loosened,
    /// The trunk ref is missing: nothing could be compared (loud, not blocking).
    Unverified,
    /// Trunk's config exists but cannot be parsed: blocking.
    ParseFailed,
}

impl LimitsStatus {
    /// The wire name (as serialized).
    pub fn as_str(self) -> &'static str {
        match self {
            LimitsStatus::Verified => "verified",
            LimitsStatus::Proposed => "proposed",
            LimitsStatus::Loosened => "loosened",
            LimitsStatus::Unverified => "unverified",
            LimitsStatus::ParseFailed => "parse_failed",
        }
    }
}

/// `data.limits`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LimitsSummary {
    pub status: LimitsStatus,
    pub trunk: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trunk_commit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// An active proposal's claim: this exact loosening is explained.
#[derive(Debug, Clone, PartialEq)]
pub struct ProposalClaim {
    pub standard: String,
    pub direction: Direction,
    pub trunk_limit: f64,
    pub proposed_limit: f64,
}

#[derive(Debug, Clone)]
pub struct LimitsCheck {
    pub summary: LimitsSummary,
    /// Branch Standards that must not be measured: name → why.
    pub blocked: BTreeMap<String, String>,
    /// Standards on trunk that the branch deleted.
    pub deleted: Vec<String>,
    pub diagnostics: Vec<Diagnostic>,
    /// Loud, non-blocking warnings (unverified trunk).
    pub advisories: Vec<String>,
}

impl LimitsCheck {
    /// Whether anything blocks (a blocked or deleted Standard, or an unparsable trunk config).
    pub fn blocking(&self) -> bool {
        matches!(
            self.summary.status,
            LimitsStatus::Loosened | LimitsStatus::ParseFailed
        )
    }
}

const DRY_RUN: &str = "discern standards --dry-run";

/// Compare `config` (the branch) with the trunk's `discern.toml`.
pub fn check(
    repo: &Repo,
    config: &Config,
    trunk: &str,
    proposals: &[ProposalClaim],
) -> LimitsCheck {
    let mut check = LimitsCheck {
        summary: LimitsSummary {
            status: LimitsStatus::Verified,
            trunk: trunk.to_owned(),
            trunk_commit: None,
            reason: None,
        },
        blocked: BTreeMap::new(),
        deleted: Vec::new(),
        diagnostics: Vec::new(),
        advisories: Vec::new(),
    };
    let Some(trunk_config) = trunk_config(repo, trunk, &mut check) else {
        return check;
    };
    let mut proposed = 0;
    for standard in &config.standards {
        let Some(old) = trunk_config.standard(&standard.name) else {
            continue;
        };
        match versus(old, standard, trunk, proposals) {
            Versus::Kept => {}
            Versus::Proposed => proposed += 1,
            Versus::Blocked(message) => {
                check.diagnostics.push(diagnostic(message.clone(), DRY_RUN));
                check.blocked.insert(standard.name.clone(), message);
            }
        }
    }
    let show = show(trunk);
    for old in &trunk_config.standards {
        if config.standard(&old.name).is_none() {
            check.deleted.push(old.name.clone());
            check.diagnostics.push(diagnostic(
                format!(
                    "Standard {} is deleted on this branch ({trunk} holds its {} at {}); deletion is the ultimate loosening: restore the [standards.{}] table.",
                    old.name,
                    old.direction.bound(),
                    old.limit,
                    old.name
                ),
                &show,
            ));
        }
    }
    let blocked = check.blocked.len() + check.deleted.len();
    if blocked > 0 {
        check.summary.status = LimitsStatus::Loosened;
        check.summary.reason = Some(format!(
            "{blocked} Standard(s) redefined, loosened or deleted versus {trunk}"
        ));
    } else if proposed > 0 {
        check.summary.status = LimitsStatus::Proposed;
        check.summary.reason = Some(format!(
            "{proposed} Standard limit proposal(s) explain otherwise-forbidden limit changes"
        ));
    }
    check
}

/// How to look at trunk's config by hand.
fn show(trunk: &str) -> String {
    format!("git show {trunk}:{}", crate::config::FILE)
}

/// Trunk's config, read from its commit; `None` when there is nothing to compare with: no
/// trunk (unverified), no config on it, or one that cannot be parsed (recorded in `check`).
fn trunk_config(repo: &Repo, trunk: &str, check: &mut LimitsCheck) -> Option<Config> {
    let trunk_commit = match repo.branch_commit(trunk) {
        Ok(Some(commit)) => commit,
        Ok(None) | Err(_) => {
            check.summary.status = LimitsStatus::Unverified;
            let reason = format!(
                "the trunk {trunk:?} cannot be read (a new repository, or a clone without that branch), so no limit was compared with it"
            );
            check.advisories.push(format!(
                "Standards limits are UNVERIFIED: {reason}. Fetch the trunk (`git fetch origin {trunk}`) or set DISCERN_TRUNK to the branch work lands on."
            ));
            check.summary.reason = Some(reason);
            return None;
        }
    };
    check.summary.trunk_commit = Some(trunk_commit.to_string());
    let trunk_config = match repo.file_at(trunk_commit, crate::config::FILE) {
        Ok(None) => return None,
        Ok(Some(bytes)) => String::from_utf8(bytes)
            .map_err(|_| "it is not UTF-8".to_owned())
            .and_then(|text| {
                crate::config::Config::parse_tolerant(&text).map_err(|e| e.to_string())
            }),
        Err(e) => Err(e.to_string()),
    };
    match trunk_config {
        Ok(config) => Some(config),
        Err(e) => {
            check.summary.status = LimitsStatus::ParseFailed;
            check.summary.reason =
                Some(format!("trunk's {} cannot be parsed", crate::config::FILE));
            check.diagnostics.push(diagnostic(
                format!(
                    "trunk's {} (at {trunk}) cannot be parsed, so no limit can be verified; fix it on the trunk first:\n{e}",
                    crate::config::FILE
                ),
                &show(trunk),
            ));
            None
        }
    }
}

/// How a branch Standard compares with the trunk's of the same name.
enum Versus {
    /// Same definition, and a limit no looser.
    Kept,
    /// A looser limit that an active proposal explains.
    Proposed,
    /// Redefined, or loosened without a proposal: why.
    Blocked(String),
}

fn versus(
    old: &StandardDef,
    standard: &StandardDef,
    trunk: &str,
    proposals: &[ProposalClaim],
) -> Versus {
    let changes = changed_fields(old, standard);
    if !changes.is_empty() {
        return Versus::Blocked(format!(
            "Standard {} is redefined versus {trunk}: {}. A limit only keeps its meaning while these stay equal; restore the trunk definition. An intentional redefinition is the owner's change to make on the trunk; a proposal cannot waive it.",
            standard.name,
            changes.join("; ")
        ));
    }
    let loosened = match standard.direction {
        Direction::Up => standard.limit < old.limit,
        Direction::Down => standard.limit > old.limit,
    };
    if !loosened {
        return Versus::Kept;
    }
    let explained = proposals.iter().any(|p| {
        p.standard == standard.name
            && p.direction == standard.direction
            && p.trunk_limit == old.limit
            && p.proposed_limit == standard.limit
    });
    if explained {
        return Versus::Proposed;
    }
    let bound = standard.direction.bound();
    let rule = match standard.direction {
        Direction::Up => "floors only rise",
        Direction::Down => "ceilings only fall",
    };
    Versus::Blocked(format!(
        "Standard {} loosens its {bound} {} -> {} versus {trunk} ({rule}). Move the metric, never the limit; if this work itself caused the breach, commit the final tree and propose the change for {} with a technical reason, for the owner's exact approval.",
        standard.name, old.limit, standard.limit, standard.name
    ))
}

fn diagnostic(message: String, reproduce: &str) -> Diagnostic {
    Diagnostic {
        tool: "standards".to_owned(),
        severity: Severity::Error,
        message,
        reproduce_cmd: reproduce.to_owned(),
        file: Some(crate::config::FILE.to_owned()),
        line: None,
    }
}

/// Every field of the definition that differs, as `field old → new` (values bounded).
fn changed_fields(old: &StandardDef, new: &StandardDef) -> Vec<String> {
    let (old, new) = (old.definition(), new.definition());
    old.iter()
        .filter(|(field, value)| new.get(*field) != Some(value))
        .map(|(field, value)| {
            format!(
                "{field} {} → {}",
                bounded(value),
                bounded(new.get(field).unwrap_or(&Value::Null))
            )
        })
        .collect()
}

fn bounded(value: &Value) -> String {
    let text = match value {
        Value::Null => "(none)".to_owned(),
        other => crate::config::canonical_json(other),
    };
    if text.chars().count() > 120 {
        format!("{}…", text.chars().take(119).collect::<String>())
    } else {
        text
    }
}
