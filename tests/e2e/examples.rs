//! The example producer of `sdk/examples/license-header`, written in Rust, Python, JavaScript
//! and C: `sdk/examples/build.sh` installs each toolchain from its registry and builds it, then
//! every component measures the same fixture repository, through `discern standards` and
//! through the runtime, with identical results.
//!
//! A language whose toolchain cannot be installed on this machine is skipped with the reason
//! printed; a toolchain that installs but fails to build, or a component that disagrees, fails.

use std::path::PathBuf;
use std::sync::OnceLock;

use discern::testing::runtime::{Artifacts, Limits, Metric};
use discern::testing::snapshot::Snapshot;
use discern_tests::TestRepo;
use discern_tests::examples::{self, BAD_CONFIG, Built, CASES, Examples};

use crate::support::{Fixture, RUNTIME, standard};

/// Build once per test binary.
fn built() -> &'static Examples {
    static BUILT: OnceLock<Examples> = OnceLock::new();
    BUILT.get_or_init(|| {
        let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        let tools = target
            .parent()
            .expect("the target folder")
            .join("example-toolchains");
        let built = examples::build(&target.join("examples"), &tools);
        eprintln!("sdk/examples/build.sh:\n{}", built.output);
        for (language, result) in &built.built {
            match result {
                Built::Component { .. } => {}
                Built::Skipped(reason) => eprintln!("SKIPPING {language}: {reason}"),
                Built::Failed(log) => panic!("the {language} example failed to build:\n{log}"),
            }
        }
        assert!(
            matches!(built.built[0], ("rust", Built::Component { .. })),
            "the Rust example must always build: {:?}",
            built.built[0]
        );
        built
    })
}

fn fixture_repo(components: &[(&str, PathBuf)], config: &str) -> Fixture {
    let repo = TestRepo::new();
    examples::write_fixture(&repo);
    for (language, wasm) in components {
        let to = repo.path().join(format!("build/{language}.wasm"));
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(wasm, to).unwrap();
    }
    repo.write("discern.toml", config);
    // The components are committed (over the fixture's `build/` ignore rule): the gate loads a
    // component only from the measured commit's tree.
    repo.git(&["add", "-f", "build"]);
    repo.commit("fixture");
    Fixture { repo }
}

/// One test, not one per surface: the toolchain installs take minutes, and a second test would
/// hold a second test thread waiting for them while the rest of the suite could run on it; the
/// runtime then loads the components `discern standards` compiled, instead of both compiling
/// the large Python and JavaScript ones at once.
#[test]
fn the_four_languages_agree_through_discern_standards_and_the_runtime() {
    let components = built().components();
    measure_the_same_values_through_discern_standards(&components);
    return_identical_metrics_and_findings(&components);
    measure_from_a_registry_with_nothing_but_discern_toml_committed(&components);
}

/// Each language's component published to a real registry (`oci_registry.rs`) and pinned by
/// digest: a fresh clone whose only file about them is `discern.toml` measures them from an
/// empty per-user cache, as the committed components measure.
fn measure_from_a_registry_with_nothing_but_discern_toml_committed(components: &[(&str, PathBuf)]) {
    let registry = crate::oci_registry::Registry::start();
    let repo = TestRepo::new();
    examples::write_fixture(&repo);
    repo.commit("fixture");
    let fixture = Fixture { repo };
    let case = &CASES[0];
    let mut config = String::new();
    for (language, wasm) in components {
        let to = registry.reference(&format!("examples/{language}"), "1.0");
        let args = [
            "producers",
            "publish",
            wasm.to_str().unwrap(),
            "--to",
            &to,
            "--json",
        ];
        let published = fixture.run(&args).json();
        assert_eq!(published["ok"], true, "{language}: {published}");
        config.push_str(&format!(
            "[standards.{language}_{}]\ndirection = \"down\"\nlimit = 100\nproducer = \"{}\"\nmetric = \"{}\"\nconfig = {}\n\n",
            case.suffix,
            published["data"]["reference"].as_str().unwrap(),
            case.metric,
            case.toml
        ));
    }
    fixture.repo.write("discern.toml", &config);
    fixture.repo.commit("registry producers");
    let clone = fixture.repo.home().join("clone");
    let path = fixture.path().to_str().unwrap();
    fixture.git_in(
        fixture.repo.home(),
        &["clone", "-q", path, clone.to_str().unwrap()],
    );
    assert_eq!(fixture.git_out(&clone, &["ls-files", "*.wasm"]), "");
    // No fetched component in the per-user cache; the compiled code, keyed by the component's
    // bytes, is the suite's (compiling the Python and JavaScript components again would cost
    // minutes of CI and test nothing the first half did not).
    let cache = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(
        crate::support::cache_dir().join("components"),
        cache.path().join("components"),
    )
    .unwrap();
    let env = [("DISCERN_CACHE_DIR", cache.path().to_str().unwrap())];
    let json = fixture
        .run_in(&clone, &["standards", "--json"], &env)
        .json();
    assert_eq!(json["ok"], true, "{json}");
    for (language, _) in components {
        let standard = standard(&json, &format!("{language}_{}", case.suffix));
        assert_eq!(
            standard["value"].as_f64(),
            Some(case.expected),
            "{language}: {standard}"
        );
    }
}

fn measure_the_same_values_through_discern_standards(components: &[(&str, PathBuf)]) {
    let mut config = String::new();
    for (language, _) in components {
        for case in CASES {
            let (direction, limit) = if case.metric == "files_without_header" {
                ("down", 100)
            } else {
                ("up", 0)
            };
            config.push_str(&format!(
                "[standards.{language}_{}]\ndirection = \"{direction}\"\nlimit = {limit}\n\
                 producer = \"build/{language}.wasm\"\nmetric = \"{}\"\nconfig = {}\n\n",
                case.suffix, case.metric, case.toml
            ));
        }
    }
    let fixture = fixture_repo(components, &config);
    let run = fixture.run(&["standards", "--json"]);
    let json = run.json();

    for case in CASES {
        for (language, _) in components {
            let standard = standard(&json, &format!("{language}_{}", case.suffix));
            assert_eq!(
                standard["value"].as_f64(),
                Some(case.expected),
                "{language} measured {} differently: {standard}",
                case.suffix
            );
        }
    }
    assert_eq!(json["ok"], true, "{json}");

    // A config the schema every language publishes refuses is refused before anything runs,
    // one diagnostic per Standard, with its line.
    let mut bad = String::new();
    for (language, _) in components {
        bad.push_str(&format!(
            "[standards.{language}_bad]\ndirection = \"down\"\nlimit = 1\n\
             producer = \"build/{language}.wasm\"\nmetric = \"files_without_header\"\nconfig = {}\n\n",
            BAD_CONFIG.0
        ));
    }
    // In a repository of its own, first commit: new Standards that run a repository component
    // are protected changes on a trunk that already has a config, refused before their
    // configs are read.
    let fixture = fixture_repo(components, &bad);
    let json = fixture.run(&["standards", "--json"]).json();
    assert_eq!(json["error"], "invalid_config", "{json}");
    for (language, _) in components {
        let needs =
            format!("[standards.{language}_bad] config: build/{language}.wasm needs config.paths");
        assert!(
            json["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .any(|d| d["message"].as_str().unwrap().ends_with(&needs)),
            "{language}: {json}"
        );
    }
}

fn return_identical_metrics_and_findings(components: &[(&str, PathBuf)]) {
    let fixture = fixture_repo(components, "");
    let snapshot = Snapshot::open(fixture.path(), "HEAD").unwrap();
    let limits = Limits::default();
    let measure = |wasm: &PathBuf, config: &str| -> Vec<Metric> {
        let component =
            discern::testing::runtime::ProducerComponent::from_file("example", wasm).unwrap();
        RUNTIME
            .run(
                &component,
                config,
                &snapshot,
                std::sync::Arc::new(Artifacts::new()),
                &limits,
            )
            .unwrap_or_else(|e| panic!("{}: {e}", wasm.display()))
            .metrics
    };

    let (_, reference_wasm) = &components[0];
    for case in CASES {
        let reference = measure(reference_wasm, case.json);
        let names: Vec<_> = reference.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["files_without_header", "license_header_share"]);
        let missing = &reference[0];
        assert!(
            missing
                .findings
                .iter()
                .all(|f| f.path.as_deref() == Some(f.fingerprint.as_str())
                    && f.message.starts_with(&f.fingerprint)),
            "{missing:?}"
        );
        for (language, wasm) in &components[1..] {
            assert_eq!(
                measure(wasm, case.json),
                reference,
                "{language} disagrees with Rust on {}",
                case.suffix
            );
        }
    }
    // Each producer refuses a bad config itself too (a host that did not check the schema).
    for (language, wasm) in components {
        let component =
            discern::testing::runtime::ProducerComponent::from_file("example", wasm).unwrap();
        let error = RUNTIME
            .run(
                &component,
                r#"{"lines":6}"#,
                &snapshot,
                std::sync::Arc::new(Artifacts::new()),
                &limits,
            )
            .expect_err("refused");
        assert!(
            error.to_string().contains(BAD_CONFIG.1),
            "{language}: {error}"
        );
    }
    // describe() agrees too: name, version, metrics and the config schema.
    let describe = |wasm: &PathBuf| {
        RUNTIME
            .describe(
                &discern::testing::runtime::ProducerComponent::from_file("example", wasm).unwrap(),
            )
            .unwrap()
    };
    let reference = describe(reference_wasm);
    for (language, wasm) in &components[1..] {
        assert_eq!(
            describe(wasm),
            reference,
            "{language} describes itself differently"
        );
    }
}
