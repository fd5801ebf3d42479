//! Where a batch's producers come from: built-ins from the binary, repository components from
//! the measured commit (the work tree only while authoring), registry components by their
//! pinned digest (`oci`), and each component's `config`
//! checked against the schema it publishes before anything runs.

use crate::config::{Config, ConfigIssue, ConfigSchema, ProducerRef};
use crate::git::Repo;
use crate::planner::{ComponentSource, Plan};
use crate::runtime::{ProducerComponent, Runtime};

/// Resolves producers: built-ins from the binary, paths from the measured snapshot (the work
/// tree only where `origin` allows it: `--force`, listings, dry runs).
pub(crate) struct Components<'a> {
    pub repo: &'a Repo,
    pub snapshot: Option<&'a crate::snapshot::Snapshot>,
    /// The per-user cache and registry credentials a registry component is fetched with.
    pub settings: &'a crate::workspace::Settings,
    /// Where a component may come from besides the snapshot, and how it is compiled.
    pub origin: ComponentOrigin,
}

/// Where a repository component is read from, and whether a compile-cache entry may stand for
/// it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ComponentOrigin {
    /// The measured commit's tree only (what a reading describes), compile cache allowed.
    Commit,
    /// The commit's tree only, compiled in this process (Proof, landings, proposals).
    CommitCompiledHere,
    /// The snapshot, else the work tree (`--force` while authoring, listings, dry runs).
    WorkTree,
}

impl ComponentSource for Components<'_> {
    fn component(&self, producer: &ProducerRef) -> Result<ProducerComponent, String> {
        match producer {
            ProducerRef::Builtin(name) => crate::builtins::component(name)
                .ok_or_else(|| format!("there is no built-in producer builtin:{name}")),
            ProducerRef::Path(path) => Ok(self.compiled(self.repository_component(path)?)),
            ProducerRef::Oci(reference) => {
                let settings = self.settings;
                let cache = settings.cache_dir.as_deref();
                let (bytes, _) = crate::oci::component(reference, cache, &settings.oci)
                    .map_err(|e| e.to_string())?;
                Ok(self.compiled(ProducerComponent::new(reference.to_string(), bytes)))
            }
        }
    }
}

impl Components<'_> {
    /// `component`, compiled in this process where the origin asks for it.
    fn compiled(&self, component: ProducerComponent) -> ProducerComponent {
        match self.origin {
            ComponentOrigin::CommitCompiledHere => component.compiled_here(),
            _ => component,
        }
    }

    /// A component at `path`: from the snapshot, or (authoring only) the work tree.
    fn repository_component(&self, path: &str) -> Result<ProducerComponent, String> {
        if let Some(snapshot) = self.snapshot
            && snapshot.entry(path).is_some()
        {
            let (_, bytes) = snapshot
                .reader()
                .read(path)
                .map_err(|e| format!("cannot read the producer {path}: {e}"))?;
            return Ok(ProducerComponent::new(path.to_owned(), bytes.to_vec()));
        }
        let in_work_tree = self.repo.root().join(path).is_file();
        if self.origin != ComponentOrigin::WorkTree && in_work_tree {
            return Err(format!(
                "the producer component {path} is not in the measured commit (a component is loaded only from the commit's tree, never from the work tree); commit it, or measure the work tree with --force while you author it"
            ));
        }
        if !in_work_tree {
            return Err(format!(
                "the producer component {path} does not exist in the measured commit{}; fix `producer` (a path relative to the repository root){}",
                match self.origin {
                    ComponentOrigin::WorkTree => " nor in the work tree",
                    _ => "",
                },
                self.snapshot
                    .map_or(String::new(), |s| close_names(s, path))
            ));
        }
        ProducerComponent::from_file(path.to_owned(), &self.repo.root().join(path)).map_err(|e| {
            format!(
                "cannot read the producer component {path}: {e}; build it, or fix `producer` (a path relative to the repository root)"
            )
        })
    }
}

/// `; did you mean a.wasm or b.wasm?`: the components `snapshot` holds whose path is close to
/// the mistyped `path` (at most three), or nothing.
fn close_names(snapshot: &crate::snapshot::Snapshot, path: &str) -> String {
    let most = (path.chars().count() / 3).max(2);
    let mut close: Vec<(usize, &str)> = snapshot
        .entries()
        .iter()
        .filter(|e| e.path().ends_with(".wasm"))
        .map(|e| (strsim::levenshtein(path, e.path()), e.path()))
        .filter(|(distance, _)| *distance <= most)
        .collect();
    close.sort();
    let names: Vec<&str> = close.iter().take(3).map(|(_, p)| *p).collect();
    match names.is_empty() {
        true => String::new(),
        false => format!("; did you mean {}?", names.join(" or ")),
    }
}

/// Every repository component's `config` against the config schema the component publishes
/// through `describe()`, before anything runs: refused as `discern.toml`'s own problems are.
/// A component that cannot describe itself is left to fail its run with that error.
pub(crate) fn component_configs(
    config: &Config,
    plan: &Plan,
    runtime: &Runtime,
) -> Result<(), crate::config::ConfigError> {
    let mut issues = Vec::new();
    for execution in &plan.executions {
        let Ok(component) = &execution.component else {
            continue;
        };
        if execution.producer.starts_with(crate::builtins::PREFIX) {
            continue;
        }
        let Some(text) = runtime
            .describe(component)
            .ok()
            .and_then(|i| i.config_schema)
        else {
            continue;
        };
        match ConfigSchema::parse(component.label(), &text) {
            Ok(schema) => {
                for standard in &execution.dependents {
                    issues.extend(config.component_config_issues(standard, &schema));
                }
            }
            Err(e) => issues.extend(execution.dependents.iter().map(|standard| ConfigIssue {
                table: format!("standards.{standard}"),
                key: Some("producer".to_owned()),
                line: config.standard(standard).and_then(|s| s.line),
                message: format!("{} {e}", component.label()),
            })),
        }
    }
    match issues.is_empty() {
        true => Ok(()),
        false => Err(crate::config::ConfigError { issues }),
    }
}
