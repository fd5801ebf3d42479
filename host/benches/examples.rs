//! The example producer in four languages (`sdk/examples/license-header`): component size, build
//! time, and compile and run time through the host, cold and from the compiled-component cache;
//! then the whole `discern standards` run of the release binary, cold and cached. Prints a table;
//! asserts that every language measures the same value.
//!
//! Run: `cargo bench -p discern --bench examples` (env `BENCH_RUNS`, default 5). Builds the
//! examples with `sdk/examples/build.sh` into `target/examples/` first (toolchains are reused
//! from `target/example-toolchains/`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use discern::testing::runtime::{Artifacts, Limits, ProducerComponent, Runtime};
use discern::testing::snapshot::Snapshot;
use discern_tests::TestRepo;
use discern_tests::examples::{self, Built, CASES};

fn main() {
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let target = examples::workspace().join("target");
    let built = examples::build(&target.join("examples"), &target.join("example-toolchains"));
    for (language, result) in &built.built {
        match result {
            Built::Component { .. } => {}
            Built::Skipped(reason) => println!("SKIPPED {language}: {reason}"),
            Built::Failed(log) => panic!("the {language} example failed to build:\n{log}"),
        }
    }

    let repo = TestRepo::new();
    examples::write_fixture(&repo);
    repo.commit("fixture");
    let snapshot = Snapshot::open(repo.path(), "HEAD").expect("snapshot");
    let case = &CASES[0];
    let limits = Limits::default();

    println!(
        "\n{:<11} {:>12} {:>9} {:>12} {:>12} {:>9} {:>14} {:>14}",
        "language",
        "bytes",
        "build",
        "compile",
        "cache load",
        "run",
        "standards cold",
        "standards warm"
    );
    let mut values = Vec::new();
    for (language, result) in &built.built {
        let Built::Component {
            path,
            bytes,
            build_ms,
        } = result
        else {
            continue;
        };
        let component = ProducerComponent::from_file(*language, path).expect("component");

        // Compile into an empty cache, then load from that cache in a fresh runtime.
        let cache = tempfile::tempdir().expect("tempdir");
        let cold = Runtime::with_cache_dir(Some(cache.path().to_path_buf())).expect("runtime");
        let started = Instant::now();
        cold.load(&component).expect("compiles");
        let compile = started.elapsed();
        let warm = Runtime::with_cache_dir(Some(cache.path().to_path_buf())).expect("runtime");
        let started = Instant::now();
        warm.load(&component).expect("loads from the cache");
        let cache_load = started.elapsed();

        let mut value = 0.0;
        let run = median(runs, || {
            let started = Instant::now();
            let out = warm
                .run(
                    &component,
                    case.json,
                    &snapshot,
                    Arc::new(Artifacts::new()),
                    &limits,
                )
                .expect("runs");
            value = out.metrics[0].value;
            started.elapsed()
        });
        values.push((*language, value));

        let (standards_cold, standards_warm) = standards_runs(&repo, language, path, runs);
        println!(
            "{:<11} {:>12} {:>9} {:>12} {:>12} {:>9} {:>14} {:>14}",
            language,
            bytes,
            format!("{build_ms} ms"),
            ms(compile),
            ms(cache_load),
            ms(run),
            ms(standards_cold),
            ms(standards_warm),
        );
    }
    println!(
        "\nbuild: sdk/examples/build.sh, toolchain installs excluded. compile: Component::new into an \
         empty cache; cache load: the same component in a fresh runtime from that cache; run: one \
         `run` on the {}-file fixture (median of {runs}); standards: the release `discern standards` \
         with one Standard, cold = empty compile cache, warm = cached component (evidence cleared, \
         so the producer runs).",
        examples::FIXTURE_FILES
    );
    for (language, value) in &values {
        assert_eq!(
            *value, case.expected,
            "{language} measured {value}, expected {}",
            case.expected
        );
    }
}

/// `discern standards` with one Standard on this language's component: once with an empty
/// compile cache, then (median of `runs`) from the cache, clearing the evidence each time.
fn standards_runs(
    repo: &TestRepo,
    language: &str,
    wasm: &Path,
    runs: usize,
) -> (Duration, Duration) {
    let dir = repo.path();
    std::fs::create_dir_all(dir.join("build")).expect("build dir");
    std::fs::copy(wasm, dir.join("build/example.wasm")).expect("copy");
    let case = &CASES[0];
    repo.write(
        "discern.toml",
        format!(
            "[standards.{language}]\ndirection = \"down\"\nlimit = 100\nproducer = \"build/example.wasm\"\n\
             metric = \"{}\"\nconfig = {}\n",
            case.metric, case.toml
        ),
    );
    // Committed over the fixture's `build/` ignore rule: components load from the commit only.
    repo.git(&["add", "-f", "build"]);
    repo.commit(&format!("measure {language}"));
    let cache = tempfile::tempdir().expect("tempdir");
    let evidence = PathBuf::from(repo.git(&["rev-parse", "--git-common-dir"]).trim());
    let evidence = dir.join(evidence).join("discern");
    let once = || {
        let _ = std::fs::remove_dir_all(&evidence);
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_discern"));
        cmd.args(["standards", "--json"]).current_dir(dir);
        discern_tests::hermetic(&mut cmd, repo.home());
        cmd.env("DISCERN_CACHE_DIR", cache.path());
        let started = Instant::now();
        let out = cmd.output().expect("discern runs");
        let elapsed = started.elapsed();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        elapsed
    };
    let cold = once();
    let warm = median(runs, once);
    (cold, warm)
}

fn median(runs: usize, mut f: impl FnMut() -> Duration) -> Duration {
    let mut times: Vec<Duration> = (0..runs.max(1)).map(|_| f()).collect();
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}
