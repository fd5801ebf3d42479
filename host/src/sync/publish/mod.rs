//! Publishing this run's evidence, and pruning what was published long ago.
//!
//! Only a run the configuration names publishes: `[evidence].publish = "trunk-ci"` means a CI
//! run (`CI` set) whose HEAD is the trunk's tip, holding the signing key
//! `DISCERN_EVIDENCE_KEY` names. Pull-request and fork jobs are told why they did not. Each
//! entry this clone measured on HEAD becomes a signed bundle (`ssh-keygen -Y sign -n
//! discern-evidence`) in the published ref. What decides whether a bundle counts is the
//! reader's check of the signature against the trunk's allowed signers, not this gate.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use gix::ObjectId;
use serde::Serialize;

use super::SyncError;
use crate::commit::shared_refs::{edit_tree, set_ref, tree_of, write_commit};
use crate::config::{Config, Publish};
use crate::evidence::bundle::{self, Bundle};
use crate::evidence::shared::tree;
use crate::evidence::{Entry, findings};
use crate::git::{Repo, short};
use crate::workspace::Workspace;

/// The environment variable naming the private key that signs published evidence.
pub(crate) const KEY_VAR: &str = "DISCERN_EVIDENCE_KEY";

/// What publishing did.
#[derive(Debug, Default, Serialize)]
pub(crate) struct Publication {
    /// Bundles added to the published ref.
    pub published: usize,
    /// The commit they were measured on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Why nothing was published, when publishing was asked for and not done.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_published: Option<String>,
    /// Bundles stored in the remote cache (`[evidence].remote`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cached: Option<usize>,
    /// Why the remote cache did not take them all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_problem: Option<String>,
}

impl Publication {
    fn skipped(why: impl Into<String>) -> Self {
        Self {
            not_published: Some(why.into()),
            ..Self::default()
        }
    }

    pub(crate) fn line(&self) -> String {
        match (&self.not_published, &self.commit) {
            (Some(why), _) => format!("evidence: not published ({why})"),
            (None, Some(commit)) => format!(
                "evidence: published {} signed entr{} measured on {}{}",
                self.published,
                if self.published == 1 { "y" } else { "ies" },
                short(commit),
                match (&self.cache_problem, self.cached) {
                    (Some(why), _) => format!("; the remote cache did not take them ({why})"),
                    (None, Some(n)) => format!("; {n} stored in the remote cache"),
                    (None, None) => String::new(),
                }
            ),
            (None, None) => "evidence: nothing to publish".to_owned(),
        }
    }
}

/// Publish the evidence measured here on HEAD, when this run may.
pub(crate) fn publish(ws: &Workspace, config: &Config) -> Result<Publication, SyncError> {
    let repo = &ws.repo;
    let (head, key, repository) = match allowed(ws, config)? {
        Ok(allowed) => allowed,
        Err(why) => return Ok(Publication::skipped(why)),
    };
    let entries = measured_on(&repo.shared_path("evidence"), head);
    if entries.is_empty() {
        return Ok(Publication::skipped(format!(
            "nothing was measured on {} in this clone: run `discern standards` first",
            short(&head.to_string())
        )));
    }
    let tip = repo.resolve_ref(tree::REF)?.map(|r| r.commit);
    let mut files = Vec::new();
    let mut published = 0;
    let mut bundles = Vec::new();
    let now = now();
    for (identity, path) in entries {
        let bundle = signed(&path, &key, &repository)?;
        bundles.push((identity.clone(), bundle.clone()));
        let dir = tree::dir(head, &identity);
        let id = tree::bundle_id(&bundle).hex();
        if let Some(tip) = tip
            && repo.file_at(tip, &format!("{dir}/{id}.json"))?.is_some()
        {
            continue;
        }
        files.extend(
            tree::files(&bundle, now)
                .into_iter()
                .map(|(name, bytes)| (format!("{dir}/{name}"), bytes)),
        );
        published += 1;
    }
    if published > 0 {
        let message = format!("discern: evidence measured on {head}");
        commit_tree(repo, tip, &files, &[], &message)?;
    }
    let (cached, cache_problem) = cache(config, &repository, head, &bundles);
    Ok(Publication {
        published,
        commit: Some(head.to_string()),
        not_published: None,
        cached,
        cache_problem,
    })
}

/// Store `bundles` in the remote cache `[evidence].remote` names: how many it took, and why not
/// all when it did not.
#[cfg(feature = "remote-cache")]
fn cache(
    config: &Config,
    repository: &str,
    head: ObjectId,
    bundles: &[(String, Bundle)],
) -> (Option<usize>, Option<String>) {
    use crate::evidence::remote::{Client, Options};
    let Some(url) = &config.evidence.remote else {
        return (None, None);
    };
    let client = match Client::new(url, Options::from_env()) {
        Ok(client) => client,
        Err(e) => return (Some(0), Some(e.to_string())),
    };
    let mut stored = 0;
    for (identity, bundle) in bundles {
        let key = bundle::remote_key(repository, identity, &head.to_string());
        if let Err(e) = client.put(&key, bundle) {
            return (Some(stored), Some(e.to_string()));
        }
        stored += 1;
    }
    (Some(stored), None)
}

#[cfg(not(feature = "remote-cache"))]
fn cache(
    config: &Config,
    _: &str,
    _: ObjectId,
    _: &[(String, Bundle)],
) -> (Option<usize>, Option<String>) {
    let why = "this discern was built without the remote-cache feature";
    (
        config.evidence.remote.as_ref().map(|_| 0),
        config.evidence.remote.as_ref().map(|_| why.to_owned()),
    )
}

/// HEAD, the signing key and the repository name, or why this run does not publish.
fn allowed(
    ws: &Workspace,
    config: &Config,
) -> Result<Result<(ObjectId, PathBuf, String), String>, SyncError> {
    if config.evidence.publish == Publish::Never {
        return Ok(Err("[evidence].publish is \"never\"".to_owned()));
    }
    let Some(repository) = config.evidence.repository.clone() else {
        return Ok(Err("[evidence].repository is not set".to_owned()));
    };
    if std::env::var_os("CI").is_none_or(|v| v.is_empty() || v == "false") {
        return Ok(Err("not a CI run: CI is not set".to_owned()));
    }
    let Some(key) = std::env::var_os(KEY_VAR).filter(|k| !k.is_empty()) else {
        return Ok(Err(format!("{KEY_VAR} names no signing key")));
    };
    let Some(head) = ws.repo.head()? else {
        return Ok(Err("HEAD has no commit".to_owned()));
    };
    // The config's trunk, never `DISCERN_TRUNK`: a job cannot name its own branch the trunk.
    let trunk = config.trunk(None);
    match ws.repo.trunk_commit(trunk)? {
        Some(tip) if tip == head => Ok(Ok((head, PathBuf::from(key), repository))),
        Some(tip) => Ok(Err(format!(
            "HEAD {} is not the tip of the trunk {trunk} ({}): only the trunk's CI publishes",
            short(&head.to_string()),
            short(&tip.to_string())
        ))),
        None => Ok(Err(format!("the trunk {trunk} cannot be found"))),
    }
}

/// The entries of the local store measured on `head` in this clone (never one another clone
/// published), with their identity and file.
fn measured_on(store: &Path, head: ObjectId) -> Vec<(String, PathBuf)> {
    let head = head.to_string();
    let dirs = std::fs::read_dir(store)
        .into_iter()
        .flatten()
        .filter_map(Result::ok);
    let files = dirs.flat_map(|d| {
        std::fs::read_dir(d.path())
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
    });
    let mut found: Vec<(String, PathBuf)> = files
        .map(|f| f.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter_map(|path| {
            let entry: Entry = serde_json::from_slice(&std::fs::read(&path).ok()?).ok()?;
            (entry.commit == head
                && entry.source.is_none()
                && entry.version == crate::evidence::VERSION)
                .then_some((entry.identity, path))
        })
        .collect();
    found.sort();
    found
}

/// The entry at `path` (with its findings) as a bundle signed with `key` for `repository`.
fn signed(path: &Path, key: &Path, repository: &str) -> Result<Bundle, SyncError> {
    let read = |p: &Path| {
        std::fs::read(p)
            .map_err(|e| SyncError::Publish(format!("{} cannot be read ({e})", p.display())))
    };
    let entry = read(path)?;
    let findings_path = findings::path_of(path);
    let findings = match findings_path.exists() {
        true => Some(read(&findings_path)?),
        false => None,
    };
    let manifest = Bundle::manifest(repository, &entry, findings.as_deref());
    let manifest = String::from_utf8_lossy(&manifest).into_owned();
    let signature = crate::approval::sign_for(bundle::NAMESPACE, key, &manifest)
        .map_err(|e| SyncError::Publish(format!("{e} (the key {KEY_VAR} names)")))?;
    Ok(Bundle {
        entry,
        findings,
        signature: signature.into_bytes(),
    })
}

/// Drop the published bundles older than `[evidence].keep_days`; none without it.
pub(crate) fn prune(repo: &Repo, config: &Config) -> Result<usize, SyncError> {
    let Some(days) = config.evidence.keep_days else {
        return Ok(0);
    };
    let Some(tip) = repo.resolve_ref(tree::REF)?.map(|r| r.commit) else {
        return Ok(0);
    };
    let cutoff = now().saturating_sub(u64::from(days) * 86_400);
    let old: Vec<String> = tree::published_times(&repo.local(), tip)
        .into_iter()
        .filter(|(_, time)| *time < cutoff)
        .map(|(stem, _)| stem)
        .collect();
    if old.is_empty() {
        return Ok(0);
    }
    let removed: Vec<String> = old
        .iter()
        .flat_map(|stem| ["json", "findings", "sig", "time"].map(|ext| format!("{stem}.{ext}")))
        .collect();
    let message = format!("discern: prune evidence published over {days} days ago");
    commit_tree(repo, Some(tip), &[], &removed, &message)?;
    Ok(old.len())
}

/// A new commit on the published ref: `tip`'s tree with `files` added and `removed` taken out.
fn commit_tree(
    repo: &Repo,
    tip: Option<ObjectId>,
    files: &[(String, Vec<u8>)],
    removed: &[String],
    message: &str,
) -> Result<ObjectId, SyncError> {
    let base = tip.map(|t| tree_of(repo, t)).transpose()?;
    let tree = edit_tree(repo, base, files, removed)?;
    let parents: Vec<ObjectId> = tip.into_iter().collect();
    let commit = write_commit(repo, tree, &parents, message)?;
    let _writer = crate::commit::lock::WriterLock::acquire(repo)?;
    set_ref(repo, tree::REF, tip, commit, "discern: evidence")?;
    Ok(commit)
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
