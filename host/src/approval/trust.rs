//! The trust root's policy, anchored: the approval policy and signers a check reads from the
//! trunk side count only if they got there legitimately. Walking the first-parent chain back
//! from the trust root, the last commit that changed them (the `[acceptance]` table or the
//! signers file's content) must carry an approval of that change verified under the policy
//! before it — itself anchored the same way — or the change is as old as the history (the
//! gate's start). A pushed commit that added its own key, or switched to `interactive`, is no
//! trust root for what follows it.

use gix::ObjectId;

use super::{Policy, policy, tree};
use crate::config::{ApprovalPolicy, Config, FILE};
use crate::git::{Repo, RepoError};
use crate::protected::{self, Side};

/// How many commits back the last change of the policy is looked for.
const SEARCH: usize = 100_000;
/// How many policy changes are followed back.
const DEPTH: usize = 16;

/// The policy at `at`, when it is anchored; `None` when it cannot be read or got there without
/// the approval of the policy before it (then no approval counts).
pub(crate) fn anchored_policy(repo: &Repo, at: ObjectId) -> Option<Policy> {
    anchored(repo, at, 0).ok().flatten()
}

fn anchored(repo: &Repo, at: ObjectId, depth: usize) -> Result<Option<Policy>, RepoError> {
    let Ok(current) = policy(repo, at) else {
        return Ok(None);
    };
    let mut keys = Keys::default();
    let key = keys.of(repo, at)?;
    let mut child = at;
    for _ in 0..SEARCH {
        let Some(parent) = repo.first_parent(child)? else {
            // Unchanged since the first commit this clone has: the gate's start, or a shallow
            // boundary a check already names as unverified.
            return Ok(Some(current));
        };
        if keys.of(repo, parent)? == key {
            child = parent;
            continue;
        }
        // `child` changed the policy: it counts only with an approval under the one before.
        if depth >= DEPTH {
            return Ok(None);
        }
        let Some(before) = anchored(repo, parent, depth + 1)? else {
            return Ok(None);
        };
        let approved = before.approval == ApprovalPolicy::Interactive
            || approved_change(repo, parent, at, &before)?;
        return Ok(approved.then_some(current));
    }
    Ok(None)
}

/// What decides the policy at a commit: the `[acceptance]` table as written and the signers
/// file's blob. Each `discern.toml` blob is parsed once.
#[derive(Default)]
struct Keys {
    parsed: std::collections::HashMap<Option<ObjectId>, (String, Option<String>)>,
}

type Key = (String, Option<ObjectId>);

impl Keys {
    fn of(&mut self, repo: &Repo, commit: ObjectId) -> Result<Key, RepoError> {
        let blob = repo.blob_at(commit, FILE)?;
        let (acceptance, path) = match self.parsed.get(&blob) {
            Some(parsed) => parsed.clone(),
            None => {
                // A config that cannot be read is not "no config": which keys sign is unknown.
                let config = Config::at_or_absent(repo, commit).map_err(|e| RepoError::Read {
                    what: format!("{FILE} at {commit}"),
                    message: e.to_string(),
                })?;
                let acceptance = config
                    .document
                    .get("acceptance")
                    .map(crate::config::item_to_json)
                    .map(|v| crate::config::canonical_json(&v))
                    .unwrap_or_default();
                let parsed = (acceptance, config.allowed_signers);
                self.parsed.insert(blob, parsed.clone());
                parsed
            }
        };
        let signers = match &path {
            Some(path) => repo.blob_at(commit, path)?,
            None => None,
        };
        Ok((acceptance, signers))
    }
}

/// Whether a commit on the chain from `parent` to `at` adds an approval, verified under
/// `before`, of exactly everything `parent..that commit` changed that only the owner may.
fn approved_change(
    repo: &Repo,
    parent: ObjectId,
    at: ObjectId,
    before: &Policy,
) -> Result<bool, RepoError> {
    let Some(chain) = repo.first_parent_chain(parent, at)? else {
        return Ok(false);
    };
    let old = Config::at_or_absent(repo, parent).unwrap_or_else(|_| Config::absent());
    for &commit in chain.iter().skip(1) {
        let approvals = tree::added(repo, parent, commit)?;
        if approvals.is_empty() {
            continue;
        }
        let new = Config::at_or_absent(repo, commit).unwrap_or_else(|_| Config::absent());
        let changes = protected::between(
            repo,
            Side {
                commit: parent,
                config: &old,
            },
            Side {
                commit,
                config: &new,
            },
        )?;
        let range = tree::Range {
            from: parent,
            to: commit,
        };
        if tree::approving(repo, &approvals, Some(before), range, &changes).is_ok() {
            return Ok(true);
        }
    }
    Ok(false)
}
