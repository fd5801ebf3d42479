//! `discern sync [REMOTE] [--push] [--prune]`: share discern's refs — the Proof notes, the
//! approval notes and published evidence — with a remote through git itself.
//!
//! Each ref is fetched into a remote-tracking copy beside it, never over the local one, then
//! merged into the local ref three-way ([`merge`]): entries are per commit or
//! content-addressed, so nothing conflicts and nothing either side wrote is lost. `--push`
//! first measures HEAD and publishes the readings, signed, where the trunk says this run may
//! ([`publish`]), then pushes every ref that moved in one atomic push, each with a lease on
//! what was fetched; when another clone pushed first, sync fetches, merges and pushes again. A
//! per-clone lock keeps two local syncs apart. Works from a depth-1 clone: these refs have
//! their own histories. Every git it runs runs under the [`seal::Seal`]: never with the
//! evidence key, never running a program the clone's config names.

mod integrate;
pub(crate) mod landing;
pub(crate) mod merge;
pub(crate) mod publish;
pub(crate) mod refs;
mod seal;
mod transport;

use std::time::Duration;

use serde::Serialize;

use crate::config::Config;
use crate::git::{Repo, RepoError};
use crate::result::{ErrorSlug, Hint, HintId, Refused, Reply, Report};
use crate::workspace::Workspace;

pub(crate) use integrate::RefState;

pub(crate) const VERB: &str = "sync";
/// The environment variable holding the private key that signs published evidence (the key's
/// text, or the path of its file). No child process of `sync` inherits it.
pub(crate) const KEY_VAR: &str = crate::git::EVIDENCE_KEY;
/// How many times a push that lost a race is tried again.
const ATTEMPTS: u32 = 20;
/// The lock two local syncs take turns at.
const LOCK: &str = "sync.lock";

#[derive(Debug, Clone, Default, clap::Args, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SyncRequest {
    /// The remote to sync with (default: `origin`, or the only remote).
    #[serde(default)]
    pub remote: Option<String>,
    /// Push discern's refs too (and publish this run's evidence where `[evidence].publish`
    /// allows it).
    #[arg(long)]
    #[serde(default)]
    pub push: bool,
    /// Drop published evidence older than `[evidence].keep_days` before pushing.
    #[arg(long)]
    #[serde(default)]
    pub prune: bool,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum SyncError {
    #[error("{0}")]
    Git(String),
    #[error("cannot {action} {remote}: {message}")]
    Remote {
        remote: String,
        action: &'static str,
        message: String,
    },
    #[error("this repository has no remote named {0:?}")]
    NoRemote(String),
    #[error("this repository has no remote to sync with")]
    NoRemotes,
    #[error("another clone kept pushing first: {0} attempts lost the race ({1})")]
    Contended(u32, String),
    #[error(transparent)]
    Repo(#[from] RepoError),
    #[error(transparent)]
    Commit(#[from] crate::commit::CommitError),
    #[error(transparent)]
    Lock(#[from] crate::commit::lock::LockError),
    #[error("cannot publish evidence: {0}")]
    Publish(String),
    #[error(
        "this sync holds the evidence key ({KEY_VAR}) and will not run git with {key}: {why}. Fix: {fix}, or publish from a fresh clone no repository code ran in"
    )]
    Unsafe {
        key: String,
        why: String,
        fix: String,
    },
    #[error(
        "this sync holds the evidence key ({KEY_VAR}) and cannot make its process undumpable ({0}), so another program of this user could read the key from it; publish from a Linux runner (the README's publish job), where prctl(PR_SET_DUMPABLE) is allowed"
    )]
    Undumpable(String),
}

/// `data` of `sync`.
#[derive(Debug, Default, Serialize)]
struct Synced {
    remote: String,
    refs: Vec<RefState>,
    pushed: bool,
    /// Push attempts that lost a race to another clone and were merged and tried again.
    races: u32,
    /// What publishing did (with `--push` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    publish: Option<publish::Publication>,
    pruned: usize,
    /// The local trunk's landing pushed with its Proof note, when there was one.
    #[serde(skip_serializing_if = "Option::is_none")]
    landed_trunk: Option<String>,
    /// A landing on the local trunk this push could not carry: the forge's trunk moved on.
    #[serde(skip_serializing_if = "Option::is_none")]
    unpushed_landing: Option<landing::Unpushed>,
}

pub(crate) fn sync(ws: &Workspace, request: &SyncRequest) -> Result<Reply, Refused> {
    match committed_config(&ws.repo).and_then(|config| run(ws, &config, request)) {
        Ok(synced) => match &synced.unpushed_landing {
            Some(unpushed) => Err(landing_refused(&synced, unpushed)),
            None => Ok(envelope(&synced)),
        },
        Err(e) => Err(Refused::new(
            ErrorSlug::PreconditionFailed,
            format!("Nothing was pushed: {e}."),
            Hint::next_step(
                HintId::SyncRefs,
                "Fix what is named (the remote's URL and access: `git remote -v`, `git fetch`), then run `discern sync` again; every step is safe to repeat.",
            ),
        )),
    }
}

fn run(ws: &Workspace, config: &Config, request: &SyncRequest) -> Result<Synced, SyncError> {
    let repo = &ws.repo;
    let remote = remote_of(repo, request.remote.as_deref())?;
    // Before any git runs: the key stays out of every child, and a sealed sync refuses a
    // config that would make git run a program.
    let seal = seal::Seal::for_process(repo)?;
    let git = (repo, &seal);
    let _lock = crate::commit::lock::WriterLock::acquire_named(repo, LOCK)?;
    let mut synced = Synced {
        remote: remote.clone(),
        ..Synced::default()
    };
    if request.push {
        synced.publish = Some(publish::publish(ws, &seal, &remote, config)?);
    }
    if request.prune {
        synced.pruned = publish::prune(repo, config)?;
    }
    for attempt in 1..=ATTEMPTS {
        synced.refs = integrate::fetch_and_merge(git, &remote)?;
        if !request.push {
            return Ok(synced);
        }
        let trunk = match landing::trunk_landing(git, &remote, config.trunk(None))? {
            landing::TrunkLanding::Push(update) => Some(update),
            landing::TrunkLanding::Diverged(unpushed) => {
                synced.unpushed_landing = Some(unpushed);
                None
            }
            landing::TrunkLanding::Nothing => None,
        };
        match integrate::push(git, &remote, &synced.refs, trunk.as_ref())? {
            transport::Pushed::Done => {
                synced.pushed = true;
                synced.landed_trunk = trunk.map(|t| t.local.to_string());
                integrate::pushed(repo, &remote, &mut synced.refs)?;
                return Ok(synced);
            }
            transport::Pushed::Raced(why) if attempt == ATTEMPTS => {
                return Err(SyncError::Contended(attempt, why));
            }
            transport::Pushed::Raced(_) => {
                synced.races += 1;
                std::thread::sleep(backoff(attempt));
            }
        }
    }
    Err(SyncError::Contended(ATTEMPTS, "no attempt left".to_owned()))
}

/// HEAD's committed config, never the work tree's: the trunk a landing pushes, `keep_days`,
/// and what can stop publishing (what allows it is the forge's trunk, `publish::trunk`).
fn committed_config(repo: &Repo) -> Result<Config, SyncError> {
    let Some(head) = repo.head()? else {
        return Ok(Config::absent());
    };
    Config::at_or_absent(repo, head)
        .map_err(|e| SyncError::Git(format!("discern.toml at HEAD cannot be read: {e}")))
}

/// A short, growing, jittered wait, so racing clones fall out of step: up to 40 ms per attempt
/// so far, drawn afresh each time.
fn backoff(attempt: u32) -> Duration {
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos())
        ^ std::process::id().wrapping_mul(2_654_435_761);
    let span = u64::from(attempt.min(10)) * 40;
    Duration::from_millis(10 + u64::from(seed) % span.max(1))
}

/// The remote to sync with: the one named, else `origin`, else the only one.
fn remote_of(repo: &Repo, named: Option<&str>) -> Result<String, SyncError> {
    let remotes = repo.remote_names();
    match named {
        Some(name) if remotes.iter().any(|r| r == name) => Ok(name.to_owned()),
        Some(name) => Err(SyncError::NoRemote(name.to_owned())),
        None if remotes.iter().any(|r| r == "origin") => Ok("origin".to_owned()),
        None if remotes.len() == 1 => Ok(remotes[0].clone()),
        None if remotes.is_empty() => Err(SyncError::NoRemotes),
        None => Err(SyncError::NoRemote("origin".to_owned())),
    }
}

fn envelope(synced: &Synced) -> Reply {
    let mut lines: Vec<String> = synced.refs.iter().map(RefState::line).collect();
    lines.extend(synced.publish.as_ref().map(publish::Publication::line));
    if let Some(trunk) = &synced.landed_trunk {
        lines.push(format!(
            "the trunk's landing {} pushed with its Proof note, in one atomic push",
            crate::git::short(trunk)
        ));
    }
    if synced.pruned > 0 {
        lines.push(format!(
            "pruned {} published entr{}",
            synced.pruned,
            plural(synced.pruned)
        ));
    }
    if synced.races > 0 {
        lines.push(format!(
            "{} push{} lost a race to another clone and {} merged and pushed again",
            synced.races,
            if synced.races == 1 { "" } else { "es" },
            if synced.races == 1 { "was" } else { "were" }
        ));
    }
    let state = match synced.pushed {
        true => format!("Synced with {} and pushed.", synced.remote),
        false => format!("Synced from {}.", synced.remote),
    };
    let mut e = Reply::new(
        synced,
        Report {
            state: format!("{state}\n{}", lines.join("\n")),
            sections: Vec::new(),
        },
    );
    if !synced.pushed && synced.refs.iter().any(RefState::unpushed) {
        e.hints.push(Hint::next_step(
            HintId::SyncRefs,
            format!(
                "Share this clone's notes and evidence: `discern sync {} --push`.",
                synced.remote
            ),
        ));
    }
    e
}

/// The notes went, the landing did not: a refusal (exit 1) that says why and what pushes it,
/// with what was synced.
fn landing_refused(synced: &Synced, unpushed: &landing::Unpushed) -> Refused {
    Refused::new(
        ErrorSlug::PreconditionFailed,
        format!(
            "Synced with {}, but {}.",
            synced.remote,
            unpushed.message(&synced.remote)
        ),
        Hint::next_step(
            HintId::SyncRefs,
            format!(
                "`git checkout {trunk} && git pull --no-rebase {remote} {trunk}`, then `discern sync --push`.",
                trunk = unpushed.trunk,
                remote = synced.remote
            ),
        ),
    )
    .with_data(synced)
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "y" } else { "ies" }
}

/// The synced refs this clone has that the remote it syncs with does not (as of the last
/// fetch), and a landing on the local `trunk` the remote's lacks: what `discern sync --push`
/// would push. Empty without a remote.
pub(crate) fn unpushed(repo: &Repo, trunk: &str) -> Vec<String> {
    let Ok(remote) = remote_of(repo, None) else {
        return Vec::new();
    };
    let landing = match landing::unpushed_landing(repo, &remote, trunk) {
        Ok(landing) => landing.map(|landing| {
            format!(
                "the landing {} on {trunk}",
                crate::git::short(&landing.to_string())
            )
        }),
        // Never "nothing unpushed" when it cannot be told.
        Err(e) => Some(format!(
            "perhaps a landing on {trunk} (it cannot be told: {e})"
        )),
    };
    refs::SYNCED
        .iter()
        .filter_map(|synced| {
            let local = repo.resolve_ref(synced.name).map(|r| r.map(|r| r.commit));
            let tracking = repo
                .resolve_ref(&refs::tracking(synced.name, &remote))
                .map(|r| r.map(|r| r.commit));
            let name = synced.name.to_owned();
            match (local, tracking) {
                // Never "nothing unpushed" when it cannot be told.
                (Err(e), _) | (_, Err(e)) => {
                    Some(format!("perhaps {name} (it cannot be told: {e})"))
                }
                (Ok(None), _) => None,
                (Ok(Some(_)), Ok(None)) => Some(name),
                (Ok(Some(l)), Ok(Some(t))) => (l != t && !repo.is_ancestor(l, t)).then_some(name),
            }
        })
        .chain(landing)
        .collect()
}
