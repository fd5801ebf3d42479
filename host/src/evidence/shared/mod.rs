//! Evidence other clones measured: signed bundles read from the published ref
//! ([`tree::REF`], which `discern sync` fetches and merges) and, where configured, a remote
//! cache. Every source is untrusted storage. A bundle counts only when its signature verifies
//! against the trunk tip's anchored allowed-signers file in the evidence namespace, its
//! manifest names this repository, and its entry is for the identity asked and the commit it is
//! filed under; the store then reuses it only where its read set is unchanged. Anything else is
//! a miss, and the producer runs: a poisoned, replayed or foreign entry can cost a run, never a
//! verdict.

pub mod tree;

use std::collections::HashMap;

use gix::ObjectId;
use serde::{Deserialize, Serialize};

use super::bundle::{self, Bundle};
use super::{Entry, VERSION};
use crate::approval::{self, Signer};
use crate::git::Repo;

/// Where a reused entry came from, kept with it in the local store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    /// The allowed-signers principal whose key signed it.
    pub signer: String,
    pub fingerprint: String,
    /// What carried it: the published ref, or the remote cache's URL.
    pub via: String,
}

/// What a published bundle is checked against: the repository its signature must name and the
/// trunk side's allowed-signers file.
#[derive(Debug, Clone)]
pub(crate) struct Trust {
    pub repository: String,
    pub signers: Vec<u8>,
}

impl Trust {
    /// The trust root at `tip` (the trunk's tip): its anchored policy's signers, for
    /// `repository`. `None` when there is no anchored signers file (then nothing published
    /// counts).
    pub(crate) fn at(repo: &Repo, tip: ObjectId, repository: &str) -> Option<Self> {
        let policy = approval::anchored_policy(repo, tip)?;
        let (_, signers) = policy.signers?;
        Some(Self {
            repository: repository.to_owned(),
            signers,
        })
    }

    /// Who signed `bundle` for this repository, or why it does not count.
    pub(crate) fn verify(&self, bundle: &Bundle) -> Result<Signer, String> {
        let manifest = bundle.manifest_for(&self.repository);
        let manifest = String::from_utf8(manifest).map_err(|_| "its manifest is not UTF-8")?;
        let signature =
            std::str::from_utf8(&bundle.signature).map_err(|_| "its signature is not UTF-8")?;
        approval::verify_for(bundle::NAMESPACE, &self.signers, &manifest, signature)
            .map_err(|e| e.to_string())
    }
}

/// Published evidence for one measurement: the bundles filed under the commits it may reuse.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    trust: Option<Trust>,
    /// Identity key → bundles, in the order of the candidate commits.
    published: HashMap<String, Vec<tree::Found>>,
    via: String,
    /// The commits whose evidence may be reused, in order (the remote cache is asked for them).
    #[cfg_attr(not(feature = "remote-cache"), expect(dead_code))]
    candidates: Vec<ObjectId>,
    /// The remote cache the trunk side names (`[evidence].remote`), asked on a miss.
    #[cfg(feature = "remote-cache")]
    remote: Option<super::remote::Client>,
    /// What the remote cache could not answer: each a miss, reported by the measurement.
    problems: std::sync::Mutex<Vec<String>>,
}

impl Shared {
    /// The published evidence a measurement of `head` may reuse, when the trunk (`trunk`, its
    /// tip) can be read: the bundles filed under HEAD, its merge base with the trunk and the
    /// trunk's tip, checked against the trust root at the trunk's tip — its anchored signers,
    /// as approvals are verified, so a branch forked before a key was removed from the signers
    /// does not bring that key back. The repository name signatures must carry is the trunk
    /// tip's `[evidence].repository`; without one, nothing published counts.
    ///
    /// `baseline` (the commit the limits were judged from: a push's previous tip, named by
    /// `--baseline`) is a candidate too, after the others: on a push HEAD, its merge base and
    /// the trunk's tip are all the new tip, and what the last push published is filed under
    /// the previous one. Which commit an entry is filed under decides nothing about its trust
    /// (its signature does) or its validity on HEAD (its read set does).
    pub(crate) fn open(
        repo: &Repo,
        head: ObjectId,
        trunk: Option<ObjectId>,
        baseline: Option<ObjectId>,
    ) -> Self {
        let Some(tip) = trunk else {
            return Self::default();
        };
        let Some(trunk_side) = repo.merge_base(head, tip) else {
            return Self::default();
        };
        // Unreadable, the trunk's settings are no settings to share by: the producers run, and
        // the reason is said (a miss, never a reading).
        let settings = match crate::config::Config::at(repo, tip) {
            Ok(config) => config.map(|config| config.evidence).unwrap_or_default(),
            Err(e) => {
                let shared = Self::default();
                shared.problem(format!(
                    "shared evidence is not looked up: the trunk's {} at {} cannot be read: {e}",
                    crate::config::FILE,
                    crate::git::short(&tip.to_string())
                ));
                return shared;
            }
        };
        // Without a repository name no signature can count: nothing to read, no trust root.
        let Some(repository) = settings.repository.as_deref() else {
            return Self::default();
        };
        let mut candidates = vec![head, trunk_side, tip];
        candidates.extend(baseline);
        let mut seen = std::collections::HashSet::new();
        candidates.retain(|commit| seen.insert(*commit));
        let mut unreadable = None;
        let published = match repo.resolve_ref(tree::REF) {
            Ok(Some(resolved)) => tree::read(&repo.local(), resolved.commit, &candidates),
            Ok(None) => HashMap::new(),
            Err(e) => {
                unreadable = Some(format!("{} cannot be read: {e}", tree::REF));
                HashMap::new()
            }
        };
        // The trust root walks history: only when there is something to check against it.
        let shared = if published.is_empty() && settings.remote.is_none() {
            Self::default()
        } else {
            Self {
                trust: Trust::at(repo, tip, repository),
                published,
                via: tree::REF.to_owned(),
                candidates,
                ..Self::default()
            }
            .with_remote(settings.remote)
        };
        if let Some(why) = unreadable {
            shared.problem(why);
        }
        shared
    }

    /// This, asking the remote cache at `url` on a miss.
    #[cfg(feature = "remote-cache")]
    fn with_remote(mut self, url: Option<String>) -> Self {
        if let Some(url) = url {
            match super::remote::Client::new(&url, super::remote::Options::from_env()) {
                Ok(client) => self.remote = Some(client),
                Err(e) => self.problem(e.to_string()),
            }
        }
        self
    }

    /// This build has no remote cache client: a configured one is named as not asked.
    #[cfg(not(feature = "remote-cache"))]
    fn with_remote(self, url: Option<String>) -> Self {
        if let Some(url) = url {
            self.problem(format!(
                "{url} was not asked: this discern was built without the remote-cache feature"
            ));
        }
        self
    }

    fn problem(&self, what: String) {
        self.problems
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(what);
    }

    /// What the remote cache could not answer (each a miss: the producer ran).
    pub(crate) fn problems(&self) -> Vec<String> {
        self.problems
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Whether there is anything to consult: bundles in the published ref, or a remote cache.
    pub(crate) fn consults_anything(&self) -> bool {
        #[cfg(feature = "remote-cache")]
        if self.remote.is_some() && self.trust.is_some() {
            return true;
        }
        !self.published.is_empty()
    }

    /// The verified entries published for `identity`, with their findings file's bytes, in
    /// candidate order: the published ref's, then the remote cache's. Nothing when there is no
    /// trust root.
    pub(crate) fn entries(&self, identity: &str) -> Vec<(Entry, Option<Vec<u8>>)> {
        let Some(trust) = &self.trust else {
            return Vec::new();
        };
        let published = self.published.get(&super::Store::key(identity));
        let mut entries: Vec<_> = published
            .into_iter()
            .flatten()
            .filter_map(|found| accept(trust, found, identity, &self.via))
            .collect();
        if entries.is_empty() {
            entries.extend(self.cached(trust, identity));
        }
        entries
    }

    /// The verified entries the remote cache holds for `identity` on the candidate commits.
    #[cfg(feature = "remote-cache")]
    fn cached(&self, trust: &Trust, identity: &str) -> Vec<(Entry, Option<Vec<u8>>)> {
        let Some(client) = &self.remote else {
            return Vec::new();
        };
        let mut entries = Vec::new();
        for &commit in &self.candidates {
            let key = bundle::remote_key(&trust.repository, identity, &commit.to_string());
            match client.get(&key) {
                Ok(Some(bundle)) => {
                    let found = tree::Found { commit, bundle };
                    entries.extend(accept(trust, &found, identity, client.base_url()));
                }
                Ok(None) => {}
                Err(e) => {
                    self.problem(e.to_string());
                    break;
                }
            }
        }
        entries
    }

    #[cfg(not(feature = "remote-cache"))]
    fn cached(&self, _: &Trust, _: &str) -> Vec<(Entry, Option<Vec<u8>>)> {
        Vec::new()
    }
}

/// The entry `found` holds, when it is signed for this repository by an allowed evidence key
/// and is an entry of `identity` measured on the commit it is filed under.
pub(crate) fn accept(
    trust: &Trust,
    found: &tree::Found,
    identity: &str,
    via: &str,
) -> Option<(Entry, Option<Vec<u8>>)> {
    let signer = trust.verify(&found.bundle).ok()?;
    let mut entry: Entry = serde_json::from_slice(&found.bundle.entry).ok()?;
    let fits = entry.version == VERSION
        && entry.identity == identity
        && entry.commit.parse::<ObjectId>().ok() == Some(found.commit)
        && entry.has_findings == found.bundle.findings.is_some()
        && entry.source.is_none();
    if !fits {
        return None;
    }
    entry.source = Some(Source {
        signer: signer.principal,
        fingerprint: signer.fingerprint,
        via: via.to_owned(),
    });
    Some((entry, found.bundle.findings.clone()))
}
