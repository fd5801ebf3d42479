//! The team the sync suite works in: the one forge, with CI's key allowed for evidence.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::config::{Config, SIGNERS, Standard, quoted};
use crate::support::forge::{File, Forge};

pub(crate) const REPOSITORY: &str = "example.com/acme/app";

/// The forge as a team that publishes evidence: the owner's key allowed for approvals, CI's (the
/// forge's second key) for evidence; its own clones under `dir`.
pub(crate) struct Team {
    forge: Forge,
    pub(crate) dir: PathBuf,
    pub(crate) ci_key: PathBuf,
    pub(crate) owner_key: PathBuf,
}

impl std::ops::Deref for Team {
    type Target = Forge;

    fn deref(&self) -> &Forge {
        &self.forge
    }
}

impl Team {
    /// A trunk whose signers file lists the owner (approvals only) and CI (evidence only), and
    /// whose config publishes evidence from trunk CI; pushed to a bare origin.
    pub(crate) fn new() -> Self {
        Self::with("")
    }

    /// [`Team::new`] with `evidence` (`key = value` lines) added to the `[evidence]` table.
    pub(crate) fn with(evidence: &str) -> Self {
        let docs = Standard::pattern("doc_todo", "TODO", &["docs/**"]).limit(5);
        let config = Config::landing()
            .standard(docs)
            .acceptance("allowed_signers", quoted(SIGNERS))
            .set("evidence", "repository", quoted(REPOSITORY))
            .set("evidence", "publish", quoted("trunk-ci"))
            .set("evidence", "keep_days", "30")
            .lines("evidence", evidence);
        let guide: &[File] = &[("docs/guide.md", b"# Guide\nTODO: write\n")];
        let forge = Forge::with_signers(config, guide, |keys| {
            format!(
                "owner@example.com namespaces=\"discern-approval\" {}\nci@example.com namespaces=\"discern-evidence\" {}\n",
                public(&keys.owner),
                public(&keys.second)
            )
        });
        let dir = forge.dir.join("team");
        std::fs::create_dir_all(&dir).unwrap();
        Self {
            dir,
            ci_key: forge.keys.second.clone(),
            owner_key: forge.keys.owner.clone(),
            forge,
        }
    }

    pub(crate) fn discern(&self, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (i32, Value) {
        let run = self.fixture.run_in(dir, args, env);
        (run.code, run.json())
    }

    /// A CI clone as `actions/checkout` makes it (depth 1, detached at `rev`), then the trunk
    /// with its history.
    pub(crate) fn ci_clone(&self, name: &str, rev: &str) -> PathBuf {
        let clone = self.dir.join(format!("ci-{name}"));
        self.fixture.ci_checkout(&clone, &self.url(), rev);
        clone
    }

    /// A developer's clone, depth 1 (the most a laptop may have).
    pub(crate) fn shallow_clone(&self, name: &str) -> PathBuf {
        let clone = self.dir.join(name);
        let _ = std::fs::remove_dir_all(&clone);
        self.git(
            &self.dir,
            &[
                "clone",
                "-q",
                "--depth",
                "1",
                &self.url(),
                clone.to_str().unwrap(),
            ],
        );
        clone
    }

    /// Trunk CI: measure the trunk's tip, then publish and push with the CI key.
    pub(crate) fn trunk_ci(&self) -> (PathBuf, Value) {
        let clone = self.ci_clone("trunk", "refs/heads/main");
        let head = self.out(&clone, &["rev-parse", "HEAD"]);
        let (code, json) = self.discern(
            &clone,
            &["standards", "--baseline", &head, "--json"],
            &[("CI", "true")],
        );
        assert_eq!(code, 0, "{json}");
        assert!(runs(&json) > 0, "trunk CI measured: {json}");
        let key = self.ci_key.to_str().unwrap();
        let (code, sync) = self.discern(
            &clone,
            &["sync", "--push", "--json"],
            &[("CI", "true"), ("DISCERN_EVIDENCE_KEY", key)],
        );
        assert_eq!(code, 0, "{sync}");
        (clone, sync)
    }
}

pub(crate) fn public(key: &Path) -> String {
    std::fs::read_to_string(key.with_extension("pub"))
        .unwrap()
        .trim()
        .to_owned()
}

/// How many producer runs a measurement made.
pub(crate) fn runs(json: &Value) -> u64 {
    json["data"]["producer_executions"]
        .as_object()
        .unwrap_or_else(|| panic!("no producer_executions: {json}"))
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum()
}
