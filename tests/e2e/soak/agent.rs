//! One agent of the fleet: its effort, the act it chooses next (mostly the step the last
//! envelope named; after a kill, a writing call in the same checkout), and what it records of
//! each call.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rmcp::RoleClient;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use serde_json::Value;

use super::calls::{HUNG, Outcome, cli_args, names_the_way, run_killable, suggestion, tool_call};
use super::ledger::Shared;
use super::mix::{Act, Rng};

struct Effort {
    name: String,
    path: PathBuf,
    commits: u64,
    steps: u64,
}

/// A call that was killed: the next writing call in the same place settles it.
struct Pending {
    act: Act,
}

pub(super) struct Agent {
    id: usize,
    rng: Rng,
    client: RunningService<RoleClient, ()>,
    effort: Option<Effort>,
    efforts_made: u64,
    pending: Option<Pending>,
    /// The step the last envelope named (a hint's action), which the agent follows mostly.
    suggested: Option<Act>,
    /// The last few calls, for a failure's context.
    recent: Vec<String>,
    /// How long each verb's CLI calls have taken (ms, a moving average).
    durations: HashMap<&'static str, u64>,
}

impl Agent {
    /// Agent `id` of a fleet seeded with `seed`, with its MCP session.
    pub(super) fn new(id: usize, seed: u64, client: RunningService<RoleClient, ()>) -> Self {
        Agent {
            id,
            rng: Rng(seed ^ (id as u64 + 1).wrapping_mul(0xA24B_AED4_963E_E407)),
            client,
            effort: None,
            efforts_made: 0,
            pending: None,
            suggested: None,
            recent: Vec::new(),
            durations: HashMap::new(),
        }
    }

    /// The agent's MCP session ends.
    pub(super) fn leave(self, rt: &tokio::runtime::Runtime) {
        let _ = rt.block_on(self.client.cancel());
    }

    pub(super) fn round(&mut self, sh: &Shared<'_>, until: Instant) {
        while Instant::now() < until {
            self.step(sh, true);
        }
        // A round ends with every killed call settled by its next call.
        while self.pending.is_some() {
            self.step(sh, false);
        }
    }

    fn step(&mut self, sh: &Shared<'_>, killable: bool) {
        if let Some(pending) = self.pending.take() {
            // The next call in that checkout is a writing one: mostly the same call again,
            // sometimes another (every writing verb settles what a kill left).
            let act = match pending.act {
                Act::Start(_) | Act::Accept | Act::SyncPush | Act::Abandon => pending.act,
                _ if self.effort.is_some() && self.rng.percent(40) => {
                    let others = [Act::Done, Act::Update, Act::Pin, Act::Withdraw, Act::Accept];
                    others[self.rng.below(others.len() as u64) as usize].clone()
                }
                act => act,
            };
            self.act(sh, act, killable);
            return;
        }
        if let Some(effort) = &self.effort
            && !effort.path.exists()
        {
            self.worktree_gone(sh);
            return;
        }
        let act = self.choose(sh);
        self.act(sh, act, killable);
    }

    fn choose(&mut self, sh: &Shared<'_>) -> Act {
        let Some(effort) = &self.effort else {
            return match self.rng.pick(&[70, 8, 6, 6, 5, 5]) {
                0 => {
                    self.efforts_made += 1;
                    Act::Start(format!("a{}-{}", self.id, self.efforts_made))
                }
                1 => Act::Status,
                2 => Act::AwaitTrunk,
                3 => Act::Measure,
                4 => Act::SyncPush,
                // A verb in the wrong place: its refusal must name the way.
                _ => Act::Done,
            };
        };
        if effort.commits == 0 {
            return Act::Commit;
        }
        if let Some(suggested) = self.suggested.take()
            && self.rng.percent(70)
        {
            return suggested;
        }
        match self
            .rng
            .pick(&[22, 20, 10, 16, 4, 4, 3, 7, 5, 3, 3, 3, 3, 1])
        {
            0 => Act::Commit,
            1 => Act::Done,
            2 => Act::Update,
            3 => Act::Accept,
            4 => Act::Pin,
            5 => Act::Propose,
            6 => Act::Withdraw,
            7 => Act::Status,
            8 => Act::Measure,
            9 => Act::AwaitGreen,
            10 => {
                let names = sh.ledger().names.clone();
                match names.is_empty() {
                    true => Act::AwaitTrunk,
                    false => {
                        Act::AwaitLanded(names[self.rng.below(names.len() as u64) as usize].clone())
                    }
                }
            }
            11 => Act::AwaitTrunk,
            12 => Act::SyncPush,
            _ => Act::Abandon,
        }
    }

    /// Where the effort's calls run, or the main checkout.
    fn dir(&self, sh: &Shared<'_>) -> PathBuf {
        self.effort
            .as_ref()
            .map_or_else(|| sh.main().to_owned(), |e| e.path.clone())
    }

    fn act(&mut self, sh: &Shared<'_>, act: Act, killable: bool) {
        if let Some(effort) = &mut self.effort {
            effort.steps += 1;
        }
        match act.clone() {
            Act::Commit => return self.commit(sh),
            Act::Approve => return self.approve(sh),
            _ => {}
        }
        if act == Act::Abandon
            && let Some(effort) = &self.effort
        {
            // The owner decided to discard this effort's work: it is no longer owed.
            sh.ledger().given_up.insert(effort.name.clone());
        }
        let dir = self.dir(sh);
        // An accept whose worktree a finished landing removed goes on from the main checkout;
        // the owner's verbs run there, on the CLI.
        let owners = matches!(act, Act::SyncPush | Act::Abandon);
        let (dir, owner_route) = if (act == Act::Accept && !dir.exists()) || owners {
            (sh.main().to_owned(), true)
        } else {
            (dir, false)
        };
        let mcp = !owner_route && self.rng.percent(50);
        let outcome = if mcp {
            self.mcp(sh, &act, &dir)
        } else {
            self.cli(sh, &act, &dir, owner_route, killable)
        };
        let surface = if mcp { "mcp" } else { "cli" };
        let label = format!("{} ({surface})", act.label());
        let summary = match &outcome {
            Outcome::Ok(_) => "ok".to_owned(),
            Outcome::Refused(e) => format!("refused {}", e["error"]),
            Outcome::Killed => "killed".to_owned(),
            Outcome::Vanished => "vanished".to_owned(),
            Outcome::Broken(_) => "broken".to_owned(),
        };
        let place = dir.file_name().map(|n| n.to_string_lossy().into_owned());
        self.recent.push(format!(
            "{label} in {}: {summary}",
            place.unwrap_or_default()
        ));
        if self.recent.len() > 12 {
            self.recent.remove(0);
        }
        match outcome {
            Outcome::Killed => {
                sh.ledger().counts.entry(label).or_default().killed += 1;
                self.pending = Some(Pending { act });
            }
            Outcome::Vanished => self.worktree_gone(sh),
            Outcome::Broken(why) => {
                sh.ledger().failures.push(format!(
                    "agent {}: {label}: {why}\n  recent calls: {:?}",
                    self.id, self.recent
                ));
            }
            Outcome::Ok(envelope) => {
                sh.ledger().counts.entry(label).or_default().ok += 1;
                self.suggested = suggestion(&envelope);
                self.after_ok(sh, &act, &envelope);
            }
            Outcome::Refused(envelope) => {
                {
                    let mut ledger = sh.ledger();
                    ledger.counts.entry(label.clone()).or_default().refused += 1;
                    let slug = envelope["error"].as_str().unwrap_or("?");
                    *ledger
                        .slugs
                        .entry(format!("{} {slug}", act.label()))
                        .or_default() += 1;
                    if !names_the_way(&envelope) {
                        ledger.wayless.push(format!(
                            "agent {}: {label} was refused without naming the step past it: {envelope}\n  recent calls: {:?}",
                            self.id, self.recent
                        ));
                    }
                }
                self.suggested = suggestion(&envelope);
                self.after_refusal(sh, &act, &envelope);
            }
        }
    }

    fn after_ok(&mut self, sh: &Shared<'_>, act: &Act, envelope: &Value) {
        match act {
            Act::Start(name) => {
                let path = envelope["data"]["path"]
                    .as_str()
                    .map_or_else(|| sh.worktree(name), PathBuf::from);
                let mut ledger = sh.ledger();
                ledger.started += 1;
                ledger.names.push(name.clone());
                drop(ledger);
                self.effort = Some(Effort {
                    name: name.clone(),
                    path,
                    commits: 0,
                    steps: 0,
                });
            }
            Act::Accept => {
                let landed = envelope["data"]["landed"].is_string()
                    || envelope["data"]["already_landed"].is_string();
                if landed {
                    let mut ledger = sh.ledger();
                    ledger.landed += 1;
                    if envelope["data"]["already_landed"].is_string()
                        || envelope["data"]["finished_interrupted"] == true
                    {
                        ledger.landed_by_recovery += 1;
                    }
                    drop(ledger);
                    self.effort = None;
                    self.suggested = None;
                }
            }
            // Given up by the owner: its worktree and branch are gone with its work.
            Act::Abandon => {
                self.effort = None;
                sh.ledger().abandoned += 1;
                self.suggested = None;
            }
            _ => {}
        }
        self.maybe_abandon(sh);
    }

    fn after_refusal(&mut self, sh: &Shared<'_>, act: &Act, envelope: &Value) {
        let message = envelope["message"].as_str().unwrap_or_default();
        match act {
            // A start that had finished before its kill: the effort is there, whole.
            Act::Start(name) if message.contains("already exists") => {
                let path = sh.worktree(name);
                if path.exists() && sh.branch_exists(name) {
                    let mut ledger = sh.ledger();
                    ledger.started += 1;
                    ledger.names.push(name.clone());
                    drop(ledger);
                    self.effort = Some(Effort {
                        name: name.clone(),
                        path,
                        commits: 0,
                        steps: 0,
                    });
                }
            }
            // The owner answers most of the time.
            Act::Accept
                if envelope["error"] == "awaiting_standard_approval" && self.rng.percent(80) =>
            {
                self.suggested = Some(Act::Approve);
            }
            _ => {}
        }
        self.maybe_abandon(sh);
    }

    /// An effort that could not land in many steps is left for the owner (its branch keeps
    /// its work), and the agent starts another.
    fn maybe_abandon(&mut self, sh: &Shared<'_>) {
        if self.effort.as_ref().is_some_and(|e| e.steps > 40) {
            sh.ledger().abandoned += 1;
            self.effort = None;
            self.suggested = None;
        }
    }

    /// The effort's worktree is gone: a landing a later call finished (after this agent's
    /// accept was killed) removed it with its branch; anything else is lost work.
    fn worktree_gone(&mut self, sh: &Shared<'_>) {
        let Some(effort) = self.effort.take() else {
            return;
        };
        self.suggested = None;
        let mut ledger = sh.ledger();
        if sh.branch_exists(&effort.name) {
            ledger.failures.push(format!(
                "agent {}: the worktree of effort {} vanished while its branch remains\n  recent calls: {:?}",
                self.id, effort.name, self.recent
            ));
        } else {
            ledger.landed += 1;
            ledger.landed_by_recovery += 1;
        }
    }

    /// Work in the effort: a new file (sometimes with a TODO), committed with plain git.
    fn commit(&mut self, sh: &Shared<'_>) {
        let Some(effort) = &mut self.effort else {
            return;
        };
        let n = effort.commits + 1;
        let mut text = String::new();
        for line in 0..self.rng.below(12) + 1 {
            text.push_str(&format!("pub fn f{line}() {{}}\n"));
        }
        if self.rng.percent(20) {
            text.push_str("// TODO: an extension point\n");
        }
        let file = effort
            .path
            .join(format!("src/{}_{n}.rs", effort.name.replace('-', "_")));
        if std::fs::write(&file, text).is_err() {
            return self.worktree_gone(sh);
        }
        let message = format!("{} work {n}", effort.name);
        let git = |args: &[&str]| {
            let mut cmd = std::process::Command::new("git");
            cmd.args(args).current_dir(&effort.path);
            discern_tests::hermetic(&mut cmd, sh.fixture.repo.home());
            cmd.output()
        };
        let add = git(&["add", "-A"]);
        let commit = git(&["commit", "-q", "-m", &message]);
        let head = git(&["rev-parse", "HEAD"]);
        let label = "git commit (git)".to_owned();
        match (add, commit, head) {
            (Ok(a), Ok(c), Ok(h)) if a.status.success() && c.status.success() => {
                effort.commits = n;
                let sha = String::from_utf8_lossy(&h.stdout).trim().to_owned();
                let mut ledger = sh.ledger();
                ledger.counts.entry(label).or_default().ok += 1;
                ledger.work.push((effort.name.clone(), sha));
            }
            (a, c, _) => {
                let why = |o: std::io::Result<std::process::Output>| match o {
                    Ok(o) => String::from_utf8_lossy(&o.stderr).into_owned(),
                    Err(e) => e.to_string(),
                };
                let (add, commit) = (why(a), why(c));
                let mut ledger = sh.ledger();
                ledger.counts.entry(label).or_default().refused += 1;
                ledger.failures.push(format!(
                    "agent {}: git commit in {} failed: add: {add} commit: {commit}\n  recent calls: {:?}",
                    self.id,
                    effort.path.display(),
                    self.recent
                ));
            }
        }
    }

    /// The owner approves the effort's pending items on their terminal (every item: yes).
    fn approve(&mut self, sh: &Shared<'_>) {
        let Some(effort) = &self.effort else {
            return;
        };
        let run = sh.fixture.on_terminal(
            sh.main(),
            &["approve", "--effort", &effort.name],
            &"yes\n".repeat(8),
        );
        let mut ledger = sh.ledger();
        let counts = ledger
            .counts
            .entry("approve (owner)".to_owned())
            .or_default();
        if run.code == 0 {
            counts.ok += 1;
            self.suggested = Some(Act::Accept);
        } else {
            counts.refused += 1;
        }
    }

    fn cli(
        &mut self,
        sh: &Shared<'_>,
        act: &Act,
        dir: &Path,
        owner_route: bool,
        killable: bool,
    ) -> Outcome {
        let name = self.effort.as_ref().map(|e| e.name.clone());
        let mut args = cli_args(act, name, owner_route);
        args.push("--json".into());
        // A kill lands anywhere in the call: up to a little past how long this verb has taken
        // (so the last steps of a landing are hit as often as its measurement).
        let typical = self.durations.get(act.label()).copied().unwrap_or(300);
        let kill_at = (killable && self.rng.percent(sh.kill_percent))
            .then(|| Duration::from_millis(self.rng.below(typical * 6 / 5 + 20)));
        let started = Instant::now();
        let outcome = run_killable(sh, self.id, dir, &args, kill_at);
        if matches!(outcome, Outcome::Ok(_) | Outcome::Refused(_)) {
            let took = started.elapsed().as_millis() as u64;
            let average = self.durations.entry(act.label()).or_insert(took);
            *average = (*average * 3 + took) / 4;
        }
        outcome
    }

    fn mcp(&mut self, sh: &Shared<'_>, act: &Act, dir: &Path) -> Outcome {
        if !dir.exists() {
            return Outcome::Vanished;
        }
        let path = dir.display().to_string();
        let name = self.effort.as_ref().map(|e| e.name.clone());
        let (tool, arguments) = tool_call(act, &path, name);
        let Value::Object(arguments) = arguments else {
            unreachable!()
        };
        let request = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        let client = &self.client;
        let result = sh
            .rt
            .block_on(async { tokio::time::timeout(HUNG, client.call_tool(request)).await });
        match result {
            Err(_) => Outcome::Broken(format!("{tool} hung for {} s", HUNG.as_secs())),
            Ok(Err(e)) => Outcome::Broken(format!("{tool}: protocol error {e}")),
            Ok(Ok(result)) => {
                let envelope = result.structured_content.unwrap_or(Value::Null);
                if envelope["error"] == "internal" || !envelope.is_object() {
                    Outcome::Broken(format!("{tool}: {envelope} {:?}", result.content))
                } else if result.is_error.unwrap_or(false) {
                    Outcome::Refused(envelope)
                } else {
                    Outcome::Ok(envelope)
                }
            }
        }
    }
}
