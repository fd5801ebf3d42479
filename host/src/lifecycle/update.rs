//! `discern update [--from REF]`: merge the trunk (or REF) into the effort branch. A conflict
//! aborts the merge and leaves no conflict state. Idempotent.

use serde_json::json;

use crate::config::Config;
use crate::preflight::{self, CleanError, Cleanliness};
use crate::result::{Envelope, ErrorSlug, Hint, HintId, Report, Section};
use crate::snapshot::short;
use crate::workspace::Workspace;

pub const VERB: &str = "update";

/// `discern update [--from REF] [--dry-run]`.
#[derive(Debug, Clone, Default, clap::Args, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateRequest {
    /// Merge this ref instead of the trunk.
    #[arg(long)]
    pub from: Option<String>,
    /// Preview only: what would be merged; nothing is written.
    #[arg(long)]
    #[serde(default)]
    pub dry_run: bool,
}

fn refuse(slug: ErrorSlug, message: impl Into<String>, hint: &str) -> Envelope {
    Envelope::refusal(
        VERB,
        slug,
        message,
        Hint::next_step(HintId::UpdateFromTrunk, hint),
    )
}

pub fn update(ws: &Workspace, from: Option<&str>, dry_run: bool) -> Envelope {
    let repo = &ws.repo;
    if repo.is_main_checkout() {
        return refuse(
            ErrorSlug::PreconditionFailed,
            "update brings the trunk into an effort; this is the main checkout.",
            "Run `discern update` inside an effort worktree.",
        );
    }
    let config = Config::load(repo.root()).ok().flatten();
    let trunk = ws.trunk(config.as_ref());
    let source = from.map_or_else(|| trunk.clone(), str::to_owned);
    let Some(branch) = repo.branch().ok().flatten() else {
        return refuse(
            ErrorSlug::PreconditionFailed,
            "HEAD is detached; update merges into the effort branch.",
            "Check out the effort branch first.",
        );
    };
    match preflight::check_clean(repo, Cleanliness::TrackedFiles) {
        Ok(()) => {}
        Err(CleanError::Dirty(tracked_dirty)) => {
            return refuse(
                ErrorSlug::DirtyWorktree,
                format!(
                    "Tracked files have uncommitted changes ({}); a merge needs them committed.",
                    tracked_dirty.join(", ")
                ),
                "Commit (or stash) your changes, then run `discern update`.",
            );
        }
        Err(e) => return preflight::clean_refusal(VERB, repo, &e),
    }
    let (Some(head), Some(incoming)) = (
        repo.head().ok().flatten(),
        super::start::resolve(repo, &source),
    ) else {
        return refuse(
            ErrorSlug::PreconditionFailed,
            format!("{source:?} does not name a commit."),
            "Pass --from with a branch, tag or commit.",
        );
    };
    let behind = match repo.ahead_behind(incoming, head) {
        Ok((_, behind)) => behind,
        Err(e) => {
            return refuse(
                ErrorSlug::PreconditionFailed,
                format!("Whether {branch} already contains {source} cannot be told: {e}."),
                &format!(
                    "Run `git rev-list --count HEAD..{source}` and fix what it reports, then run `discern update` again."
                ),
            );
        }
    };
    if behind == 0 {
        return Envelope::ok(
            VERB,
            json!({ "merged": false, "from": source, "behind": 0 }),
            Report {
                state: format!("{branch} already contains {source}; nothing to merge."),
                sections: Vec::new(),
            },
        );
    }
    let subjects = repo
        .git(&[
            "log",
            "--format=%h %s",
            "-20",
            &format!("{head}..{incoming}"),
        ])
        .unwrap_or_default();
    let commits: Vec<&str> = subjects.lines().collect();
    if dry_run {
        let mut e = Envelope::ok(
            VERB,
            json!({ "merged": false, "from": source, "behind": behind, "commits": commits }),
            Report {
                state: format!(
                    "Dry run: would merge {behind} commit(s) from {source} into {branch}."
                ),
                sections: Vec::new(),
            },
        );
        e.dry_run = Some(true);
        return e;
    }
    let message = format!("Merge {source} into {branch} (discern update)");
    match repo.git(&[
        "merge",
        "--no-edit",
        "--no-ff",
        "-m",
        &message,
        &incoming.to_string(),
    ]) {
        Ok(_) => {
            let after = repo
                .head()
                .ok()
                .flatten()
                .map(|h| h.to_string())
                .unwrap_or_default();
            let mut e = Envelope::ok(
                VERB,
                json!({ "merged": true, "from": source, "behind": behind, "commits": commits, "range": { "before": head.to_string(), "incoming": incoming.to_string(), "after": after } }),
                Report {
                    state: format!(
                        "Merged {behind} commit(s) from {source} into {branch} ({} → {}).",
                        short(&head.to_string()),
                        short(&after)
                    ),
                    sections: vec![Section {
                        title: "Incoming".to_owned(),
                        lines: commits.iter().map(|c| (*c).to_owned()).collect(),
                    }],
                },
            );
            e.hints.push(Hint::next_step(
                HintId::FixGate,
                "Run `discern done` again: the merge is a new commit.",
            ));
            e
        }
        Err(e) => {
            let conflicts = repo
                .git(&["diff", "--name-only", "--diff-filter=U"])
                .unwrap_or_default();
            let _ = repo.git(&["merge", "--abort"]);
            let files: Vec<&str> = conflicts.lines().collect();
            let mut refusal = refuse(
                ErrorSlug::PreconditionFailed,
                if files.is_empty() {
                    format!("The merge of {source} failed and was aborted: {e}")
                } else {
                    format!(
                        "Merging {source} conflicts in {}; the merge was aborted and nothing changed.",
                        files.join(", ")
                    )
                },
                "Resolve by hand: `git merge` the trunk, fix the conflicts, commit; then `discern done`.",
            );
            refusal.data = Some(json!({ "merged": false, "from": source, "conflicts": files }));
            refusal
        }
    }
}
