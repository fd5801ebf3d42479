//! `discern await (--green E | --landed E | --trunk-moved) [--timeout S] [--resume C]`: wait
//! for one condition; not met within the budget is `ok` with `met: false` and a resume handle.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use gix::ObjectId;
use serde::{Deserialize, Serialize};

use crate::config::{Config, DEFAULT_BRANCH_PREFIX};
use crate::git::Repo;
use crate::proof::{self, ProofState};
use crate::result::{Action, ErrorSlug, Hint, HintId, Refusal, Refused, Reply, Report};
use crate::workspace::Workspace;

pub(crate) const VERB: &str = "await";
/// The default budget of a CLI call, in seconds.
pub(crate) const DEFAULT_TIMEOUT_S: f64 = 3300.0;
const POLL: Duration = Duration::from_millis(200);

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "target", rename_all = "kebab-case")]
pub(crate) enum Condition {
    Green(String),
    Landed(String),
    TrunkMoved,
}

/// `discern await (--green E | --landed E | --trunk-moved | --resume C) [--timeout S]`.
#[derive(Debug, Clone, Default, clap::Args, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[command(group(clap::ArgGroup::new("condition").args(["green", "landed", "trunk_moved", "resume"]).required(true)))]
pub(crate) struct AwaitRequest {
    /// Until this effort (id, path or branch) holds Proof for its current commit (or has landed).
    #[arg(long, value_name = "EFFORT")]
    pub green: Option<String>,
    /// Until this effort's (id, path or branch) work is on the trunk.
    #[arg(long, value_name = "EFFORT")]
    pub landed: Option<String>,
    /// Until the trunk moves.
    #[arg(long)]
    #[serde(default)]
    pub trunk_moved: bool,
    /// Continue an earlier wait by its resume handle.
    #[arg(long, value_name = "HANDLE")]
    pub resume: Option<String>,
    /// Seconds to wait (default 3300 on the CLI, 45 over MCP; 0 checks once). Not met: the CLI
    /// exits 124.
    #[arg(long)]
    #[schemars(range(min = 0))]
    pub timeout: Option<f64>,
}

impl AwaitRequest {
    /// The request's own check, on both surfaces before anything runs: one condition or a
    /// resume handle, never both and never several.
    pub(crate) fn validate(&self) -> Result<(), Refused> {
        match (self.condition()?, &self.resume) {
            (Some(_), Some(_)) => Err(NotAwaited::ConditionAndResume.into()),
            (None, None) => Err(NotAwaited::NoCondition.into()),
            _ => Ok(()),
        }
    }

    /// The one condition named, `None` when none is (a resume), or the refusal for several.
    fn condition(&self) -> Result<Option<Condition>, Refused> {
        let named = usize::from(self.green.is_some())
            + usize::from(self.landed.is_some())
            + usize::from(self.trunk_moved);
        if named > 1 {
            return Err(NotAwaited::SeveralConditions.into());
        }
        Ok(match (&self.green, &self.landed, self.trunk_moved) {
            (Some(e), _, _) => Some(Condition::Green(e.clone())),
            (_, Some(e), _) => Some(Condition::Landed(e.clone())),
            (_, _, true) => Some(Condition::TrunkMoved),
            _ => None,
        })
    }
}

/// What `await` returns: the reply, and whether the condition was met (a CLI that was not
/// met exits 124 so that scripts can loop on it).
pub(crate) struct Awaited {
    pub reply: Reply,
    pub met: bool,
}

/// The wait, resolved: one condition or a resume handle, and the budget.
struct Wait {
    condition: Option<Condition>,
    timeout_s: f64,
    resume: Option<String>,
}

/// What a resume handle remembers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Continuation {
    version: u32,
    handle: String,
    condition: Condition,
    trunk: String,
    trunk_start: String,
    /// The watched effort's tip when the wait began (it survives the branch's deletion).
    tip: Option<String>,
}

/// Why `await` waits for nothing, by cause.
#[derive(Debug, thiserror::Error)]
enum NotAwaited {
    #[error("Name exactly one condition: green, landed or trunk_moved.")]
    SeveralConditions,
    #[error("Pass either a condition or --resume, not both.")]
    ConditionAndResume,
    #[error("Name one condition: --green EFFORT, --landed EFFORT or --trunk-moved.")]
    NoCondition,
    #[error("No await continuation {handle} is recorded.")]
    UnknownHandle { handle: String },
    #[error("The trunk {trunk} cannot be read.")]
    TrunkUnreadable { trunk: String },
    #[error("No effort {effort:?}: not a worktree id, path or branch of this repository.")]
    UnknownEffort { effort: String },
    #[error("The efforts cannot be listed, so {effort:?} cannot be found: {source}.")]
    EffortsUnreadable {
        effort: String,
        source: crate::git::RepoError,
    },
}

impl Refusal for NotAwaited {
    fn slug(&self) -> ErrorSlug {
        match self {
            Self::SeveralConditions | Self::ConditionAndResume | Self::NoCondition => {
                ErrorSlug::InvalidArguments
            }
            Self::UnknownHandle { .. } | Self::UnknownEffort { .. } => ErrorSlug::NotFound,
            Self::TrunkUnreadable { .. } => ErrorSlug::TrunkUnreadable,
            Self::EffortsUnreadable { .. } => ErrorSlug::CannotTell,
        }
    }

    fn hint(&self) -> Hint {
        let text = match self {
            Self::SeveralConditions | Self::NoCondition => "Pass exactly one condition.",
            Self::ConditionAndResume => "Resume with only the handle.",
            Self::UnknownHandle { .. } => {
                "Start a new wait with --green, --landed or --trunk-moved."
            }
            Self::TrunkUnreadable { .. } => "Create or fetch the trunk first.",
            Self::UnknownEffort { .. } => {
                "Name the effort by its id, path or branch; `discern status` lists the efforts (an abandoned one is gone, and one that landed is found by its Proof note)."
            }
            Self::EffortsUnreadable { .. } => {
                "Run `git worktree list` and fix what it reports, then wait again."
            }
        };
        Hint::next_step(HintId::AwaitCondition, text)
    }
}

fn continuation_path(repo: &Repo, handle: &str) -> PathBuf {
    repo.shared_path("continuations")
        .join(format!("{handle}.json"))
}

/// `await`, with `default_timeout_s` when the request names no timeout, and the config the
/// table's preflight loaded (an invalid one was refused there, never read as the default
/// branch prefix).
pub(crate) fn await_condition(
    ws: &Workspace,
    config: Option<&Config>,
    request: &AwaitRequest,
    default_timeout_s: f64,
) -> Result<Awaited, Refused> {
    let wait_for = Wait {
        condition: request.condition()?,
        timeout_s: request.timeout.unwrap_or(default_timeout_s),
        resume: request.resume.clone(),
    };
    let (envelope, met) = wait(ws, config, &wait_for)?;
    Ok(Awaited {
        reply: envelope,
        met,
    })
}

fn wait(ws: &Workspace, config: Option<&Config>, request: &Wait) -> Result<(Reply, bool), Refused> {
    let repo = &ws.repo;
    let prefix = config.map_or(DEFAULT_BRANCH_PREFIX.to_owned(), |c| {
        c.branch_prefix.clone()
    });
    let continuation = match (&request.resume, &request.condition) {
        (Some(_), Some(_)) => Err(NotAwaited::ConditionAndResume.into()),
        (Some(handle), None) => resumed(repo, handle),
        (None, Some(condition)) => begin(ws, config, &prefix, condition),
        (None, None) => Err(NotAwaited::NoCondition.into()),
    }?;
    let timeout = Duration::from_secs_f64(request.timeout_s.clamp(0.0, DEFAULT_TIMEOUT_S));
    let started = Instant::now();
    loop {
        let observed = observe(repo, &prefix, &continuation);
        if observed.met {
            if let Some(handle) = request.resume.as_deref() {
                let _ = std::fs::remove_file(continuation_path(repo, handle));
            }
            return Ok((met(&continuation, started, &observed), true));
        }
        if started.elapsed() >= timeout {
            break;
        }
        std::thread::sleep(
            POLL.min(timeout.saturating_sub(started.elapsed()))
                .max(Duration::from_millis(1)),
        );
    }
    let envelope = not_met(
        repo,
        &prefix,
        continuation,
        request.resume.as_deref(),
        started,
        timeout,
    )?;
    Ok((envelope, false))
}

/// The continuation recorded under `handle`.
fn resumed(repo: &Repo, handle: &str) -> Result<Continuation, Refused> {
    let valid = handle.len() <= 32
        && handle
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-');
    valid
        .then(|| std::fs::read(continuation_path(repo, handle)).ok())
        .flatten()
        .and_then(|b| serde_json::from_slice::<Continuation>(&b).ok())
        .ok_or_else(|| {
            NotAwaited::UnknownHandle {
                handle: handle.to_owned(),
            }
            .into()
        })
}

/// A new wait for `condition`, from the trunk and the watched effort as they are now.
fn begin(
    ws: &Workspace,
    config: Option<&Config>,
    prefix: &str,
    condition: &Condition,
) -> Result<Continuation, Refused> {
    let repo = &ws.repo;
    let trunk = ws.trunk(config);
    let Some(trunk_start) = repo.trunk_commit(&trunk).ok().flatten() else {
        return Err(NotAwaited::TrunkUnreadable { trunk }.into());
    };
    let tip = match condition {
        Condition::Green(target) | Condition::Landed(target) => {
            // An effort that already landed has no branch or worktree left: its Proof note on
            // the trunk names it, and the landed commit is its tip.
            let branches = [target.clone(), format!("{prefix}{target}")];
            let landed = || crate::commit::landing::landed_by_note(repo, trunk_start, &branches);
            let found =
                sibling(repo, prefix, target).map_err(|source| NotAwaited::EffortsUnreadable {
                    effort: target.clone(),
                    source,
                })?;
            match found {
                Some((_, tip)) => tip.map(|t| t.to_string()),
                None if let Ok(Some((at, _))) = landed() => Some(at.to_string()),
                None => {
                    let effort = target.clone();
                    return Err(NotAwaited::UnknownEffort { effort }.into());
                }
            }
        }
        Condition::TrunkMoved => None,
    };
    Ok(Continuation {
        version: 1,
        handle: String::new(),
        condition: condition.clone(),
        trunk,
        trunk_start: trunk_start.to_string(),
        tip,
    })
}

fn met(continuation: &Continuation, started: Instant, observed: &Observed) -> Reply {
    let state = match &continuation.condition {
        Condition::Green(t) => {
            format!("{t} is green: it holds Proof for its current commit (or has landed).")
        }
        Condition::Landed(t) => format!("{t} has landed on {}.", continuation.trunk),
        Condition::TrunkMoved => format!("{} moved.", continuation.trunk),
    };
    let mut e = Reply::new(
        data(continuation, true, started, observed, None),
        Report {
            state,
            sections: Vec::new(),
        },
    );
    e.hints.push(
        Hint::next_step(
            HintId::UpdateFromTrunk,
            "Bring the new work in (or start a new effort from it)",
        )
        .with_action(Action::new("update")),
    );
    e
}

/// Not met within the budget: record the wait under a resume handle (the same one when
/// resumed) so that the next call continues it.
fn not_met(
    repo: &Repo,
    prefix: &str,
    mut record: Continuation,
    resume: Option<&str>,
    started: Instant,
    timeout: Duration,
) -> Result<Reply, Refused> {
    let handle = match resume {
        Some(handle) => handle.to_owned(),
        None => {
            let seed = format!(
                "{:?}{}{:?}",
                std::time::SystemTime::now(),
                std::process::id(),
                record.condition
            );
            let hex = crate::digest::Digest::of(seed.as_bytes())
                .hex()
                .to_uppercase();
            format!("C1-{}-{}", &hex[..4], &hex[4..8])
        }
    };
    record.handle = handle.clone();
    // A handle is given only for a record on disk: resuming reads it.
    let written = serde_json::to_vec_pretty(&record)
        .map_err(std::io::Error::other)
        .and_then(|bytes| crate::fsutil::write_atomic(&continuation_path(repo, &handle), &bytes));
    if let Err(e) = written {
        return Err(Refused::new(
            ErrorSlug::CannotTell,
            format!(
                "Not met within {:.0} s, and the handle to resume with cannot be recorded: {e}.",
                timeout.as_secs_f64()
            ),
            Hint::next_step(
                HintId::CheckRepository,
                "Make the repository's .git/discern writable, then await again",
            ),
        ));
    }
    let observed = observe(repo, prefix, &record);
    let mut e = Reply::new(
        data(&record, false, started, &observed, Some(&handle)),
        Report {
            state: format!(
                "Not met within {:.0} s; resume with the handle {handle}.",
                timeout.as_secs_f64()
            ),
            sections: Vec::new(),
        },
    );
    e.hints.push(
        Hint::next_step(HintId::AwaitCondition, "Wait again")
            .with_action(Action::new("await").arg("resume", handle.clone())),
    );
    Ok(e)
}

/// `data` of an `await` result.
#[derive(Debug, Serialize)]
struct AwaitData<'a> {
    condition: &'static str,
    target: Option<&'a String>,
    trunk: &'a str,
    met: bool,
    elapsed_ms: u64,
    observed: ObservedData<'a>,
    resume: Option<&'a str>,
}

/// What the wait last saw.
#[derive(Debug, Serialize)]
struct ObservedData<'a> {
    proof_status: Option<ProofState>,
    tip: Option<&'a str>,
    trunk_start: &'a str,
    trunk_head: Option<&'a str>,
}

struct Observed {
    met: bool,
    proof: Option<ProofState>,
    tip: Option<String>,
    trunk_head: Option<String>,
}

fn observe(repo: &Repo, prefix: &str, c: &Continuation) -> Observed {
    let trunk_head = repo.trunk_commit(&c.trunk).ok().flatten();
    let landed = |tip: Option<ObjectId>| match (tip, trunk_head) {
        (Some(tip), Some(trunk)) => repo.is_ancestor(tip, trunk),
        _ => false,
    };
    let remembered = c.tip.as_deref().and_then(|t| t.parse::<ObjectId>().ok());
    match &c.condition {
        Condition::TrunkMoved => Observed {
            met: trunk_head.map(|t| t.to_string()).as_deref() != Some(c.trunk_start.as_str()),
            proof: None,
            tip: None,
            trunk_head: trunk_head.map(|t| t.to_string()),
        },
        Condition::Landed(target) => {
            // A list that cannot be read now is no news: the tip remembered stands.
            let tip = sibling(repo, prefix, target)
                .ok()
                .flatten()
                .and_then(|(_, tip)| tip)
                .or(remembered);
            Observed {
                met: landed(tip),
                proof: None,
                tip: tip.map(|t| t.to_string()),
                trunk_head: trunk_head.map(|t| t.to_string()),
            }
        }
        Condition::Green(target) => {
            // Unreadable now: no Proof seen, the wait goes on (never "met").
            let found = sibling(repo, prefix, target).ok().flatten();
            let proof = found
                .as_ref()
                .and_then(|(path, _)| path.as_ref())
                .and_then(|p| Repo::discover(p).ok())
                .map(|r| proof::state(&r).0);
            let tip = found.and_then(|(_, tip)| tip).or(remembered);
            Observed {
                met: proof == Some(ProofState::Honored) || landed(tip),
                proof,
                tip: tip.map(|t| t.to_string()),
                trunk_head: trunk_head.map(|t| t.to_string()),
            }
        }
    }
}

fn sibling(
    repo: &Repo,
    prefix: &str,
    target: &str,
) -> Result<Option<super::effort::Found>, crate::git::RepoError> {
    super::effort::find(repo, prefix, target)
}

fn data<'a>(
    c: &'a Continuation,
    met: bool,
    started: Instant,
    observed: &'a Observed,
    resume: Option<&'a str>,
) -> AwaitData<'a> {
    let (condition, target) = match &c.condition {
        Condition::Green(t) => ("green", Some(t)),
        Condition::Landed(t) => ("landed", Some(t)),
        Condition::TrunkMoved => ("trunk-moved", None),
    };
    AwaitData {
        condition,
        target,
        trunk: &c.trunk,
        met,
        elapsed_ms: started.elapsed().as_millis() as u64,
        observed: ObservedData {
            proof_status: observed.proof,
            tip: observed.tip.as_deref(),
            trunk_start: &c.trunk_start,
            trunk_head: observed.trunk_head.as_deref(),
        },
        resume,
    }
}
