//! The strict reader of `discern.toml`: every table and key is checked, every problem is
//! reported with its table, key, line and what is allowed.

mod evidence;
mod jobs;
mod standards;
mod worktree;

pub(crate) use standards::ConfigSchema;

use std::ops::Range;

use serde_json::Value;
use toml_edit::{Item, TableLike};

use super::{
    ApprovalPolicy, Config, ConfigError, ConfigIssue, DEFAULT_BRANCH_PREFIX, DEFAULT_MAP_DIR,
    DEFAULT_TRUNK,
};

const ROOT_TABLES: &[&str] = &[
    "repository",
    "jobs",
    "acceptance",
    "map",
    "evidence",
    "standards",
    "worktree",
];
const REPOSITORY_KEYS: &[&str] = &[
    "trunk",
    "release",
    "branch_prefix",
    "require_trunk",
    "pin_on_done",
];
const ACCEPTANCE_KEYS: &[&str] = &[
    "pre_authorized",
    "approval",
    "allowed_signers",
    "protected",
    "repository",
];
const MAP_KEYS: &[&str] = &["dir"];
const EVIDENCE_KEYS: &[&str] = &["repository", "publish", "remote", "keep_days"];
const WORKTREE_KEYS: &[&str] = &["setup", "ensure", "env_files", "ports"];
const KNOWN_JOBS: &[&str] = &["format", "build", "lint", "typecheck", "test", "smoke"];
/// The longest `timeout` a Standard or a job may have: one hour.
pub const MAX_TIMEOUT_S: f64 = 3600.0;
const JOB_KEYS: &[&str] = &["stage", "run", "artifacts", "inputs", "timeout"];
pub(crate) const STANDARD_KEYS: &[&str] = &[
    "direction",
    "findings",
    "limit",
    "producer",
    "config",
    "metric",
    "per",
    "scale",
    "margin",
    "timeout",
    "needs",
    "artifact",
    "inputs",
    "run",
];

/// Every key the schema allows, by table (`jobs.*` and `standards.*` for each job and Standard;
/// a job may also be written as a bare command): what the protected set is held to cover.
#[cfg(test)]
pub(crate) const SCHEMA: &[(&str, &[&str])] = &[
    ("repository", REPOSITORY_KEYS),
    ("acceptance", ACCEPTANCE_KEYS),
    ("map", MAP_KEYS),
    ("evidence", EVIDENCE_KEYS),
    ("worktree", WORKTREE_KEYS),
    ("jobs.*", JOB_KEYS),
    ("standards.*", STANDARD_KEYS),
];

/// How strictly to read: the branch's own config strictly; trunk's tolerantly, so that keys
/// an older or newer discern wrote do not stop the never-loosen comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    Strict,
    Tolerant,
}

pub(super) fn parse(source: &str) -> Result<Config, ConfigError> {
    parse_with(source, Mode::Strict)
}

pub(super) fn parse_with(source: &str, mode: Mode) -> Result<Config, ConfigError> {
    let spanned = toml_edit::Document::parse(source).map_err(|e| {
        ConfigError::single(ConfigIssue {
            table: String::new(),
            key: None,
            line: e.span().map(|s| line_at(source, s.start)),
            message: format!("not valid TOML: {}", e.message()),
        })
    })?;
    let document: toml_edit::DocumentMut = source.parse().map_err(|e: toml_edit::TomlError| {
        ConfigError::single(ConfigIssue {
            table: String::new(),
            key: None,
            line: None,
            message: format!("not valid TOML: {}", e.message()),
        })
    })?;
    let mut reader = Reader {
        source,
        mode,
        issues: Vec::new(),
    };
    let root = spanned.as_table();
    for (key, item) in root.iter() {
        if !ROOT_TABLES.contains(&key) {
            reader.unknown("", key, item, ROOT_TABLES, "tables");
        }
    }
    let repository = reader.table(root.get("repository"), "repository", REPOSITORY_KEYS);
    let trunk = reader
        .string(repository, "repository", "trunk")
        .unwrap_or_else(|| DEFAULT_TRUNK.to_owned());
    if let Some(problem) = ref_name_problem(&trunk) {
        reader.issue_at(
            "repository",
            Some("trunk"),
            span_of(repository, "trunk"),
            problem,
        );
    }
    let release = reader.release(repository);
    let branch_prefix = reader
        .string(repository, "repository", "branch_prefix")
        .unwrap_or_else(|| DEFAULT_BRANCH_PREFIX.to_owned());
    let require_trunk = reader
        .boolean(repository, "repository", "require_trunk")
        .unwrap_or(false);
    let pin_on_done = reader
        .boolean(repository, "repository", "pin_on_done")
        .unwrap_or(true);
    let acceptance = reader.table(root.get("acceptance"), "acceptance", ACCEPTANCE_KEYS);
    let pre_authorized = reader
        .string_list(acceptance, "acceptance", "pre_authorized", true)
        .unwrap_or_default();
    let allowed_signers = reader.string(acceptance, "acceptance", "allowed_signers");
    let protected_paths = reader
        .pathspec_list(acceptance, "acceptance", "protected")
        .unwrap_or_default();
    let approval = reader.approval(acceptance, allowed_signers.as_deref());
    let approval_repository = reader.approval_repository(acceptance);
    let map = reader.table(root.get("map"), "map", MAP_KEYS);
    let map_dir = reader
        .string(map, "map", "dir")
        .unwrap_or_else(|| DEFAULT_MAP_DIR.to_owned());
    let evidence = reader.evidence(root.get("evidence"));
    let worktree = reader.worktree(root.get("worktree"));
    let jobs = reader.jobs(root.get("jobs"));
    let standards = reader.standards(root.get("standards"), &jobs);

    if reader.issues.is_empty() {
        Ok(Config {
            trunk,
            release,
            branch_prefix,
            require_trunk,
            pin_on_done,
            jobs,
            pre_authorized,
            approval,
            allowed_signers,
            approval_repository,
            protected_paths,
            map_dir,
            evidence,
            worktree,
            standards,
            document,
            source: source.to_owned(),
        })
    } else {
        Err(ConfigError {
            issues: reader.issues,
        })
    }
}

pub(super) struct Reader<'a> {
    source: &'a str,
    mode: Mode,
    issues: Vec<ConfigIssue>,
}

fn line_at(source: &str, offset: usize) -> usize {
    source[..offset.min(source.len())].matches('\n').count() + 1
}

fn span_of(table: Option<&dyn TableLike>, key: &str) -> Option<Range<usize>> {
    table.and_then(|t| t.get(key)).and_then(Item::span)
}

fn kind(item: &Item) -> &'static str {
    match item {
        Item::None => "nothing",
        Item::Table(_) => "a table",
        Item::ArrayOfTables(_) => "an array of tables",
        Item::Value(v) => match v {
            toml_edit::Value::String(_) => "a string",
            toml_edit::Value::Integer(_) => "an integer",
            toml_edit::Value::Float(_) => "a float",
            toml_edit::Value::Boolean(_) => "a boolean",
            toml_edit::Value::Datetime(_) => "a datetime",
            toml_edit::Value::Array(_) => "an array",
            toml_edit::Value::InlineTable(_) => "an inline table",
        },
    }
}

/// Why `name` cannot be a branch name, if it cannot.
fn ref_name_problem(name: &str) -> Option<String> {
    let bad = name.is_empty()
        || name.starts_with(['-', '/'])
        || name.ends_with(['/', '.'])
        || name.contains("..")
        || name.contains("//")
        || name.contains("@{")
        || name.ends_with(".lock")
        || name
            .chars()
            .any(|c| c.is_control() || c.is_whitespace() || "~^:?*[\\".contains(c));
    bad.then(|| format!("{name:?} is not a valid branch name"))
}

impl<'a> Reader<'a> {
    /// `[repository].release`: branch-name patterns, read as pathspecs are (`*` within one part,
    /// `**` across parts; a name also names the branches below it: `release` is `release/…`).
    fn release(&mut self, repository: Option<&dyn TableLike>) -> Vec<String> {
        let patterns = self
            .string_list(repository, "repository", "release", true)
            .unwrap_or_default();
        for pattern in &patterns {
            let plain = pattern.replace('*', "x");
            let problem = ref_name_problem(&plain)
                .or_else(|| pattern.starts_with('!').then(|| "an exclusion".to_owned()))
                .or_else(|| {
                    discern_pathspec::Pathspec::check(pattern)
                        .err()
                        .map(|e| e.to_string())
                });
            if let Some(problem) = problem {
                self.issue_at(
                    "repository",
                    Some("release"),
                    span_of(repository, "release"),
                    format!("{pattern:?} is not a branch-name pattern (`release/*`): {problem}"),
                );
            }
        }
        patterns
    }

    fn issue_at(
        &mut self,
        table: &str,
        key: Option<&str>,
        span: Option<Range<usize>>,
        message: String,
    ) {
        self.issues.push(ConfigIssue {
            table: table.to_owned(),
            key: key.map(str::to_owned),
            line: span.map(|s| line_at(self.source, s.start)),
            message,
        });
    }

    fn unknown(&mut self, table: &str, key: &str, item: &Item, allowed: &[&str], what: &str) {
        if self.mode == Mode::Tolerant {
            return;
        }
        let message = if table.is_empty() {
            format!(
                "unknown table [{key}] (allowed {what}: {})",
                allowed.join(", ")
            )
        } else {
            format!("unknown key (allowed {what}: {})", allowed.join(", "))
        };
        let key = (!table.is_empty()).then_some(key);
        self.issue_at(table, key, item.span(), message);
    }

    /// A table that may be absent; unknown keys are reported.
    fn table<'i>(
        &mut self,
        item: Option<&'i Item>,
        name: &str,
        allowed: &[&str],
    ) -> Option<&'i dyn TableLike> {
        let item = item?;
        let Some(table) = item.as_table_like() else {
            self.issue_at(
                name,
                None,
                item.span(),
                format!("must be a table, found {}", kind(item)),
            );
            return None;
        };
        for (key, value) in table.iter() {
            if !allowed.contains(&key) {
                self.unknown(name, key, value, allowed, "keys");
            }
        }
        Some(table)
    }

    fn string(&mut self, table: Option<&dyn TableLike>, name: &str, key: &str) -> Option<String> {
        let item = table?.get(key)?;
        match item.as_str() {
            Some(s) => Some(s.to_owned()),
            None => {
                self.issue_at(
                    name,
                    Some(key),
                    item.span(),
                    format!("must be a string, found {}", kind(item)),
                );
                None
            }
        }
    }

    /// `[acceptance].approval`: `"signed"` (needs `allowed_signers`) or `"interactive"`;
    /// signed by default once a signers file is named.
    fn approval(&mut self, table: Option<&dyn TableLike>, signers: Option<&str>) -> ApprovalPolicy {
        let written = self.string(table, "acceptance", "approval");
        let span = span_of(table, "approval");
        match (written.as_deref(), signers) {
            (None, Some(_)) | (Some("signed"), Some(_)) => ApprovalPolicy::Signed,
            (None, None) | (Some("interactive"), _) => ApprovalPolicy::Interactive,
            (Some("signed"), None) => {
                self.issue_at(
                    "acceptance",
                    Some("approval"),
                    span,
                    "\"signed\" needs allowed_signers: the path of a file in git's allowed-signers format listing the owner's SSH keys".to_owned(),
                );
                ApprovalPolicy::Interactive
            }
            (Some(other), _) => {
                self.issue_at(
                    "acceptance",
                    Some("approval"),
                    span,
                    format!("must be \"signed\" or \"interactive\", found {other:?}"),
                );
                ApprovalPolicy::Interactive
            }
        }
    }

    /// `[acceptance].repository`: the name a signed approval is bound to, one line without
    /// spaces (e.g. `github.com/acme/app`).
    fn approval_repository(&mut self, table: Option<&dyn TableLike>) -> Option<String> {
        let name = self.string(table, "acceptance", "repository")?;
        if name.is_empty() || name.chars().any(|c| c.is_whitespace() || c.is_control()) {
            self.issue_at(
                "acceptance",
                Some("repository"),
                span_of(table, "repository"),
                "must name the repository on one line without spaces, e.g. \"github.com/acme/app\""
                    .to_owned(),
            );
            return None;
        }
        Some(name)
    }

    /// `[evidence].remote`: the base URL of a Bazel-protocol HTTP cache (`http://` or
    /// `https://`, a host, no query or fragment; credentials come from the environment).
    fn remote_url(&mut self, table: Option<&dyn TableLike>) -> Option<String> {
        let url = self.string(table, "evidence", "remote")?;
        let rest = url
            .strip_prefix("http://")
            .or_else(|| url.strip_prefix("https://"));
        let host = rest.map(|r| r.split('/').next().unwrap_or_default());
        let problem = match host {
            None => Some("must start with http:// or https://"),
            Some("") => Some("names no host"),
            Some(h) if h.contains('@') => {
                Some("must not carry credentials: set DISCERN_REMOTE_CACHE_AUTHORIZATION instead")
            }
            Some(_) if url.contains(['?', '#']) || url.chars().any(char::is_whitespace) => {
                Some("must be a plain URL, without a query, a fragment or spaces")
            }
            Some(_) => None,
        };
        if let Some(problem) = problem {
            let span = span_of(table, "remote");
            self.issue_at(
                "evidence",
                Some("remote"),
                span,
                format!("{problem}, found {url:?}"),
            );
            return None;
        }
        Some(url)
    }

    fn boolean(&mut self, table: Option<&dyn TableLike>, name: &str, key: &str) -> Option<bool> {
        let item = table?.get(key)?;
        let value = item.as_bool();
        if value.is_none() {
            self.issue_at(
                name,
                Some(key),
                item.span(),
                format!("must be true or false, found {}", kind(item)),
            );
        }
        value
    }

    fn number(&mut self, table: Option<&dyn TableLike>, name: &str, key: &str) -> Option<f64> {
        let item = table?.get(key)?;
        let value = item
            .as_float()
            .or_else(|| item.as_integer().map(|i| i as f64));
        match value {
            Some(v) if v.is_finite() => Some(v),
            Some(v) => {
                self.issue_at(
                    name,
                    Some(key),
                    item.span(),
                    format!("must be a finite number, found {v}"),
                );
                None
            }
            None => {
                self.issue_at(
                    name,
                    Some(key),
                    item.span(),
                    format!("must be a number, found {}", kind(item)),
                );
                None
            }
        }
    }

    /// A list of pathspecs (git's, as Standards write them), each checked (strict mode).
    fn pathspec_list(
        &mut self,
        table: Option<&dyn TableLike>,
        name: &str,
        key: &str,
    ) -> Option<Vec<String>> {
        let list = self.string_list(table, name, key, true)?;
        let span = table?.get(key)?.span();
        self.pathspecs(name, key, span, &list);
        Some(list)
    }

    fn string_list(
        &mut self,
        table: Option<&dyn TableLike>,
        name: &str,
        key: &str,
        allow_empty: bool,
    ) -> Option<Vec<String>> {
        let item = table?.get(key)?;
        let strings = item.as_array().and_then(|a| {
            a.iter()
                .map(|v| v.as_str().filter(|s| !s.is_empty()).map(str::to_owned))
                .collect::<Option<Vec<_>>>()
        });
        match strings {
            Some(list) if allow_empty || !list.is_empty() => Some(list),
            _ => {
                let what = if allow_empty {
                    "a list"
                } else {
                    "a non-empty list"
                };
                self.issue_at(
                    name,
                    Some(key),
                    item.span(),
                    format!("must be {what} of non-empty strings, found {}", kind(item)),
                );
                None
            }
        }
    }

    /// A duration in seconds: 0 (the default) up to [`MAX_TIMEOUT_S`].
    pub(super) fn timeout(&mut self, table: Option<&dyn TableLike>, name: &str) -> Option<f64> {
        let value = self.non_negative(table, name, "timeout")?;
        if value > MAX_TIMEOUT_S {
            self.issue_at(
                name,
                Some("timeout"),
                span_of(table, "timeout"),
                format!("must be at most {MAX_TIMEOUT_S} seconds, found {value}"),
            );
            return None;
        }
        Some(value)
    }

    fn non_negative(
        &mut self,
        table: Option<&dyn TableLike>,
        name: &str,
        key: &str,
    ) -> Option<f64> {
        let value = self.number(table, name, key)?;
        if value < 0.0 {
            self.issue_at(
                name,
                Some(key),
                span_of(table, key),
                format!("must be ≥ 0, found {value}"),
            );
            return None;
        }
        Some(value)
    }
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Why `path` is not a plain repository-relative path, if it is not.
fn path_problem(path: &str) -> Option<String> {
    let bad = path.is_empty()
        || path.starts_with('/')
        || path.contains('\\')
        || path
            .split('/')
            .any(|c| c.is_empty() || c == "." || c == "..")
        || path.split('/').next() == Some(".git");
    bad.then(|| format!("{path:?} must be a plain repository-relative path (no leading /, no . or .. components, not inside .git)"))
}

fn first_non_finite(value: &Value) -> Option<String> {
    match value {
        Value::Null => Some("a NaN or infinite value".to_owned()),
        Value::Array(items) => items.iter().find_map(first_non_finite),
        Value::Object(map) => map.values().find_map(first_non_finite),
        _ => None,
    }
}
