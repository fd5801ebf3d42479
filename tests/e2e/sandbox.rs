//! Hostile producers: every attack ends in a clean error that names the producer and the
//! limit; the host survives, and the next producer in the same process runs normally.

use std::time::Duration;

use discern::testing::runtime::{Limits, ProducerComponent, ProducerError, ProducerErrorKind};
use discern::testing::snapshot::Snapshot;
use discern_tests::TestRepo;
use serde_json::json;

use crate::support::{RUNTIME, builtin, hostile, run, value};

fn snapshot() -> (TestRepo, Snapshot) {
    let repo = TestRepo::new();
    repo.write("a.txt", "hello\n").write("dir/b.txt", "world\n");
    repo.commit("fixture");
    let snapshot = Snapshot::open(repo.path(), "HEAD").unwrap();
    (repo, snapshot)
}

/// Run the hostile producer in `mode`, expect a failure, and check that the same runtime
/// still runs a well-behaved producer right after.
fn attack(mode: &str, limits: &Limits) -> ProducerError {
    let (_repo, snapshot) = snapshot();
    let err = run(&hostile(), json!({"mode": mode}), &snapshot, limits)
        .expect_err("the attack must fail");
    assert_eq!(err.producer, "tests/hostile.wasm");
    let message = err.to_string();
    assert!(
        message.starts_with("producer tests/hostile.wasm "),
        "{message}"
    );
    let ok = run(
        &hostile(),
        json!({"mode": "ok"}),
        &snapshot,
        &Limits::default(),
    )
    .expect("the next producer runs normally");
    assert_eq!(value(&ok, "ok"), 1.0);
    let extent = run(
        &builtin("extent"),
        json!({"paths": ["**"]}),
        &snapshot,
        &Limits::default(),
    )
    .expect("a built-in runs normally");
    assert_eq!(value(&extent, "files"), 2.0);
    err
}

#[test]
fn filesystem_and_network_escapes_are_denied() {
    let err = attack("escape", &Limits::default());
    let ProducerErrorKind::Reported(message) = &err.kind else {
        panic!("expected the producer's own report of denials, got {err}");
    };
    assert!(
        message.starts_with("sandbox denied every escape"),
        "{message}"
    );
    assert!(!message.contains("ESCAPED"), "{message}");
    assert!(message.contains("/etc/passwd"), "{message}");
}

#[test]
fn the_environment_is_empty_and_deterministic() {
    let (_repo, snapshot) = snapshot();
    let probe = || {
        run(
            &hostile(),
            json!({"mode": "probe"}),
            &snapshot,
            &Limits::default(),
        )
        .unwrap()
    };
    let (first, second) = (probe(), probe());
    assert_eq!(value(&first, "env_vars"), 0.0);
    assert_eq!(value(&first, "args"), 0.0);
    assert_eq!(value(&first, "stdin_bytes"), 0.0);
    assert_eq!(value(&first, "root_listable"), 0.0);
    assert_eq!(value(&first, "wall_clock_secs"), 946_684_800.0);
    assert_eq!(value(&first, "monotonic_elapsed_nanos"), 0.0);
    assert_eq!(first.metrics, second.metrics, "same inputs, same output");
    assert_eq!(
        first.fuel_consumed, second.fuel_consumed,
        "fuel is deterministic"
    );
}

#[test]
fn an_endless_loop_exhausts_its_fuel() {
    let err = attack("loop", &Limits::with_timeout(Duration::from_millis(500)));
    assert_eq!(
        err.kind,
        ProducerErrorKind::Fuel {
            timeout: Duration::from_millis(500)
        }
    );
    assert!(
        err.to_string()
            .contains("exhausted its CPU budget (fuel for a 0.50 s timeout)")
    );
}

#[test]
fn unbounded_allocation_hits_the_memory_limit() {
    let limits = Limits {
        memory_bytes: 64 << 20,
        ..Limits::default()
    };
    let err = attack("alloc", &limits);
    assert_eq!(
        err.kind,
        ProducerErrorKind::Memory {
            limit_bytes: 64 << 20
        }
    );
    assert!(
        err.to_string()
            .contains("more than its memory limit of 64 MiB")
    );
}

#[test]
fn runaway_recursion_overflows_the_stack_cleanly() {
    let err = attack("recurse", &Limits::default());
    assert!(
        matches!(err.kind, ProducerErrorKind::StackOverflow { .. }),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("overflowed its call stack (limit: 1024 KiB")
    );
}

#[test]
fn overflowing_a_stack_in_linear_memory_is_a_clean_trap() {
    let err = attack("recurse-shadow", &Limits::default());
    assert_eq!(
        err.to_string(),
        "producer tests/hostile.wasm trapped: out of bounds memory access (a producer that \
         overflows its stack in linear memory, as Rust and C producers do with large locals, traps this way)"
    );
}

#[test]
fn nan_is_refused() {
    let err = attack("nan", &Limits::default());
    assert_eq!(
        err.to_string(),
        "producer tests/hostile.wasm returned invalid output: metric ok is NaN (values must be finite numbers)"
    );
}

#[test]
fn a_million_metrics_are_refused() {
    let err = attack("million", &Limits::default());
    assert!(
        err.to_string()
            .contains("returned invalid output: 1000000 metrics (limit: 10000)"),
        "{err}"
    );
}

#[test]
fn findings_past_the_cap_are_counted_not_kept_and_long_names_are_refused() {
    // 100,001 findings: the first 100,000 are kept (every fingerprint), the last is counted,
    // and the swap check of a Standard reading it is unverified, never guessed.
    let (_repo, snapshot) = snapshot();
    let output = run(
        &hostile(),
        json!({"mode": "findings"}),
        &snapshot,
        &Limits::default(),
    )
    .expect("findings past the cap are not a failure");
    let metric = &output.metrics[0];
    assert_eq!(
        metric.findings.len(),
        discern::testing::runtime::MAX_FINDINGS
    );
    assert_eq!(metric.findings_dropped, 1);
    let err = attack("long-name", &Limits::default());
    assert!(
        err.to_string().contains("is 129 bytes (limit: 128)"),
        "{err}"
    );
}

#[test]
fn a_panic_is_reported_with_its_message() {
    let err = attack("panic", &Limits::default());
    let ProducerErrorKind::Panic(message) = &err.kind else {
        panic!("expected a panic, got {err}");
    };
    assert!(
        message.starts_with("hostile producer panicked on purpose"),
        "{message}"
    );
    assert!(err.stderr.as_deref().unwrap_or("").contains("panicked"));
}

#[test]
fn flooding_stderr_stops_at_the_limit_and_keeps_the_log() {
    let err = attack("stderr", &Limits::default());
    assert_eq!(
        err.kind,
        ProducerErrorKind::StderrLimit {
            limit_bytes: 64 << 10
        }
    );
    assert!(
        err.to_string()
            .contains("wrote more than its stderr limit of 64 KiB")
    );
    let log = err.stderr.as_deref().unwrap();
    assert_eq!(log.len(), 64 << 10);
    assert!(log.starts_with("flooding stderr"));
    // The rendered error shows only the tail of the log.
    assert!(err.to_string().lines().count() <= 25);
}

#[test]
fn sleeping_is_refused_instead_of_blocking_the_host() {
    let err = attack("sleep", &Limits::default());
    assert_eq!(err.kind, ProducerErrorKind::Sleep);
}

#[test]
fn exiting_is_an_error_not_a_host_exit() {
    let err = attack("exit", &Limits::default());
    assert!(matches!(err.kind, ProducerErrorKind::Exit(_)), "{err}");
}

#[test]
fn a_component_for_a_newer_contract_is_refused_before_linking() {
    let future = ProducerComponent::new("producers/future.wasm", discern_tests::FUTURE_WIT_WASM);
    let err = RUNTIME.describe(&future).unwrap_err();
    assert_eq!(
        err.to_string(),
        "producer producers/future.wasm was built against discern:producer@1.0.0, newer than this \
         discern supports (0.1.x, 0.2.x): upgrade discern, or rebuild the producer against wit/v0.2"
    );
}

#[test]
fn garbage_and_plain_modules_are_refused() {
    let junk = ProducerComponent::new("junk.wasm", b"not wasm at all".to_vec());
    let err = RUNTIME.describe(&junk).unwrap_err();
    assert!(matches!(err.kind, ProducerErrorKind::Malformed(_)), "{err}");
    assert!(
        err.to_string()
            .starts_with("producer junk.wasm is not a valid WebAssembly component")
    );

    // A core module (what `wasm32-unknown-unknown` or wasip1 produce) is not a component.
    let core_module = b"\0asm\x01\0\0\0".to_vec();
    let err = RUNTIME
        .describe(&ProducerComponent::new("core.wasm", core_module))
        .unwrap_err();
    assert!(matches!(err.kind, ProducerErrorKind::Malformed(_)), "{err}");
}

/// A glob of the Standard's own config that is no pathspec is named with its key and what is
/// wrong with it, never as a broken sandbox contract.
#[test]
fn a_bad_glob_in_the_config_names_its_key_and_the_problem() {
    let (_repo, snapshot) = snapshot();
    let config = json!({"paths": ["dir/**", "/home/me/repo/src/**"]});
    let err = run(&builtin("extent"), config, &snapshot, &Limits::default())
        .expect_err("an absolute path is no pathspec");
    let message = err.to_string();
    assert!(
        matches!(&err.kind, ProducerErrorKind::BadPathspec { key: Some(k), .. } if k == "config.paths[1]"),
        "{message}"
    );
    assert!(message.contains("`config.paths[1]`"), "{message}");
    assert!(message.contains("is an absolute path"), "{message}");
    assert!(!message.contains("sandbox contract"), "{message}");
}
