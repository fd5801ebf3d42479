//! Where a verb runs: the repository discovered from a directory, and the process settings
//! the frontends read from the environment (the library itself never reads it).

use std::path::{Path, PathBuf};

use crate::git::{Repo, RepoError};

/// Settings a frontend gathers once per process.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// `DISCERN_TRUNK`: overrides `[repository].trunk`.
    pub trunk_override: Option<String>,
    /// `CI=true` (or `1`): a trunk or merge base that cannot be read fails the run.
    pub ci: bool,
    /// `GITHUB_EVENT_NAME=merge_group`: HEAD is a merge queue's entry, judged as what it lands.
    pub merge_queue: bool,
    /// The branch the forge says HEAD lands on (CI only): a pull request's `GITHUB_BASE_REF`,
    /// the line a merge queue's branch `gh-readonly-queue/<line>/pr-…` (`GITHUB_REF`) is for, or
    /// the branch a push moved (`GITHUB_EVENT_NAME=push`, `GITHUB_REF=refs/heads/<branch>`).
    pub base_ref: Option<String>,
    /// `DISCERN_CACHE_DIR` / XDG: where compiled components are cached.
    pub cache_dir: Option<PathBuf>,
    /// `DISCERN_OCI_TOKEN`, docker's credential file, `DISCERN_OCI_TIMEOUT`: how discern talks
    /// to the registries of `oci://` producers.
    pub oci: crate::oci::Options,
    /// Whether progress may be drawn on stderr (a terminal).
    pub progress: bool,
    /// Whether the owner may be asked on this terminal (stdin and stderr are terminals): a
    /// convenience channel for approvals, never set by the MCP server.
    pub terminal: bool,
    /// `DISCERN_TRACE`: a file that receives one JSON line per producer call into the host.
    pub trace: Option<PathBuf>,
    /// `GITHUB_STEP_SUMMARY`: the job summary file GitHub Actions renders; the `github` output
    /// format appends the Markdown rendering to it.
    pub step_summary: Option<PathBuf>,
    /// Test-only fault injection (`DISCERN_FAULT`, `DISCERN_FAULT_EXEC`; debug builds only).
    pub faults: crate::commit::Faults,
}

impl Settings {
    /// The producer runtime these settings describe (compile cache, trace file), or the
    /// refusal when it cannot start.
    pub fn runtime(&self) -> Result<crate::runtime::Runtime, crate::result::Refused> {
        use crate::result::{ErrorSlug, Hint, HintId, Refused};
        let trace = match self
            .trace
            .as_deref()
            .map(crate::runtime::Trace::open)
            .transpose()
        {
            Ok(trace) => trace,
            Err(e) => {
                return Err(Refused::new(
                    ErrorSlug::InvalidArguments,
                    format!("cannot open the DISCERN_TRACE file: {e}"),
                    Hint::next_step(
                        HintId::SeeHelp,
                        "Point DISCERN_TRACE at a writable file, or unset it.",
                    ),
                ));
            }
        };
        crate::runtime::Runtime::with_cache_dir(self.cache_dir.clone())
            .map(|runtime| runtime.with_trace(trace))
            .map_err(|e| {
                Refused::new(
                    ErrorSlug::Internal,
                    format!("cannot start the producer runtime: {e}"),
                    Hint::next_step(HintId::ReportBug, "Report this as a bug in discern."),
                )
            })
    }

    /// Settings from the process environment.
    pub fn from_env() -> Self {
        Self {
            trunk_override: std::env::var("DISCERN_TRUNK")
                .ok()
                .filter(|t| !t.is_empty()),
            ci: std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1"),
            merge_queue: std::env::var("GITHUB_EVENT_NAME").is_ok_and(|v| v == "merge_group"),
            base_ref: forge_base(
                std::env::var("GITHUB_BASE_REF").ok(),
                std::env::var("GITHUB_REF").ok(),
                std::env::var("GITHUB_EVENT_NAME").is_ok_and(|v| v == "push"),
            ),
            cache_dir: crate::runtime::CompileCache::default_dir(),
            oci: crate::oci::Options::from_env(),
            progress: std::io::IsTerminal::is_terminal(&std::io::stderr()),
            terminal: std::io::IsTerminal::is_terminal(&std::io::stdin())
                && std::io::IsTerminal::is_terminal(&std::io::stderr()),
            trace: std::env::var_os("DISCERN_TRACE")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
            step_summary: std::env::var_os("GITHUB_STEP_SUMMARY")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
            faults: crate::commit::Faults::from_env(),
        }
    }
}

/// The branch a pull request (`GITHUB_BASE_REF`) or a merge queue's entry
/// (`GITHUB_REF=refs/heads/gh-readonly-queue/<line>/pr-…`) lands on, or a push (`push`) moved
/// (`GITHUB_REF=refs/heads/<branch>`): where the line cannot be told from the history alone
/// (a release branch just cut, at the trunk's own commit).
fn forge_base(base_ref: Option<String>, git_ref: Option<String>, push: bool) -> Option<String> {
    base_ref.filter(|b| !b.is_empty()).or_else(|| {
        let branch = git_ref?.strip_prefix("refs/heads/")?.to_owned();
        let Some(queued) = branch.strip_prefix("gh-readonly-queue/") else {
            return (push && !branch.is_empty()).then_some(branch);
        };
        let (line, _) = queued.rsplit_once("/pr-")?;
        (!line.is_empty()).then(|| line.to_owned())
    })
}

#[derive(Debug, Clone)]
pub struct Workspace {
    pub repo: Repo,
    pub settings: Settings,
}

impl Workspace {
    pub fn open(dir: &Path, settings: Settings) -> Result<Self, RepoError> {
        Ok(Self {
            repo: Repo::discover(dir)?,
            settings,
        })
    }

    pub fn root(&self) -> &Path {
        self.repo.root()
    }

    /// The trunk work lands on and Proof is judged against: `[repository].trunk` (else `main`),
    /// never `DISCERN_TRUNK`, which only redirects read-only measurement.
    pub fn landing_trunk(&self, config: Option<&crate::config::Config>) -> String {
        config.map_or_else(
            || crate::config::DEFAULT_TRUNK.to_owned(),
            |c| c.trunk.clone(),
        )
    }

    /// The effective trunk: `DISCERN_TRUNK`, else `[repository].trunk`, else `main`.
    pub fn trunk(&self, config: Option<&crate::config::Config>) -> String {
        match config {
            Some(config) => config
                .trunk(self.settings.trunk_override.as_deref())
                .to_owned(),
            None => self
                .settings
                .trunk_override
                .clone()
                .unwrap_or_else(|| crate::config::DEFAULT_TRUNK.to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::forge_base;

    #[test]
    fn the_forge_names_the_base_of_a_pull_request_and_of_a_queue_entry() {
        let some = |s: &str| Some(s.to_owned());
        assert_eq!(
            forge_base(some("release/1.x"), None, false),
            some("release/1.x")
        );
        let entry = some("refs/heads/gh-readonly-queue/release/1.x/pr-7-0123abcd");
        assert_eq!(
            forge_base(some(""), entry.clone(), false),
            some("release/1.x")
        );
        assert_eq!(forge_base(some(""), entry, true), some("release/1.x"));
        assert_eq!(forge_base(None, some("refs/heads/main"), false), None);
        assert_eq!(forge_base(None, some("refs/pull/7/merge"), false), None);
        // A push names the branch it moved; a tag's push names none.
        let pushed = some("refs/heads/release/2.x");
        assert_eq!(forge_base(None, pushed, true), some("release/2.x"));
        assert_eq!(forge_base(None, some("refs/tags/v1"), true), None);
    }
}
