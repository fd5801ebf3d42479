//! `[standards.<name>]`: every field of a Standard, with its cross-checks against `[jobs]`.

mod builtin_config;
mod component_config;
mod schema;

pub(crate) use schema::ConfigSchema;

use std::ops::Range;

use toml_edit::{Item, TableLike};

use serde_json::Value;

use super::{
    Mode, Reader, STANDARD_KEYS, first_non_finite, kind, line_at, path_problem, span_of, valid_name,
};
use crate::config::jobs::Job;
use crate::config::standard::{Direction, ExtentKind, FindingsMode, Per, ProducerRef, StandardDef};
use crate::config::value::item_to_json;

impl Reader<'_> {
    pub(super) fn standards(&mut self, item: Option<&Item>, jobs: &[Job]) -> Vec<StandardDef> {
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

        let direction = self.direction(spec, &t, header.clone());
        let limit = self.limit(spec, &t, header.clone());
        let run = self.run(spec, &t);
        let producer = self.producer(spec, &t, run.as_deref(), header.clone());
        let config = self.producer_config(spec, &t, run.as_deref());
        self.builtin_config(spec, &t, producer.as_ref(), &config);
        let metric = self.metric(spec, &t, name);
        let per = self.per(spec, &t);
        let scale = self.scale(spec, &t, per.as_ref());
        let margin = self.non_negative(spec, &t, "margin").unwrap_or(0.0);
        let timeout = self.timeout(spec, &t).unwrap_or(0.0);
        let needs = self.needs(spec, &t, jobs, run.as_deref());
        let artifact = self.artifact(spec, &t, jobs, &needs);
        let findings = self.findings_mode(spec, &t);
        let checks_swaps = direction == Some(Direction::Down) && per.is_none();
        if findings == Some(FindingsMode::Count) && !checks_swaps {
            self.issue_at(
                &t,
                Some("findings"),
                span_of(spec, "findings"),
                "only a `down` Standard without `per` checks for swaps; remove `findings`".into(),
            );
        }
        let inputs = self.string_list(spec, &t, "inputs", false);
        if let Some(inputs) = &inputs {
            self.pathspecs(&t, "inputs", span_of(spec, "inputs"), inputs);
        }

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
            findings: findings?,
            line: header.map(|s| line_at(self.source, s.start)),
        })
    }

    /// `findings`: `"fingerprints"` (the default) or `"count"`.
    fn findings_mode(&mut self, spec: Option<&dyn TableLike>, t: &str) -> Option<FindingsMode> {
        match self.string(spec, t, "findings").as_deref() {
            None | Some("fingerprints") => Some(FindingsMode::Fingerprints),
            Some("count") => Some(FindingsMode::Count),
            Some(other) => {
                self.issue_at(
                    t,
                    Some("findings"),
                    span_of(spec, "findings"),
                    format!(
                        "unknown findings mode {other:?} (allowed: {})",
                        FindingsMode::NAMES
                    ),
                );
                None
            }
        }
    }

    fn direction(
        &mut self,
        spec: Option<&dyn TableLike>,
        t: &str,
        header: Option<Range<usize>>,
    ) -> Option<Direction> {
        match self.string(spec, t, "direction").as_deref() {
            Some("up") => Some(Direction::Up),
            Some("down") => Some(Direction::Down),
            Some(other) => {
                self.issue_at(t, Some("direction"), span_of(spec, "direction"), format!("unknown direction {other:?} (allowed: \"up\" = the limit is a floor, \"down\" = a ceiling)"));
                None
            }
            None => {
                if span_of(spec, "direction").is_none() {
                    self.issue_at(
                        t,
                        Some("direction"),
                        header,
                        "is required: \"up\" (the limit is a floor) or \"down\" (a ceiling)".into(),
                    );
                }
                None
            }
        }
    }

    fn limit(
        &mut self,
        spec: Option<&dyn TableLike>,
        t: &str,
        header: Option<Range<usize>>,
    ) -> Option<f64> {
        let limit = self.number(spec, t, "limit");
        if spec.and_then(|s| s.get("limit")).is_none() {
            self.issue_at(
                t,
                Some("limit"),
                header,
                "is required: a finite number".into(),
            );
        }
        limit
    }

    fn run(&mut self, spec: Option<&dyn TableLike>, t: &str) -> Option<String> {
        let run = self.string(spec, t, "run");
        if run.as_deref() == Some("") {
            self.issue_at(
                t,
                Some("run"),
                span_of(spec, "run"),
                "must be a non-empty command".into(),
            );
        }
        run
    }

    /// `producer`, or the built-in that runs a `run` command; exactly one of the two is given.
    fn producer(
        &mut self,
        spec: Option<&dyn TableLike>,
        t: &str,
        run: Option<&str>,
        header: Option<Range<usize>>,
    ) -> Option<ProducerRef> {
        match (self.string(spec, t, "producer"), run) {
            (Some(_), Some(_)) => {
                self.issue_at(
                    t,
                    Some("producer"),
                    span_of(spec, "producer"),
                    "give exactly one of `producer` and `run`".into(),
                );
                None
            }
            (Some(p), None) => self.named_producer(spec, t, p),
            (None, Some(_)) => Some(ProducerRef::Builtin("discern-metric".to_owned())),
            (None, None) => {
                if span_of(spec, "producer").is_none() {
                    self.issue_at(t, Some("producer"), header, "is required: builtin:<name>, a path to a .wasm component or oci://REGISTRY/REPOSITORY:TAG@sha256:… (or `run` for a DISCERN_METRIC command)".into());
                }
                None
            }
        }
    }

    /// `producer = "builtin:<name>"` or a repository-relative path to a `.wasm` component.
    fn named_producer(
        &mut self,
        spec: Option<&dyn TableLike>,
        t: &str,
        p: String,
    ) -> Option<ProducerRef> {
        match p.strip_prefix(crate::builtins::PREFIX) {
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
                    t,
                    Some("producer"),
                    span_of(spec, "producer"),
                    format!(
                        "unknown built-in producer {builtin:?} (built-ins: {})",
                        names.join(", ")
                    ),
                );
                None
            }
            None if p.starts_with(crate::oci::SCHEME) => match crate::oci::Reference::parse(&p) {
                Ok(reference) => Some(ProducerRef::Oci(reference)),
                Err(e) => {
                    self.issue_at(
                        t,
                        Some("producer"),
                        span_of(spec, "producer"),
                        e.to_string(),
                    );
                    None
                }
            },
            None if p.ends_with(".wasm") && path_problem(&p).is_none() => {
                Some(ProducerRef::Path(p))
            }
            None => {
                self.issue_at(t, Some("producer"), span_of(spec, "producer"), format!("{p:?} is neither builtin:<name>, a repository-relative path to a .wasm component nor oci://REGISTRY/REPOSITORY:TAG@sha256:…"));
                None
            }
        }
    }

    /// The producer's `config` table, as JSON (an empty object when absent).
    fn producer_config(
        &mut self,
        spec: Option<&dyn TableLike>,
        t: &str,
        run: Option<&str>,
    ) -> Value {
        let config = match spec.and_then(|s| s.get("config")) {
            None => Value::Object(serde_json::Map::new()),
            Some(item) if item.is_table_like() => {
                let json = item_to_json(item);
                if let Some(bad) = first_non_finite(&json) {
                    self.issue_at(
                        t,
                        Some("config"),
                        item.span(),
                        format!("{bad} is not a finite number"),
                    );
                }
                json
            }
            Some(item) => {
                self.issue_at(
                    t,
                    Some("config"),
                    item.span(),
                    format!("must be a table, found {}", kind(item)),
                );
                Value::Null
            }
        };
        if run.is_some() && spec.and_then(|s| s.get("config")).is_some() {
            self.issue_at(
                t,
                Some("config"),
                span_of(spec, "config"),
                "a `run` Standard takes no producer config".into(),
            );
        }
        config
    }

    /// A built-in's `config` against the schema it publishes: unknown keys, missing keys,
    /// types and pathspecs refused with the line of the key (or of `config`).
    fn builtin_config(
        &mut self,
        spec: Option<&dyn TableLike>,
        t: &str,
        producer: Option<&ProducerRef>,
        config: &Value,
    ) {
        let (Some(ProducerRef::Builtin(name)), Value::Object(table)) = (producer, config) else {
            return;
        };
        if self.mode == Mode::Tolerant || spec.and_then(|s| s.get("run")).is_some() {
            return;
        }
        let item = spec.and_then(|s| s.get("config"));
        for problem in builtin_config::problems(name, table) {
            let key_item = problem
                .key
                .as_deref()
                .and_then(|k| item.and_then(Item::as_table_like).and_then(|c| c.get(k)));
            let span = key_item
                .and_then(Item::span)
                .or_else(|| item.and_then(Item::span));
            let key = match &problem.key {
                Some(k) => format!("config.{k}"),
                None => "config".to_owned(),
            };
            self.issue_at(t, Some(&key), span, problem.message);
        }
    }

    /// Pathspecs (of `per` or `inputs`) as the snapshot reads them.
    pub(super) fn pathspecs(
        &mut self,
        t: &str,
        key: &str,
        span: Option<Range<usize>>,
        specs: &[String],
    ) {
        if self.mode == Mode::Tolerant {
            return;
        }
        for spec in specs {
            if let Err(e) = crate::snapshot::Pathspec::check(spec) {
                self.issue_at(t, Some(key), span.clone(), e.to_string());
            }
        }
    }

    /// The metric this Standard reads (by default the one named like the Standard).
    fn metric(&mut self, spec: Option<&dyn TableLike>, t: &str, name: &str) -> String {
        let metric = self
            .string(spec, t, "metric")
            .unwrap_or_else(|| name.to_owned());
        if metric.is_empty() || metric.len() > crate::runtime::MAX_NAME_BYTES {
            self.issue_at(
                t,
                Some("metric"),
                span_of(spec, "metric"),
                "must be 1 to 128 bytes".into(),
            );
        }
        metric
    }

    fn scale(&mut self, spec: Option<&dyn TableLike>, t: &str, per: Option<&Per>) -> f64 {
        let scale = self.number(spec, t, "scale").unwrap_or(1.0);
        if scale <= 0.0 {
            self.issue_at(
                t,
                Some("scale"),
                span_of(spec, "scale"),
                format!("must be > 0, found {scale}"),
            );
        }
        if per.is_none() && spec.and_then(|s| s.get("scale")).is_some() && scale != 1.0 {
            self.issue_at(
                t,
                Some("scale"),
                span_of(spec, "scale"),
                "has no effect without `per`; remove it or add a `per`".into(),
            );
        }
        scale
    }

    /// `needs`: each a configured `jobs.<name>`; a `run` Standard needs nothing.
    fn needs(
        &mut self,
        spec: Option<&dyn TableLike>,
        t: &str,
        jobs: &[Job],
        run: Option<&str>,
    ) -> Vec<String> {
        let needs = self.string_list(spec, t, "needs", true).unwrap_or_default();
        for need in &needs {
            let job = need
                .strip_prefix("jobs.")
                .and_then(|j| jobs.iter().find(|job| job.name == j));
            if job.is_none() {
                let names: Vec<String> = jobs.iter().map(|j| format!("jobs.{}", j.name)).collect();
                self.issue_at(
                    t,
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
                t,
                Some("needs"),
                span_of(spec, "needs"),
                "a `run` Standard is its own job; use `producer` with `needs` instead".into(),
            );
        }
        needs
    }

    /// `artifact`: declared in the `artifacts` of a job the Standard `needs`.
    fn artifact(
        &mut self,
        spec: Option<&dyn TableLike>,
        t: &str,
        jobs: &[Job],
        needs: &[String],
    ) -> Option<String> {
        let artifact = self.string(spec, t, "artifact");
        if let Some(artifact) = &artifact {
            let declared = needs.iter().any(|need| {
                need.strip_prefix("jobs.")
                    .and_then(|j| jobs.iter().find(|job| job.name == j))
                    .is_some_and(|job| job.artifacts.contains(artifact))
            });
            if !declared {
                self.issue_at(t, Some("artifact"), span_of(spec, "artifact"), format!("{artifact:?} is not declared in the `artifacts` of a job this Standard `needs`"));
            }
        }
        artifact
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
            Some(paths) => {
                self.pathspecs(t, "per", item.span(), &paths);
                Some(Per::Extent { kind: kind_, paths })
            }
            None => {
                self.issue_at(t, Some("per"), item.span(), format!("per.{key} must be a non-empty list of pathspecs (an empty one would count nothing)"));
                None
            }
        }
    }
}
