//! History read in-process (gix), never through a `git` found on `PATH`: what a verdict rests
//! on — a commit range, a first-parent chain, the blob a path holds at a commit, the paths two
//! commits differ in — must not be answerable by a program an agent put first on `PATH`.

use std::collections::{HashMap, HashSet};

use gix::ObjectId;

use super::repo::{Repo, RepoError, read_error};

/// One commit of a range, with its parents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeCommit {
    pub commit: ObjectId,
    pub parents: Vec<ObjectId>,
}

impl Repo {
    /// The commits of `from..to` (reachable from `to`, not from `from`), parents before
    /// children, as `git rev-list --topo-order --reverse --parents` lists them.
    pub fn range(&self, from: ObjectId, to: ObjectId) -> Result<Vec<RangeCommit>, RepoError> {
        let repo = self.local();
        let what = format!("the commits {}..{}", super::short(&from.to_string()), to);
        let walk = repo
            .rev_walk([to])
            .with_hidden([from])
            .all()
            .map_err(|e| read_error(&what, e))?;
        let mut found = Vec::new();
        for info in walk {
            let info = info.map_err(|e| read_error(&what, e))?;
            found.push(RangeCommit {
                commit: info.id,
                parents: info.parent_ids().map(|p| p.detach()).collect(),
            });
        }
        Ok(topological(found))
    }

    /// The first-parent chain from `to` back to `from`, oldest first (`from` included); `None`
    /// when `from` is not on it (a root, a shallow boundary, or `from` off the chain).
    pub fn first_parent_chain(
        &self,
        from: ObjectId,
        to: ObjectId,
    ) -> Result<Option<Vec<ObjectId>>, RepoError> {
        let mut chain = vec![to];
        let mut at = to;
        while at != from {
            match self.first_parent(at)? {
                Some(parent) => {
                    chain.push(parent);
                    at = parent;
                }
                None => return Ok(None),
            }
        }
        chain.reverse();
        Ok(Some(chain))
    }

    /// The blob id `path` holds at `commit` (`None`: no such file).
    pub fn blob_at(&self, commit: ObjectId, path: &str) -> Result<Option<ObjectId>, RepoError> {
        Ok(self
            .entry_at(commit, path)?
            .filter(|(mode, _)| mode.is_blob_or_symlink())
            .map(|(_, id)| id))
    }

    /// The paths whose entry differs between the trees of `from` and `to`, sorted.
    pub fn changed_between(&self, from: ObjectId, to: ObjectId) -> Result<Vec<String>, RepoError> {
        let what = format!("the change {}..{}", super::short(&from.to_string()), to);
        crate::snapshot::changed_between(&self.local(), from, to)
            .ok_or_else(|| read_error(&what, "a tree cannot be read"))
    }

    /// The parents of `commit`, as it names them.
    pub fn parents(&self, commit: ObjectId) -> Result<Vec<ObjectId>, RepoError> {
        let repo = self.local();
        let object = repo
            .find_commit(commit)
            .map_err(|e| read_error(&format!("the commit {commit}"), e))?;
        Ok(object.parent_ids().map(|p| p.detach()).collect())
    }

    /// A shallow clone's boundary: the commits whose parents were never fetched (empty in a
    /// complete clone). Past them the history ends; it is not an error.
    pub(crate) fn shallow_boundary(&self) -> Result<Vec<ObjectId>, RepoError> {
        let boundary = self
            .local()
            .shallow_commits()
            .map_err(|e| read_error("the shallow boundary (.git/shallow)", e))?;
        Ok(boundary.map_or_else(Vec::new, |b| b.iter().copied().collect()))
    }

    /// The subject line of `commit`'s message.
    pub fn subject(&self, commit: ObjectId) -> Result<String, RepoError> {
        let repo = self.local();
        let object = repo
            .find_commit(commit)
            .map_err(|e| read_error(&format!("the commit {commit}"), e))?;
        let message = String::from_utf8_lossy(object.message_raw_sloppy()).into_owned();
        Ok(message.lines().next().unwrap_or_default().trim().to_owned())
    }
}

/// How far each side of [`Repo::linear_ahead_behind`] walks before git counts instead.
const LINEAR_REACH: u64 = 256;

impl Repo {
    /// Commits in `head` not in `base`, and in `base` not in `head`, where both reach the
    /// commit they meet at through commits of one parent each, within [`LINEAR_REACH`] of it:
    /// those sets are then the two chains above that commit, exactly what `git rev-list
    /// --left-right --count base...head` counts. `None` where history is not that plain (a
    /// merge, a root, a shallow boundary, an unreadable commit, a longer chain): git counts it.
    ///
    /// The two chains are walked a step each in turn; the first commit one of them reaches that
    /// the other has passed is where they meet (below it they are one chain).
    pub(super) fn linear_ahead_behind(&self, base: ObjectId, head: ObjectId) -> Option<(u64, u64)> {
        let repo = self.local();
        let parent = |commit: ObjectId| -> Option<ObjectId> {
            let object = repo.find_commit(commit).ok()?;
            let mut parents = object.parent_ids();
            let (Some(only), None) = (parents.next(), parents.next()) else {
                return None;
            };
            repo.has_object(only).then(|| only.detach())
        };
        let mut sides = [Chain::new(head), Chain::new(base)];
        loop {
            let mut stepped = false;
            for me in 0..2 {
                let [mine, theirs] = match me {
                    0 => [&sides[0], &sides[1]],
                    _ => [&sides[1], &sides[0]],
                };
                if let Some(&at) = theirs.passed.get(&mine.at) {
                    let (ahead, behind) = match me {
                        0 => (mine.steps, at),
                        _ => (at, mine.steps),
                    };
                    return Some((ahead, behind));
                }
                stepped |= sides[me].step(&parent);
            }
            if !stepped {
                return None;
            }
        }
    }
}

/// One side of [`Repo::linear_ahead_behind`]: the commit it is at, how many it passed, where
/// it passed each, and whether it can go no further.
struct Chain {
    at: ObjectId,
    steps: u64,
    passed: HashMap<ObjectId, u64>,
    stopped: bool,
}

impl Chain {
    fn new(tip: ObjectId) -> Self {
        Self {
            at: tip,
            steps: 0,
            passed: HashMap::from([(tip, 0)]),
            stopped: false,
        }
    }

    /// One commit further down, if this one has exactly one parent here and the reach allows.
    fn step(&mut self, parent: &dyn Fn(ObjectId) -> Option<ObjectId>) -> bool {
        let next = match self.stopped || self.steps >= LINEAR_REACH {
            true => None,
            false => parent(self.at),
        };
        let Some(next) = next else {
            self.stopped = true;
            return false;
        };
        self.steps += 1;
        self.at = next;
        self.passed.insert(next, self.steps);
        true
    }
}

/// Order `commits` so that every parent in the set comes before its children (Kahn's order,
/// ties kept in the walk's reverse order, oldest first).
fn topological(mut commits: Vec<RangeCommit>) -> Vec<RangeCommit> {
    commits.reverse();
    let inside: HashSet<ObjectId> = commits.iter().map(|c| c.commit).collect();
    let mut waiting: HashMap<ObjectId, usize> = HashMap::new();
    let mut children: HashMap<ObjectId, Vec<usize>> = HashMap::new();
    for (index, c) in commits.iter().enumerate() {
        let parents: Vec<ObjectId> = c
            .parents
            .iter()
            .filter(|p| inside.contains(*p))
            .copied()
            .collect();
        waiting.insert(c.commit, parents.len());
        for parent in parents {
            children.entry(parent).or_default().push(index);
        }
    }
    let mut ready: std::collections::VecDeque<usize> = (0..commits.len())
        .filter(|&i| waiting.get(&commits[i].commit) == Some(&0))
        .collect();
    let mut order = Vec::with_capacity(commits.len());
    while let Some(index) = ready.pop_front() {
        order.push(index);
        for &child in children.get(&commits[index].commit).into_iter().flatten() {
            if let Some(count) = waiting.get_mut(&commits[child].commit) {
                *count -= 1;
                if *count == 0 {
                    ready.push_back(child);
                }
            }
        }
    }
    let mut slots: Vec<Option<RangeCommit>> = commits.into_iter().map(Some).collect();
    order.into_iter().filter_map(|i| slots[i].take()).collect()
}
