//! CI on the forge, the merge button, and reading what CI said.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Forge, Run, Strategy};

impl Forge {
    /// A clone shaped like `actions/checkout`'s of `branch` (depth 1, one branch, detached
    /// HEAD), followed by the README's fetch: the trunk and its history, and the Proof notes.
    pub fn ci_clone(&self, branch: &str) -> PathBuf {
        let mut n = 0;
        while self.dir.join(format!("ci-{n}")).exists() {
            n += 1;
        }
        let clone = self.dir.join(format!("ci-{n}"));
        let url = self.url();
        let into = clone.to_str().unwrap();
        let args = ["clone", "-q", "--depth", "1", "--single-branch", "--branch"];
        let mut args = args.to_vec();
        args.extend([branch, &url, into]);
        self.git(&self.dir, &args);
        self.git(&clone, &["checkout", "-q", "--detach"]);
        self.readme_fetch(&clone);
        clone
    }

    /// The README's fetch, with full refspecs, deepened until the clone is complete, and the
    /// Proof notes when origin has any.
    pub fn readme_fetch(&self, clone: &Path) {
        let trunk = "+refs/heads/main:refs/remotes/origin/main";
        self.git(clone, &["fetch", "-q", "--unshallow", "origin", trunk]);
        if self.out(clone, &["rev-parse", "--is-shallow-repository"]) == "true" {
            self.git(clone, &["fetch", "-q", "--unshallow", "origin"]);
        }
        let mut ls = std::process::Command::new("git");
        ls.args(["ls-remote", "--exit-code", "origin", "refs/notes/discern"])
            .current_dir(clone);
        discern_tests::hermetic(&mut ls, self.fixture.repo.home());
        if ls.output().unwrap().status.success() {
            let notes = "+refs/notes/discern:refs/notes/discern";
            self.git(clone, &["fetch", "-q", "origin", notes]);
        }
    }

    /// The forge's merge of the pull request `head` into origin's main (moved on first, so the
    /// merge is a real one), published as `refs/pull/1/merge`, and a CI clone of it the way
    /// `actions/checkout` makes one for a pull request (that ref fetched at depth 1, checked
    /// out detached), followed by the README's fetch.
    pub fn merge_ref_clone(&self, head: &str) -> PathBuf {
        let news: &[super::File] = &[("NEWS.md", b"the trunk moves on\n")];
        self.commit(&self.owner, news, &[], "news");
        self.git(&self.owner, &["push", "-q", "origin", "main"]);
        let c = &self.contributor;
        self.git(c, &["fetch", "-q", "origin"]);
        self.git(c, &["checkout", "-q", "--detach", "origin/main"]);
        self.git(c, &["merge", "-q", "--no-ff", "--no-edit", head]);
        self.git(c, &["push", "-q", "-f", "origin", "HEAD:refs/pull/1/merge"]);
        let clone = self.dir.join("ci-merge");
        std::fs::create_dir_all(&clone).unwrap();
        self.git(&clone, &["init", "-q"]);
        self.git(&clone, &["remote", "add", "origin", &self.url()]);
        let merge = "+refs/pull/1/merge:refs/remotes/pull/1/merge";
        self.git(&clone, &["fetch", "-q", "--depth", "1", "origin", merge]);
        let detach = ["checkout", "-q", "--detach", "refs/remotes/pull/1/merge"];
        self.git(&clone, &detach);
        self.readme_fetch(&clone);
        clone
    }

    /// The pull-request job: `discern standards --json` in a CI clone of `branch`.
    pub fn pr_ci(&self, branch: &str) -> Run {
        let clone = self.ci_clone(branch);
        self.ci(&clone, &["standards", "--json"], &[])
    }

    /// The push job: `discern standards --baseline BEFORE --json` in a CI clone of `main`.
    pub fn push_ci(&self, before: &str) -> Run {
        let clone = self.ci_clone("main");
        self.ci(&clone, &["standards", "--baseline", before, "--json"], &[])
    }

    /// CI on a fresh checkout of `rev` as `actions/checkout` makes it (depth 1, one ref,
    /// detached) in `ci-<name>`, then the README's fetch of the trunk; no notes.
    pub fn ci_checkout(&self, name: &str, rev: &str) -> PathBuf {
        let clone = self.dir.join(format!("ci-{name}"));
        self.fixture.ci_checkout(&clone, &self.url(), rev);
        clone
    }

    /// A checkout of `rev` in `<name>` exactly as `actions/checkout` makes it (an empty
    /// repository, that ref fetched at depth 1, checked out detached), and nothing more: what
    /// a workflow step sees before it fetches anything itself.
    pub fn actions_checkout(&self, name: &str, rev: &str) -> PathBuf {
        let clone = self.dir.join(name);
        let _ = std::fs::remove_dir_all(&clone);
        std::fs::create_dir_all(&clone).unwrap();
        self.git(&clone, &["init", "-q"]);
        self.git(&clone, &["remote", "add", "origin", &self.url()]);
        self.git(&clone, &["fetch", "-q", "--depth", "1", "origin", rev]);
        self.git(&clone, &["checkout", "-q", "--detach", "FETCH_HEAD"]);
        clone
    }

    /// PR CI on the pull request's head, no notes fetched: exit code and envelope.
    pub fn pr_ci_no_notes(&self, branch: &str) -> (i32, Value) {
        let clone = self.ci_checkout(branch, &format!("refs/heads/{branch}"));
        self.discern(&clone, &["standards", "--json"], true)
    }

    /// PR CI on the forge's merge ref (`refs/pull/<branch>/merge`: the PR merged into the
    /// trunk as it is), no notes fetched.
    pub fn merge_ref_ci(&self, branch: &str) -> (i32, Value) {
        let bot = self.bot();
        let pr = format!("origin/{branch}");
        self.git(&bot, &["merge", "-q", "--no-ff", "-m", "merge ref", &pr]);
        let merge = format!("refs/pull/{branch}/merge");
        self.git(
            &bot,
            &["push", "-q", "-f", "origin", &format!("HEAD:{merge}")],
        );
        let clone = self.ci_checkout(&format!("{branch}-merge"), &merge);
        self.discern(&clone, &["standards", "--json"], true)
    }

    /// Trunk CI after a push, no notes fetched: a fresh checkout of main, `--baseline` the
    /// push's `before`.
    pub fn trunk_ci(&self, before: &str) -> (i32, Value) {
        let clone = self.ci_checkout("trunk", "refs/heads/main");
        let args = ["standards", "--baseline", before, "--json"];
        self.discern(&clone, &args, true)
    }

    /// A fresh clone of the trunk for the merge button.
    pub fn bot(&self) -> PathBuf {
        let bot = self.dir.join("bot");
        let _ = std::fs::remove_dir_all(&bot);
        let (url, into) = (self.url(), bot.to_str().unwrap().to_owned());
        self.git(&self.dir, &["clone", "-q", &url, &into]);
        bot
    }

    /// The merge button: land `branch` on main by `strategy`; the trunk's tip before it.
    pub fn land(&self, branch: &str, strategy: Strategy) -> String {
        let bot = self.bot();
        let before = self.out(&bot, &["rev-parse", "HEAD"]);
        let pr = format!("origin/{branch}");
        match strategy {
            Strategy::MergeCommit => {
                let message = format!("Merge {branch}");
                self.git(&bot, &["merge", "-q", "--no-ff", "-m", &message, &pr]);
            }
            Strategy::Squash => {
                self.git(&bot, &["merge", "-q", "--squash", &pr]);
                let message = format!("{branch} (squashed)");
                self.git(&bot, &["commit", "-q", "--allow-empty", "-m", &message]);
            }
            Strategy::Rebase => {
                // The forge rewrites every commit with a new committer.
                self.git(&bot, &["checkout", "-q", "-b", "rebased", &pr]);
                let mut rebase = std::process::Command::new("git");
                rebase
                    .args(["rebase", "-q", "--force-rebase", "main"])
                    .current_dir(&bot);
                discern_tests::hermetic(&mut rebase, self.fixture.repo.home());
                rebase
                    .env("GIT_COMMITTER_NAME", "The Forge")
                    .env("GIT_COMMITTER_DATE", "2026-02-02T00:00:00Z");
                assert!(rebase.status().unwrap().success());
                self.git(&bot, &["checkout", "-q", "main"]);
                self.git(&bot, &["merge", "-q", "--ff-only", "rebased"]);
            }
        }
        self.git(&bot, &["push", "-q", "origin", "main"]);
        before
    }

    /// The trunk back where it started, for the next strategy.
    pub fn reset_trunk(&self, to: &str) {
        let bot = self.bot();
        self.git(&bot, &["reset", "-q", "--hard", to]);
        self.git(&bot, &["push", "-q", "-f", "origin", "main"]);
    }

    /// The same verdict on the pull request's head, its merge ref and the trunk after landing
    /// by `strategy` (`pass`: all pass, else all fail), no notes fetched; PR CI's envelope.
    pub fn everywhere(&self, branch: &str, strategy: Strategy, pass: bool) -> Value {
        let judge = |what: &str, run: (i32, Value)| -> Value {
            let json = run.1.clone();
            let what = format!("{strategy:?}: {what}");
            match pass {
                true => passes(&what, run),
                false => {
                    fails(&what, run);
                }
            }
            json
        };
        let pr = judge("PR CI", self.pr_ci_no_notes(branch));
        judge("the merge ref", self.merge_ref_ci(branch));
        let before = self.land(branch, strategy);
        judge("trunk CI after landing", self.trunk_ci(&before));
        pr
    }
}

/// Exit 0 and `ok: true`.
pub fn passes(what: &str, (code, json): (i32, Value)) {
    let verdict = (code, json["ok"].clone());
    assert_eq!(verdict, (0, Value::Bool(true)), "{what}: {json}");
}

/// Exit 1 and `ok: false`: the envelope.
pub fn fails(what: &str, (code, json): (i32, Value)) -> Value {
    let verdict = (code, json["ok"].clone());
    assert_eq!(verdict, (1, Value::Bool(false)), "{what}: {json}");
    json
}

/// The run failed the way a CI step fails: a non-zero exit and `ok: false`. Its envelope.
#[track_caller]
pub fn refused(run: &Run, what: &str) -> Value {
    let json = run.json();
    let through = format!("{what}: the attack got through:\n{}", run.stdout);
    assert_ne!(run.code, 0, "{through}");
    assert_eq!(json["ok"], false, "{through}");
    json
}

/// The run passed: exit 0 and `ok: true`. Its envelope.
#[track_caller]
pub fn passed(run: &Run, what: &str) -> Value {
    let json = run.json();
    assert_eq!(run.code, 0, "{what}:\n{}\n{}", run.stdout, run.stderr);
    assert_eq!(json["ok"], true, "{what}:\n{}", run.stdout);
    json
}

/// Everything a result says in words: its message, its diagnostics, its advisories and the
/// limits check's reason.
pub fn said(json: &Value) -> String {
    let mut text = vec![json["message"].as_str().unwrap_or_default().to_owned()];
    for list in ["diagnostics", "advisories"] {
        for item in json[list].as_array().into_iter().flatten() {
            let line = item["message"]
                .as_str()
                .or(item.as_str())
                .unwrap_or_default();
            text.push(line.to_owned());
        }
    }
    let reason = json["data"]["limits"]["reason"].as_str();
    text.push(reason.unwrap_or_default().to_owned());
    text.join("\n")
}
