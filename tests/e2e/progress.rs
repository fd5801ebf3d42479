//! Long calls are never silent: `accept` without a terminal prints its phases to stderr, one
//! line each; over MCP a long step is said to be still running every few seconds to a client
//! that sent a progress token.

use rmcp::ServiceExt;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::json;

use crate::support::config::Config;
use crate::support::{Fixture, cache_dir};

#[test]
fn accept_without_a_terminal_prints_its_phases_one_line_each() {
    let fixture = Fixture::new(Config::landing());
    let (path, _) = fixture.proven_effort("phases");
    let run = fixture.run_in(&path, &["accept", "--confirmed", "--json"], &[]);
    assert_eq!(run.json()["ok"], true, "{}\n{}", run.stdout, run.stderr);
    let lines: Vec<&str> = run.stderr.lines().collect();
    for phase in [
        "discern: accept: reading the Proof",
        "discern: accept: measuring the proven commit's Standards again",
        "discern: accept: checking the owner's consent",
        "discern: accept: landing on main",
    ] {
        assert!(
            lines.iter().any(|l| l.starts_with(phase)),
            "{phase}: {}",
            run.stderr
        );
    }
    assert!(!run.stderr.contains('\r'), "lines, not a line redrawn");
    assert!(
        run.stdout.trim_start().starts_with('{'),
        "stdout is the data alone"
    );
}

#[derive(Clone, Default)]
struct Heard {
    said: std::sync::Arc<std::sync::Mutex<Vec<(f64, String)>>>,
}

impl rmcp::ClientHandler for Heard {
    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        let message = params.message.unwrap_or_default();
        self.said.lock().unwrap().push((params.progress, message));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_job_is_said_to_be_running_every_few_seconds_over_mcp() {
    let config = Config::landing().job("test", "sleep 10");
    let fixture = Fixture::new(&config);
    let json = fixture
        .run(&["start", "--name", "slow", "--title", "Slow", "--json"])
        .json();
    let effort = std::path::PathBuf::from(json["data"]["path"].as_str().unwrap());
    std::fs::write(effort.join("src/slow.rs"), "pub fn s() {}\n").unwrap();
    fixture.git_in(&effort, &["add", "-A"]);
    fixture.git_in(&effort, &["commit", "-q", "-m", "slow"]);
    let heard = Heard::default();
    let home = fixture.repo.home().to_owned();
    let transport = TokioChildProcess::new(
        tokio::process::Command::new(env!("CARGO_BIN_EXE_discern")).configure(|cmd| {
            cmd.arg("mcp").current_dir(&effort);
            cmd.env_clear()
                .envs(discern_tests::hermetic_env(&home))
                .env("DISCERN_CACHE_DIR", cache_dir());
        }),
    )
    .unwrap();
    let client = heard.clone().serve(transport).await.unwrap();
    crate::mcp::call_with_progress(&client, "discern_done", json!({})).await;
    let said = heard.said.lock().unwrap().clone();
    let running = said
        .iter()
        .filter(|(_, m)| m.contains("still running"))
        .count();
    assert!(
        running >= 2,
        "a 10 s job is said to run every few seconds: {said:?}"
    );
    assert!(
        said.windows(2).all(|w| w[0].0 < w[1].0),
        "progress only grows: {said:?}"
    );
    client.cancel().await.unwrap();
}
