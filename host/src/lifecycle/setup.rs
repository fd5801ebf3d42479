//! `discern setup`: provision this effort's worktree again — the env files it lacks copied from
//! the main checkout, the `[worktree]` setup steps run in order, then the ensure steps. The way
//! past a setup that failed or was interrupted at `start`, once the step is fixed.

use super::provision::reply::{provision, reply};
use crate::config::Config;
use crate::result::{Action, ErrorSlug, Hint, HintId, Refused, Reply};
use crate::setup_record as marker;
use crate::workspace::Workspace;

pub(crate) const VERB: &str = marker::VERB;

/// `discern setup` takes no arguments: it provisions the effort it runs in.
#[derive(Debug, Clone, Default, clap::Args, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SetupRequest {}

pub(crate) fn setup(
    ws: &Workspace,
    config: Option<&Config>,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<Reply, Refused> {
    let repo = &ws.repo;
    let Some(main) = crate::identity::main_checkout(repo).filter(|_| !repo.is_main_checkout())
    else {
        return Err(Refused::new(
            ErrorSlug::WrongCheckout,
            format!(
                "{} is not an effort's worktree; setup provisions an effort.",
                repo.root().display()
            ),
            Hint::next_step(
                HintId::RetrySetup,
                "Run it in the effort's worktree (its path is in `discern status`)",
            ),
        ));
    };
    let settings = config.map(|c| c.worktree.clone()).unwrap_or_default();
    let lock = match marker::lock(repo.git_dir()) {
        Ok(lock) => lock,
        Err(e) => {
            return Err(Refused::new(
                ErrorSlug::WriterBusy,
                format!("Cannot run the setup: {e}."),
                Hint::next_step(HintId::RetrySetup, "Run it again once that setup has ended")
                    .with_action(Action::new(VERB)),
            ));
        }
    };
    let provisioned = provision(&main, repo, &settings, &lock, progress);
    reply(VERB, repo.root(), &settings, &provisioned)
}
