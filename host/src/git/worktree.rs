//! The git commands discern runs that are not ref writes, typed, each with its rollback: add
//! and remove a worktree, merge into the checked-out branch (a conflict is aborted, leaving
//! nothing), and bring a checkout's index and files from one commit to another.
//!
//! git itself does these (it owns worktree administration, the merge machinery and checkout
//! safety); every ref discern moves goes through `commit`.

use std::path::Path;

use gix::ObjectId;

use crate::git::Repo;

/// A git command that failed, and what it said.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`git {command}` failed: {message}")]
pub(crate) struct GitCommandError {
    pub command: String,
    pub message: String,
}

fn run(repo: &Repo, args: &[&str]) -> Result<String, GitCommandError> {
    repo.git(args).map_err(|e| GitCommandError {
        command: args.join(" "),
        message: e.to_string(),
    })
}

/// `git worktree add <path> <branch>`: a new checkout of an existing branch. On failure git
/// leaves no worktree behind.
pub(crate) fn add(repo: &Repo, path: &Path, branch: &str) -> Result<(), GitCommandError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| GitCommandError {
            command: format!("worktree add {}", path.display()),
            message: format!("cannot create {}: {e}", parent.display()),
        })?;
    }
    let path = path.display().to_string();
    run(repo, &["worktree", "add", "--quiet", &path, branch]).map(|_| ())
}

/// Whether a removal may discard the worktree's uncommitted files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Removal {
    /// Only a clean worktree is removed (git refuses otherwise).
    IfClean,
    /// The rollback of a worktree this call just created: whatever is in it goes.
    Discard,
    /// The unwind of a worktree a killed `git worktree add` left locked: it goes too.
    DiscardLocked,
}

/// `git worktree remove [--force] <path>`, run from `main` (a worktree cannot remove itself).
pub(crate) fn remove(main: &Repo, path: &Path, removal: Removal) -> Result<(), GitCommandError> {
    let path = path.display().to_string();
    match removal {
        Removal::IfClean => run(main, &["worktree", "remove", &path]),
        Removal::Discard => run(main, &["worktree", "remove", "--force", &path]),
        Removal::DiscardLocked => run(main, &["worktree", "remove", "--force", "--force", &path]),
    }
    .map(|_| ())
}

/// What a merge did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Merge {
    /// The branch now contains `incoming` in a merge commit.
    Merged,
    /// It conflicted only in the one file a resolver was given, which resolved it: the branch
    /// contains `incoming` in a merge commit with that file as resolved.
    Resolved(String),
    /// It conflicted in these paths; the merge was aborted and nothing changed.
    Conflicted(Vec<String>),
    /// It failed for another reason (`message`); aborted, nothing changed.
    Failed(String),
    /// It conflicted only in the resolver's file, which the resolver refused to settle (`why`);
    /// aborted, nothing changed.
    Unsettled { path: String, why: String },
}

/// How a conflict confined to one file may be resolved: given the base's content (`None` when
/// the file is new on both sides), ours and theirs, the resolved content, or why not.
pub(crate) struct Resolver<'a> {
    pub path: &'a str,
    pub resolve: &'a Resolve,
}

/// `(base, ours, theirs)` → the resolved content, or why not.
pub(crate) type Resolve = dyn Fn(Option<&str>, &str, &str) -> Result<String, String>;

/// `git merge --no-ff --no-edit -m <message> <incoming>` into the checked-out branch. A
/// conflict in `resolver.path` alone that the resolver resolves is committed as the merge;
/// any other failure is aborted (`git merge --abort`), so no conflict state is ever left.
pub(crate) fn merge(
    repo: &Repo,
    incoming: ObjectId,
    message: &str,
    resolver: Option<&Resolver>,
) -> Merge {
    let incoming = incoming.to_string();
    let args = ["merge", "--no-edit", "--no-ff", "-m", message, &incoming];
    let Err(e) = run(repo, &args) else {
        return Merge::Merged;
    };
    // Unlisted conflicts are never "no conflict": the merge is aborted and its failure says why.
    let files: Vec<String> = match run(repo, &["diff", "--name-only", "--diff-filter=U"]) {
        Ok(conflicts) => conflicts.lines().map(str::to_owned).collect(),
        Err(listing) => {
            let aborted = abort(repo);
            return Merge::Failed(format!(
                "{}; its conflicted files cannot be listed ({}){aborted}",
                e.message, listing.message
            ));
        }
    };
    let mut unsettled = None;
    if let Some(resolver) = resolver
        && files == [resolver.path]
    {
        match resolve(repo, resolver) {
            Ok(()) => return Merge::Resolved(resolver.path.to_owned()),
            Err(e) => unsettled = Some(e.message),
        }
    }
    let aborted = abort(repo);
    if let Some(why) = unsettled {
        return Merge::Unsettled {
            path: files.join(", "),
            why: format!("{why}{aborted}"),
        };
    }
    match (files.is_empty(), aborted.is_empty()) {
        (true, _) => Merge::Failed(format!("{}{aborted}", e.message)),
        (false, true) => Merge::Conflicted(files),
        // The conflict state could not be cleared: said, never reported as a clean refusal.
        (false, false) => Merge::Failed(format!("{} conflicted{aborted}", files.join(", "))),
    }
}

/// `git merge --abort`; what to add to the failure when it did not clear the merge state
/// (empty when it did).
fn abort(repo: &Repo) -> String {
    match run(repo, &["merge", "--abort"]) {
        Ok(_) => String::new(),
        Err(e) => format!(
            "; and `git merge --abort` failed ({}): run it in {} before anything else",
            e.message,
            repo.root().display()
        ),
    }
}

/// Resolve the one conflicted file and conclude the merge; an error leaves it to be aborted.
fn resolve(repo: &Repo, resolver: &Resolver) -> Result<(), GitCommandError> {
    let stage = |n: u8| {
        let spec = format!(":{n}:{}", resolver.path);
        repo.git_bytes(&["show", &spec])
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .map_err(|e| GitCommandError {
                command: format!("show {spec}"),
                message: e.to_string(),
            })
    };
    let (base, ours, theirs) = (stage(1).ok(), stage(2)?, stage(3)?);
    let resolved =
        (resolver.resolve)(base.as_deref(), &ours, &theirs).map_err(|why| GitCommandError {
            command: format!("merge ({})", resolver.path),
            message: why,
        })?;
    std::fs::write(repo.root().join(resolver.path), resolved).map_err(|e| GitCommandError {
        command: format!("merge ({})", resolver.path),
        message: e.to_string(),
    })?;
    run(repo, &["add", "--", resolver.path])?;
    run(repo, &["commit", "--no-edit", "--quiet"]).map(|_| ())
}

/// Bring `checkout`'s index and files from `from` to `to` (`git read-tree -m -u`), the way a
/// fast-forward updates a checkout. git refuses when a local change would be overwritten.
pub(crate) fn follow(checkout: &Repo, from: ObjectId, to: ObjectId) -> Result<(), GitCommandError> {
    let (from, to) = (from.to_string(), to.to_string());
    run(checkout, &["read-tree", "-m", "-u", &from, &to]).map(|_| ())
}
