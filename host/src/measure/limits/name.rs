//! Which trunk a check is judged against, and the ref that is. HEAD's config only points at a
//! candidate, followed to the name the config at its merge base with HEAD gives. The branches
//! then have the last word: a branch that names itself the trunk, whose merge base with HEAD
//! names it too, is a trunk HEAD came from; when HEAD's history names another, it renamed the
//! trunk in commits that are not on it — a rename counts once it lands on the trunk it renames
//! — so the check is judged against the trunk it came from, and the rename is a protected
//! change. That holds however many commits the rename took and whatever it names instead: the
//! change's own branch, `HEAD`, a branch it pushed, one of discern's refs, an unrelated history.
//! A name resolves to a branch only; in CI (`CI=true`) a local branch never stands for the trunk
//! over its remote-tracking ref: a CI clone has no local trunk, and one there was made by
//! something that ran in it.

use std::collections::HashMap;

use gix::ObjectId;

use crate::config::{AtError, Config};
use crate::git::{Repo, RepoError, short};

/// How many names are followed before the trunk is called undecidable.
const STEPS: usize = 8;

/// A branch ref: its full name and the commit it points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TrunkRef {
    pub reference: String,
    pub commit: ObjectId,
}

/// The trunk a name resolves to, and (in CI) the local branch of that name it was preferred to.
#[derive(Debug, Clone)]
pub(super) struct Found {
    pub trunk: TrunkRef,
    pub set_aside: Option<TrunkRef>,
}

/// The trunk as the trunk side named it, with why it is not the name HEAD's config gives.
#[derive(Debug, Clone)]
pub(super) struct Named {
    pub trunk: String,
    /// The rename the check was judged around (an advisory).
    pub renamed: Option<String>,
    /// Why no trunk could be told (the check is unverified).
    pub undecided: Option<String>,
}

impl Named {
    /// A name the runner gave (`DISCERN_TRUNK`): taken as it is.
    pub(super) fn given(trunk: String) -> Self {
        Self {
            trunk,
            renamed: None,
            undecided: None,
        }
    }
}

/// Whether `name` can name a branch: `HEAD`, `@…`, a tag and any ref outside `refs/heads/` and
/// `refs/remotes/` (discern's notes and evidence, a forge's `refs/pull/`) never do.
pub(super) fn branch_shaped(name: &str) -> bool {
    match name.strip_prefix("refs/") {
        Some(rest) => rest.starts_with("heads/") || rest.starts_with("remotes/"),
        None => !(name.is_empty() || name == "HEAD" || name.starts_with('@')),
    }
}

/// The branch `name` names. In CI, a local branch yields to the remote-tracking ref a fetch
/// writes for it (never its configured upstream), and is named in `set_aside` when it points
/// elsewhere; elsewhere, the newer of a local branch and its upstream ([`Repo::resolve_trunk`]:
/// a fork's `main` following `upstream/main`).
pub(super) fn resolve(repo: &Repo, name: &str, ci: bool) -> Result<Option<Found>, RepoError> {
    if !branch_shaped(name) {
        return Ok(None);
    }
    let found = |r: Option<TrunkRef>| {
        r.map(|trunk| Found {
            trunk,
            set_aside: None,
        })
    };
    if !ci {
        let resolved = repo.resolve_trunk(name)?;
        return Ok(found(resolved.map(|r| TrunkRef {
            reference: r.reference,
            commit: r.commit,
        })));
    }
    let Some(local) = repo.resolve_ref(name)? else {
        return Ok(None);
    };
    let local = TrunkRef {
        reference: local.reference,
        commit: local.commit,
    };
    let Some(branch) = local
        .reference
        .strip_prefix("refs/heads/")
        .map(str::to_owned)
    else {
        return Ok(found(Some(local)));
    };
    match remote_tracking(repo, &branch)? {
        Some(remote) => Ok(Some(Found {
            set_aside: (remote.commit != local.commit).then_some(local),
            trunk: remote,
        })),
        None => Ok(found(Some(local))),
    }
}

/// The remote-tracking ref of the branch `branch`: `refs/remotes/<branch>` when it starts with a
/// remote's name, else `refs/remotes/origin/<branch>`.
fn remote_tracking(repo: &Repo, branch: &str) -> Result<Option<TrunkRef>, RepoError> {
    let mut names = Vec::new();
    if let Some((remote, _)) = branch.split_once('/')
        && repo.remote_names().iter().any(|r| r == remote)
    {
        names.push(format!("refs/remotes/{branch}"));
    }
    names.push(format!("refs/remotes/origin/{branch}"));
    for name in names {
        if let Some(r) = repo.resolve_ref(&name)? {
            return Ok(Some(TrunkRef {
                reference: r.reference,
                commit: r.commit,
            }));
        }
    }
    Ok(None)
}

/// The trunk as the trunk side names it, starting from `claimed` (HEAD's config): followed to
/// a name its side agrees with (a name that is HEAD itself, or names nothing here, stands as
/// HEAD's claim), then checked against the branches HEAD came from. A name whose side cannot
/// be read is kept: the check says why it cannot compare with it.
pub(super) fn trunk_side(repo: &Repo, claimed: String, head: ObjectId, ci: bool) -> Named {
    let mut names = Names::default();
    let mut named = Named::given(claimed.clone());
    let mut path = vec![claimed];
    let mut settled = false;
    for _ in 0..STEPS {
        let side = match resolve(repo, &named.trunk, ci) {
            Ok(Some(found)) if found.trunk.commit != head => {
                repo.merge_base(found.trunk.commit, head)
            }
            _ => None,
        };
        let named_there = side.map(|side| names.at(repo, side));
        match named_there {
            Some(Ok(Some(other))) if other != named.trunk => {
                named.trunk = other;
                path.push(named.trunk.clone());
            }
            _ => {
                settled = true;
                break;
            }
        }
    }
    if !settled {
        named.undecided = Some(format!(
            "which branch is the trunk cannot be told: the names the trunk side gives do not settle ({})",
            path.join(" -> ")
        ));
        return named;
    }
    let left = match names.left(repo, &named.trunk, head, ci) {
        Ok(left) => left,
        Err(e) => {
            named.undecided = Some(format!(
                "which branch is the trunk cannot be told: the branches cannot be read ({e})"
            ));
            return named;
        }
    };
    match left.as_slice() {
        [] => {}
        [(trunk, base)] => {
            named.renamed = Some(format!(
                "HEAD's history names the trunk {:?}, but it came from the trunk {trunk:?} (at {}) and renamed it in commits that are not on {trunk:?}: a rename counts once it lands on the trunk it renames, so this is judged against {trunk:?}, and the rename is a protected change that awaits the owner's approval. (A branch {trunk:?} left behind from before a rename that did land: update or delete it. A second trunk, such as a maintenance branch, is named by the runner: DISCERN_TRUNK.)",
                named.trunk,
                short(&base.to_string())
            ));
            named.trunk = trunk.clone();
        }
        many => {
            let trunks: Vec<String> = many.iter().map(|(t, _)| format!("{t:?}")).collect();
            named.undecided = Some(format!(
                "which branch is the trunk cannot be told: HEAD's history names {:?}, but it came from several branches that each name themselves the trunk ({})",
                named.trunk,
                trunks.join(", ")
            ));
        }
    }
    named
}

/// `[repository].trunk` at commits, each `discern.toml` blob parsed once.
#[derive(Default)]
struct Names {
    by_blob: HashMap<ObjectId, Option<String>>,
}

impl Names {
    /// The trunk the config at `commit` names; `None` where it has none, or one that cannot be
    /// parsed.
    fn at(&mut self, repo: &Repo, commit: ObjectId) -> Result<Option<String>, RepoError> {
        let Some(blob) = repo.blob_at(commit, crate::config::FILE)? else {
            return Ok(None);
        };
        if let Some(name) = self.by_blob.get(&blob) {
            return Ok(name.clone());
        }
        let name = match Config::at(repo, commit) {
            Ok(config) => config.map(|c| c.trunk),
            Err(AtError::Unreadable(e)) => return Err(e),
            Err(_) => None,
        };
        self.by_blob.insert(blob, name.clone());
        Ok(name)
    }

    /// The trunks other than `trunk` that HEAD came from, each with where it left: a branch
    /// that names itself the trunk (its tip's config names a trunk that resolves to this very
    /// branch: `main` at `refs/remotes/origin/main`) and whose merge base with HEAD — not HEAD
    /// itself — names it too. HEAD left that trunk there, and its history renamed it since in
    /// commits that are not on it: a branch's rename, however many commits it took, whatever
    /// branch, ref or unrelated history it names instead.
    fn left(
        &mut self,
        repo: &Repo,
        trunk: &str,
        head: ObjectId,
        ci: bool,
    ) -> Result<Vec<(String, ObjectId)>, RepoError> {
        let current = resolve(repo, trunk, ci).ok().flatten();
        // Most branches name the same trunk: each name is resolved once.
        let mut resolved: HashMap<String, Option<String>> = HashMap::new();
        let mut left: Vec<(String, ObjectId)> = Vec::new();
        for (reference, tip) in branches(&repo.local())? {
            let Some(name) = self.at(repo, tip)? else {
                continue;
            };
            let names_it = resolved
                .entry(name.clone())
                .or_insert_with(|| {
                    let found = resolve(repo, &name, ci).ok().flatten();
                    found.map(|f| f.trunk.reference)
                })
                .as_deref();
            let Some(named_ref) = names_it else {
                continue;
            };
            let same = name == trunk
                || current
                    .as_ref()
                    .is_some_and(|c| c.trunk.reference == named_ref);
            if same || named_ref != reference || left.iter().any(|(n, _)| *n == name) {
                continue;
            }
            let Some(base) = repo.merge_base(tip, head).filter(|base| *base != head) else {
                continue;
            };
            if self.at(repo, base)?.as_deref() == Some(name.as_str()) {
                left.push((name, base));
            }
        }
        Ok(left)
    }
}

/// Every branch (`refs/heads/…`, `refs/remotes/…`; not a symbolic ref such as `origin/HEAD`)
/// with the commit it points at.
pub(super) fn branches(local: &gix::Repository) -> Result<Vec<(String, ObjectId)>, RepoError> {
    let failed = |e: &dyn std::fmt::Display| RepoError::Read {
        what: "the branches".to_owned(),
        message: e.to_string(),
    };
    let references = local.references().map_err(|e| failed(&e))?;
    let mut found = Vec::new();
    for prefix in ["refs/heads/", "refs/remotes/"] {
        for reference in references.prefixed(prefix).map_err(|e| failed(&e))? {
            let mut reference = reference.map_err(|e| failed(&e))?;
            if matches!(reference.target(), gix::refs::TargetRef::Symbolic(_)) {
                continue;
            }
            let name = reference.name().as_bstr().to_string();
            let Ok(id) = reference.peel_to_commit().map(|c| c.id) else {
                continue;
            };
            found.push((name, id));
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests;
