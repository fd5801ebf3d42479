//! Never loosen, judged on what each commit changed (never the work tree; not configurable;
//! no escape hatch). A branch is compared with its merge base with the trunk: what the trunk
//! did since the fork is not the branch's doing. The trunk itself is judged cumulatively,
//! from a verified baseline to HEAD, each change with the commit that made it.

mod branch;
mod compare;
mod fix;
mod line;
mod name;
mod range;
mod revert;
mod trunk;

pub(crate) use line::{landing_line, release_line};

use std::collections::BTreeMap;

use gix::ObjectId;
use serde::Serialize;

use crate::config::{Config, Direction};
use crate::git::{Repo, short};
use crate::protected::{Loosening, ProtectedChange};
use crate::result::{Diagnostic, Severity};
use crate::workspace::Workspace;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitsStatus {
    /// Every limit is equal to or tighter than trunk's (or trunk has no config).
    Verified,
    /// Every change only the owner may make is covered by the owner's signed approval, which
    /// the branch carries in its tree.
    Approved,
    /// Some limits are looser, each explained by an active proposal, or Standards are
    /// redefined or deleted: each awaits the owner's approval.
    Proposed,
    /// A limit is loosened without a proposal (a branch) or without a recorded approval (the
    /// trunk): blocked.
    Loosened,
    /// The trunk changed the gate's definition (a Standard redefined or deleted, a job, a
    /// protected file) without a recorded approval, and loosened no limit: blocked.
    Unapproved,
    /// The trunk ref is missing: nothing could be compared (loud, not blocking).
    Unverified,
    /// Trunk's config exists but cannot be parsed: blocking.
    ParseFailed,
}

impl LimitsStatus {
    /// The wire name (as serialized).
    pub fn as_str(self) -> &'static str {
        match self {
            LimitsStatus::Verified => "verified",
            LimitsStatus::Approved => "approved",
            LimitsStatus::Proposed => "proposed",
            LimitsStatus::Loosened => "loosened",
            LimitsStatus::Unapproved => "unapproved",
            LimitsStatus::Unverified => "unverified",
            LimitsStatus::ParseFailed => "parse_failed",
        }
    }
}

/// Which commit a check compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BaselineKind {
    /// A branch: its merge base with the trunk (what the branch itself changed).
    MergeBase,
    /// `--baseline REV` (a CI job's push `before`).
    Given,
    /// The trunk: the nearest first-parent ancestor carrying a landing's Proof note.
    Landing,
    /// The trunk: its first parent (no landing found).
    FirstParent,
    /// The trunk's root commit: nothing before it to loosen.
    Root,
    /// The trunk: the ancestor whose gate HEAD restores exactly, undoing an unapproved change
    /// made after it (a revert is judged as no change).
    Restored,
}

/// `data.limits`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LimitsSummary {
    pub status: LimitsStatus,
    /// The trunk as written (`[repository].trunk`, or `DISCERN_TRUNK`).
    pub trunk: String,
    /// The ref it resolved to (`refs/remotes/origin/main`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trunk_ref: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trunk_commit: Option<String>,
    /// The commit the limits were compared with, and how it was chosen.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline_kind: Option<BaselineKind>,
    /// How many trunk commits this branch does not contain.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub behind: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// What a check compares: HEAD, the trunk as written, an explicit baseline, and whether a
/// trunk that cannot be read fails the run.
#[derive(Debug, Clone)]
pub struct Against {
    pub trunk: String,
    pub head: ObjectId,
    /// `--baseline REV`: judge every commit since `REV`.
    pub baseline: Option<String>,
    /// CI (`CI=true`), `--require-trunk` or `[repository].require_trunk`.
    pub require_trunk: bool,
    /// A CI run (`CI=true`): the trunk is a remote-tracking ref, never a local branch over it.
    pub ci: bool,
    /// A merge queue's entry (`GITHUB_EVENT_NAME=merge_group`): judged as what it will land.
    pub queue: bool,
    /// How the trunk side named `trunk` (what it says applies while `trunk` is that name).
    named: name::Named,
}

impl Against {
    /// HEAD against the effective trunk, as the process settings and `config` say. A trunk
    /// that requires itself cannot be relaxed by a branch: its own `require_trunk` counts too.
    pub fn new(ws: &Workspace, config: &Config, head: ObjectId) -> Self {
        let claimed = ws.trunk(Some(config));
        let ci = ws.settings.ci;
        // `DISCERN_TRUNK` is the runner's (CI sets it from the forge); otherwise the trunk is
        // the one the trunk side names, never HEAD's own claim.
        let mut named = match &ws.settings.trunk_override {
            Some(_) => name::Named::given(claimed),
            None => name::trunk_side(&ws.repo, claimed, head, ci),
        };
        // A release line HEAD came from is its trunk (the runner's `DISCERN_TRUNK` aside).
        if ws.settings.trunk_override.is_none()
            && named.undecided.is_none()
            && let Some(line) = release_line(
                &ws.repo,
                &named.trunk,
                head,
                ci,
                ws.settings.base_ref.as_deref(),
            )
        {
            named = name::Named::given(line);
        }
        // The trunk's own `require_trunk`; a trunk or config that cannot be read may require
        // it, so it is required (a trunk that is absent requires nothing).
        let trunk_requires = match name::resolve(&ws.repo, &named.trunk, ci) {
            Ok(Some(found)) => Config::at(&ws.repo, found.trunk.commit)
                .map_or(true, |c| c.is_some_and(|c| c.require_trunk)),
            Ok(None) => false,
            Err(_) => true,
        };
        Self {
            trunk: named.trunk.clone(),
            head,
            baseline: None,
            require_trunk: ws.settings.ci || config.require_trunk || trunk_requires,
            ci,
            queue: ws.settings.merge_queue,
            named,
        }
    }
}

/// An active proposal's claim: this exact loosening is explained.
#[derive(Debug, Clone, PartialEq)]
pub struct ProposalClaim {
    pub standard: String,
    pub direction: Direction,
    pub trunk_limit: f64,
    pub proposed_limit: f64,
    /// Why this checkout's own proposal authorizes nothing any more (`None`: active); a stale
    /// claim explains no loosening, but names the renewal that would.
    pub stale: Option<String>,
    /// The proposal's recorded reason, for the renewal command.
    pub reason: String,
}

#[derive(Debug, Clone)]
pub struct LimitsCheck {
    pub summary: LimitsSummary,
    /// Branch Standards that must not be measured: name → why.
    pub blocked: BTreeMap<String, String>,
    /// Standards on trunk that the branch deleted.
    pub deleted: Vec<String>,
    pub diagnostics: Vec<Diagnostic>,
    /// Loud, non-blocking warnings (unverified trunk, a branch behind the trunk).
    pub advisories: Vec<String>,
    /// Whether an unverified comparison fails the run (CI, or asked for).
    pub required: bool,
    /// Protected changes awaiting the owner's approval (a branch), each described.
    pub protected: Vec<String>,
    /// Who approved every change only the owner may make, in the tree (`principal (file)`).
    pub approved_by: Option<String>,
    /// Protected changes outside any Standard (a table key, a file) the trunk made without an
    /// approval: blocking.
    pub forbidden_elsewhere: Vec<String>,
    /// Each change the trunk made without an approval.
    pub unapproved: Vec<UnapprovedChange>,
    /// Loosenings an active proposal explains.
    proposed: usize,
    /// Limits loosened without a proposal or approval.
    loosened: usize,
}

impl LimitsCheck {
    /// Whether anything blocks (a blocked or deleted Standard, or an unparsable trunk config).
    pub fn blocking(&self) -> bool {
        match self.summary.status {
            LimitsStatus::Loosened | LimitsStatus::Unapproved | LimitsStatus::ParseFailed => true,
            LimitsStatus::Unverified => self.required,
            LimitsStatus::Verified | LimitsStatus::Approved | LimitsStatus::Proposed => false,
        }
    }
}

/// Compare `config` (HEAD's; [`Config::absent`] when HEAD has none) with its baseline.
pub(crate) fn check(
    repo: &Repo,
    config: &Config,
    against: &Against,
    proposals: &[ProposalClaim],
) -> LimitsCheck {
    let mut check = LimitsCheck {
        summary: LimitsSummary {
            status: LimitsStatus::Verified,
            trunk: against.trunk.clone(),
            trunk_ref: None,
            trunk_commit: None,
            baseline: None,
            baseline_kind: None,
            behind: None,
            reason: None,
        },
        blocked: BTreeMap::new(),
        deleted: Vec::new(),
        diagnostics: Vec::new(),
        advisories: Vec::new(),
        required: against.require_trunk,
        protected: Vec::new(),
        forbidden_elsewhere: Vec::new(),
        approved_by: None,
        unapproved: Vec::new(),
        proposed: 0,
        loosened: 0,
    };
    let Some(trunk) = trunk(repo, against, &mut check) else {
        return check;
    };
    check.summary.trunk_ref = Some(trunk.reference.clone());
    check.summary.trunk_commit = Some(trunk.commit.to_string());
    let judged = if let Some(rev) = &against.baseline {
        trunk::given(repo, against, rev, &mut check)
    } else if against.queue && against.head != trunk.commit {
        trunk::queued(repo, against, trunk.commit, &mut check)
    } else if against.head == trunk.commit && against.require_trunk {
        // A landing note or a first parent is a claim, not an anchor: where the trunk is
        // required, its check judges from the commit it verified before, named by the runner.
        check.unanchored();
        return check;
    } else if against.head == trunk.commit {
        trunk::landed(repo, against, &mut check)
    } else {
        branch::judge(repo, config, against, trunk.commit, proposals, &mut check)
    };
    if let Err(e) = judged {
        check.unverified(
            format!("the history to compare with cannot be read: {e}"),
            Some(fix::fetch(repo, &against.trunk)),
        );
        return check;
    }
    check.conclude();
    check
}

/// What names the trunk for a run when the repository cannot: the runner's setting.
const RUNNER_TRUNK: &str = "DISCERN_TRUNK=<branch> discern standards";

/// The trunk's ref; `None` with the check unverified, saying why and what makes it readable.
fn trunk(repo: &Repo, against: &Against, check: &mut LimitsCheck) -> Option<name::TrunkRef> {
    // What the trunk side said applies to the name it gave, not to one a verb chose instead.
    let named = (against.named.trunk == against.trunk).then_some(&against.named);
    let runner = format!(
        "Name the trunk's branch for this run (`{RUNNER_TRUNK}`), or in `[repository].trunk` on the trunk, then measure again."
    );
    if let Some(why) = named.and_then(|n| n.undecided.clone()) {
        check.unverified_as(why, runner, RUNNER_TRUNK.to_owned());
        return None;
    }
    let found = match name::resolve(repo, &against.trunk, against.ci) {
        Ok(Some(found)) => found,
        Ok(None) if !name::branch_shaped(&against.trunk) => {
            let why = format!(
                "the trunk {:?} names no branch (a trunk is a branch — `main`, `origin/main`, `refs/remotes/origin/main` — never HEAD, a tag or another ref)",
                against.trunk
            );
            check.unverified_as(why, runner, RUNNER_TRUNK.to_owned());
            return None;
        }
        Ok(None) => {
            let why = format!(
                "the trunk {:?} names no ref in this clone (a new repository, or a clone without that branch)",
                against.trunk
            );
            check.unverified(why, Some(fix::fetch(repo, &against.trunk)));
            return None;
        }
        Err(e) => {
            check.unverified(
                format!("the trunk {:?} cannot be read: {e}", against.trunk),
                None,
            );
            return None;
        }
    };
    if let Some(renamed) = named.and_then(|n| n.renamed.clone()) {
        check.advisories.push(renamed);
    }
    if let Some(local) = &found.set_aside {
        check.advisories.push(format!(
            "The local branch {} ({}) is not the trunk in CI: a CI clone has no local trunk, so something that ran in this clone made it. Judged against {} ({}), as fetched.",
            local.reference,
            short(&local.commit.to_string()),
            found.trunk.reference,
            short(&found.trunk.commit.to_string())
        ));
    }
    Some(found.trunk)
}

impl LimitsCheck {
    /// Nothing could be compared: loud; failing where the trunk is required.
    fn unverified(&mut self, why: String, fix: Option<String>) {
        let step = match &fix {
            Some(fix) => format!("Make it readable with `{fix}`, then measure again."),
            None => "Fix the repository, then measure again.".to_owned(),
        };
        self.unverified_as(why, step, fix.unwrap_or_else(|| "git status".to_owned()));
    }

    /// [`LimitsCheck::unverified`], with the step that makes it verifiable and its command.
    fn unverified_as(&mut self, why: String, step: String, reproduce: String) {
        self.summary.status = LimitsStatus::Unverified;
        let consequence = if self.required {
            "this run fails because the trunk is required (CI=true, --require-trunk or [repository].require_trunk)"
        } else {
            "no limit was compared with it"
        };
        self.advisories.push(format!(
            "Standards limits are UNVERIFIED: {why}; {consequence}. {step}"
        ));
        if self.required {
            self.diagnostics.push(Diagnostic {
                tool: "standards".to_owned(),
                severity: Severity::Error,
                message: format!("Standards limits cannot be verified: {why}. {step}"),
                reproduce_cmd: reproduce,
                file: None,
                line: None,
            });
        }
        self.summary.reason = Some(why);
    }

    /// The trunk checked where it is required, with no `--baseline`: failing, with the flag
    /// that names the anchor.
    fn unanchored(&mut self) {
        let why = "on the trunk, a required check judges every commit since the trunk commit it verified before, and no --baseline names that commit (a landing's note or a first parent is a claim, not an anchor)";
        let step = "Pass the previous trunk tip: `discern standards --baseline <before>` (GitHub Actions: `${{ github.event.before }}`).";
        self.summary.status = LimitsStatus::Unverified;
        self.advisories
            .push(format!("Standards limits are UNVERIFIED: {why}. {step}"));
        self.diagnostics.push(Diagnostic {
            tool: "standards".to_owned(),
            severity: Severity::Error,
            message: format!("Standards limits cannot be verified: {why}. {step}"),
            reproduce_cmd: "discern standards --baseline <before>".to_owned(),
            file: None,
            line: None,
        });
        self.summary.reason = Some(why.to_owned());
    }

    /// A change only the owner may make, found on this branch or commit range.
    fn forbid(&mut self, what: Forbidden<'_>, message: String, reproduce: &str) {
        self.diagnostics
            .push(diagnostic(message.clone(), reproduce));
        match what {
            Forbidden::Loosened(l) => {
                self.loosened += 1;
                self.blocked.insert(l.standard.clone(), message);
            }
            Forbidden::Protected(p) if p.deletes_standard() => {
                self.deleted.extend(p.standard().map(str::to_owned));
            }
            Forbidden::Protected(p) => match p.standard() {
                Some(name) => {
                    self.blocked.insert(name.to_owned(), message);
                }
                None => self.forbidden_elsewhere.push(p.key.clone()),
            },
        }
    }

    /// The status and reason once every change is judged.
    fn conclude(&mut self) {
        if self.summary.status != LimitsStatus::Verified {
            return;
        }
        let blocked = self.blocked.len() + self.deleted.len() + self.forbidden_elsewhere.len();
        // An approval speaks for the changes it covers, never for a blocked one elsewhere.
        if blocked == 0
            && self.proposed == 0
            && self.protected.is_empty()
            && let Some(who) = &self.approved_by
        {
            self.summary.status = LimitsStatus::Approved;
            self.summary.reason = Some(format!(
                "every change only the owner may make is approved by {who}"
            ));
            return;
        }
        let against = match &self.summary.baseline {
            Some(base) if self.summary.baseline_kind != Some(BaselineKind::MergeBase) => {
                format!("{} since {}", self.summary.trunk, short(base))
            }
            _ => self.summary.trunk.clone(),
        };
        if blocked > 0 && self.loosened == 0 && !self.unapproved.is_empty() {
            self.summary.status = LimitsStatus::Unapproved;
            self.summary.reason = Some(format!(
                "{} change(s) of the gate's definition without the owner's approval versus {against}: {}",
                self.unapproved.len(),
                listed(&self.unapproved)
            ));
        } else if blocked > 0 {
            self.summary.status = LimitsStatus::Loosened;
            let listed = match self.unapproved.is_empty() {
                true => String::new(),
                false => format!(": {}", listed(&self.unapproved)),
            };
            self.summary.reason = Some(format!(
                "{blocked} Standard(s) or protected setting(s) redefined, loosened or deleted versus {against}{listed}"
            ));
        } else if self.proposed > 0 || !self.protected.is_empty() {
            self.summary.status = LimitsStatus::Proposed;
            let mut parts = Vec::new();
            if self.proposed > 0 {
                parts.push(format!(
                    "{} Standard limit proposal(s) explain otherwise-forbidden limit changes",
                    self.proposed
                ));
            }
            if !self.protected.is_empty() {
                parts.push(format!(
                    "{} protected change(s) await the owner's approval ({})",
                    self.protected.len(),
                    self.protected.join("; ")
                ));
            }
            self.summary.reason = Some(parts.join("; "));
        }
    }
}

/// A change the trunk made without the owner's approval, as the refusal names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnapprovedChange {
    /// `standards.todo.limit`, `jobs.test`, `file:scripts/test.sh`.
    pub key: String,
    /// "a loosened limit" or "a protected change".
    pub what: &'static str,
    /// The first commit whose tree shows it, and its subject.
    pub commit: String,
    pub subject: String,
}

impl std::fmt::Display for UnapprovedChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({}, in {} {:?})",
            self.key,
            self.what,
            short(&self.commit),
            self.subject
        )
    }
}

/// A change only the owner may make.
#[derive(Debug, Clone, Copy)]
enum Forbidden<'a> {
    Loosened(&'a Loosening),
    Protected(&'a ProtectedChange),
}

fn listed(changes: &[UnapprovedChange]) -> String {
    changes
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

fn diagnostic(message: String, reproduce: &str) -> Diagnostic {
    Diagnostic {
        tool: "standards".to_owned(),
        severity: Severity::Error,
        message,
        reproduce_cmd: reproduce.to_owned(),
        file: Some(crate::config::FILE.to_owned()),
        line: None,
    }
}
