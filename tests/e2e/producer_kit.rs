//! The producer kit: `discern producers` lists the repository's components beside the
//! built-ins and shows one with its config schema; `producers new` scaffolds a producer that
//! builds; `producers run` runs it against a commit; a component's published schema is held
//! before anything runs; `DISCERN_TRACE` names reused readings and `standards --fresh` measures
//! afresh.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

use crate::support::config::{Config, Standard};
use crate::support::{Fixture, Run, cache_dir, standard};

/// Paths, digests, sizes and commits change from run to run; the contract is their shape.
macro_rules! assert_kit_snapshot {
    ($name:literal, $text:expr, $root:expr) => {
        let root = $root.display().to_string();
        insta::with_settings!({filters => vec![
            (root.as_str(), "[dir]"),
            (r"[0-9a-f]{64}", "[sha256]"),
            (r"sha256:[0-9a-f]{12}", "sha256:[sha256]"),
            (r"[0-9a-f]{40}", "[commit]"),
            (r"\b[0-9a-f]{12}\b", "[short]"),
            (r#""bytes": \d+"#, r#""bytes": "[size]""#),
            (r#""fuel_consumed": \d+"#, r#""fuel_consumed": "[fuel]""#),
        ]}, {
            insta::assert_snapshot!($name, $text);
        });
    };
}

/// `discern ARGS` in `dir` (outside any repository), hermetically.
fn discern_in(dir: &Path, args: &[&str]) -> Run {
    let home = tempfile::tempdir().unwrap();
    let out = discern_tests::discern(
        Path::new(env!("CARGO_BIN_EXE_discern")),
        dir,
        home.path(),
        &cache_dir(),
        args,
    );
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

/// The Rust scaffold `word-count`, written by `producers new` and built to a component once per
/// test process: the path of its `.wasm`. Each process (a test runner may run tests in several)
/// scaffolds into a folder of its own; the builds share one target folder, one at a time, and
/// each copies its component out before the next build can replace it.
fn scaffolded() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        let parent = target.join(format!("producer-kit/{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&parent);
        std::fs::create_dir_all(&parent).unwrap();
        let run = discern_in(
            &parent,
            &["producers", "new", "word-count", "--lang", "rust", "--json"],
        );
        assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
        let json = run.json();
        assert_eq!(
            json["data"]["files"],
            serde_json::json!(["Cargo.toml", "src/lib.rs", "README.md", ".gitignore"])
        );
        let dir = parent.join("word-count");
        // The workspace's lock pins the versions this machine already has, so the build needs
        // no registry; a user's first build resolves them.
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        std::fs::copy(workspace.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
        let lock = std::fs::File::create(target.join("producer-kit/.lock")).unwrap();
        lock.lock().unwrap();
        let out = Command::new(env!("CARGO"))
            .args([
                "build",
                "--offline",
                "--quiet",
                "--target",
                "wasm32-wasip2",
                "--release",
            ])
            .arg("--target-dir")
            .arg(target.join("producer-kit-target"))
            .current_dir(&dir)
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            // CI builds the suite with clippy as the workspace wrapper (.ci/run); a user's
            // build of the scaffold has no wrapper.
            .env_remove("RUSTC_WORKSPACE_WRAPPER")
            .env_remove("CLIPPY_ARGS")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "the scaffold does not build:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let wasm = parent.join("word_count.wasm");
        std::fs::copy(
            target.join("producer-kit-target/wasm32-wasip2/release/word_count.wasm"),
            &wasm,
        )
        .unwrap();
        wasm
    })
}

/// A repository with 2 files lacking the header (`src/lib.rs`, `src/main.rs`) at HEAD~1 and a
/// third carrying it at HEAD.
fn licensed_fixture(config: &str) -> Fixture {
    let fixture = Fixture::new(config);
    fixture.repo.write(
        "src/licensed.rs",
        "// SPDX-License-Identifier: MIT\npub fn c() {}\n",
    );
    fixture.repo.commit("a licensed file");
    fixture
}

fn component_in(fixture: &Fixture) -> String {
    let to = fixture.path().join("tools/word-count.wasm");
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(scaffolded(), &to).unwrap();
    // On a branch: a component the trunk did not have is a protected change there.
    fixture
        .repo
        .git(&["checkout", "-q", "-b", "agent/component"]);
    fixture.repo.commit("the component");
    "tools/word-count.wasm".to_owned()
}

fn metric(json: &Value, name: &str) -> f64 {
    json["data"]["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("no metric {name} in {json}"))["value"]
        .as_f64()
        .unwrap()
}

#[test]
fn the_rust_scaffold_builds_and_runs_against_a_commit() {
    let wasm = scaffolded().to_str().unwrap().to_owned();
    let fixture = licensed_fixture("");
    let config = r#"{"paths":["src/**"]}"#;
    let run = fixture.run(&["producers", "run", &wasm, "--config", config, "--json"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let json = run.json();
    assert_eq!(json["data"]["name"], "word-count", "{json}");
    assert_eq!(json["data"]["commit"], fixture.repo.head());
    assert_eq!(metric(&json, "files_without_header"), 2.0);
    assert!((metric(&json, "license_header_share") - 1.0 / 3.0).abs() < 1e-12);
    assert_eq!(
        json["data"]["metrics"][0]["findings"][0]["path"],
        "src/lib.rs"
    );

    // Another commit, and the work tree: nothing is recorded or edited.
    let before = fixture.run(&[
        "producers",
        "run",
        &wasm,
        "--config",
        config,
        "--rev",
        "HEAD~1",
        "--json",
    ]);
    assert_eq!(metric(&before.json(), "license_header_share"), 0.0);
    fixture.repo.write("src/draft.rs", "fn draft() {}\n");
    let forced = fixture.run(&[
        "producers",
        "run",
        &wasm,
        "--config",
        config,
        "--force",
        "--json",
    ]);
    assert_eq!(metric(&forced.json(), "files_without_header"), 3.0);
    assert!(!fixture.path().join(".git/discern/evidence").exists());
    assert_eq!(
        fixture.git_out(fixture.path(), &["status", "--porcelain"]),
        "?? src/draft.rs"
    );

    let text = fixture.run(&["producers", "run", &wasm, "--config", config]);
    assert_kit_snapshot!(
        "run_human",
        text.stdout.replace(&wasm, "[wasm]"),
        fixture.path()
    );
}

#[test]
fn producers_run_refuses_what_cannot_run_and_says_what_gets_past_it() {
    let wasm = scaffolded().to_str().unwrap().to_owned();
    let fixture = licensed_fixture("");
    fixture.repo.write("garbage.wasm", "not a component");
    let cases: [(&[&str], &str, i32, &str); 6] = [
        (
            &["producers", "run", "missing.wasm"],
            "not_found",
            1,
            "Build it first",
        ),
        (
            &["producers", "run", &wasm, "--config", "{paths"],
            "invalid_arguments",
            2,
            "--config '{",
        ),
        (
            &["producers", "run", &wasm, "--config", "[1]"],
            "invalid_arguments",
            2,
            "one JSON object",
        ),
        (
            &["producers", "run", "garbage.wasm"],
            "producer_failed",
            1,
            "discern producers new",
        ),
        (
            &["producers", "run", &wasm, "--rev", "nope"],
            "not_found",
            1,
            "--force",
        ),
        (
            &[
                "producers",
                "run",
                &wasm,
                "--config",
                r#"{"paths":["src/**"],"lines":0}"#,
            ],
            "invalid_config",
            1,
            "discern producers PATH.wasm",
        ),
    ];
    for (args, slug, code, hint) in cases {
        let mut args = args.to_vec();
        args.push("--json");
        let run = fixture.run(&args);
        let json = run.json();
        assert_eq!(
            (json["error"].as_str(), run.code),
            (Some(slug), code),
            "{args:?}: {json}"
        );
        let hint_text = json["hints"][0]["text"].as_str().unwrap().to_owned()
            + &json["hints"][0]["action"].to_string();
        let rendered = fixture.run(&args[..args.len() - 1]).stdout;
        assert!(
            hint_text.contains(hint) || rendered.contains(hint),
            "{args:?}: {rendered}"
        );
    }
    let bad_config = fixture
        .run(&[
            "producers",
            "run",
            &wasm,
            "--config",
            r#"{"paths":["src/**"],"lines":0}"#,
            "--json",
        ])
        .json();
    let diagnostic = bad_config["diagnostics"][0]["message"].as_str().unwrap();
    assert!(diagnostic.starts_with("config.lines: "), "{diagnostic}");
    assert!(
        diagnostic.contains("an integer from 1 to 1000000"),
        "{diagnostic}"
    );
}

#[test]
fn producers_lists_the_repository_components_and_a_broken_one_is_a_row() {
    let config = "[standards.headers]\ndirection = \"down\"\nlimit = 5\nproducer = \"tools/word-count.wasm\"\n\
                  metric = \"files_without_header\"\nconfig = { paths = [\"src/**\"] }\n\n\
                  [standards.gone]\ndirection = \"down\"\nlimit = 5\nproducer = \"tools/missing.wasm\"\n";
    let fixture = licensed_fixture(config);
    component_in(&fixture);
    let run = fixture.run(&["producers", "--json"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let json = run.json();
    let rows = json["data"]["producers"].as_array().unwrap();
    let builtins = rows.iter().filter(|r| r["source"] == "builtin").count();
    assert_eq!(
        builtins,
        discern::testing::builtins::BUILTINS.len(),
        "{json}"
    );
    assert_eq!(rows.len(), builtins + 2, "{json}");
    let component = &rows[builtins + 1];
    assert_eq!(component["name"], "tools/word-count.wasm");
    assert_eq!(component["source"], "repository");
    assert_eq!(component["standards"], serde_json::json!(["headers"]));
    assert_eq!(component["config_schema"], true);
    let missing = &rows[builtins];
    assert_eq!(missing["name"], "tools/missing.wasm");
    assert!(
        missing["error"].as_str().unwrap().contains(
            "tools/missing.wasm does not exist in the measured commit nor in the work tree"
        ),
        "{missing}"
    );
    assert_kit_snapshot!("list_json", run.stdout, fixture.path());
    let text = fixture.run(&["producers"]);
    assert_kit_snapshot!("list_human", text.stdout, fixture.path());

    // One producer: by its path or by the Standard that uses it, with its schema.
    let by_standard = fixture.run(&["producers", "headers", "--json"]).json();
    let by_path = fixture
        .run(&["producers", "tools/word-count.wasm", "--json"])
        .json();
    assert_eq!(by_standard["data"], by_path["data"]);
    assert_eq!(
        by_path["data"]["config_schema"]["required"],
        serde_json::json!(["paths"])
    );
    assert_kit_snapshot!(
        "show_component_human",
        fixture.run(&["producers", "headers"]).stdout,
        fixture.path()
    );
    let unknown = fixture.run(&["producers", "nothing-here", "--json"]).json();
    assert_eq!(unknown["error"], "not_found", "{unknown}");
}

#[test]
fn producers_shows_a_builtin_with_its_schema() {
    let dir = tempfile::tempdir().unwrap();
    let run = discern_in(dir.path(), &["producers", "builtin:pattern"]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_kit_snapshot!("show_builtin_human", run.stdout, dir.path());
    let json = discern_in(dir.path(), &["producers", "pattern", "--json"]).json();
    assert_eq!(json["data"]["producer"]["name"], "builtin:pattern");
    assert_eq!(
        json["data"]["config_schema"]["required"],
        serde_json::json!(["pattern", "paths"])
    );
}

#[test]
fn a_components_published_schema_is_held_before_anything_runs() {
    let config = "[standards.headers]\ndirection = \"down\"\nlimit = 5\nproducer = \"tools/word-count.wasm\"\n\
                  metric = \"files_without_header\"\n\n[standards.headers.config]\npaths = [\"src/**\"]\n\
                  lines = 0\ncolour = \"red\"\n";
    let fixture = licensed_fixture(config);
    component_in(&fixture);
    let run = fixture.run(&["standards", "--json"]);
    let json = run.json();
    assert_eq!(
        (json["error"].as_str(), run.code),
        (Some("invalid_config"), 1),
        "{json}"
    );
    let messages: Vec<&str> = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["message"].as_str().unwrap())
        .collect();
    assert_eq!(
        messages,
        [
            "discern.toml:10: [standards.headers] config.colour: is not a config key of tools/word-count.wasm (allowed: paths, marker, lines)"
        ],
        "{json}"
    );
    let fixture = licensed_fixture(&config.replace(
        "colour = \"red\"
",
        "",
    ));
    component_in(&fixture);
    let json = fixture.run(&["standards", "--json"]).json();
    let message = json["diagnostics"][0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("discern.toml:9: [standards.headers] config.lines: "),
        "{json}"
    );
    assert!(
        message.contains("an integer from 1 to 1000000"),
        "{message}"
    );
    assert!(
        !fixture.path().join(".git/discern/evidence").exists(),
        "nothing ran"
    );

    let fixture = licensed_fixture(&config.replace(
        "lines = 0
colour = \"red\"
",
        "lines = 6
",
    ));
    component_in(&fixture);
    let json = fixture.run(&["standards", "--json"]).json();
    assert_eq!(standard(&json, "headers")["value"], 2.0, "{json}");
}

fn trace_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn the_trace_names_reused_readings_and_fresh_measures_again() {
    let fixture = Fixture::new(Config::new().standard(Standard::todo(5)));
    let trace = fixture.repo.parent().join("trace.jsonl");
    let env = [("DISCERN_TRACE", trace.to_str().unwrap())];
    let first = fixture.run_with(&["standards", "--json"], &env).json();
    assert_eq!(standard(&first, "todo")["measurement"], "measured");
    assert!(trace_lines(&trace).iter().all(|l| l["call"] != "reused"));

    std::fs::remove_file(&trace).unwrap();
    let again = fixture.run_with(&["standards", "--json"], &env).json();
    assert_eq!(standard(&again, "todo")["measurement"], "reused");
    let lines = trace_lines(&trace);
    assert_eq!(lines.len(), 1, "a reuse makes no call: {lines:?}");
    let reused = &lines[0];
    assert_eq!(reused["call"], "reused");
    assert_eq!(reused["producer"], "builtin:pattern");
    assert_eq!(reused["argument"]["standards"], serde_json::json!(["todo"]));
    assert_eq!(reused["argument"]["reused_from"], fixture.repo.head());
    let key = reused["argument"]["evidence_key"].as_str().unwrap();
    assert!(
        fixture
            .path()
            .join(".git/discern/evidence")
            .join(key)
            .is_dir(),
        "{key}"
    );

    std::fs::remove_file(&trace).unwrap();
    let fresh = fixture
        .run_with(&["standards", "--fresh", "--json"], &env)
        .json();
    assert_eq!(
        standard(&fresh, "todo")["measurement"],
        "measured",
        "{fresh}"
    );
    let lines = trace_lines(&trace);
    assert!(lines.iter().any(|l| l["call"] == "files"), "{lines:?}");
    assert!(lines.iter().all(|l| l["call"] != "reused"), "{lines:?}");
    // What --fresh measured is the evidence now.
    let after = fixture.run(&["standards", "--json"]).json();
    assert_eq!(standard(&after, "todo")["measurement"], "reused");

    let pin = fixture.run(&["standards", "--pin", "--fresh", "--json"]);
    assert_eq!(
        (pin.json()["error"].as_str(), pin.code),
        (Some("invalid_arguments"), 2)
    );
}

#[test]
fn producers_new_refuses_a_taken_folder_and_a_bad_name_and_writes_every_language() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("taken")).unwrap();
    std::fs::write(dir.path().join("taken/keep.txt"), "mine").unwrap();
    let taken = discern_in(
        dir.path(),
        &["producers", "new", "taken", "--lang", "python", "--json"],
    );
    assert_eq!(
        (taken.json()["error"].as_str(), taken.code),
        (Some("already_exists"), 1)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("taken/keep.txt")).unwrap(),
        "mine"
    );
    for bad in ["Bad", "a_b", "9x", "x-", "a--b", "", "test"] {
        let run = discern_in(
            dir.path(),
            &["producers", "new", bad, "--lang", "c", "--json"],
        );
        assert_eq!(
            (run.json()["error"].as_str(), run.code),
            (Some("invalid_arguments"), 2),
            "{bad:?}"
        );
    }
    let expected: [(&str, &str, &[&str]); 3] = [
        (
            "python",
            "my-python",
            &["app.py", "wit/producer.wit", "README.md", ".gitignore"],
        ),
        (
            "javascript",
            "my-js",
            &[
                "producer.js",
                "build.mjs",
                "package.json",
                "package-lock.json",
                "wit/producer.wit",
                "README.md",
                ".gitignore",
            ],
        ),
        (
            "c",
            "my-c",
            &[
                "my_c.c",
                "json.c",
                "json.h",
                "wit/producer.wit",
                "README.md",
                ".gitignore",
            ],
        ),
    ];
    for (lang, name, files) in expected {
        let run = discern_in(
            dir.path(),
            &["producers", "new", name, "--lang", lang, "--json"],
        );
        assert_eq!(run.code, 0, "{}", run.stdout);
        assert_eq!(
            run.json()["data"]["files"],
            serde_json::json!(files),
            "{lang}"
        );
        let source = std::fs::read_to_string(dir.path().join(name).join(files[0])).unwrap();
        assert!(source.contains(name), "{lang}: the name is put in");
        assert!(!source.contains("license-header\""), "{lang}");
        let ignored = std::fs::read_to_string(dir.path().join(name).join(".gitignore")).unwrap();
        let output = match lang {
            "python" => "__pycache__/",
            "javascript" => "node_modules/",
            _ => "gen/",
        };
        assert!(ignored.contains(output), "{lang}: {ignored}");
        let readme = std::fs::read_to_string(dir.path().join(name).join("README.md")).unwrap();
        assert!(
            readme.contains("**Publish it**") && readme.contains("discern producers publish"),
            "{lang}: {readme}"
        );
    }
}

/// Each guide quotes the example's files whole (between `<!-- example: PATH -->` and
/// `<!-- /example -->`), as `producers new` writes them: checked here, so a guide never shows an
/// example that has moved on. `DISCERN_REGENERATE=1` rewrites the quotes.
#[test]
fn the_guides_quote_the_example_as_it_is() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let example = root.join("sdk/examples/license-header");
    let mut quoted = 0;
    for guide in ["rust", "python", "javascript", "c"] {
        let path = root.join(format!("sdk/guides/{guide}.md"));
        let text = std::fs::read_to_string(&path).unwrap();
        let mut fresh = String::new();
        let mut rest = text.as_str();
        while let Some(start) = rest.find("<!-- example: ") {
            let (before, from) = rest.split_at(start);
            let header_end = from.find(" -->\n").unwrap() + " -->\n".len();
            let file = from["<!-- example: ".len()..header_end - " -->\n".len()].to_owned();
            let fence = from[header_end..].lines().next().unwrap().to_owned();
            let end = from.find("<!-- /example -->").unwrap();
            let source = std::fs::read_to_string(example.join(&file)).unwrap();
            fresh.push_str(before);
            fresh.push_str(&format!("<!-- example: {file} -->\n{fence}\n{source}```\n"));
            rest = &from[end..];
            quoted += 1;
        }
        fresh.push_str(rest);
        if std::env::var_os("DISCERN_REGENERATE").is_some() {
            std::fs::write(&path, &fresh).unwrap();
        }
        assert!(
            fresh == text,
            "sdk/guides/{guide}.md quotes a stale example: regenerate it with `DISCERN_REGENERATE=1 cargo test --test e2e guides_quote`"
        );
    }
    assert_eq!(
        quoted, 5,
        "rust, python, javascript (2) and c quote their sources"
    );
}
