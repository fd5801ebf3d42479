//! Pins and proposal batches: one config-only commit, compare-and-swap, crash recovery.

use serde_json::{Value, json};

use crate::support::{Fixture, standard};

/// A config with comments and odd formatting that must survive every edit byte for byte.
const CONFIG: &str = r#"# Our Standards.   (trailing spaces and comments stay)

[standards.todo]
direction   =   "down"
limit = 5     # do not raise
producer = "builtin:pattern"
config = { pattern = "TODO", paths = ["src/**"] }
metric = "matches"

# Files that mention TODO: shares the producer with `todo`.
[standards.todo_files]
direction = "down"
limit = 2
producer = "builtin:pattern"
config = { pattern = "TODO", paths = ["src/**"] }
metric = "files"

[standards.lines]
direction = "up"
limit = 7
producer = "builtin:extent"
config = { paths = ["src/**"] }
margin = 0.5
"#;

const REASON: &str = "The new scheduler module documents its planned extension points inline.";

fn trace_calls(trace: &std::path::Path) -> usize {
    std::fs::read_to_string(trace)
        .unwrap_or_default()
        .lines()
        .count()
}

fn commits(fixture: &Fixture) -> usize {
    fixture
        .repo
        .git(&["rev-list", "--count", "HEAD"])
        .trim()
        .parse()
        .unwrap()
}

fn changed_files(fixture: &Fixture, rev: &str) -> String {
    fixture
        .repo
        .git(&["show", "--name-only", "--format=", rev])
        .trim()
        .to_owned()
}

fn journal(fixture: &Fixture) -> std::path::PathBuf {
    fixture.path().join(".git/discern/config-transaction.json")
}

fn records(fixture: &Fixture) -> Value {
    let path = fixture
        .path()
        .join(".git/discern/standard-limit-proposals.json");
    std::fs::read_to_string(path).map_or(Value::Null, |t| serde_json::from_str(&t).unwrap())
}

#[test]
fn pin_tightens_in_one_config_only_commit_reusing_the_recorded_readings() {
    let fixture = Fixture::new(CONFIG);
    let trace = fixture.repo.home().join("trace.jsonl");
    let env = [("DISCERN_TRACE", trace.to_str().unwrap())];
    let json = fixture.run_with(&["standards", "--json"], &env).json();
    assert_eq!(json["ok"], true);
    let measured = trace_calls(&trace);
    assert!(measured > 0);

    let before = commits(&fixture);
    let run = fixture.run_with(&["standards", "--pin", "--json"], &env);
    let json = run.json();
    assert_eq!(json["ok"], true, "{}", run.stdout);
    assert_eq!(
        trace_calls(&trace),
        measured,
        "the pin reused the readings: no guest call"
    );
    assert_eq!(standard(&json, "todo")["measurement"], "reused");
    assert_eq!(
        json["data"]["pinned"],
        json!([
            {"name": "todo", "from": 5.0, "to": 2.0, "measured": 2.0},
            {"name": "todo_files", "from": 2.0, "to": 1.0, "measured": 1.0},
        ])
    );
    assert_eq!(commits(&fixture), before + 1);
    assert_eq!(changed_files(&fixture, "HEAD"), "discern.toml");
    assert_eq!(
        fixture.repo.git(&["status", "--porcelain"]),
        "",
        "index and work tree match the commit"
    );
    let expected = CONFIG
        .replace(
            "limit = 5     # do not raise",
            "limit = 2     # do not raise",
        )
        .replace("limit = 2\n", "limit = 1\n");
    assert_eq!(
        std::fs::read_to_string(fixture.path().join("discern.toml")).unwrap(),
        expected
    );
    assert_eq!(fixture.repo.git(&["show", "HEAD:discern.toml"]), expected);
    let message = fixture.repo.git(&["log", "-1", "--format=%B"]);
    assert!(
        message
            .starts_with("discern: pin 2 Standard limits\n\n- todo (ceiling): 5 -> 2 (measured 2)"),
        "{message}"
    );
    assert!(
        json["hints"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["id"] == "standards-pin-needs-done")
    );

    // Nothing left to pin: ok, no commit.
    let json = fixture.run(&["standards", "--pin", "--json"]).json();
    assert_eq!(json["ok"], true);
    assert_eq!(json["data"]["pinned"], json!([]));
    assert_eq!(commits(&fixture), before + 1);
}

#[test]
fn pin_refuses_red_detached_and_staged_and_a_moved_branch() {
    let fixture = Fixture::new(CONFIG);
    fixture.repo.git(&["checkout", "-q", "-b", "agent/red"]);
    fixture.repo.write(
        "src/more.rs",
        "// TODO 1\n// TODO 2\n// TODO 3\n// TODO 4\n",
    );
    fixture.repo.commit("more todos");
    let head = fixture.repo.head();
    let json = fixture.run(&["standards", "--pin", "--json"]).json();
    assert_eq!(json["error"], "pin_failed");
    assert!(
        json["message"]
            .as_str()
            .unwrap()
            .contains("not passing: todo)"),
        "{json}"
    );
    assert_eq!(fixture.repo.head(), head);

    fixture.repo.git(&["checkout", "-q", "--detach"]);
    let json = fixture.run(&["standards", "--pin", "--json"]).json();
    assert_eq!(json["error"], "wrong_checkout");
    assert!(
        json["message"]
            .as_str()
            .unwrap()
            .contains("HEAD is detached")
    );

    fixture.repo.git(&["checkout", "-q", "main"]);
    fixture.repo.write("README.md", "# changed\n");
    fixture.repo.git(&["add", "README.md"]);
    let json = fixture.run(&["standards", "--pin", "--json"]).json();
    assert_eq!(json["error"], "dirty_worktree");
    assert!(
        json["message"]
            .as_str()
            .unwrap()
            .contains("staged changes exist (README.md)")
    );
    fixture.repo.git(&["reset", "-q", "--hard"]);

    // Another writer moves the branch between the measurement and the commit.
    let main = fixture.repo.head();
    let writer = "git -c user.name=w -c user.email=w@x commit -q --allow-empty -m concurrent";
    let run = fixture.run_with(
        &["standards", "--pin", "--json"],
        &[("DISCERN_FAULT_EXEC", &format!("objects-written:{writer}"))],
    );
    let json = run.json();
    assert_eq!(json["error"], "pin_failed", "{}", run.stdout);
    assert!(
        json["message"].as_str().unwrap().contains("moved from"),
        "{json}"
    );
    let log = fixture.repo.git(&["log", "--format=%s", "-2"]);
    assert_eq!(
        log, "concurrent\nfixture\n",
        "only the other writer's commit landed"
    );
    assert_ne!(fixture.repo.head(), main);
    assert_eq!(fixture.repo.git(&["status", "--porcelain"]), "");
    assert_eq!(
        std::fs::read_to_string(fixture.path().join("discern.toml")).unwrap(),
        CONFIG
    );
    assert!(!journal(&fixture).exists());
}

/// A branch that breaches `todo` (6 > 5) and `todo_files` (3 > 2), which share one producer,
/// and `lines` (6 < 7), read by another.
fn breaching_branch() -> Fixture {
    let fixture = Fixture::new(CONFIG);
    fixture
        .repo
        .git(&["checkout", "-q", "-b", "agent/scheduler"]);
    fixture
        .repo
        .write("src/scheduler.rs", "// TODO a, TODO b, TODO c\n");
    fixture.repo.write("src/more.rs", "// TODO d\n");
    fixture.repo.remove("src/main.rs");
    fixture.repo.commit("scheduler");
    fixture
}

fn batch(reason: &str) -> String {
    json!([
        {"name": "todo", "reason": reason},
        {"name": "todo_files", "reason": reason},
        {"name": "lines", "reason": reason},
    ])
    .to_string()
}

fn propose(fixture: &Fixture, batch: &str, env: &[(&str, &str)]) -> super::support::Run {
    let file = fixture.repo.home().join("batch.json");
    std::fs::write(&file, batch).unwrap();
    fixture.run_with(
        &[
            "standards",
            "propose",
            "--batch",
            file.to_str().unwrap(),
            "--json",
        ],
        env,
    )
}

#[test]
fn a_batch_is_one_commit_and_the_rules_for_existing_state_hold() {
    let fixture = breaching_branch();
    let trace = fixture.repo.home().join("trace.jsonl");
    let env = [("DISCERN_TRACE", trace.to_str().unwrap())];
    let before = commits(&fixture);
    let measured_head = fixture.repo.head();
    let run = propose(&fixture, &batch(REASON), &env);
    let json = run.json();
    assert_eq!(json["ok"], true, "{}", run.stdout);
    assert_eq!(json["data"]["proposal_batch"]["status"], "recorded");
    // The pattern producer ran once per commit for todo and todo_files; extent once for lines.
    let calls: Vec<Value> = std::fs::read_to_string(&trace)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let listings = |producer: &str| {
        calls
            .iter()
            .filter(|c| c["producer"] == producer && c["call"] == "files")
            .count()
    };
    // Once on HEAD, and once on the merge base: the baseline findings and breaches are
    // compared with (a proposal measures fresh, so neither is reused).
    assert_eq!(listings("builtin:pattern"), 2);
    assert_eq!(listings("builtin:extent"), 2);
    assert_eq!(commits(&fixture), before + 1, "exactly one new commit");
    assert_eq!(changed_files(&fixture, "HEAD"), "discern.toml");
    assert_eq!(
        fixture.repo.git(&["rev-parse", "HEAD^"]).trim(),
        measured_head
    );
    let head = fixture.repo.head();
    let store = records(&fixture);
    let proposals = store["proposals"].as_array().unwrap();
    assert_eq!(proposals.len(), 3);
    for record in proposals {
        assert_eq!(record["commit"], head.as_str());
        assert_eq!(record["bound_commit"], head.as_str());
        assert_eq!(record["measured_commit"], measured_head.as_str());
    }
    let todo = proposals.iter().find(|r| r["standard"] == "todo").unwrap();
    assert_eq!(todo["trunk_limit"], 5.0);
    assert_eq!(todo["proposed_limit"], 6.0);
    assert_eq!(todo["delta"], 1.0);
    // Every changed path inside what the producer listed, the deleted src/main.rs included.
    assert_eq!(
        todo["evidence_paths"],
        json!(["src/main.rs", "src/more.rs", "src/scheduler.rs"])
    );
    let lines = proposals.iter().find(|r| r["standard"] == "lines").unwrap();
    assert_eq!(lines["proposed_limit"], 6.0, "exactly the measured value");
    assert_eq!(
        lines["evidence_paths"],
        json!(["src/main.rs", "src/more.rs", "src/scheduler.rs"])
    );
    let token = json["data"]["proposal_batch"]["proposals"][0]["approval_token"]
        .as_str()
        .unwrap();
    assert_eq!(
        token,
        discern::testing::proposals::approval_token("todo", 6.0, REASON)
    );
    // Comments and formatting survive; only the limit values changed.
    let expected = CONFIG
        .replace(
            "limit = 5     # do not raise",
            "limit = 6     # do not raise",
        )
        .replace("limit = 2\n", "limit = 3\n")
        .replace("limit = 7\n", "limit = 6\n");
    assert_eq!(fixture.repo.git(&["show", "HEAD:discern.toml"]), expected);
    assert_eq!(fixture.repo.git(&["status", "--porcelain"]), "");
    // The loosened limits are explained for the never-loosen check.
    let json = fixture.run(&["standards", "--json"]).json();
    assert_eq!(json["ok"], true, "{json}");
    assert_eq!(json["data"]["limits"]["status"], "proposed");

    // The identical repeat: nothing measured, nothing written.
    let calls_before = trace_calls(&trace);
    let json = propose(&fixture, &batch(REASON), &env).json();
    assert_eq!(json["data"]["proposal_batch"]["status"], "unchanged");
    assert_eq!(trace_calls(&trace), calls_before);
    assert_eq!(fixture.repo.head(), head);

    // New reasons: replaced, no measurement, no commit, Proof cleared.
    std::fs::write(fixture.path().join(".git/discern/gate-proof"), "{}").unwrap();
    let reworded = "The scheduler module lists its extension points as TODO markers on purpose.";
    let json = propose(&fixture, &batch(reworded), &env).json();
    assert_eq!(json["data"]["proposal_batch"]["status"], "replaced");
    assert_eq!(trace_calls(&trace), calls_before);
    assert_eq!(fixture.repo.head(), head);
    assert!(!fixture.path().join(".git/discern/gate-proof").exists());
    assert_eq!(records(&fixture)["proposals"][0]["reason"], reworded);

    // Mixed with a new request: refused before any measurement or write.
    let store_before = records(&fixture);
    let mixed = json!([{"name": "todo", "reason": reworded}]).to_string();
    let json = propose(&fixture, &mixed, &env).json();
    assert_eq!(json["error"], "proposal_stale");
    assert_eq!(trace_calls(&trace), calls_before, "zero guest invocations");
    assert_eq!(records(&fixture), store_before, "zero writes");
    assert_eq!(fixture.repo.head(), head);

    // A follow-up commit makes the set stale; the identical batch renews it.
    fixture.repo.write("docs/notes.md", "notes\n");
    fixture.repo.commit("unrelated follow-up");
    let json = fixture.run(&["standards", "--json"]).json();
    assert_eq!(
        json["data"]["limits"]["status"], "loosened",
        "a stale proposal authorizes nothing"
    );
    let json = propose(&fixture, &batch(reworded), &env).json();
    assert_eq!(
        json["data"]["proposal_batch"]["status"], "rebound",
        "{json}"
    );
    // Renewed by a commit that changes nothing and carries the proposals, so every clone
    // sees them live on it (the owner's too, not only this worktree's store).
    let new_head = fixture.repo.head();
    assert_eq!(commits(&fixture), before + 3, "one renewal commit");
    let diff = fixture.repo.git(&["diff", "--name-only", "HEAD~1", "HEAD"]);
    assert_eq!(diff.trim(), "", "the renewal changes no file");
    let message = fixture.repo.git(&["log", "-1", "--format=%B"]);
    assert!(
        message.starts_with("discern: renew 3 Standard limits"),
        "{message}"
    );
    assert!(message.contains("Discern-Proposal: "), "{message}");
    for record in records(&fixture)["proposals"].as_array().unwrap() {
        assert_eq!(record["bound_commit"], new_head.as_str());
        assert_eq!(record["commit"], new_head.as_str());
    }
    assert_eq!(
        fixture.run(&["standards", "--json"]).json()["data"]["limits"]["status"],
        "proposed"
    );
}

#[test]
fn every_refusal_of_a_batch_writes_nothing() {
    let fixture = breaching_branch();
    let head = fixture.repo.head();
    let refuse = |batch: &str, slug: &str, text: &str| {
        let json = propose(&fixture, batch, &[]).json();
        assert_eq!(json["error"], slug, "{json}");
        assert!(json["message"].as_str().unwrap().contains(text), "{json}");
        assert_eq!(fixture.repo.head(), head);
        assert_eq!(records(&fixture), Value::Null);
    };
    let one = |name: &str, reason: &str| json!([{"name": name, "reason": reason}]).to_string();
    refuse("[]", "invalid_value", "The batch is empty");
    refuse(
        &json!([{"name": "todo", "reason": REASON}, {"name": "todo", "reason": REASON}])
            .to_string(),
        "invalid_value",
        "more than once",
    );
    refuse(&one("todo", " "), "invalid_value", "blank");
    refuse(
        &one("todo", &"x".repeat(501)),
        "invalid_value",
        "501 characters",
    );
    refuse(
        &one("todo", "two\nparagraphs"),
        "invalid_value",
        "one paragraph",
    );
    refuse(
        &one("todo", "key ghp_0123456789abcdefghijklmnop"),
        "invalid_value",
        "credential",
    );
    refuse(
        &one("todo", "-----BEGIN OPENSSH PRIVATE KEY-----"),
        "invalid_value",
        "private key",
    );
    refuse(
        &one("todo", "run with password=swordfish"),
        "invalid_value",
        "secret assignment",
    );
    refuse(
        &one("todo", "The owner approved this already."),
        "invalid_value",
        "claims approval",
    );
    refuse(
        &one("nope", REASON),
        "unknown_standard",
        "the configured Standards are: todo, todo_files, lines",
    );

    // No breach: todo_files stays within 2 on a branch that adds one file.
    let calm = Fixture::new(CONFIG);
    calm.repo.git(&["checkout", "-q", "-b", "agent/calm"]);
    calm.repo.write("src/one.rs", "// TODO x\n");
    calm.repo.commit("one");
    let json = propose(&calm, &one("todo_files", REASON), &[]).json();
    assert_eq!(json["error"], "precondition_failed");
    assert!(
        json["message"]
            .as_str()
            .unwrap()
            .contains("there is no breach"),
        "{json}"
    );
    assert_eq!(
        json["hints"][0]["action"]["verb"], "done",
        "the way past it: {json}"
    );

    // A branch that already moved the limit.
    calm.repo
        .write("discern.toml", CONFIG.replace("limit = 5 ", "limit = 9 "));
    calm.repo.commit("raise by hand");
    let json = propose(&calm, &one("todo", REASON), &[]).json();
    assert_eq!(json["error"], "precondition_failed");
    assert!(
        json["message"]
            .as_str()
            .unwrap()
            .contains("already moved its limit on this branch (5 → 9)"),
        "{json}"
    );

    // On the trunk itself.
    let trunk = Fixture::new(CONFIG);
    let json = propose(&trunk, &one("todo", REASON), &[]).json();
    assert_eq!(json["error"], "wrong_checkout");
    assert!(
        json["message"]
            .as_str()
            .unwrap()
            .contains("main is the trunk")
    );

    // Dirty tree.
    fixture.repo.write("src/dirty.rs", "x\n");
    let json = propose(&fixture, &one("todo", REASON), &[]).json();
    assert_eq!(json["error"], "dirty_worktree");
    fixture.repo.remove("src/dirty.rs");

    // The scalar compatibility command gives the same result as a batch of one.
    let run = fixture.run(&["standards", "propose", "todo", "--reason", REASON, "--json"]);
    let json = run.json();
    assert_eq!(
        json["data"]["proposal_batch"]["status"], "recorded",
        "{}",
        run.stdout
    );
}

#[test]
fn head_moving_during_measurement_refuses_the_batch() {
    let config = format!(
        "{CONFIG}\n[standards.speed]\ndirection = \"down\"\nlimit = 1\nrun = \"git -c user.name=x -c user.email=x@y commit -q --allow-empty -m moved; echo DISCERN_METRIC speed 5\"\ninputs = [\"src/**\"]\n"
    );
    let fixture = Fixture::new(&config);
    fixture.repo.git(&["checkout", "-q", "-b", "agent/x"]);
    fixture.repo.write("src/x.rs", "x\n");
    fixture.repo.commit("x");
    let json = propose(
        &fixture,
        &json!([{"name": "speed", "reason": REASON}]).to_string(),
        &[],
    )
    .json();
    assert_eq!(json["error"], "proposal_stale", "{json}");
    assert!(
        json["message"]
            .as_str()
            .unwrap()
            .contains("HEAD moved during measurement")
    );
    assert_eq!(records(&fixture), Value::Null);
    assert!(!journal(&fixture).exists());
}

#[test]
fn a_crash_at_any_step_recovers_to_nothing_or_everything() {
    for step in discern::testing::commit::step::ALL {
        let fixture = breaching_branch();
        let measured_head = fixture.repo.head();
        let run = propose(&fixture, &batch(REASON), &[("DISCERN_FAULT", step)]);
        assert_ne!(run.code, 0, "{step}: the process must die");
        assert!(
            run.stderr.contains(&format!("injected fault at {step}")),
            "{step}: {}",
            run.stderr
        );
        let landed = fixture.repo.head() != measured_head;

        // The next call finishes or unwinds it.
        let run = propose(&fixture, &batch(REASON), &[]);
        let json = run.json();
        assert_eq!(json["ok"], true, "{step}: {}", run.stdout);
        let status = json["data"]["proposal_batch"]["status"].as_str().unwrap();
        if landed {
            assert_eq!(status, "recovered", "{step}");
        } else {
            assert_eq!(status, "recorded", "{step}");
        }
        // Either way: exactly one proposal commit, every record bound to it, a clean tree.
        let head = fixture.repo.head();
        assert_eq!(
            fixture.repo.git(&["rev-parse", "HEAD^"]).trim(),
            measured_head,
            "{step}"
        );
        assert_eq!(changed_files(&fixture, "HEAD"), "discern.toml", "{step}");
        let store = records(&fixture);
        assert_eq!(store["proposals"].as_array().unwrap().len(), 3, "{step}");
        assert!(
            store["proposals"]
                .as_array()
                .unwrap()
                .iter()
                .all(|r| r["commit"] == head.as_str()),
            "{step}"
        );
        assert_eq!(fixture.repo.git(&["status", "--porcelain"]), "", "{step}");
        assert!(!journal(&fixture).exists(), "{step}");
    }
}

#[test]
fn a_concurrent_writer_makes_the_batch_refuse_and_write_nothing() {
    let fixture = breaching_branch();
    let writer = "git -c user.name=w -c user.email=w@x commit -q --allow-empty -m concurrent";
    let run = propose(
        &fixture,
        &batch(REASON),
        &[("DISCERN_FAULT_EXEC", &format!("objects-written:{writer}"))],
    );
    let json = run.json();
    assert_eq!(json["error"], "proposal_stale", "{}", run.stdout);
    assert_eq!(
        fixture.repo.git(&["log", "-1", "--format=%s"]).trim(),
        "concurrent"
    );
    assert_eq!(records(&fixture), Value::Null);
    assert!(!journal(&fixture).exists());
    assert_eq!(fixture.repo.git(&["status", "--porcelain"]), "");
}

#[test]
fn a_pin_interrupted_after_the_ref_moved_is_finished_by_the_next_call() {
    let fixture = Fixture::new(CONFIG);
    let run = fixture.run_with(
        &["standards", "--pin", "--json"],
        &[("DISCERN_FAULT", "ref-moved")],
    );
    assert_ne!(run.code, 0);
    assert!(journal(&fixture).exists());
    // The next call of any Standards verb finishes the transaction first.
    let json = fixture.run(&["standards", "--json"]).json();
    assert_eq!(json["ok"], true, "{json}");
    assert!(!journal(&fixture).exists());
    assert_eq!(fixture.repo.git(&["status", "--porcelain"]), "");
    assert_eq!(changed_files(&fixture, "HEAD"), "discern.toml");
    assert!(
        std::fs::read_to_string(fixture.path().join("discern.toml"))
            .unwrap()
            .contains("limit = 2     # do not raise")
    );
}

#[test]
fn a_measurement_after_a_crashed_proposal_sees_the_proposal_it_recovers() {
    let fixture = breaching_branch();
    let run = propose(&fixture, &batch(REASON), &[("DISCERN_FAULT", "ref-moved")]);
    assert_ne!(run.code, 0, "the process must die");
    assert!(journal(&fixture).exists());
    // The measurement finishes the transaction first, then judges the limit the proposal set
    // as proposed, not as a loosening to undo.
    let json = fixture.run(&["standards", "--json"]).json();
    assert!(!journal(&fixture).exists());
    assert_eq!(json["data"]["limits"]["status"], "proposed", "{json}");
    assert_ne!(json["error"], "standards_failed", "{json}");
}
