//! Publishing what this run measured, and pruning what was published long ago.
//!
//! Only a run the trunk names publishes: `[evidence].publish = "trunk-ci"` means a CI run (`CI`
//! set) holding the signing key `DISCERN_EVIDENCE_KEY` names, whose HEAD is the tip of the trunk
//! *as the forge has it* ([`trunk`]: the branch the config at the forge's default branch names,
//! its tip read from the remote by this sync — never a local branch, never HEAD's own claim).
//! Pull-request and fork jobs are told why they did not.
//!
//! What is published is measured here, in this process ([`measured`]): HEAD's snapshot read
//! afresh, no evidence store read, no job run (a Standard that needs a job or `run` is named as
//! not published), and each execution's entry signed in memory with the key, in-process
//! (`ssh-key`, namespace `discern-evidence`). Nothing in the clone's evidence store is signed: a
//! test the measure step ran can write there. What decides whether a bundle counts is the
//! reader's check of the signature against the trunk's allowed signers, not this gate.

mod measured;
mod trunk;

use std::time::{SystemTime, UNIX_EPOCH};

use gix::ObjectId;
use serde::Serialize;

use super::seal::Seal;
use super::{KEY_VAR, SyncError};
use crate::commit::shared_refs::{edit_tree, set_ref, tree_of, write_commit};
use crate::config::{Config, Publish};
use crate::evidence::bundle::{self, Bundle};
use crate::evidence::shared::tree;
use crate::git::{Repo, short};
use crate::workspace::Workspace;

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
    /// The Standards whose readings were not published, each with why (`coverage: it needs a
    /// job …`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_measured: Vec<String>,
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
                "evidence: published {} signed entr{} measured on {} by this run{}{}",
                self.published,
                if self.published == 1 { "y" } else { "ies" },
                short(commit),
                match (&self.cache_problem, self.cached) {
                    (Some(why), _) => format!("; the remote cache did not take them ({why})"),
                    (None, Some(n)) => format!("; {n} stored in the remote cache"),
                    (None, None) => String::new(),
                },
                match self.not_measured.is_empty() {
                    true => String::new(),
                    false => format!("; not published: {}", self.not_measured.join("; ")),
                }
            ),
            (None, None) => "evidence: nothing to publish".to_owned(),
        }
    }
}

/// Measure HEAD here and publish the readings, signed, when this run may (the forge's trunk
/// tip is HEAD, read from `remote` through `seal`).
pub(super) fn publish(
    ws: &Workspace,
    seal: &Seal,
    remote: &str,
    config: &Config,
) -> Result<Publication, SyncError> {
    let repo = &ws.repo;
    let (head, repository) = match allowed(ws, seal, remote, config)? {
        Ok(allowed) => allowed,
        Err(why) => return Ok(Publication::skipped(why)),
    };
    let key = key()?;
    // A bundle stamped 1970 would be pruned as old at once: refused instead.
    let now = now().ok_or_else(|| {
        SyncError::Publish("the system clock reads before 1970: set it, then publish again".into())
    })?;
    let measured = measured::measure(ws, config, head)?;
    let tip = repo.resolve_ref(tree::REF)?.map(|r| r.commit);
    let mut files = Vec::new();
    let mut published = 0;
    let mut bundles = Vec::new();
    for entry in measured.entries {
        let bundle = signed(entry.entry, entry.findings, &key, &repository)?;
        bundles.push((entry.identity.clone(), bundle.clone()));
        let dir = tree::dir(head, &entry.identity);
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
        not_measured: measured.not_measured,
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

/// HEAD and the repository name, or why this run does not publish. `config` is HEAD's: it can
/// only say no; what says yes is the forge's trunk tip being HEAD, and then HEAD's config is
/// the trunk tip's.
fn allowed(
    ws: &Workspace,
    seal: &Seal,
    remote: &str,
    config: &Config,
) -> Result<Result<(ObjectId, String), String>, SyncError> {
    if config.evidence.publish == Publish::Never {
        return Ok(Err("[evidence].publish is \"never\"".to_owned()));
    }
    let Some(repository) = config.evidence.repository.clone() else {
        return Ok(Err("[evidence].repository is not set".to_owned()));
    };
    if std::env::var_os("CI").is_none_or(|v| v.is_empty() || v == "false") {
        return Ok(Err("not a CI run: CI is not set".to_owned()));
    }
    if std::env::var_os(KEY_VAR).is_none_or(|k| k.is_empty()) {
        return Ok(Err(format!("{KEY_VAR} names no signing key")));
    }
    let Some(head) = ws.repo.head()? else {
        return Ok(Err("HEAD has no commit".to_owned()));
    };
    // The forge's trunk, never `DISCERN_TRUNK`, HEAD's config or a local branch: a job cannot
    // name its own commit the trunk's tip.
    Ok(match trunk::on_forge((&ws.repo, seal), remote)? {
        Ok((_, tip)) if tip == head => Ok((head, repository)),
        Ok((trunk, tip)) => Err(format!(
            "HEAD {} is not the tip of the trunk {trunk} on {remote} ({}): only the trunk's CI publishes",
            short(&head.to_string()),
            short(&tip.to_string())
        )),
        Err(why) => Err(why),
    })
}

/// The signing key's text: the variable's value when it is a key, else the file it names.
fn key() -> Result<String, SyncError> {
    let value = std::env::var_os(KEY_VAR).unwrap_or_default();
    let cannot = |why: String| SyncError::Publish(format!("the key {KEY_VAR} names {why}"));
    if let Some(text) = value.to_str()
        && text.trim_start().starts_with("-----BEGIN")
    {
        return Ok(text.to_owned());
    }
    std::fs::read_to_string(&value).map_err(|e| cannot(format!("cannot be read ({e})")))
}

/// An entry measured here (with its findings) as a bundle signed with `key` for `repository`.
fn signed(
    entry: Vec<u8>,
    findings: Option<Vec<u8>>,
    key: &str,
    repository: &str,
) -> Result<Bundle, SyncError> {
    let manifest = Bundle::manifest(repository, &entry, findings.as_deref());
    let manifest = String::from_utf8_lossy(&manifest).into_owned();
    let signature = crate::approval::sign_in_process(bundle::NAMESPACE, key, &manifest)
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
    // A clock before 1970 tells no age: nothing is old enough to drop.
    let Some(now) = now() else {
        return Ok(0);
    };
    let cutoff = now.saturating_sub(u64::from(days) * 86_400);
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

/// Seconds since the epoch; `None` when the clock reads before 1970.
fn now() -> Option<u64> {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).ok();
    now.map(|d| d.as_secs())
}
