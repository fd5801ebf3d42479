//! Reading refs by the names people write: a trunk named `main`, `origin/main` or
//! `refs/remotes/origin/main`, resolved to a branch and never to a tag; what
//! `origin/HEAD` names; the first parents of a commit; whether the clone is shallow.

use gix::ObjectId;

use super::repo::{Repo, RepoError, read_error};

/// A ref name resolved to the ref it names and the commit it points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The full ref name (`refs/remotes/origin/main`).
    pub reference: String,
    pub commit: ObjectId,
}

impl Repo {
    /// Resolve `name` unambiguously to a branch: a full `refs/…` name as written (never a tag),
    /// else `refs/heads/<name>`, else `refs/remotes/<name>` when `name` starts with a configured
    /// remote (`upstream/main`), else `refs/remotes/origin/<name>`, the shape of a CI clone. A
    /// tag, `HEAD` or any other revision never names a trunk, whatever git's DWIM order would
    /// pick. `None` when nothing matches.
    pub fn resolve_ref(&self, name: &str) -> Result<Option<Resolved>, RepoError> {
        let repo = self.local();
        for candidate in self.ref_candidates(name) {
            let found = repo
                .try_find_reference(candidate.as_str())
                .map_err(|e| read_error(&format!("the ref {candidate}"), e))?;
            // A full name is looked up as written; anything else found is not this name.
            let Some(mut reference) = found.filter(|r| r.name().as_bstr() == candidate.as_str())
            else {
                continue;
            };
            let id = reference
                .peel_to_id()
                .map_err(|e| read_error(&format!("the ref {candidate}"), e))?;
            return Ok(Some(Resolved {
                reference: candidate,
                commit: id.detach(),
            }));
        }
        Ok(None)
    }

    /// The full ref names `name` may stand for, in the order they are tried.
    fn ref_candidates(&self, name: &str) -> Vec<String> {
        if name.starts_with("refs/") {
            return match name.starts_with("refs/tags/") {
                true => Vec::new(),
                false => vec![name.to_owned()],
            };
        }
        if name.is_empty() || name == "HEAD" || name.starts_with('@') {
            return Vec::new();
        }
        let mut candidates = vec![format!("refs/heads/{name}")];
        if let Some((remote, _)) = name.split_once('/')
            && (remote == "origin" || self.remote_names().iter().any(|r| r == remote))
        {
            candidates.push(format!("refs/remotes/{name}"));
        }
        candidates.push(format!("refs/remotes/origin/{name}"));
        candidates
    }

    /// The commit the trunk named `name` points at, as [`Repo::resolve_trunk`] resolves it.
    pub fn trunk_commit(&self, name: &str) -> Result<Option<ObjectId>, RepoError> {
        Ok(self.resolve_trunk(name)?.map(|r| r.commit))
    }

    /// The trunk as the team has it: `name` resolved as [`Repo::resolve_ref`] does, and when
    /// that is a local branch with an upstream (its configured one, else `origin/<name>`), the
    /// newer of the two — a laptop's `main` left behind `origin/main` is not the trunk the team
    /// is on; a local one ahead (unpushed) is. Diverged: an error naming the fix.
    pub fn resolve_trunk(&self, name: &str) -> Result<Option<Resolved>, RepoError> {
        let Some(local) = self.resolve_ref(name)? else {
            return Ok(None);
        };
        let Some(branch) = local.reference.strip_prefix("refs/heads/") else {
            return Ok(Some(local));
        };
        let Some(upstream) = self.resolve_ref(&self.upstream_of(branch))? else {
            return Ok(Some(local));
        };
        if upstream.commit == local.commit || self.is_ancestor(upstream.commit, local.commit) {
            Ok(Some(local))
        } else if self.is_ancestor(local.commit, upstream.commit) {
            Ok(Some(upstream))
        } else {
            Err(RepoError::TrunkDiverged {
                branch: branch.to_owned(),
                upstream: upstream
                    .reference
                    .trim_start_matches("refs/remotes/")
                    .to_owned(),
            })
        }
    }

    /// The remote-tracking ref a local branch follows: `branch.<name>.remote` and
    /// `branch.<name>.merge` where configured, else `refs/remotes/origin/<name>`.
    fn upstream_of(&self, branch: &str) -> String {
        let repo = self.local();
        let config = repo.config_snapshot();
        let remote = config.string(format!("branch.{branch}.remote").as_str());
        let merge = config.string(format!("branch.{branch}.merge").as_str());
        match (remote, merge) {
            (Some(remote), Some(merge)) if remote.as_slice() != b"." => {
                let merged = merge.to_string();
                let name = merged.strip_prefix("refs/heads/").unwrap_or(&merged);
                format!("refs/remotes/{remote}/{name}")
            }
            _ => format!("refs/remotes/origin/{branch}"),
        }
    }

    /// The branch `init` writes as the trunk: what `origin/HEAD` names, else `main`, else
    /// `master` (local or on `origin`); `None` when none of them exists.
    pub fn default_trunk(&self) -> Option<String> {
        let repo = self.local();
        if let Ok(Some(head)) = repo.try_find_reference("refs/remotes/origin/HEAD")
            && let gix::refs::TargetRef::Symbolic(target) = head.target()
            && let Some(branch) = target
                .as_bstr()
                .to_string()
                .strip_prefix("refs/remotes/origin/")
        {
            return Some(branch.to_owned());
        }
        ["main", "master"]
            .into_iter()
            .find(|name| matches!(self.resolve_ref(name), Ok(Some(_))))
            .map(str::to_owned)
    }

    /// The first parent of `commit`; `None` for a root commit or a parent this clone does
    /// not have (a shallow boundary).
    pub fn first_parent(&self, commit: ObjectId) -> Result<Option<ObjectId>, RepoError> {
        let repo = self.local();
        let what = format!("the commit {commit}");
        let object = repo.find_commit(commit).map_err(|e| read_error(&what, e))?;
        let Some(parent) = object.parent_ids().next().map(|id| id.detach()) else {
            return Ok(None);
        };
        Ok(repo.has_object(parent).then_some(parent))
    }

    /// Whether `commit` has a parent this clone lacks (a shallow boundary).
    pub fn parent_missing(&self, commit: ObjectId) -> bool {
        let repo = self.local();
        repo.find_commit(commit)
            .map(|c| c.parent_ids().any(|p| !repo.has_object(p)))
            .unwrap_or(true)
    }

    /// Whether this clone is shallow (`<common-dir>/shallow` exists).
    pub fn is_shallow(&self) -> bool {
        self.common_dir().join("shallow").exists()
    }

    /// Resolve a revision (`HEAD~2`, a commit id, a ref) to a commit.
    pub fn rev_parse(&self, spec: &str) -> Result<ObjectId, RepoError> {
        let repo = self.local();
        let id = repo
            .rev_parse_single(spec)
            .map_err(|e| read_error(&format!("the revision {spec:?}"), e))?;
        let object = id
            .object()
            .and_then(|o| o.peel_to_kind(gix::object::Kind::Commit));
        match object {
            Ok(commit) => Ok(commit.id),
            Err(e) => Err(read_error(&format!("the revision {spec:?}"), e)),
        }
    }

    /// The note on `commit` in `notes_ref` (flat or fanned out, as git writes them); `None`
    /// when the ref or the note does not exist.
    pub fn note(&self, notes_ref: &str, commit: ObjectId) -> Result<Option<Vec<u8>>, RepoError> {
        let Some(resolved) = self.resolve_ref(notes_ref)? else {
            return Ok(None);
        };
        let hex = commit.to_string();
        let paths = [
            hex.clone(),
            format!("{}/{}", &hex[..2], &hex[2..]),
            format!("{}/{}/{}", &hex[..2], &hex[2..4], &hex[4..]),
        ];
        for path in paths {
            if let Some(bytes) = self.file_at(resolved.commit, &path)? {
                return Ok(Some(bytes));
            }
        }
        Ok(None)
    }

    /// The names of the configured remotes.
    pub fn remote_names(&self) -> Vec<String> {
        self.local()
            .remote_names()
            .into_iter()
            .map(|name| name.to_string())
            .collect()
    }
}

/// A local trunk with commits of its own while its upstream moved on: which one the team is on
/// cannot be told, and every verb that needs the trunk says so with the rebase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DivergedTrunk {
    pub(crate) branch: String,
    pub(crate) upstream: String,
}

impl DivergedTrunk {
    /// The divergence `error` reports, if that is what it is.
    pub(crate) fn of(error: &RepoError) -> Option<Self> {
        match error {
            RepoError::TrunkDiverged { branch, upstream } => Some(Self {
                branch: branch.clone(),
                upstream: upstream.clone(),
            }),
            _ => None,
        }
    }

    /// The commands past it, then `then` (what to run again).
    pub(crate) fn hint(&self, then: &str) -> String {
        let (branch, upstream) = (&self.branch, &self.upstream);
        format!(
            "Put the local trunk's own commits on top of the team's: `git fetch`, then `git rebase {upstream} {branch}` (or drop them: `git branch -f {branch} {upstream}`), then {then}."
        )
    }
}

impl std::fmt::Display for DivergedTrunk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the local trunk {} and {} have diverged, so which one the team is on cannot be told",
            self.branch, self.upstream
        )
    }
}
