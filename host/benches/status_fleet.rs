//! Status size and speed against fleet size: the default (orientation) result must not grow with
//! the fleet. Prints, per fleet size, the default status payload (JSON + Markdown, in
//! characters), the full (`--verbose`) payload, and the wall time of one status call.
//!
//! Run: `cargo bench -p discern --bench status_fleet` (env `BENCH_FLEETS=1,10,100,1000`).

use std::process::Command;
use std::time::Instant;

use discern::status::{StatusRequest, status};
use discern::workspace::{Settings, Workspace};

fn git(dir: &std::path::Path, args: &[&str]) {
    let status = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.com")
        .env("GIT_COMMITTER_NAME", "bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.com")
        .status()
        .expect("git");
    assert!(status.success(), "git {args:?}");
}

fn main() {
    let fleets: Vec<usize> = std::env::var("BENCH_FLEETS")
        .unwrap_or_else(|_| "1,10,100,1000".to_owned())
        .split(',')
        .filter_map(|n| n.trim().parse().ok())
        .collect();
    println!(
        "{:>6} {:>14} {:>14} {:>14} {:>12}",
        "fleet", "default chars", "  of which md", "full chars", "status time"
    );
    for n in fleets {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = tmp.path().join("repo");
        std::fs::create_dir(&root).expect("mkdir");
        git(&root, &["init", "-q", "-b", "main"]);
        std::fs::write(root.join("discern.toml"), "[standards.x]\ndirection = \"down\"\nlimit = 1\nproducer = \"builtin:extent\"\nconfig = { paths = [\"src\"] }\nmetric = \"files\"\n").expect("write");
        git(&root, &["add", "-A"]);
        git(&root, &["commit", "-q", "-m", "init"]);
        for i in 0..n {
            let path = tmp.path().join("repo.worktrees").join(format!("e{i:04}"));
            git(
                &root,
                &[
                    "worktree",
                    "add",
                    "-q",
                    "-b",
                    &format!("agent/e{i:04}"),
                    path.to_str().expect("utf-8"),
                    "main",
                ],
            );
            if i % 3 == 0 {
                std::fs::write(path.join("wip.txt"), "wip\n").expect("write");
            }
        }
        let ws = Workspace::open(&root, Settings::default()).expect("workspace");
        let start = Instant::now();
        let default = status(&ws, &StatusRequest::default());
        let elapsed = start.elapsed();
        let json = default.to_json();
        let markdown = discern::result::markdown(&default, &discern::verbs::steps::tool_call);
        let full = status(
            &ws,
            &StatusRequest {
                verbose: true,
                ..StatusRequest::default()
            },
        );
        let full_chars = full.to_json().len()
            + discern::result::markdown(&full, &discern::verbs::steps::tool_call).len();
        println!(
            "{n:>6} {:>14} {:>14} {full_chars:>14} {:>10.0}ms",
            json.len() + markdown.len(),
            markdown.len(),
            elapsed.as_secs_f64() * 1e3
        );
    }
}
