//! What a verb needs of the checkout before it acts, checked one way for every verb and
//! **fail-closed**: when discern cannot tell whether the tree is clean (a `git status` that
//! fails, an unreadable HEAD), that is a refusal naming the failure, never "clean".
//!
//! The verb table runs [`prepare`] before every verb, as its row (and the request: a dry run,
//! a mode) declares in a [`Preflight`]: recovery of what a crash interrupted, the cleanliness
//! the verb needs observed (none for read-only verbs, tracked files only for `update`,
//! everything — no tracked change, no untracked file that is not ignored — for Proof and
//! limit commits), the work tree's config, and a long operation's journal. The verb gets the
//! [`Prepared`] result and refuses a dirty tree after its own more specific refusals.

use crate::config::{Config, ConfigError};
use crate::git::{Repo, RepoError};
use crate::operations::Journal;
use crate::result::{Diagnostic, Envelope, ErrorSlug, Hint, HintId, Refused, Reply, Severity};
use crate::workspace::Workspace;

/// How clean a verb needs the checkout to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cleanliness {
    /// The verb does not care (read-only verbs, jobs on the work tree as it is).
    Any,
    /// No tracked file may differ from HEAD (staged or not); untracked files are allowed.
    TrackedFiles,
    /// No tracked change and no untracked file that is not ignored.
    Full,
}

/// Whether transactions a crash interrupted are finished or unwound before a verb runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Recover {
    /// First, before anything else: what every writing verb does.
    First,
    /// Not at all: a read-only verb or a dry run writes nothing, and `resolve` and git's merge
    /// driver run inside a merge git is making.
    No,
    /// By the verb, as part of its result: `accept`, whose own landing finished is what it
    /// reports.
    ByVerb,
}

/// What runs before a verb's own code: the table row's declaration ([`Preflight::of`]),
/// adjusted by the request (a dry run recovers nothing; a mode may need less).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Preflight {
    pub(crate) recover: Recover,
    pub(crate) cleanliness: Cleanliness,
    /// Load the work tree's `discern.toml` (an invalid one is refused, never read as absent).
    /// Never with [`Recover::ByVerb`]: that verb's recovery may rewrite the file, so it reads
    /// its own after.
    pub(crate) config: bool,
    /// Journal the verb as a long operation `progress` reads back.
    pub(crate) journal: bool,
    /// The request writes nothing: no recovery, and a journal that records nothing.
    pub(crate) dry_run: bool,
}

impl Preflight {
    /// The row's own: writing verbs recover first; the cleanliness it declares.
    pub(crate) fn of(writes: bool, cleanliness: Cleanliness) -> Self {
        let recover = match writes {
            true => Recover::First,
            false => Recover::No,
        };
        Self {
            recover,
            cleanliness,
            config: false,
            journal: false,
            dry_run: false,
        }
    }

    /// The same, journalled as a long operation when `journal`.
    pub(crate) fn journal(self, journal: bool) -> Self {
        Self { journal, ..self }
    }

    /// The same, with the work tree's config loaded first.
    pub(crate) fn config(self) -> Self {
        Self {
            config: true,
            ..self
        }
    }

    /// The same, for a request that writes nothing (`dry_run`): no recovery, which writes.
    pub(crate) fn dry_run(self, dry_run: bool) -> Self {
        match dry_run {
            true => Self {
                recover: Recover::No,
                dry_run,
                ..self
            },
            false => self,
        }
    }
}

/// A long operation's journal, which `progress` reads back; phases are marked through a shared
/// reference, since the verb holds the [`Prepared`] it belongs to.
pub(crate) struct Journaling(Option<std::cell::RefCell<Journal>>);

impl Journaling {
    /// Mark the phase the operation is in (nothing when the verb is not journalled).
    pub(crate) fn phase(&self, phase: &str) {
        if let Some(journal) = &self.0 {
            journal.borrow_mut().phase(phase);
        }
    }

    /// Record the verb's result (with the handle in `data.operation`) and return it.
    fn finish(self, envelope: Envelope) -> Envelope {
        match self.0 {
            Some(journal) => journal.into_inner().finish(envelope),
            None => envelope,
        }
    }
}

/// What the preflight established, handed to the verb: the workspace, what recovery did,
/// and the cleanliness observed at the row's level (an unknown state was already refused).
pub(crate) struct Prepared {
    pub(crate) ws: Workspace,
    /// The config transaction of this checkout finished or unwound first, if one was pending.
    pub(crate) recovered: Option<crate::commit::Recovery>,
    /// What finishing interrupted landings, starts, updates and abandons did, one line each.
    pub(crate) advisories: Vec<String>,
    /// The work tree's `discern.toml` (`None` without one), when the preflight loaded it.
    config: Option<Config>,
    pub(crate) journal: Journaling,
    level: Cleanliness,
    /// The paths that break `level`, observed after recovery; `None` for a verb that recovers
    /// itself ([`Recover::ByVerb`]), which observes them when asked, after its recovery.
    dirty: Option<Vec<String>>,
}

impl Prepared {
    /// The work tree's config as the preflight loaded it (`None`: no `discern.toml`, or a
    /// preflight that loads none).
    pub(crate) fn config(&self) -> Option<&Config> {
        self.config.as_ref()
    }

    /// The verb's result, recorded in its journal when it has one.
    pub(crate) fn finish(self, envelope: Envelope) -> Envelope {
        self.journal.finish(envelope)
    }

    /// [`Prepared::finish`] for a verb that runs another checkout's preflight itself (`accept
    /// --effort`): the reply or refusal is recorded as the envelope of `verb` the table will
    /// send, and keeps the handle its journal gave it.
    pub(crate) fn finish_reply(
        self,
        verb: &str,
        reply: Result<Reply, Refused>,
    ) -> Result<Reply, Refused> {
        match reply {
            Ok(mut reply) => {
                let recorded = self.finish(reply.clone().into_envelope(verb));
                reply.data = recorded.data;
                Ok(reply)
            }
            Err(mut refused) => {
                let recorded = self.finish(refused.clone().into_envelope(verb));
                refused.data = recorded.data;
                Err(refused)
            }
        }
    }

    /// The cleanliness the verb needs (its row's, or its mode's).
    pub(crate) fn level(&self) -> Cleanliness {
        self.level
    }

    /// The paths that break [`Prepared::level`]; empty when the checkout meets it. An
    /// unknown state is a refusal, never "clean".
    pub(crate) fn dirty(&self) -> Result<Vec<String>, Refused> {
        match &self.dirty {
            Some(dirty) => Ok(dirty.clone()),
            None => dirty_paths(&self.ws.repo, self.level)
                .map_err(|e| cannot_tell(self.ws.repo.root(), &CleanError::CannotTell(e))),
        }
    }

    /// `Ok` when the checkout meets the level, else the refusal of `verb`. A verb calls it
    /// after its more specific refusals (a detached HEAD, the trunk checked out), whose way
    /// out differs from "commit your changes".
    pub(crate) fn require_clean(&self, verb: &str) -> Result<(), Refused> {
        let dirty = self.dirty()?;
        match dirty.is_empty() {
            true => Ok(()),
            false => Err(dirty_refusal(verb, &dirty)),
        }
    }
}

/// The preflight of `verb` in `ws`: recovery as `preflight` says, then the cleanliness it
/// needs observed fail closed (a state that cannot be told is refused here, before the verb).
pub(crate) fn prepare(
    verb: &str,
    ws: Workspace,
    preflight: Preflight,
) -> Result<Prepared, Refused> {
    let (recovered, advisories) = match preflight.recover {
        Recover::First => {
            let advisories = finish_landings(&ws.repo)?;
            (recover_config(&ws.repo)?, advisories)
        }
        Recover::No | Recover::ByVerb => (None, Vec::new()),
    };
    let dirty = match preflight.recover {
        Recover::ByVerb => None,
        Recover::First | Recover::No => Some(
            dirty_paths(&ws.repo, preflight.cleanliness)
                .map_err(|e| cannot_tell(ws.repo.root(), &CleanError::CannotTell(e)))?,
        ),
    };
    debug_assert!(!(preflight.config && preflight.recover == Recover::ByVerb));
    let config = match preflight.config {
        true => load_config(&ws)?,
        false => None,
    };
    let journal = preflight.journal.then(|| {
        std::cell::RefCell::new(match preflight.dry_run {
            true => Journal::dry_run(&ws.repo, verb),
            false => Journal::begin(&ws.repo, verb),
        })
    });
    Ok(Prepared {
        config,
        journal: Journaling(journal),
        ws,
        recovered,
        advisories,
        level: preflight.cleanliness,
        dirty,
    })
}

/// What a verb that committed itself (a merge, a pin) hands the step it runs next, without a
/// second preflight: the workspace as it is now with the `config` the verb reloaded explicitly
/// (its commit rewrote the file), nothing to recover (its own transaction finished), no journal,
/// and the cleanliness `level` observed again fail closed.
pub(crate) fn after_commit(
    ws: Workspace,
    config: Option<Config>,
    level: Cleanliness,
) -> Result<Prepared, Refused> {
    let dirty = dirty_paths(&ws.repo, level)
        .map_err(|e| cannot_tell(ws.repo.root(), &CleanError::CannotTell(e)))?;
    Ok(Prepared {
        config,
        journal: Journaling(None),
        ws,
        recovered: None,
        advisories: Vec::new(),
        level,
        dirty: Some(dirty),
    })
}

/// Why a checkout does not meet the cleanliness a verb needs.
#[derive(Debug, thiserror::Error)]
pub enum CleanError {
    #[error("the work tree has uncommitted changes ({})", listed(.0))]
    Dirty(Vec<String>),
    #[error("discern cannot tell whether the work tree is clean: {0}")]
    CannotTell(#[from] RepoError),
}

/// The paths that break `level` in `repo`: none when the in-process check proves the tree
/// clean, else what `git status` reports. An error means "cannot tell", never "clean".
pub(crate) fn dirty_paths(repo: &Repo, level: Cleanliness) -> Result<Vec<String>, RepoError> {
    if level == Cleanliness::Any {
        return Ok(Vec::new());
    }
    // A proof of full cleanliness covers the tracked-files level too.
    if let Some(head) = repo.head()?
        && repo.proves_clean_at(head, &|| repo.snapshot(head).ok())
    {
        return Ok(Vec::new());
    }
    match level {
        Cleanliness::Any => Ok(Vec::new()),
        Cleanliness::TrackedFiles => repo.tracked_changes(),
        Cleanliness::Full => repo.dirty_paths(),
    }
}

/// Temp files a killed write left behind cleaned, and this checkout's config transaction a
/// crash interrupted finished or unwound; what it was, if one was pending.
fn recover_config(repo: &Repo) -> Result<Option<crate::commit::Recovery>, Refused> {
    // Temp files a killed write left behind (never one a live writer is still writing).
    let age = std::time::Duration::from_secs(600);
    crate::fsutil::clean_temp(&repo.admin_path("tmp"), age);
    crate::fsutil::clean_temp(&repo.git_dir().join("discern"), age);
    crate::commit::recover(repo).map_err(|e| recovery_refusal(&e))
}

/// Finish (the trunk moved) or unwind (it did not) every landing a crash interrupted, from
/// any checkout of the repository; what was done, one line each.
pub(crate) fn finish_landings(repo: &Repo) -> Result<Vec<String>, Refused> {
    finish_landings_from(repo, crate::commit::landing::Here::Keep)
        .map(|done| done.into_iter().map(|r| r.message).collect())
}

/// [`finish_landings`], saying what each recovery did; `here` says whether the worktree the
/// caller stands in may be removed (`accept` only).
pub(crate) fn finish_landings_from(
    repo: &Repo,
    here: crate::commit::landing::Here,
) -> Result<Vec<crate::commit::landing::Recovered>, Refused> {
    let forks = crate::commit::fork::recover(repo).map_err(|e| {
        Refused::new(
            ErrorSlug::Interrupted,
            format!("An interrupted start cannot be unwound: {e}"),
            Hint::next_step(
                HintId::CheckRepository,
                "Inspect the fork journal named above, then run the command again.",
            ),
        )
    })?;
    let merge = crate::commit::merging::recover(repo).map_err(|e| {
        Refused::new(
            ErrorSlug::Interrupted,
            format!("An interrupted update cannot be settled: {e}"),
            Hint::next_step(
                HintId::CheckRepository,
                "Inspect the branch and the merge journal named above, then run the command again.",
            ),
        )
    })?;
    let abandons = crate::commit::abandon::recover(repo).map_err(|e| {
        Refused::new(
            ErrorSlug::Interrupted,
            format!("An interrupted abandon cannot be finished: {e}"),
            Hint::next_step(
                HintId::CheckRepository,
                "Inspect the abandon journal named above, then run the command again.",
            ),
        )
    })?;
    let mut done = crate::commit::landing::recover(repo, &crate::commit::Faults::default(), here).map_err(|e| {
        Refused::new(
            ErrorSlug::Interrupted,
            format!("An interrupted landing cannot be finished: {e}"),
            Hint::next_step(
                HintId::CheckRepository,
                "Inspect the trunk and the landing journal named above, then run the command again.",
            ),
        )
    })?;
    // A start or an update settled is reported like a landing that landed nothing.
    let other = |message: String| crate::commit::landing::Recovered {
        branch: String::new(),
        landed: None,
        message,
    };
    done.extend(forks.into_iter().map(other));
    // A start killed during its setup: the effort is kept, its setup recorded as interrupted.
    let setups = crate::setup_record::recover(&repo.common_dir());
    done.extend(setups.into_iter().map(other));
    done.extend(merge.into_iter().map(other));
    done.extend(abandons.into_iter().map(other));
    Ok(done)
}

/// The refusal when an interrupted transaction cannot be recovered.
pub(crate) fn recovery_refusal(e: &crate::commit::CommitError) -> Refused {
    // A held lock is another writer at work (wait); anything else is the repository's state.
    let (slug, hint) = match e {
        crate::commit::CommitError::Locked(_) => (
            ErrorSlug::WriterBusy,
            "Let the other discern writer finish (or, if none runs, remove the lock named above), then run the command again.",
        ),
        _ => (
            ErrorSlug::Interrupted,
            "Inspect the branch and the journal named above, then run the command again.",
        ),
    };
    Refused::new(
        slug,
        format!("An earlier config transaction cannot be recovered: {e}"),
        Hint::next_step(HintId::CheckRepository, hint),
    )
}

/// The advisory a read-only verb or a dry run gives about a transaction a crash interrupted
/// (it writes nothing, so it does not recover it; the next writing verb does).
pub(crate) fn pending_transaction(repo: &Repo) -> Option<String> {
    let landings = match crate::commit::landing::pending(repo) {
        Ok(found) => found
            .iter()
            .map(|(_, j)| format!("An interrupted landing of {} on {} is pending; the next writing verb finishes or unwinds it before anything else.", j.branch, j.trunk))
            .collect::<Vec<_>>(),
        Err(e) => vec![format!("A landing journal is pending but unreadable: {e}.")],
    };
    let forks = match crate::commit::fork::pending(repo) {
        Ok(found) => found
            .iter()
            .map(|(_, j)| format!("An interrupted start of {} is pending; the next writing verb unwinds it before anything else.", j.id))
            .collect::<Vec<_>>(),
        Err(e) => vec![format!("A fork journal is pending but unreadable: {e}.")],
    };
    let abandons = match crate::commit::abandon::pending(repo) {
        Ok(found) => found
            .iter()
            .map(|(_, j)| format!("An interrupted abandon of {} is pending; the next writing verb finishes it before anything else.", j.id))
            .collect::<Vec<_>>(),
        Err(e) => vec![format!("An abandon journal is pending but unreadable: {e}.")],
    };
    let config = config_transaction(repo);
    let all: Vec<String> = landings
        .into_iter()
        .chain(forks)
        .chain(abandons)
        .chain(config)
        .collect();
    (!all.is_empty()).then(|| all.join(" "))
}

fn config_transaction(repo: &Repo) -> Option<String> {
    match crate::commit::pending(repo) {
        Ok(None) => None,
        Ok(Some(journal)) => Some(format!(
            "An interrupted {} transaction on {} is pending; the next writing verb here finishes or unwinds it before anything else.",
            journal.kind, journal.branch
        )),
        Err(e) => Some(format!(
            "A transaction journal is pending but unreadable: {e}; the next writing verb refuses until it is resolved."
        )),
    }
}

/// The refusal of `verb` for the checkout at `root` that is not clean enough, or whose
/// cleanliness cannot be told (`verb` words the way out of uncommitted changes).
pub(crate) fn clean_refusal_at(verb: &str, root: &std::path::Path, error: &CleanError) -> Refused {
    match error {
        CleanError::Dirty(paths) => dirty_refusal(verb, paths),
        CleanError::CannotTell(_) => cannot_tell(root, error),
    }
}

/// The refusal for a checkout at `root` whose cleanliness cannot be told.
fn cannot_tell(root: &std::path::Path, error: &CleanError) -> Refused {
    let why = match error {
        CleanError::CannotTell(e) => e.to_string(),
        CleanError::Dirty(_) => error.to_string(),
    };
    Refused::new(
        ErrorSlug::CannotTell,
        format!("{error}. Nothing was changed; discern never reads an unknown state as clean."),
        Hint::next_step(
            HintId::CheckRepository,
            format!(
                "Run `git status` in {} and fix what it reports ({why}), then run the command again.",
                root.display()
            ),
        ),
    )
}

/// The refusal for uncommitted changes, naming up to 20 of them.
pub(crate) fn dirty_refusal(verb: &str, dirty: &[String]) -> Refused {
    // Only measuring has a `--force` (the work tree as it is, never recorded); the gate and a
    // landing describe a commit and have none.
    let hint = match verb == "standards" {
        true => {
            "Commit (or stash) your changes, then run the command again; `--force` measures the work tree while authoring a Standard, but is never recorded."
        }
        false => "Commit (or stash) your changes, then run the command again.",
    };
    Refused::new(
        ErrorSlug::DirtyWorktree,
        format!(
            "The work tree has uncommitted changes ({}); {verb} works on a commit, so it needs a clean tree.",
            listed(dirty)
        ),
        Hint::next_step(HintId::CommitOrStash, hint),
    )
}

fn listed(paths: &[String]) -> String {
    let shown: Vec<&str> = paths.iter().take(20).map(String::as_str).collect();
    let more = paths.len().saturating_sub(shown.len());
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

/// Load the work tree's config, or the refusal that explains why it cannot be used.
pub(crate) fn load_config(ws: &Workspace) -> Result<Option<Config>, Refused> {
    Config::load(ws.root()).map_err(|e| config_refusal(&e))
}

/// HEAD's committed `discern.toml` (what measuring HEAD reads, whatever the work tree
/// holds); `Ok(None)` without a commit or without the file.
pub(crate) fn load_committed_config(ws: &Workspace) -> Result<Option<Config>, Refused> {
    let unreadable = |e: &dyn std::fmt::Display| {
        config_refusal(&ConfigError::single(crate::config::ConfigIssue {
            table: String::new(),
            key: None,
            line: None,
            message: format!("cannot read HEAD's {}: {e}", crate::config::FILE),
        }))
    };
    let Some(head) = ws.repo.head().map_err(|e| unreadable(&e))? else {
        return Ok(None);
    };
    Config::at_strict(&ws.repo, head).map_err(|e| match e {
        crate::config::AtError::Invalid(e) => config_refusal(&e),
        e => unreadable(&e),
    })
}

pub(crate) fn config_refusal(error: &ConfigError) -> Refused {
    let count = error.issues.len();
    let mut envelope = Refused::new(
        ErrorSlug::InvalidConfig,
        format!(
            "discern.toml has {count} problem{}; nothing was measured. Fix {} and run the command again.",
            if count == 1 { "" } else { "s" },
            if count == 1 { "it" } else { "them" }
        ),
        Hint::next_step(
            HintId::FixConfig,
            "Fix discern.toml as the diagnostics say, then run the command again.",
        ),
    );
    for issue in &error.issues {
        envelope = envelope.with_diagnostic(Diagnostic {
            tool: "config".to_owned(),
            severity: Severity::Error,
            message: issue.to_string(),
            // The config is read alike by every verb; a measuring dry run reads it and
            // writes nothing (not every verb has a dry run).
            reproduce_cmd: crate::result::spelled::spell(
                &crate::result::Action::new("standards").flag("dry_run"),
            ),
            file: Some(crate::config::FILE.to_owned()),
            line: issue.line.map(|l| l as u64),
        });
    }
    envelope
}
