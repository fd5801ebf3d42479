//! A fleet under load loses nothing (issue 34): agents — threads, each with its own `discern
//! mcp` session (a real stdio client) and CLI calls of the real binary — work one repository
//! through the whole effort lifecycle in a seeded random mix (start, commit work, done, update,
//! accept, standards --pin / propose / withdraw, status, await, the owner's approve), while a
//! few percent of the CLI calls are SIGKILLed with their process group at a random moment. An
//! agent follows a refusal's next step most of the time, and after a kill its next call in
//! that checkout is a writing one — the same call again, or in an effort another writing verb
//! (the contract: the next writing call settles what a kill left).
//!
//! After every round (all calls ended) and at the end:
//! - `git fsck` is clean;
//! - every commit on the trunk that changes `discern.toml` is a config-only commit by discern;
//! - the trunk moved only by landings (its reflog), each onto a commit whose Proof note on
//!   `refs/notes/discern` exists and names it;
//! - no effort's committed work is lost: every commit an agent made is reachable from the trunk
//!   or from its effort's branch;
//! - no lock (a git `*.lock`, a locked worktree, a held `writer.lock`), no journal (config,
//!   merge, landing, fork) and no merge in progress is left, the main checkout is clean and no
//!   registered worktree lost its folder;
//! - every refused call named the step past it (a hint's `action`, or a command in its text),
//!   and no call failed internally, printed no envelope, or hung.
//!
//! Scale: `DISCERN_SOAK_AGENTS` (default 4), `DISCERN_SOAK_SECONDS` (default 20),
//! `DISCERN_SOAK_KILL_PERCENT` (default 8: the share of CLI calls given a kill moment, anywhere
//! within how long that verb has been taking; some finish first), `DISCERN_SOAK_SEED`
//! (default: the clock; printed,
//! so a mix can be run again — thread timing still varies between runs).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rmcp::RoleClient;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use serde_json::{Value, json};

use crate::mcp::connect;
use crate::support::{Fixture, cache_dir};

/// Two Standards the fleet moves: TODOs (a ceiling work breaches, so proposals happen) and the
/// lines of `src/` (a floor every effort's work raises, so `done` pins gains and efforts' pins
/// meet in `update`).
const CONFIG: &str = r#"
[jobs]
test = "true"

[standards.todo]
direction = "down"
limit = 6
producer = "builtin:pattern"
config = { pattern = "TODO", paths = ["src/**"] }
metric = "matches"
margin = 1

[standards.lines]
direction = "up"
limit = 3
producer = "builtin:extent"
config = { paths = ["src/**"] }
metric = "lines"
margin = 5
"#;

const REASON: &str = "The soak agent's new module marks planned extension points as TODO comments; they are tracked work, not debt.";

/// A call that runs longer than this is recorded as hung and killed.
const HUNG: Duration = Duration::from_secs(180);

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

/// splitmix64: a seeded generator, one per agent.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn percent(&mut self, p: u64) -> bool {
        self.below(100) < p
    }

    /// An index into `weights`, drawn by weight.
    fn pick(&mut self, weights: &[u64]) -> usize {
        let mut left = self.below(weights.iter().sum());
        for (i, w) in weights.iter().enumerate() {
            if left < *w {
                return i;
            }
            left -= w;
        }
        weights.len() - 1
    }
}

/// What one call came to.
enum Outcome {
    Ok(Value),
    Refused(Value),
    Killed,
    /// The checkout it was to run in is gone.
    Vanished,
    /// No envelope, an internal error, a protocol error or a hang: always a failure.
    Broken(String),
}

#[derive(Clone, Debug, PartialEq)]
enum Act {
    Start(String),
    Commit,
    Done,
    Update,
    Accept,
    Pin,
    Propose,
    Withdraw,
    Status,
    Measure,
    AwaitGreen,
    AwaitLanded(String),
    AwaitTrunk,
    Approve,
}

impl Act {
    fn label(&self) -> &'static str {
        match self {
            Act::Start(_) => "start",
            Act::Commit => "git commit",
            Act::Done => "done",
            Act::Update => "update",
            Act::Accept => "accept",
            Act::Pin => "standards --pin",
            Act::Propose => "standards propose",
            Act::Withdraw => "standards withdraw",
            Act::Status => "status",
            Act::Measure => "standards",
            Act::AwaitGreen | Act::AwaitLanded(_) | Act::AwaitTrunk => "await",
            Act::Approve => "approve (owner)",
        }
    }
}

#[derive(Default)]
struct Counts {
    ok: u64,
    refused: u64,
    killed: u64,
}

/// What every agent records, read by the checks.
#[derive(Default)]
struct Ledger {
    counts: BTreeMap<String, Counts>,
    /// Every commit an agent made: (effort, commit).
    work: Vec<(String, String)>,
    /// Refusals by verb and slug.
    slugs: BTreeMap<String, u64>,
    landed: u64,
    /// Landings a later call finished after the accept that began them was killed.
    landed_by_recovery: u64,
    started: u64,
    /// Every effort started, landed or not.
    names: Vec<String>,
    abandoned: u64,
    failures: Vec<String>,
    /// Refusals that named no step past them.
    wayless: Vec<String>,
}

struct Shared<'a> {
    fixture: &'a Fixture,
    rt: &'a tokio::runtime::Runtime,
    scratch: PathBuf,
    kill_percent: u64,
    ledger: Mutex<Ledger>,
}

impl Shared<'_> {
    fn ledger(&self) -> std::sync::MutexGuard<'_, Ledger> {
        self.ledger.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn main(&self) -> &Path {
        self.fixture.path()
    }

    fn worktree(&self, name: &str) -> PathBuf {
        self.fixture.repo.parent().join("repo.worktrees").join(name)
    }

    fn branch_exists(&self, name: &str) -> bool {
        !self
            .fixture
            .git_out(
                self.main(),
                &[
                    "rev-parse",
                    "--verify",
                    "-q",
                    &format!("refs/heads/agent/{name}"),
                ],
            )
            .is_empty()
    }
}

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

struct Agent {
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
    fn round(&mut self, sh: &Shared<'_>, until: Instant) {
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
                Act::Start(_) | Act::Accept => pending.act,
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
            return match self.rng.pick(&[75, 8, 6, 6, 5]) {
                0 => {
                    self.efforts_made += 1;
                    Act::Start(format!("a{}-{}", self.id, self.efforts_made))
                }
                1 => Act::Status,
                2 => Act::AwaitTrunk,
                3 => Act::Measure,
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
        match self.rng.pick(&[22, 20, 10, 16, 4, 4, 3, 7, 5, 3, 3, 3]) {
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
            _ => Act::AwaitTrunk,
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
        let dir = self.dir(sh);
        // An accept whose worktree a finished landing removed goes on from the main checkout.
        let (dir, owner_route) = if act == Act::Accept && !dir.exists() {
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
        let mut args: Vec<String> = match act {
            Act::Start(name) => vec!["start", "--name", name, "--title", "Soak"]
                .into_iter()
                .map(str::to_owned)
                .collect(),
            Act::Done => vec!["done".into()],
            Act::Update => vec!["update".into()],
            Act::Accept if owner_route => vec![
                "accept".into(),
                "--confirmed".into(),
                "--effort".into(),
                name.unwrap_or_default(),
            ],
            Act::Accept => vec!["accept".into(), "--confirmed".into()],
            Act::Pin => vec!["standards".into(), "--pin".into()],
            Act::Propose => ["standards", "propose", "todo", "--reason", REASON]
                .into_iter()
                .map(str::to_owned)
                .collect(),
            Act::Withdraw => vec!["standards".into(), "withdraw".into()],
            Act::Status => vec!["status".into()],
            Act::Measure => vec!["standards".into()],
            Act::AwaitGreen => vec![
                "await".into(),
                "--green".into(),
                name.unwrap_or_default(),
                "--timeout".into(),
                "0".into(),
            ],
            Act::AwaitLanded(other) => vec![
                "await".into(),
                "--landed".into(),
                other.clone(),
                "--timeout".into(),
                "0".into(),
            ],
            Act::AwaitTrunk => vec![
                "await".into(),
                "--trunk-moved".into(),
                "--timeout".into(),
                "1".into(),
            ],
            Act::Commit | Act::Approve => unreachable!("not a discern call"),
        };
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
        let (tool, arguments) = match act {
            Act::Start(name) => (
                "discern_start",
                json!({ "name": name, "title": "Soak", "path": path }),
            ),
            Act::Done => ("discern_done", json!({ "path": path })),
            Act::Update => ("discern_update", json!({ "path": path })),
            Act::Accept => ("discern_accept", json!({ "confirmed": true, "path": path })),
            Act::Pin => (
                "discern_standards",
                json!({ "action": "measure", "pin": true, "path": path }),
            ),
            Act::Propose => (
                "discern_standards",
                json!({ "action": "propose", "proposals": [{ "name": "todo", "reason": REASON }], "path": path }),
            ),
            Act::Withdraw => (
                "discern_standards",
                json!({ "action": "withdraw", "path": path }),
            ),
            Act::Status => ("discern_status", json!({ "path": path })),
            Act::Measure => (
                "discern_standards",
                json!({ "action": "measure", "path": path }),
            ),
            Act::AwaitGreen => (
                "discern_await",
                json!({ "green": name, "timeout": 0, "path": path }),
            ),
            Act::AwaitLanded(other) => (
                "discern_await",
                json!({ "landed": other, "timeout": 0, "path": path }),
            ),
            Act::AwaitTrunk => (
                "discern_await",
                json!({ "trunk_moved": true, "timeout": 1, "path": path }),
            ),
            Act::Commit | Act::Approve => unreachable!("not a discern call"),
        };
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

/// Run `discern args` in `dir` in its own process group; with `kill_at`, SIGKILL the group
/// then (unless it finished first).
fn run_killable(
    sh: &Shared<'_>,
    agent: usize,
    dir: &Path,
    args: &[String],
    kill_at: Option<Duration>,
) -> Outcome {
    if !dir.exists() {
        return Outcome::Vanished;
    }
    let out_path = sh.scratch.join(format!("agent{agent}.out"));
    let err_path = sh.scratch.join(format!("agent{agent}.err"));
    let (Ok(out), Ok(err)) = (
        std::fs::File::create(&out_path),
        std::fs::File::create(&err_path),
    ) else {
        return Outcome::Broken("cannot create the output files".into());
    };
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_discern"));
    cmd.args(args).current_dir(dir).process_group(0);
    discern_tests::hermetic(&mut cmd, sh.fixture.repo.home());
    cmd.env("DISCERN_CACHE_DIR", cache_dir())
        .stdin(std::process::Stdio::null())
        .stdout(out)
        .stderr(err);
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(_) if !dir.exists() => return Outcome::Vanished,
        Err(e) => return Outcome::Broken(format!("{args:?}: cannot spawn: {e}")),
    };
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => {}
            Err(e) => return Outcome::Broken(format!("{args:?}: wait: {e}")),
        }
        let elapsed = started.elapsed();
        let kill = kill_at.is_some_and(|at| elapsed >= at);
        if kill || elapsed >= HUNG {
            // The group, through the kernel; the child is not reaped yet, so its id is still
            // this group's.
            let group = i32::try_from(child.id())
                .ok()
                .and_then(rustix::process::Pid::from_raw)
                .expect("a child pid");
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
            let _ = child.wait();
            if kill {
                return Outcome::Killed;
            }
            return Outcome::Broken(format!(
                "{args:?} in {} hung for {} s",
                dir.display(),
                HUNG.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    let context = || {
        format!(
            "{args:?} in {}: exit {:?}\n  stdout: {stdout}\n  stderr: {stderr}",
            dir.display(),
            status.code()
        )
    };
    if status.code() == Some(70) {
        return Outcome::Broken(format!("internal error: {}", context()));
    }
    match serde_json::from_str::<Value>(&stdout) {
        Ok(envelope) if envelope["ok"] == true => Outcome::Ok(envelope),
        Ok(envelope) if envelope["ok"] == false => Outcome::Refused(envelope),
        _ if !dir.exists() => Outcome::Vanished,
        _ => Outcome::Broken(format!("no envelope: {}", context())),
    }
}

/// Whether a refusal names the step past it: a hint carrying an action, or a command in its
/// message or hints (`discern …`, `git …`, `fuser …`).
fn names_the_way(envelope: &Value) -> bool {
    let hints = envelope["hints"].as_array().cloned().unwrap_or_default();
    if hints.iter().any(|h| h["action"]["verb"].is_string()) {
        return true;
    }
    let mut texts: Vec<&str> = hints.iter().filter_map(|h| h["text"].as_str()).collect();
    texts.extend(envelope["message"].as_str());
    texts.iter().any(|t| {
        ["`discern ", "`git ", "`fuser "]
            .iter()
            .any(|c| t.contains(c))
    })
}

/// The step the envelope's first next-step hint names, as an act of this agent.
fn suggestion(envelope: &Value) -> Option<Act> {
    let action = envelope["hints"]
        .as_array()?
        .iter()
        .find_map(|h| h.get("action"))?;
    let arguments = &action["arguments"];
    Some(match action["verb"].as_str()? {
        "done" => Act::Done,
        "update" => Act::Update,
        "accept" => Act::Accept,
        "standards withdraw" => Act::Withdraw,
        "standards propose" => Act::Propose,
        "standards" if arguments["pin"] == true => Act::Pin,
        "standards" => Act::Measure,
        "status" => Act::Status,
        _ => return None,
    })
}

/// Every invariant, on the repository at rest; each violation one line.
fn violations(sh: &Shared<'_>, root: &str) -> Vec<String> {
    let fixture = sh.fixture;
    let main = sh.main();
    let git = |args: &[&str]| {
        let mut cmd = std::process::Command::new("git");
        cmd.args(args).current_dir(main);
        discern_tests::hermetic(&mut cmd, fixture.repo.home());
        cmd.output().expect("git runs")
    };
    let mut found = Vec::new();

    // git fsck is clean.
    let fsck = git(&["fsck", "--no-progress", "--no-dangling"]);
    let fsck_err =
        String::from_utf8_lossy(&fsck.stderr).into_owned() + &String::from_utf8_lossy(&fsck.stdout);
    if !fsck.status.success() || !fsck_err.trim().is_empty() {
        found.push(format!("git fsck: {fsck_err}"));
    }

    // Every trunk commit that changes discern.toml is a config-only commit by discern.
    let log = git(&[
        "log",
        "--no-merges",
        "--format=%x00%H %s",
        "--name-only",
        &format!("{root}..main"),
    ]);
    for entry in String::from_utf8_lossy(&log.stdout).split('\0').skip(1) {
        let mut lines = entry.lines();
        let header = lines.next().unwrap_or_default();
        let files: Vec<&str> = lines.filter(|l| !l.is_empty()).collect();
        if files.contains(&"discern.toml") && (files.len() != 1 || !header.contains(" discern")) {
            found.push(format!(
                "a limit change on the trunk that is not a config-only commit by discern: {header} {files:?}"
            ));
        }
    }

    // The trunk moved only by landings, each onto a commit with its Proof note.
    let noted: HashSet<String> =
        String::from_utf8_lossy(&git(&["notes", "--ref=refs/notes/discern", "list"]).stdout)
            .lines()
            .filter_map(|l| l.split_whitespace().nth(1).map(str::to_owned))
            .collect();
    let reflog = git(&["reflog", "show", "--format=%H %gs", "refs/heads/main"]);
    for line in String::from_utf8_lossy(&reflog.stdout).lines() {
        let (sha, subject) = line.split_once(' ').unwrap_or((line, ""));
        if sha == root {
            continue;
        }
        if !subject.starts_with("discern accept") {
            found.push(format!(
                "the trunk moved to {sha} not by a landing: {subject}"
            ));
            continue;
        }
        if !noted.contains(sha) {
            found.push(format!(
                "the trunk landed {sha} without a Proof note ({subject})"
            ));
            continue;
        }
        let note = git(&["notes", "--ref=refs/notes/discern", "show", sha]);
        let note: Value = serde_json::from_slice(&note.stdout).unwrap_or(Value::Null);
        if note["subject"]["commit"] != sha {
            found.push(format!(
                "the Proof note of {sha} names another commit: {note}"
            ));
        }
    }

    // No effort's committed work is lost.
    let on_trunk: HashSet<String> = String::from_utf8_lossy(&git(&["rev-list", "main"]).stdout)
        .lines()
        .map(str::to_owned)
        .collect();
    let work = sh.ledger().work.clone();
    let mut branches: HashMap<String, HashSet<String>> = HashMap::new();
    for (effort, sha) in work {
        if on_trunk.contains(&sha) {
            continue;
        }
        let reachable = branches.entry(effort.clone()).or_insert_with(|| {
            String::from_utf8_lossy(
                &git(&["rev-list", &format!("refs/heads/agent/{effort}"), "--"]).stdout,
            )
            .lines()
            .map(str::to_owned)
            .collect()
        });
        if !reachable.contains(&sha) {
            found.push(format!(
                "effort {effort}'s commit {sha} is on neither the trunk nor agent/{effort}"
            ));
        }
    }

    // No lock, journal or merge in progress left; the main checkout clean; no worktree lost.
    let git_dir = main.join(".git");
    let mut files = Vec::new();
    walk(&git_dir, &mut files);
    for file in &files {
        let rel = file.strip_prefix(&git_dir).unwrap_or(file);
        let name = rel.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let parent = rel
            .parent()
            .and_then(|p| p.file_name())
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let in_worktree_admin = rel.starts_with("worktrees") && rel.components().count() == 3;
        let left = (name.ends_with(".lock") && name != discern::testing::commit::lock::FILE)
            || name == "config-transaction.json"
            || name == "merge-transaction.json"
            || name == "MERGE_HEAD"
            || (in_worktree_admin && name == "locked")
            || (matches!(parent, "landings" | "forks") && name.ends_with(".json"));
        if left {
            let content = std::fs::read_to_string(file).unwrap_or_default();
            found.push(format!("left behind: .git/{} {content}", rel.display()));
        }
        if name == discern::testing::commit::lock::FILE {
            let held = std::fs::OpenOptions::new()
                .write(true)
                .open(file)
                .map(|f| f.try_lock().is_err())
                .unwrap_or(false);
            if held {
                found.push(format!(
                    "the writer lock .git/{} is still held",
                    rel.display()
                ));
            }
        }
    }
    let status = fixture.git_out(main, &["status", "--porcelain"]);
    if !status.is_empty() {
        found.push(format!("the main checkout is not clean: {status}"));
    }
    let worktrees = fixture.git_out(main, &["worktree", "list", "--porcelain"]);
    for block in worktrees.split("\n\n") {
        if block.contains("\nprunable") {
            found.push(format!("a worktree lost its folder: {block}"));
        }
    }
    found
}

fn walk(dir: &Path, into: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => {
                // Objects hold no locks or journals worth reading file by file.
                if path.file_name().is_some_and(|n| n == "objects") {
                    continue;
                }
                walk(&path, into);
            }
            Ok(_) => into.push(path),
            Err(_) => {}
        }
    }
}

/// What one soak run found.
struct Soak {
    seed: u64,
    ops: u64,
    /// Calls that failed outright (no envelope, an internal error, a hang, a lost worktree).
    failures: Vec<String>,
    wayless: Vec<String>,
    /// Invariant violations, by round and at the end.
    violations: Vec<String>,
}

/// One soak run per test binary, shared by the tests that judge it.
fn soak() -> &'static Soak {
    static RUN: std::sync::OnceLock<Soak> = std::sync::OnceLock::new();
    RUN.get_or_init(run)
}

#[test]
fn a_fleet_under_load_loses_nothing() {
    let soak = soak();
    let seed = soak.seed;
    assert!(
        soak.failures.is_empty(),
        "seed {seed}: {} calls failed:\n{}",
        soak.failures.len(),
        soak.failures.join("\n")
    );
    assert!(
        soak.violations.is_empty(),
        "seed {seed}: invariants broke:\n{}",
        soak.violations.join("\n")
    );
    assert!(
        soak.wayless.is_empty(),
        "seed {seed}: {} refusals named no step past them:\n{:#?}",
        soak.wayless.len(),
        soak.wayless
    );
    assert!(soak.ops > 0, "seed {seed}: the fleet did nothing");
}

fn run() -> Soak {
    let agents = env_number("DISCERN_SOAK_AGENTS", 4).max(1) as usize;
    let seconds = env_number("DISCERN_SOAK_SECONDS", 20).max(1);
    let kill_percent = env_number("DISCERN_SOAK_KILL_PERCENT", 8).min(100);
    let seed = env_number(
        "DISCERN_SOAK_SEED",
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64),
    );
    // Rounds of 5 s in the short run, 30 s in a long one; the invariants run between rounds.
    let round = if seconds <= 60 { 5 } else { 30 };
    let rounds = seconds.div_ceil(round);
    eprintln!(
        "soak: seed {seed} (DISCERN_SOAK_SEED={seed} runs this mix again), {agents} agents, {seconds} s in {rounds} rounds, {kill_percent} % of CLI calls given a kill moment"
    );

    let setup = Instant::now();
    let fixture = Fixture::new(CONFIG);
    let root = fixture.repo.head();
    let scratch = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let shared = Shared {
        fixture: &fixture,
        rt: &rt,
        scratch: scratch.path().to_owned(),
        kill_percent,
        ledger: Mutex::new(Ledger::default()),
    };
    let mut fleet: Vec<Agent> = (0..agents)
        .map(|id| Agent {
            id,
            rng: Rng(seed ^ (id as u64 + 1).wrapping_mul(0xA24B_AED4_963E_E407)),
            client: rt.block_on(connect(&fixture, fixture.path())),
            effort: None,
            efforts_made: 0,
            pending: None,
            suggested: None,
            recent: Vec::new(),
            durations: HashMap::new(),
        })
        .collect();
    eprintln!("soak: setup {:.1} s", setup.elapsed().as_secs_f64());

    let started = Instant::now();
    let mut failed_rounds = Vec::new();
    let mut working = Duration::ZERO;
    for r in 0..rounds {
        let round_started = Instant::now();
        let until = round_started + Duration::from_secs(round.min(seconds - r * round));
        std::thread::scope(|scope| {
            for agent in fleet.iter_mut() {
                let shared = &shared;
                scope.spawn(move || agent.round(shared, until));
            }
        });
        working += round_started.elapsed();
        let found = violations(&shared, &root);
        let ledger = shared.ledger();
        let ops: u64 = ledger
            .counts
            .values()
            .map(|c| c.ok + c.refused + c.killed)
            .sum();
        eprintln!(
            "soak: round {}/{rounds}: {ops} operations so far, {} landed, {} failures, {} invariant violations",
            r + 1,
            ledger.landed,
            ledger.failures.len(),
            found.len()
        );
        drop(ledger);
        for violation in &found {
            eprintln!("soak: round {}: VIOLATION {violation}", r + 1);
        }
        if !found.is_empty() {
            failed_rounds.push(format!("round {}: {found:#?}", r + 1));
        }
    }
    for agent in fleet {
        let _ = rt.block_on(agent.client.cancel());
    }
    // Every call and session has ended: the invariants once more.
    let end = violations(&shared, &root);
    let elapsed = started.elapsed();

    let ledger = shared.ledger();
    let ops: u64 = ledger
        .counts
        .values()
        .map(|c| c.ok + c.refused + c.killed)
        .sum();
    let killed: u64 = ledger.counts.values().map(|c| c.killed).sum();
    let minutes = working.as_secs_f64() / 60.0;
    eprintln!(
        "soak: {ops} operations in {:.1} s of rounds ({:.1} s with checks) = {:.0} per minute; {killed} killed; {} efforts started, {} landed ({} finished by a later call after a kill), {} abandoned; {} work commits",
        working.as_secs_f64(),
        elapsed.as_secs_f64(),
        ops as f64 / minutes,
        ledger.started,
        ledger.landed,
        ledger.landed_by_recovery,
        ledger.abandoned,
        ledger.work.len()
    );
    eprintln!(
        "soak: {:<26} {:>7} {:>7} {:>7} {:>8}",
        "verb (surface)", "ok", "refused", "killed", "per min"
    );
    for (verb, c) in &ledger.counts {
        eprintln!(
            "soak: {verb:<26} {:>7} {:>7} {:>7} {:>8.1}",
            c.ok,
            c.refused,
            c.killed,
            (c.ok + c.refused + c.killed) as f64 / minutes
        );
    }
    eprintln!("soak: refusals by verb and slug: {:?}", ledger.slugs);
    eprintln!(
        "soak: invariants after {rounds} rounds and at the end: {}",
        if failed_rounds.is_empty() && end.is_empty() {
            "all held".to_owned()
        } else {
            format!(
                "{} rounds failed, {} at the end",
                failed_rounds.len(),
                end.len()
            )
        }
    );
    for refusal in &ledger.wayless {
        eprintln!("soak: REFUSAL NAMING NO STEP: {refusal}");
    }
    let mut violations = failed_rounds;
    violations.extend(end.into_iter().map(|v| format!("at the end: {v}")));
    Soak {
        seed,
        ops,
        failures: ledger.failures.clone(),
        wayless: ledger.wayless.clone(),
        violations,
    }
}

/// The checks can fail: each kind of damage they guard against, made by hand on a quiet
/// repository, is named.
#[test]
fn the_soak_checks_name_each_kind_of_damage() {
    let fixture = Fixture::new(CONFIG);
    let root = fixture.repo.head();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let shared = Shared {
        fixture: &fixture,
        rt: &rt,
        scratch: scratch.path().to_owned(),
        kill_percent: 0,
        ledger: Mutex::new(Ledger::default()),
    };
    assert_eq!(violations(&shared, &root), Vec::<String>::new());

    // Work whose branch was deleted before it landed.
    fixture.repo.git(&["checkout", "-q", "-b", "agent/lost"]);
    fixture.repo.write("src/lost.rs", "pub fn lost() {}\n");
    let lost = fixture.repo.commit("lost work");
    fixture.repo.git(&["checkout", "-q", "main"]);
    fixture.repo.git(&["branch", "-q", "-D", "agent/lost"]);
    shared.ledger().work.push(("lost".to_owned(), lost.clone()));
    // The trunk moved by hand, a limit loosened inside other work.
    fixture
        .repo
        .write("discern.toml", CONFIG.replace("limit = 6", "limit = 60"));
    fixture.repo.write("src/more.rs", "pub fn more() {}\n");
    fixture.repo.commit("loosen by hand");
    // A git lock, a landing journal, and the writer lock held.
    let git_dir = fixture.path().join(".git");
    std::fs::write(git_dir.join("packed-refs.lock"), "").unwrap();
    std::fs::create_dir_all(git_dir.join("discern/landings")).unwrap();
    std::fs::write(git_dir.join("discern/landings/agent.x.json"), "{}").unwrap();
    let writer = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(
            git_dir
                .join("discern")
                .join(discern::testing::commit::lock::FILE),
        )
        .unwrap();
    writer.lock().unwrap();

    let found = violations(&shared, &root).join("\n");
    for expected in [
        "not by a landing: commit: loosen by hand",
        "not a config-only commit by discern",
        &format!("commit {lost} is on neither the trunk nor agent/lost"),
        "left behind: .git/packed-refs.lock",
        "left behind: .git/discern/landings/agent.x.json",
        "the writer lock",
    ] {
        assert!(found.contains(expected), "{expected:?} in {found}");
    }
    writer.unlock().unwrap();

    // A damaged object.
    let blob = fixture.git_out(fixture.path(), &["rev-parse", "HEAD:README.md"]);
    let object = git_dir.join("objects").join(&blob[..2]).join(&blob[2..]);
    let mut permissions = std::fs::metadata(&object).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    permissions.set_readonly(false);
    std::fs::set_permissions(&object, permissions).unwrap();
    std::fs::write(&object, b"not a zlib stream").unwrap();
    let found = violations(&shared, &root).join("\n");
    assert!(found.contains("git fsck"), "{found}");
}
