//! `discern update [--from REF]`: merge the trunk (or REF) into the effort branch. A conflict
//! aborts the merge and leaves no conflict state. Idempotent.

use gix::ObjectId;

use crate::config::Config;
use crate::git;
use crate::git::{Repo, short};
use crate::preflight::{self, Cleanliness, Prepared};
use crate::result::spelled::spell;
use crate::result::{Action, ErrorSlug, Hint, HintId, Refusal, Refused, Reply, Report, Section};
use crate::runtime::Runtime;
use crate::workspace::Workspace;

pub(crate) const VERB: &str = "update";
/// A merge needs the tracked files committed; untracked files may stay.
pub(crate) const CLEANLINESS: Cleanliness = Cleanliness::TrackedFiles;

/// `data` of an `update` result.
#[derive(Debug, serde::Serialize)]
struct UpdateData<'a> {
    merged: bool,
    from: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    behind: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    commits: Option<&'a [&'a str]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    range: Option<MergedRange>,
    #[serde(skip_serializing_if = "Option::is_none")]
    conflicts: Option<&'a [String]>,
}

/// The commits a merge joined: the branch before, the incoming tip, the merge commit.
#[derive(Debug, serde::Serialize)]
struct MergedRange {
    before: String,
    incoming: String,
    after: String,
}

impl<'a> UpdateData<'a> {
    fn of(from: &'a str) -> Self {
        Self {
            merged: false,
            from,
            behind: None,
            commits: None,
            range: None,
            conflicts: None,
        }
    }
}

/// `discern update [--from REF] [--dry-run]`.
#[derive(Debug, Clone, Default, clap::Args, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UpdateRequest {
    /// Merge this ref instead of the trunk.
    #[arg(long)]
    pub from: Option<String>,
    /// Preview only: what would be merged; nothing is written.
    #[arg(long)]
    #[serde(default)]
    pub dry_run: bool,
}

/// Why `update` merged nothing, by cause; each says the way past it.
#[derive(Debug, thiserror::Error)]
enum NotUpdated {
    #[error(
        "update brings the trunk into a branch of work; this checkout has the trunk (or no branch) out."
    )]
    TrunkCheckedOut,
    #[error("HEAD is detached; update merges into the effort branch.")]
    Detached,
    #[error("{incoming:?} does not name a commit.")]
    NoCommit { incoming: String },
    #[error("Which trunk to bring in cannot be told: {0}.")]
    TrunkDiverged(crate::git::DivergedTrunk),
    #[error("Whether {branch} already contains {incoming} cannot be told: {why}.")]
    DistanceUnknown {
        branch: String,
        incoming: String,
        why: String,
    },
    #[error("Tracked files have uncommitted changes ({}); a merge needs them committed.", .paths.join(", "))]
    TrackedDirty { paths: Vec<String> },
    #[error(
        "Merging {incoming} conflicts in {path}: {why}. The merge was aborted and nothing changed."
    )]
    Unsettled {
        incoming: String,
        path: String,
        why: String,
    },
    #[error("The merge of {incoming} failed and was aborted: {why}")]
    Failed { incoming: String, why: String },
    #[error("Merging {incoming} conflicts in {}; the merge was aborted and nothing changed.", .files.join(", "))]
    Conflicts {
        incoming: String,
        files: Vec<String>,
    },
}

impl Refusal for NotUpdated {
    fn slug(&self) -> ErrorSlug {
        match self {
            Self::TrackedDirty { .. } => ErrorSlug::DirtyWorktree,
            Self::TrunkCheckedOut | Self::Detached => ErrorSlug::WrongCheckout,
            Self::DistanceUnknown { .. } => ErrorSlug::CannotTell,
            Self::TrunkDiverged(_) => ErrorSlug::TrunkUnreadable,
            _ => ErrorSlug::PreconditionFailed,
        }
    }

    fn hint(&self) -> Hint {
        let (text, step) = match self {
            Self::TrunkCheckedOut => (
                "Bring the trunk into an effort from inside its worktree, or check out the branch to update".to_owned(),
                Some("update"),
            ),
            Self::Detached => ("Check out the effort branch first.".to_owned(), None),
            Self::NoCommit { .. } => ("Pass --from with a branch, tag or commit.".to_owned(), None),
            Self::TrunkDiverged(diverged) => (diverged.hint("update again"), Some("update")),
            Self::DistanceUnknown { incoming, .. } => (
                format!(
                    "Run `git rev-list --count HEAD..{incoming}` and fix what it reports, then update again"
                ),
                Some("update"),
            ),
            Self::TrackedDirty { .. } => (
                "Commit (or stash) your changes, then update".to_owned(),
                Some("update"),
            ),
            Self::Unsettled { .. } => (
                format!(
                    "Withdraw the proposal (`{}`), update, then measure and propose again against the trunk's new limit",
                    spell(&Action::new("standards withdraw"))
                ),
                Some("standards withdraw"),
            ),
            Self::Failed { .. } | Self::Conflicts { .. } => (
                "Resolve by hand (`git merge` the trunk, fix the conflicts, commit), then run the gate".to_owned(),
                Some("done"),
            ),
        };
        let hint = Hint::next_step(HintId::UpdateFromTrunk, text);
        match step {
            Some(step) => hint.with_action(Action::new(step)),
            None => hint,
        }
    }
}

/// `update`: the trunk merged, then (unless a dry run or refused) `[worktree].ensure` run in the
/// worktree; a failing ensure step fails the verb with its output (the merge stays).
pub(crate) fn update(
    prepared: &Prepared,
    runtime: &Runtime,
    request: &UpdateRequest,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Reply, Refused> {
    let envelope = merged_trunk(prepared, runtime, request)?;
    let ensure = prepared.config().map(|c| &c.worktree.ensure);
    if request.dry_run || ensure.is_none_or(Vec::is_empty) {
        return Ok(envelope);
    }
    super::provision::ensured(
        VERB,
        envelope,
        &prepared.ws.repo,
        prepared.config(),
        progress,
    )
}

fn merged_trunk(
    prepared: &Prepared,
    runtime: &Runtime,
    request: &UpdateRequest,
) -> Result<Reply, Refused> {
    let (from, dry_run) = (request.from.as_deref(), request.dry_run);
    let (ws, repo) = (&prepared.ws, &prepared.ws.repo);
    // The preflight refused an unreadable config: the trunk it names is what is merged.
    let config = prepared.config();
    let trunk = ws.trunk(config);
    // A branch of a release line brings in that line.
    let trunk = crate::measure::limits::landing_line(ws, trunk, repo.head().ok().flatten());
    // Any checkout of a branch that is not the trunk: an effort's worktree, or a plain clone
    // with a pull request's branch out.
    let on_trunk = repo.branch().ok().flatten().is_none_or(|b| b == trunk);
    if repo.is_main_checkout() && on_trunk {
        return Err(NotUpdated::TrunkCheckedOut.into());
    }
    let source = from.map_or_else(|| trunk.clone(), str::to_owned);
    let Some(branch) = repo.branch().ok().flatten() else {
        return Err(NotUpdated::Detached.into());
    };
    tracked_clean(prepared)?;
    // The trunk as the team has it (a branch, never a tag; the newer of a stale local trunk
    // and its upstream); `--from` as written.
    let incoming = match from {
        None => match repo.trunk_commit(&trunk) {
            Err(e) if let Some(diverged) = crate::git::DivergedTrunk::of(&e) => {
                return Err(NotUpdated::TrunkDiverged(diverged).into());
            }
            found => found.ok().flatten(),
        },
        Some(rev) => super::start::resolve(repo, rev),
    };
    let (Some(head), Some(incoming)) = (repo.head().ok().flatten(), incoming) else {
        return Err(NotUpdated::NoCommit { incoming: source }.into());
    };
    let behind = match repo.ahead_behind(incoming, head) {
        Ok((_, behind)) => behind,
        Err(e) => {
            let why = e.to_string();
            let incoming = source;
            return Err(NotUpdated::DistanceUnknown {
                branch,
                incoming,
                why,
            }
            .into());
        }
    };
    if behind == 0 {
        return Ok(Reply::new(
            UpdateData {
                behind: Some(0),
                ..UpdateData::of(&source)
            },
            Report {
                state: format!("{branch} already contains {source}; nothing to merge."),
                sections: Vec::new(),
            },
        ));
    }
    // The commits it brings in, as the reply lists them: unreadable is a refusal, never "none".
    let subjects = match repo.git(&[
        "log",
        "--format=%h %s",
        "-20",
        &format!("{head}..{incoming}"),
    ]) {
        Ok(subjects) => subjects,
        Err(e) => {
            return Err(NotUpdated::DistanceUnknown {
                branch,
                incoming: source,
                why: format!("its commits cannot be listed: {e}"),
            }
            .into());
        }
    };
    let merge = Merge {
        source: &source,
        branch: &branch,
        head,
        incoming,
        behind,
        commits: subjects.lines().collect(),
    };
    if dry_run {
        return Ok(merge.preview());
    }
    let Merged {
        mut envelope,
        settled,
    } = merge.run(repo, &ws.settings.faults)?;
    // The merge rewrote discern.toml: reloaded once, explicitly; a merged config that does not
    // load is refused (the merge stands, and the refusal carries its reply).
    let merged = match Config::load(repo.root()) {
        Ok(merged) => merged,
        Err(e) => return Err(unreadable_merged(&e).carrying(envelope)),
    };
    let Some(merged) = merged else {
        return Ok(envelope);
    };
    // Limits settled by meaning: the two sides' work together is measured against them.
    if settled {
        envelope.advisories.extend(breaches(ws, runtime, &merged));
    }
    if let Some((advisory, next)) = renewed(ws, runtime, merged) {
        envelope.advisories.push(advisory);
        if let Some(next) = next {
            envelope.hints = vec![next];
        }
    }
    Ok(envelope)
}

/// Proposals the merge left stale (HEAD and the trunk moved), renewed on the merged commit
/// exactly as repeating the batch would (same names and reasons, the same measured values),
/// so `done`, `status` and the hints agree on one next step. When one cannot be renewed, that
/// refusal and its step are the next step.
fn renewed(ws: &Workspace, runtime: &Runtime, config: Config) -> Option<(String, Option<Hint>)> {
    let trunk = ws.trunk(Some(&config));
    let records = crate::proposals::live(&ws.repo, &trunk).ok()?.records;
    let stale = records
        .iter()
        .any(|r| !crate::proposals::stale_reasons(&ws.repo, Some(&config), &trunk, r).is_empty());
    if records.is_empty() || !stale {
        return None;
    }
    let names: Vec<&str> = records.iter().map(|r| r.standard.as_str()).collect();
    let request = crate::proposals::ProposeRequest {
        proposals: records
            .iter()
            .map(|r| crate::proposals::ProposalRequest {
                name: r.standard.clone(),
                reason: r.reason.clone(),
            })
            .collect(),
        dry_run: false,
    };
    // With the merged config this update reloaded, and nothing to recover: this update
    // recovered first, and its merge is settled (no second preflight).
    let level = crate::standards::CLEANLINESS;
    let result = preflight::after_commit(ws.clone(), Some(config), level)
        .and_then(|prepared| crate::proposals::propose(&prepared, runtime, &request, &|_| ()));
    let names = names.join(", ");
    let refused = match result {
        Ok(_) => {
            let advisory = format!(
                "The proposal(s) for {names} survived the merge and were renewed on the merged commit (the same values and reasons); the gate is the next step."
            );
            return Some((advisory, None));
        }
        Err(refused) => refused,
    };
    let why = &refused.message;
    let advisory =
        format!("The proposal(s) for {names} could not be renewed on the merged commit: {why}");
    Some((advisory, refused.hints.first().cloned()))
}

/// The refusal of an update whose merged `discern.toml` does not load: the merge is committed,
/// and nothing that reads the config (the settled limits' measurement, renewing proposals) ran.
fn unreadable_merged(e: &crate::config::ConfigError) -> Refused {
    let mut refused = preflight::config_refusal(e);
    refused.message = format!(
        "The trunk is merged, but the merged {} does not load, so the merged tree was not measured and no proposal was renewed: {}",
        crate::config::FILE,
        refused.message
    );
    refused
}

/// The merged tree measured against the limits the merge settled: each it breaches, with the
/// way out (a settled limit is no looser than either side, but the two sides' work together
/// may read worse than either alone).
fn breaches(ws: &Workspace, runtime: &Runtime, config: &Config) -> Vec<String> {
    let selected: Vec<_> = config
        .standards
        .iter()
        .filter(|s| s.needs.is_empty() && s.run.is_none())
        .collect();
    let claims = crate::proposals::claims(ws, config);
    let options = crate::measure::Options::default();
    let ctx = crate::measure::Context {
        ws,
        runtime,
        config,
        selected: &selected,
        claims: &claims,
        progress: &|_| (),
    };
    let Ok(measured) = crate::measure::measure(&ctx, &options) else {
        let measure = spell(&Action::new("standards"));
        return vec![format!(
            "The merged tree could not be measured against the settled limits; run `{measure}`."
        )];
    };
    measured
        .standards
        .iter()
        // Against the limit itself: a breach the merge base shares is still one.
        .filter(|s| {
            s.value.is_some_and(|v| {
                !crate::measure::Verdict::judge(s.direction, s.limit, v).passes()
            })
        })
        .map(|s| {
            format!(
                "The merged tree breaches the settled limit of {} ({} against {}): move the metric back, or propose the change with a technical reason (`{}`).",
                s.name,
                s.value.map_or("?".to_owned(), |v| v.to_string()),
                s.limit,
                spell(
                    &Action::new("standards propose")
                        .arg("name", s.name.as_str())
                        .arg("reason", "…")
                )
            )
        })
        .collect()
}

/// The branch and the trunk changed the same limits: settled by meaning against the base, the
/// incoming side being the trunk (`config::merge_limits_from_trunk`), or refused with why.
fn settle_limits(base: Option<&str>, ours: &str, theirs: &str) -> Result<String, String> {
    crate::config::merge_limits_from_trunk(base, ours, theirs).map_err(|e| e.to_string())
}

/// Whether the tracked files are committed, as a merge needs them (the table's preflight
/// observed them after recovering: an interrupted landing or config transaction is settled
/// first, so the tree is not called dirty with discern's own half-written change); else the
/// refusal.
fn tracked_clean(prepared: &Prepared) -> Result<(), Refused> {
    let paths = prepared.dirty()?;
    match paths.is_empty() {
        true => Ok(()),
        false => Err(Refused::from(NotUpdated::TrackedDirty { paths })),
    }
}

/// A merge that went through: its reply, and whether `discern.toml`'s limits conflicted and
/// were settled by meaning (the merged tree is then measured against them).
struct Merged {
    envelope: Reply,
    settled: bool,
}

/// A merge of `incoming` (named `source`) into `branch` at `head`, which lacks `behind` commits.
struct Merge<'a> {
    source: &'a str,
    branch: &'a str,
    head: ObjectId,
    incoming: ObjectId,
    behind: u64,
    /// The subjects of the first incoming commits.
    commits: Vec<&'a str>,
}

impl Merge<'_> {
    fn preview(&self) -> Reply {
        let (source, branch, behind) = (self.source, self.branch, self.behind);
        let mut e = Reply::new(
            UpdateData {
                behind: Some(behind),
                commits: Some(&self.commits),
                ..UpdateData::of(source)
            },
            Report {
                state: format!(
                    "Dry run: would merge {behind} commit(s) from {source} into {branch}."
                ),
                sections: Vec::new(),
            },
        );
        e.dry_run = Some(true);
        e
    }

    fn run(&self, repo: &Repo, faults: &crate::commit::Faults) -> Result<Merged, Refused> {
        let message = format!(
            "Merge {} into {} (discern update)",
            self.source, self.branch
        );
        let resolver = git::worktree::Resolver {
            path: crate::config::FILE,
            resolve: &settle_limits,
        };
        let journaled = crate::commit::merging::journaled(
            repo,
            (self.branch, self.head, self.incoming),
            faults,
            || git::worktree::merge(repo, self.incoming, &message, Some(&resolver)),
        );
        let merge = match journaled {
            Ok(merge) => merge,
            Err(e) => return Err(self.aborted(&[], Some(&e.to_string()))),
        };
        match merge {
            git::Merge::Merged => Ok(Merged {
                envelope: self.merged(repo),
                settled: false,
            }),
            git::Merge::Resolved(path) => {
                let mut e = self.merged(repo);
                e.advisories.push(format!(
                    "{path} conflicted only in limit values, settled by meaning: a limit one side changed took that side, one both sides tightened took the tighter value, and one the trunk loosened (an approved landing) took the trunk's — `discern done` pins this branch's gains again."
                ));
                Ok(Merged {
                    envelope: e,
                    settled: true,
                })
            }
            git::Merge::Conflicted(files) => Err(self.aborted(&files, None)),
            git::Merge::Failed(why) => Err(self.aborted(&[], Some(&why))),
            git::Merge::Unsettled { path, why } => Err(self.unsettled(&path, &why)),
        }
    }

    fn merged(&self, repo: &Repo) -> Reply {
        let (source, branch, behind, head) = (self.source, self.branch, self.behind, self.head);
        // Merged but unreadable afterwards: said, never an empty commit id.
        let after = match repo.head() {
            Ok(Some(h)) => h.to_string(),
            Ok(None) => "no commit".to_owned(),
            Err(e) => format!("unreadable ({e})"),
        };
        let mut e = Reply::new(
            UpdateData {
                merged: true,
                behind: Some(behind),
                commits: Some(&self.commits),
                range: Some(MergedRange {
                    before: head.to_string(),
                    incoming: self.incoming.to_string(),
                    after: after.clone(),
                }),
                ..UpdateData::of(source)
            },
            Report {
                state: format!(
                    "Merged {behind} commit(s) from {source} into {branch} ({} → {}).",
                    short(&head.to_string()),
                    short(&after)
                ),
                sections: vec![Section {
                    table: None,
                    title: "Incoming".to_owned(),
                    lines: self.commits.iter().map(|c| (*c).to_owned()).collect(),
                }],
            },
        );
        e.hints.push(
            Hint::next_step(
                HintId::FixGate,
                "The merge is a new commit: run the gate again",
            )
            .with_action(Action::new("done")),
        );
        e
    }

    /// The limits conflict by meaning (a loosening meets a change of the same limit): the merge
    /// was aborted; the way through is to withdraw, update, and propose against the new limit.
    fn unsettled(&self, path: &str, why: &str) -> Refused {
        let source = self.source;
        Refused::from(NotUpdated::Unsettled {
            incoming: source.to_owned(),
            path: path.to_owned(),
            why: why.to_owned(),
        })
        .with_data(UpdateData {
            conflicts: Some(&[path.to_owned()]),
            ..UpdateData::of(source)
        })
    }

    /// The merge failed and was aborted (no conflict state is left): say where it conflicted.
    fn aborted(&self, files: &[String], failure: Option<&str>) -> Refused {
        let source = self.source;
        let source_name = source.to_owned();
        let why = match failure {
            Some(why) => NotUpdated::Failed {
                incoming: source_name,
                why: why.to_owned(),
            },
            None => NotUpdated::Conflicts {
                incoming: source_name,
                files: files.to_vec(),
            },
        };
        Refused::from(why).with_data(UpdateData {
            conflicts: Some(files),
            ..UpdateData::of(source)
        })
    }
}
