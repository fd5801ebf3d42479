//! What `init` proposes to run: each job of the gate (its name, stage and command), and the
//! `[worktree].setup` steps that make a fresh worktree able to run them (an effort's worktree
//! has nothing installed). A job whose command is certain to exist is written; one discern
//! cannot be sure of (no test script, no pytest configuration) is written commented out, for
//! the owner to enable. The ecosystems themselves are told in `ecosystem`.

/// One proposed job: its name, stage and command, and whether it is written enabled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Job {
    pub(super) name: String,
    pub(super) stage: &'static str,
    pub(super) run: String,
    pub(super) enabled: bool,
    /// Why it is commented out, for the comment above it.
    pub(super) why: Option<&'static str>,
}

pub(super) fn job(name: &str, stage: &'static str, run: &str) -> Job {
    Job {
        name: name.to_owned(),
        stage,
        run: run.to_owned(),
        enabled: true,
        why: None,
    }
}

pub(super) fn unsure(mut job: Job, why: &'static str) -> Job {
    job.enabled = false;
    job.why = Some(why);
    job
}

/// Everything `init` proposes to run: the install steps of `[worktree].setup`, the jobs, and
/// the notes that explain a choice (which of two lockfiles won, say).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Plan {
    pub(super) setup: Vec<String>,
    pub(super) jobs: Vec<Job>,
    pub(super) notes: Vec<String>,
    /// The folders the setup steps fill (`node_modules/`, `.venv/`): unless git ignores them,
    /// every effort's worktree is dirty once they ran.
    pub(super) creates: Vec<String>,
}

impl Plan {
    /// The commands that run in the gate: every setup step and every enabled job.
    pub(super) fn commands(&self) -> Vec<&str> {
        self.setup
            .iter()
            .map(String::as_str)
            .chain(
                self.jobs
                    .iter()
                    .filter(|j| j.enabled)
                    .map(|j| j.run.as_str()),
            )
            .collect()
    }

    /// `[worktree]` and `[jobs]` as `discern.toml` text (nothing when nothing is proposed).
    pub(super) fn render(&self) -> String {
        let mut text = render_setup(&self.setup, &self.notes);
        text.push_str(&render(&self.jobs));
        text
    }
}

/// `[worktree]` with its `setup` steps, and the notes above it.
fn render_setup(setup: &[String], notes: &[String]) -> String {
    if setup.is_empty() {
        return String::new();
    }
    let mut text = String::from(
        "\n# How an effort's worktree is made ready for the gate: a worktree `discern start` makes\n\
         # is a fresh checkout with nothing installed, so `setup` runs there once, in order, before\n\
         # any job. Part of the gate's definition: a change to it is a protected change.\n",
    );
    for note in notes {
        text.push_str(&format!("# {note}\n"));
    }
    let steps: Vec<String> = setup.iter().map(|s| format!("{s:?}")).collect();
    text.push_str(&format!("[worktree]\nsetup = [{}]\n", steps.join(", ")));
    text
}

/// The `[jobs]` tables for `jobs`, the unsure ones commented out.
pub(super) fn render(jobs: &[Job]) -> String {
    if jobs.is_empty() {
        return String::new();
    }
    let mut text = String::from(
        "\n# Jobs the gate runs before measuring (host commands, not sandboxed), proposed for the\n\
         # ecosystems found here; each runs from the worktree's root. Each is part of the gate's\n\
         # definition: a change to one is a protected change.\n",
    );
    for job in jobs {
        let table = format!(
            "[jobs.{}]\nstage = \"{}\"\nrun = {:?}\n",
            job.name, job.stage, job.run
        );
        match job.why {
            None => text.push_str(&format!("\n{table}")),
            Some(why) => {
                text.push_str(&format!(
                    "\n# Commented out: {why}. Enable it when it runs here.\n"
                ));
                for line in table.lines() {
                    text.push_str(&format!("# {line}\n"));
                }
            }
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unsure_job_is_rendered_commented_out() {
        let jobs = [
            job("cargo_test", "test", "cargo test"),
            unsure(job("npm_test", "test", "npm test"), "no test script"),
        ];
        let text = render(&jobs);
        assert!(text.contains("\n[jobs.cargo_test]\nstage = \"test\"\nrun = \"cargo test\"\n"));
        assert!(text.contains("# [jobs.npm_test]\n# stage = \"test\"\n# run = \"npm test\"\n"));
        assert!(crate::config::Config::parse(&text).is_ok(), "{text}");
    }

    #[test]
    fn setup_is_written_as_the_worktree_table_the_config_reads() {
        let plan = Plan {
            setup: vec!["cd web && bun install --frozen-lockfile".to_owned()],
            jobs: vec![job("web_bun_test", "test", "cd web && bun run test")],
            notes: vec!["a note".to_owned()],
            creates: vec!["web/node_modules/".to_owned()],
        };
        let config = crate::config::Config::parse(&plan.render()).expect("valid");
        assert_eq!(config.worktree.setup, plan.setup);
        assert_eq!(
            plan.commands(),
            [
                "cd web && bun install --frozen-lockfile",
                "cd web && bun run test"
            ]
        );
    }
}
