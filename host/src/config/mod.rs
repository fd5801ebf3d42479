//! `discern.toml`: read and strictly validate; the parsed document is kept for limit edits.
//!
//! Validation happens before anything runs and reports every problem at once, each with the
//! table, the key, the line, and what is allowed. The parsed `toml_edit` document is kept so
//! that limit edits touch nothing but the limit values.

mod at;
mod edit;
mod error;
mod jobs;
mod merge;
mod standard;
mod validate;
mod value;
mod worktree;

use std::path::Path;

pub(crate) use at::AtError;
pub(crate) use error::{ConfigError, ConfigIssue};
pub(crate) use jobs::{Job, Stage};
pub(crate) use merge::{LimitConflict, merge_limits, merge_limits_from_trunk};
pub(crate) use standard::{Direction, FindingsMode, Per, ProducerRef, StandardDef};
pub(crate) use value::{canonical_json, item_to_json};
pub(crate) use worktree::WorktreeSettings;

/// The config file's name at the repository root.
pub(crate) const FILE: &str = "discern.toml";
pub use validate::MAX_TIMEOUT_S;
#[cfg(test)]
pub(crate) use validate::SCHEMA;
pub(crate) use validate::{ConfigSchema, STANDARD_KEYS};

pub(crate) const DEFAULT_TRUNK: &str = "main";
pub(crate) const DEFAULT_BRANCH_PREFIX: &str = "agent/";
pub(crate) const DEFAULT_MAP_DIR: &str = "docs/map";

/// How the owner's approval of a loosening or a protected change is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalPolicy {
    /// A signature by a key in `[acceptance].allowed_signers` (`discern approve`): the
    /// boundary for teams and CI.
    Signed,
    /// A terminal prompt or MCP elicitation: a convenience an agent with a shell can forge.
    Interactive,
}

impl ApprovalPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalPolicy::Signed => "signed",
            ApprovalPolicy::Interactive => "interactive",
        }
    }
}

/// Which runs publish their evidence (`[evidence].publish`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Publish {
    /// No run publishes (the default): evidence stays in each clone.
    #[default]
    Never,
    /// A CI run (`CI` set) whose HEAD is the trunk's tip, with a signing key
    /// (`DISCERN_EVIDENCE_KEY`), publishes on `discern sync --push`; pull-request and fork jobs
    /// never do.
    TrunkCi,
}

impl Publish {
    pub fn as_str(self) -> &'static str {
        match self {
            Publish::Never => "never",
            Publish::TrunkCi => "trunk-ci",
        }
    }
}

/// `[evidence]`: evidence shared between clones (`refs/discern/evidence`, `discern sync`) and
/// through a remote cache.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EvidenceSettings {
    /// `repository`: the name every published signature is bound to (e.g.
    /// `github.com/acme/app`), so evidence signed for another repository never counts here.
    /// Without it nothing is published or read from a remote.
    pub repository: Option<String>,
    /// `publish`: which runs publish.
    pub publish: Publish,
    /// `remote`: a Bazel-protocol HTTP cache (`/ac/`, `/cas/`) to read, and publish to.
    pub remote: Option<String>,
    /// `keep_days`: `discern sync --prune` drops published entries older than this; without
    /// it nothing is ever pruned.
    pub keep_days: Option<u32>,
}

/// A validated `discern.toml`.
#[derive(Debug, Clone)]
pub struct Config {
    /// `[repository].trunk` as written (see [`Config::trunk`] for the effective one).
    pub trunk: String,
    /// `[repository].release`: patterns of the release branches (`release/*`), protected lines
    /// of their own, each judged against itself; read from the trunk's tip only.
    pub release: Vec<String>,
    pub branch_prefix: String,
    /// `[repository].require_trunk`: a trunk or merge base that cannot be read fails the
    /// run (as in CI) instead of being a loud advisory.
    pub require_trunk: bool,
    /// `[repository].pin_on_done`: `done` pins gains beyond each margin first (default true).
    pub pin_on_done: bool,
    pub jobs: Vec<Job>,
    pub pre_authorized: Vec<String>,
    /// `[acceptance].approval`: how the owner approves loosenings and protected changes.
    pub approval: ApprovalPolicy,
    /// `[acceptance].allowed_signers`: the trunk's file of the owner's SSH keys (git's
    /// allowed-signers format), repository-relative.
    pub allowed_signers: Option<String>,
    /// `[acceptance].repository`: the repository a signed approval names (e.g.
    /// `github.com/acme/app`), read from the trunk side: an approval signed for another
    /// repository approves nothing here.
    pub approval_repository: Option<String>,
    /// `[acceptance].protected`: pathspecs whose files define the gate too (the scripts a job
    /// runs, say): a change to one is a protected change, like CODEOWNERS.
    pub protected_paths: Vec<String>,
    pub map_dir: String,
    /// `[evidence]`: where evidence is shared and who publishes it.
    pub evidence: EvidenceSettings,
    /// `[worktree]`: how an effort's worktree is provisioned.
    pub worktree: WorktreeSettings,
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

    /// The config of a commit without a `discern.toml`: no Standards, every default.
    pub fn absent() -> Self {
        Config {
            trunk: DEFAULT_TRUNK.to_owned(),
            release: Vec::new(),
            branch_prefix: DEFAULT_BRANCH_PREFIX.to_owned(),
            require_trunk: false,
            pin_on_done: true,
            jobs: Vec::new(),
            pre_authorized: Vec::new(),
            approval: ApprovalPolicy::Interactive,
            allowed_signers: None,
            approval_repository: None,
            protected_paths: Vec::new(),
            map_dir: DEFAULT_MAP_DIR.to_owned(),
            evidence: EvidenceSettings::default(),
            worktree: WorktreeSettings::default(),
            standards: Vec::new(),
            document: toml_edit::DocumentMut::new(),
            source: String::new(),
        }
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

    /// Whether this config says nothing at all (no `discern.toml`, or an empty one).
    pub fn is_empty(&self) -> bool {
        self.document.as_table().is_empty()
    }

    pub fn standard(&self, name: &str) -> Option<&StandardDef> {
        self.standards.iter().find(|s| s.name == name)
    }

    pub fn job(&self, name: &str) -> Option<&Job> {
        self.jobs.iter().find(|j| j.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn issues(source: &str) -> Vec<String> {
        Config::parse(source)
            .unwrap_err()
            .issues
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn a_full_config_parses_with_defaults() {
        let config = Config::parse(
            r#"
[repository]
trunk = "develop"
branch_prefix = "bot/"

[jobs]
format = "cargo fmt"
test = "cargo test"

[jobs.coverage]
stage = "test"
run = "make cov"
artifacts = ["target/lcov.info"]
timeout = 600

[acceptance]
pre_authorized = ["docs/**"]

[map]
dir = "docs/atlas"

[standards.coverage]
direction = "up"
limit = 81.5
producer = "builtin:lcov"
needs = ["jobs.coverage"]
artifact = "target/lcov.info"
metric = "line_percent"

[standards.legacy]
direction = "down"
limit = 3
run = "./count.sh"
"#,
        )
        .expect("test fixture");
        assert_eq!(config.trunk(None), "develop");
        assert_eq!(config.trunk(Some("main")), "main");
        assert_eq!(config.branch_prefix, "bot/");
        assert_eq!(config.map_dir, "docs/atlas");
        assert_eq!(config.jobs.len(), 3);
        assert_eq!(config.job("test").expect("test fixture").stage, Stage::Test);
        assert_eq!(config.job("coverage").expect("test fixture").timeout, 600.0);
        let coverage = config.standard("coverage").expect("test fixture");
        assert_eq!(coverage.scale, 1.0);
        assert_eq!(coverage.line, Some(22));
        let legacy = config.standard("legacy").expect("test fixture");
        assert_eq!(
            legacy.producer,
            ProducerRef::Builtin("discern-metric".into())
        );
        assert_eq!(legacy.metric, "legacy");
    }

    #[test]
    fn the_remote_evidence_cache_is_a_plain_url() {
        let parse = |url: &str| Config::parse(&format!("[evidence]\nremote = \"{url}\"\n"));
        let config = parse("http://cache:8080/discern").expect("a URL");
        assert_eq!(
            config.evidence.remote.as_deref(),
            Some("http://cache:8080/discern")
        );
        assert_eq!(Config::parse("").expect("empty").evidence.remote, None);
        for bad in [
            "cache:8080",
            "ftp://c/x",
            "http:///x",
            "http://u:p@c/x",
            "http://c/x?k=1",
        ] {
            let found = issues(&format!("[evidence]\nremote = \"{bad}\"\n"));
            assert!(
                found[0].starts_with("discern.toml:2: [evidence] remote: "),
                "{found:?}"
            );
        }
        let found = issues("[evidence]\nremotes = \"http://c\"\n");
        assert!(
            found[0].contains("unknown key (allowed keys: repository, publish, remote, keep_days)"),
            "{found:?}"
        );
    }

    #[test]
    fn release_lines_are_branch_name_patterns() {
        let config = Config::parse("[repository]\nrelease = [\"release/*\", \"maint-**\"]\n")
            .expect("valid patterns");
        assert_eq!(config.release, ["release/*", "maint-**"]);
        assert!(Config::parse("").expect("empty").release.is_empty());
        for bad in [
            "\"release *\"",
            "\"!release/*\"",
            "\"release/..\"",
            "\"\"",
            "3",
        ] {
            let found = issues(&format!("[repository]\nrelease = [{bad}]\n"));
            assert!(
                found.iter().any(|i| i.contains("[repository] release:")),
                "{bad}: {found:?}"
            );
        }
    }

    #[test]
    fn every_problem_is_reported_with_its_line() {
        let found = issues(
            "[repository]\ntrunk = \"bad name\"\n\n[standards.x]\ndirection = \"up\"\nlimit = nan\nproducer = \"builtin:extent\"\nscale = 0\nper = { lines = [] }\nmargin = -1\n",
        );
        let expected = [
            "discern.toml:2: [repository] trunk: \"bad name\" is not a valid branch name",
            "discern.toml:6: [standards.x] limit: must be a finite number, found NaN",
            "discern.toml:9: [standards.x] per: per.lines must be a non-empty list of pathspecs (an empty one would count nothing)",
            "discern.toml:8: [standards.x] scale: must be > 0, found 0",
            "discern.toml:10: [standards.x] margin: must be ≥ 0, found -1",
        ];
        for e in expected {
            assert!(found.iter().any(|f| f == e), "missing {e:?} in {found:#?}");
        }
    }

    #[test]
    fn cross_references_are_checked() {
        let found = issues(
            "[jobs.build2]\nrun = \"x\"\n\n[standards.a]\ndirection = \"up\"\nlimit = 1\nproducer = \"builtin:lcov\"\nneeds = [\"jobs.nope\"]\nartifact = \"out.info\"\nrun = \"y\"\n\n[standards.\"b c\"]\ndirection = \"up\"\nlimit = 1\nproducer = \"../x.wasm\"\n",
        );
        let all = found.join("\n");
        assert!(
            all.contains("[jobs.build2] stage: a custom job needs a `stage`"),
            "{all}"
        );
        assert!(
            all.contains("\"jobs.nope\" is not a configured job"),
            "{all}"
        );
        assert!(
            all.contains("\"out.info\" is not declared in the `artifacts`"),
            "{all}"
        );
        assert!(
            all.contains("give exactly one of `producer` and `run`"),
            "{all}"
        );
        assert!(
            all.contains("Standard names match ^[A-Za-z0-9_-]+$"),
            "{all}"
        );
    }

    #[test]
    fn a_registry_producer_needs_its_digest() {
        let standard = |producer: &str| {
            format!("[standards.a]\ndirection = \"up\"\nlimit = 1\nproducer = \"{producer}\"\n")
        };
        let found = issues(&standard("oci://ghcr.io/acme/p:1.2")).join("\n");
        assert!(
            found.contains("discern.toml:4: [standards.a] producer: \"oci://ghcr.io/acme/p:1.2\" names no digest, and a tag can move")
                && found.contains("`discern producers fetch oci://ghcr.io/acme/p:1.2` prints the exact line"),
            "{found}"
        );
        let pinned = format!("oci://ghcr.io/acme/p:1.2@sha256:{}", "a".repeat(64));
        let config = Config::parse(&standard(&pinned)).expect("a pinned reference");
        assert_eq!(config.standards[0].producer.label(), pinned);
    }

    #[test]
    fn tolerant_mode_ignores_unknown_keys_but_not_broken_toml() {
        let text = "[standards.a]\ndirection = \"up\"\nlimit = 1\nproducer = \"builtin:future\"\nnew_key = 1\n[future]\nx = 1\n";
        assert!(Config::parse(text).is_err());
        let tolerant = Config::parse_tolerant(text).expect("test fixture");
        assert_eq!(tolerant.standards[0].limit, 1.0);
        assert!(Config::parse_tolerant("[standards.a\n").is_err());
    }

    #[test]
    fn the_definition_ignores_limit_margin_and_timeout() {
        let a = Config::parse("[standards.a]\ndirection = \"up\"\nlimit = 1\nproducer = \"builtin:extent\"\nconfig = { paths = [\"src\"] }\nmetric = \"a\"\n").expect("test fixture");
        let b = Config::parse("[standards.a]\ndirection = \"up\"\nlimit = 9\nmargin = 2\ntimeout = 5\nproducer = \"builtin:extent\"\nconfig = { paths = [\"src\"] }\n").expect("test fixture");
        assert_eq!(
            a.standards[0].definition_fingerprint(),
            b.standards[0].definition_fingerprint()
        );
        let c = Config::parse("[standards.a]\ndirection = \"up\"\nlimit = 1\nproducer = \"builtin:extent\"\nconfig = { paths = [\"lib\"] }\n").expect("test fixture");
        assert_ne!(
            a.standards[0].definition_fingerprint(),
            c.standards[0].definition_fingerprint()
        );
    }
}

#[cfg(test)]
mod props {
    use proptest::prelude::*;

    use super::Config;

    fn value() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<i64>().prop_map(|i| i.to_string()),
            any::<f64>().prop_map(|f| format!("{f:?}")),
            prop_oneof![
                Just("nan"),
                Just("inf"),
                Just("-inf"),
                Just("1e400"),
                Just("1e20"),
                Just("-1"),
                Just("0"),
                Just("true"),
                Just("[]"),
                Just("\"up\""),
                Just("\"down\""),
                Just("\"builtin:pattern\""),
                Just("\"builtin:extent\""),
                Just("{ paths = [\"**\"] }"),
                Just("{ lines = [\"src/**\"] }"),
                Just("[\"jobs.x\"]"),
                Just("\"../x\""),
                Just("\"/abs\""),
            ]
            .prop_map(str::to_owned),
            "\"[a-z*/.{}\\\\]{0,12}\"",
        ]
    }

    fn document() -> impl Strategy<Value = String> {
        // Every key a Standard may have, and one it may not.
        let keys: Vec<&str> = super::validate::STANDARD_KEYS
            .iter()
            .copied()
            .chain(["bogus"])
            .collect();
        let line =
            (proptest::sample::select(keys), value()).prop_map(|(k, v)| format!("{k} = {v}\n"));
        let table = proptest::collection::vec(line, 0..8)
            .prop_map(|lines| format!("[standards.s]\n{}", lines.concat()));
        let repository = proptest::option::of(
            prop_oneof![
                Just("trunk = \"main\"\n"),
                Just("require_trunk = 3\n"),
                Just("pin_on_done = false\n"),
                Just("trunk = \"a..b\"\n")
            ]
            .prop_map(|l| format!("[repository]\n{l}")),
        );
        (repository, proptest::collection::vec(table, 0..3)).prop_map(|(repo, tables)| {
            let tables: Vec<String> = tables
                .iter()
                .enumerate()
                .map(|(i, t)| t.replace("[standards.s]", &format!("[standards.s{i}]")))
                .collect();
            format!("{}{}", repo.unwrap_or_default(), tables.join("\n"))
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::props::cases()))]

        /// Any text: parsing never panics.
        #[test]
        fn parsing_any_text_never_panics(text in "\\PC{0,400}") {
            let _ = Config::parse(&text);
            let _ = Config::parse_tolerant(&text);
        }

        /// Config-shaped documents: what parses holds every documented range.
        #[test]
        fn what_parses_is_within_every_documented_range(text in document()) {
            if let Ok(config) = Config::parse(&text) {
                for standard in &config.standards {
                    prop_assert!(standard.limit.is_finite());
                    prop_assert!(standard.margin >= 0.0 && standard.margin.is_finite());
                    prop_assert!((0.0..=super::MAX_TIMEOUT_S).contains(&standard.timeout));
                    prop_assert!(standard.scale > 0.0 && standard.scale.is_finite());
                }
            }
        }
    }
}
