//! The strict reader of `discern.toml`: every table and key is checked, every problem is
//! reported with its table, key, line and what is allowed.

use std::ops::Range;

use serde_json::Value;
use toml_edit::{Item, TableLike};

use super::jobs::{Job, Stage};
use super::standard::{Direction, ExtentKind, Per, ProducerRef, StandardDef};
use super::value::item_to_json;
use super::{
    Config, ConfigError, ConfigIssue, DEFAULT_BRANCH_PREFIX, DEFAULT_MAP_DIR, DEFAULT_TRUNK,
};

const ROOT_TABLES: &[&str] = &["repository", "jobs", "acceptance", "map", "standards"];
const REPOSITORY_KEYS: &[&str] = &["trunk", "branch_prefix"];
const ACCEPTANCE_KEYS: &[&str] = &["pre_authorized"];
const MAP_KEYS: &[&str] = &["dir"];
const KNOWN_JOBS: &[&str] = &["format", "build", "lint", "typecheck", "test", "smoke"];
const JOB_KEYS: &[&str] = &["stage", "run", "artifacts", "inputs", "timeout"];
const STANDARD_KEYS: &[&str] = &[
    "direction",
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

/// How strictly to read: the branch's own config strictly; trunk's tolerantly, so that keys
/// an older or newer discern wrote do not stop the never-loosen comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Strict,
    Tolerant,
}

pub fn parse(source: &str) -> Result<Config, ConfigError> {
    parse_with(source, Mode::Strict)
}

pub fn parse_with(source: &str, mode: Mode) -> Result<Config, ConfigError> {
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
    let branch_prefix = reader
        .string(repository, "repository", "branch_prefix")
        .unwrap_or_else(|| DEFAULT_BRANCH_PREFIX.to_owned());
    let acceptance = reader.table(root.get("acceptance"), "acceptance", ACCEPTANCE_KEYS);
    let pre_authorized = reader
        .string_list(acceptance, "acceptance", "pre_authorized", true)
        .unwrap_or_default();
    let map = reader.table(root.get("map"), "map", MAP_KEYS);
    let map_dir = reader
        .string(map, "map", "dir")
        .unwrap_or_else(|| DEFAULT_MAP_DIR.to_owned());
    let jobs = reader.jobs(root.get("jobs"));
    let standards = reader.standards(root.get("standards"), &jobs);

    if reader.issues.is_empty() {
        Ok(Config {
            trunk,
            branch_prefix,
            jobs,
            pre_authorized,
            map_dir,
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

struct Reader<'a> {
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

    fn jobs(&mut self, item: Option<&Item>) -> Vec<Job> {
        let Some(item) = item else {
            return Vec::new();
        };
        let Some(table) = item.as_table_like() else {
            self.issue_at(
                "jobs",
                None,
                item.span(),
                format!("must be a table, found {}", kind(item)),
            );
            return Vec::new();
        };
        let mut jobs = Vec::new();
        for (name, job) in table.iter() {
            let table_name = format!("jobs.{name}");
            if !valid_name(name) {
                self.issue_at(
                    "jobs",
                    Some(name),
                    job.span(),
                    "job names use only A-Z, a-z, 0-9, _ and -".into(),
                );
                continue;
            }
            let known = Stage::of_known(name);
            if let Some(run) = job.as_str() {
                match known {
                    Some(stage) => jobs.push(Job {
                        name: name.to_owned(),
                        stage,
                        run: run.to_owned(),
                        artifacts: Vec::new(),
                        inputs: None,
                        timeout: 0.0,
                    }),
                    None => self.issue_at(
                        "jobs",
                        Some(name),
                        job.span(),
                        format!(
                            "a custom job is a table with `stage` and `run` (the known jobs written as a string are: {})",
                            KNOWN_JOBS.join(", ")
                        ),
                    ),
                }
                continue;
            }
            if job.as_table_like().is_none() {
                self.issue_at(
                    "jobs",
                    Some(name),
                    job.span(),
                    format!("must be a command string or a table, found {}", kind(job)),
                );
                continue;
            }
            let spec = self.table(Some(job), &table_name, JOB_KEYS);
            let stage = match (self.string(spec, &table_name, "stage"), known) {
                (Some(s), known) => match Stage::parse(&s) {
                    Some(stage) if known.is_none_or(|k| k == stage) => Some(stage),
                    Some(_) => {
                        self.issue_at(
                            &table_name,
                            Some("stage"),
                            span_of(spec, "stage"),
                            format!("the {name} job always runs in its own stage; remove `stage`"),
                        );
                        None
                    }
                    None => {
                        self.issue_at(
                            &table_name,
                            Some("stage"),
                            span_of(spec, "stage"),
                            format!("unknown stage {s:?} (allowed: {})", Stage::NAMES),
                        );
                        None
                    }
                },
                (None, Some(stage)) => Some(stage),
                (None, None) => {
                    self.issue_at(
                        &table_name,
                        Some("stage"),
                        job.span(),
                        format!("a custom job needs a `stage` (one of: {})", Stage::NAMES),
                    );
                    None
                }
            };
            let run = self.string(spec, &table_name, "run");
            if run.is_none() && spec.and_then(|t| t.get("run")).is_none() {
                self.issue_at(
                    &table_name,
                    Some("run"),
                    job.span(),
                    "is required: the command to run".into(),
                );
            }
            let artifacts = self
                .string_list(spec, &table_name, "artifacts", true)
                .unwrap_or_default();
            for artifact in &artifacts {
                if let Some(problem) = path_problem(artifact) {
                    self.issue_at(
                        &table_name,
                        Some("artifacts"),
                        span_of(spec, "artifacts"),
                        problem,
                    );
                }
            }
            let inputs = self.string_list(spec, &table_name, "inputs", false);
            let timeout = self
                .non_negative(spec, &table_name, "timeout")
                .unwrap_or(0.0);
            if let (Some(stage), Some(run)) = (stage, run) {
                jobs.push(Job {
                    name: name.to_owned(),
                    stage,
                    run,
                    artifacts,
                    inputs,
                    timeout,
                });
            }
        }
        jobs
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

    fn standards(&mut self, item: Option<&Item>, jobs: &[Job]) -> Vec<StandardDef> {
        let Some(item) = item else {
            return Vec::new();
        };
        let Some(table) = item.as_table_like() else {
            self.issue_at(
                "standards",
                None,
                item.span(),
                format!(
                    "must be a table of [standards.<name>] tables, found {}",
                    kind(item)
                ),
            );
            return Vec::new();
        };
        let mut standards = Vec::new();
        for (name, item) in table.iter() {
            if !valid_name(name) {
                self.issue_at(
                    "standards",
                    Some(name),
                    item.span(),
                    "Standard names match ^[A-Za-z0-9_-]+$".into(),
                );
                continue;
            }
            if let Some(standard) = self.standard(name, item, jobs) {
                standards.push(standard);
            }
        }
        standards
    }

    fn standard(&mut self, name: &str, item: &Item, jobs: &[Job]) -> Option<StandardDef> {
        let t = format!("standards.{name}");
        let issues_before = self.issues.len();
        let spec = Some(self.table(Some(item), &t, STANDARD_KEYS)?);
        let header = item.span();

        let direction = match self.string(spec, &t, "direction").as_deref() {
            Some("up") => Some(Direction::Up),
            Some("down") => Some(Direction::Down),
            Some(other) => {
                self.issue_at(&t, Some("direction"), span_of(spec, "direction"), format!("unknown direction {other:?} (allowed: \"up\" = the limit is a floor, \"down\" = a ceiling)"));
                None
            }
            None => {
                if span_of(spec, "direction").is_none() {
                    self.issue_at(
                        &t,
                        Some("direction"),
                        header.clone(),
                        "is required: \"up\" (the limit is a floor) or \"down\" (a ceiling)".into(),
                    );
                }
                None
            }
        };
        let limit = self.number(spec, &t, "limit");
        if spec.and_then(|s| s.get("limit")).is_none() {
            self.issue_at(
                &t,
                Some("limit"),
                header.clone(),
                "is required: a finite number".into(),
            );
        }

        let run = self.string(spec, &t, "run");
        if run.as_deref() == Some("") {
            self.issue_at(
                &t,
                Some("run"),
                span_of(spec, "run"),
                "must be a non-empty command".into(),
            );
        }
        let producer = match (self.string(spec, &t, "producer"), &run) {
            (Some(_), Some(_)) => {
                self.issue_at(
                    &t,
                    Some("producer"),
                    span_of(spec, "producer"),
                    "give exactly one of `producer` and `run`".into(),
                );
                None
            }
            (Some(p), None) => match p.strip_prefix(crate::builtins::PREFIX) {
                Some(builtin) if crate::builtins::names().any(|n| n == builtin) => {
                    Some(ProducerRef::Builtin(builtin.to_owned()))
                }
                Some(builtin) if self.mode == Mode::Tolerant => {
                    Some(ProducerRef::Builtin(builtin.to_owned()))
                }
                Some(builtin) => {
                    let names: Vec<String> = crate::builtins::names()
                        .map(|n| format!("builtin:{n}"))
                        .collect();
                    self.issue_at(
                        &t,
                        Some("producer"),
                        span_of(spec, "producer"),
                        format!(
                            "unknown built-in producer {builtin:?} (built-ins: {})",
                            names.join(", ")
                        ),
                    );
                    None
                }
                None if p.ends_with(".wasm") && path_problem(&p).is_none() => {
                    Some(ProducerRef::Path(p))
                }
                None => {
                    self.issue_at(&t, Some("producer"), span_of(spec, "producer"), format!("{p:?} is neither builtin:<name> nor a repository-relative path to a .wasm component"));
                    None
                }
            },
            (None, Some(_)) => Some(ProducerRef::Builtin("discern-metric".to_owned())),
            (None, None) => {
                if span_of(spec, "producer").is_none() {
                    self.issue_at(&t, Some("producer"), header.clone(), "is required: builtin:<name> or a path to a .wasm component (or `run` for a DISCERN_METRIC command)".into());
                }
                None
            }
        };

        let config = match spec.and_then(|s| s.get("config")) {
            None => Value::Object(serde_json::Map::new()),
            Some(item) if item.is_table_like() => {
                let json = item_to_json(item);
                if let Some(bad) = first_non_finite(&json) {
                    self.issue_at(
                        &t,
                        Some("config"),
                        item.span(),
                        format!("{bad} is not a finite number"),
                    );
                }
                json
            }
            Some(item) => {
                self.issue_at(
                    &t,
                    Some("config"),
                    item.span(),
                    format!("must be a table, found {}", kind(item)),
                );
                Value::Null
            }
        };
        if run.is_some() && spec.and_then(|s| s.get("config")).is_some() {
            self.issue_at(
                &t,
                Some("config"),
                span_of(spec, "config"),
                "a `run` Standard takes no producer config".into(),
            );
        }

        let metric = self
            .string(spec, &t, "metric")
            .unwrap_or_else(|| name.to_owned());
        if metric.is_empty() || metric.len() > crate::runtime::MAX_NAME_BYTES {
            self.issue_at(
                &t,
                Some("metric"),
                span_of(spec, "metric"),
                "must be 1 to 128 bytes".into(),
            );
        }
        let per = self.per(spec, &t);
        let scale = self.number(spec, &t, "scale").unwrap_or(1.0);
        if scale <= 0.0 {
            self.issue_at(
                &t,
                Some("scale"),
                span_of(spec, "scale"),
                format!("must be > 0, found {scale}"),
            );
        }
        if per.is_none() && spec.and_then(|s| s.get("scale")).is_some() && scale != 1.0 {
            self.issue_at(
                &t,
                Some("scale"),
                span_of(spec, "scale"),
                "has no effect without `per`; remove it or add a `per`".into(),
            );
        }
        let margin = self.non_negative(spec, &t, "margin").unwrap_or(0.0);
        let timeout = self.non_negative(spec, &t, "timeout").unwrap_or(0.0);
        let needs = self
            .string_list(spec, &t, "needs", true)
            .unwrap_or_default();
        for need in &needs {
            let job = need
                .strip_prefix("jobs.")
                .and_then(|j| jobs.iter().find(|job| job.name == j));
            if job.is_none() {
                let names: Vec<String> = jobs.iter().map(|j| format!("jobs.{}", j.name)).collect();
                self.issue_at(
                    &t,
                    Some("needs"),
                    span_of(spec, "needs"),
                    format!(
                        "{need:?} is not a configured job (configured: {})",
                        if names.is_empty() {
                            "none".to_owned()
                        } else {
                            names.join(", ")
                        }
                    ),
                );
            }
        }
        if run.is_some() && !needs.is_empty() {
            self.issue_at(
                &t,
                Some("needs"),
                span_of(spec, "needs"),
                "a `run` Standard is its own job; use `producer` with `needs` instead".into(),
            );
        }
        let artifact = self.string(spec, &t, "artifact");
        if let Some(artifact) = &artifact {
            let declared = needs.iter().any(|need| {
                need.strip_prefix("jobs.")
                    .and_then(|j| jobs.iter().find(|job| job.name == j))
                    .is_some_and(|job| job.artifacts.contains(artifact))
            });
            if !declared {
                self.issue_at(&t, Some("artifact"), span_of(spec, "artifact"), format!("{artifact:?} is not declared in the `artifacts` of a job this Standard `needs`"));
            }
        }
        let inputs = self.string_list(spec, &t, "inputs", false);

        if self.issues.len() > issues_before {
            return None;
        }
        Some(StandardDef {
            name: name.to_owned(),
            direction: direction?,
            limit: limit?,
            producer: producer?,
            config,
            metric,
            per,
            scale,
            margin,
            timeout,
            needs,
            artifact,
            inputs,
            run,
            line: header.map(|s| line_at(self.source, s.start)),
        })
    }

    fn per(&mut self, spec: Option<&dyn TableLike>, t: &str) -> Option<Per> {
        let item = spec?.get("per")?;
        if let Some(metric) = item.as_str() {
            if metric.is_empty() {
                self.issue_at(
                    t,
                    Some("per"),
                    item.span(),
                    "must name a metric or an extent table".into(),
                );
                return None;
            }
            return Some(Per::Metric(metric.to_owned()));
        }
        let Some(table) = item.as_table_like() else {
            self.issue_at(t, Some("per"), item.span(), format!("must be a metric name or a table with exactly one of {} over a non-empty pathspec list, found {}", ExtentKind::NAMES, kind(item)));
            return None;
        };
        let entries: Vec<(&str, &Item)> = table.iter().collect();
        let [(key, paths)] = entries.as_slice() else {
            self.issue_at(
                t,
                Some("per"),
                item.span(),
                format!(
                    "must name exactly one extent ({}), found {}",
                    ExtentKind::NAMES,
                    entries.len()
                ),
            );
            return None;
        };
        let Some(kind_) = ExtentKind::parse(key) else {
            self.issue_at(
                t,
                Some("per"),
                item.span(),
                format!("unknown extent {key:?} (allowed: {})", ExtentKind::NAMES),
            );
            return None;
        };
        let list = paths
            .as_str()
            .map(|s| vec![s.to_owned()])
            .or_else(|| {
                paths.as_array().and_then(|a| {
                    a.iter()
                        .map(|v| v.as_str().map(str::to_owned))
                        .collect::<Option<Vec<_>>>()
                })
            })
            .filter(|l| !l.is_empty() && l.iter().all(|s| !s.is_empty()));
        match list {
            Some(paths) => Some(Per::Extent { kind: kind_, paths }),
            None => {
                self.issue_at(t, Some("per"), item.span(), format!("per.{key} must be a non-empty list of pathspecs (an empty one would count nothing)"));
                None
            }
        }
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
