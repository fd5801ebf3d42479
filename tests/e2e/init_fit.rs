//! `discern init` on a repository shaped like real ones: generated, vendored and binary files
//! by `.gitattributes`, vendor and fixture folders, a stray file of another language, `.mts`
//! and `.cts` sources, and limits that the first measurement holds (no phantom "improved").

use serde_json::Value;

use crate::support::cache_dir;
use discern_tests::TestRepo;

fn discern(repo: &TestRepo, args: &[&str]) -> Value {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_discern"));
    cmd.args(args).current_dir(repo.path());
    discern_tests::hermetic(&mut cmd, repo.home());
    cmd.env("DISCERN_CACHE_DIR", cache_dir());
    let out = cmd.output().unwrap();
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

#[test]
fn init_fits_what_the_repository_is_and_its_first_run_holds_every_limit() {
    let repo = TestRepo::new();
    let long = "// eslint-disable-next-line\n".repeat(40);
    repo.write(
        "src/a.mts",
        "// TODO: one\nexport const a = 1;\n// @ts-ignore\n",
    )
    .write("src/b.cts", "export const b = 2;\n\n\n")
    .write("src/c.ts", "export const c = 3;\n// TODO: two\n")
    .write("src/gen/api.ts", &long)
    .write("vendor/lib.ts", &long)
    .write("test/fixtures/big.ts", &long)
    .write(
        "Formula/tool.rb",
        "# rubocop:disable all\nclass Tool\nend\n",
    )
    .write(
        ".gitattributes",
        "src/gen/** linguist-generated\n*.bin binary\n",
    );
    repo.commit("a TypeScript project");
    let init = discern(&repo, &["init", "--json"]);
    assert_eq!(init["ok"], true, "{init}");
    let text = std::fs::read_to_string(repo.path().join("discern.toml")).unwrap();
    // One Ruby formula is not a Ruby project.
    assert!(!text.contains("ruby"), "{text}");
    for exclusion in [
        ":(exclude)src/gen/**",
        ":(exclude)**/vendor/**",
        ":(exclude)**/fixtures/**",
        "**/*.mts",
        "**/*.cts",
    ] {
        assert!(text.contains(exclusion), "{exclusion} missing:\n{text}");
    }
    assert!(text.contains("counts each `eslint-disable`"), "{text}");
    let limits: Vec<(String, f64)> = init["data"]["standards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_owned(),
                s["limit"].as_f64().unwrap(),
            )
        })
        .collect();
    let limit = |name: &str| limits.iter().find(|(n, _)| n == name).map(|(_, l)| *l);
    // Generated, vendored and fixture files are not counted: one suppression, in a.mts.
    assert_eq!(limit("typescript_suppressions"), Some(1.0), "{limits:?}");
    assert_eq!(
        limit("typescript_longest_file_lines"),
        Some(3.0),
        "{limits:?}"
    );
    // 2 TODOs: a count, not a rate.
    assert_eq!(limit("todo_markers"), Some(2.0), "{limits:?}");

    repo.commit("add discern.toml");
    let run = discern(&repo, &["standards", "--json"]);
    assert_eq!(run["ok"], true, "{run}");
    for standard in run["data"]["standards"].as_array().unwrap() {
        assert_eq!(standard["verdict"], "held", "{standard}");
    }
}

#[test]
fn deleting_code_without_markers_never_fails_the_starter_standards() {
    let repo = TestRepo::new();
    repo.write("src/lib.rs", "// TODO a\nfn a() {}\nfn b() {}\n")
        .write(
            "src/more.rs",
            "fn c() {}\nfn d() {}\nfn e() {}\nfn f() {}\n",
        );
    repo.commit("seven lines");
    assert_eq!(discern(&repo, &["init", "--json"])["ok"], true);
    let text = std::fs::read_to_string(repo.path().join("discern.toml")).unwrap();
    assert!(
        text.contains("[standards.todo_markers]\ndirection = \"down\"\nlimit = 1\n"),
        "{text}"
    );
    assert!(
        !text.contains("per = "),
        "no starter Standard is a rate: {text}"
    );
    repo.commit("add discern.toml");
    // Code without a marker goes: under a rate per line this read 333 > 142 and failed.
    std::fs::remove_file(repo.path().join("src/more.rs")).unwrap();
    repo.commit("delete dead code");
    let run = discern(&repo, &["standards", "--json"]);
    assert_eq!(run["ok"], true, "{run}");
    for standard in run["data"]["standards"].as_array().unwrap() {
        assert_ne!(standard["verdict"], "regressed", "{standard}");
    }
}

/// `init` proposes the build and test jobs of the ecosystems it finds; one it cannot be sure
/// of is written commented out. No two starter Standards read the same file.
#[test]
fn init_proposes_jobs_for_the_ecosystems_it_finds() {
    let repo = TestRepo::new();
    repo.write("Cargo.toml", "[package]\nname = \"x\"\nversion = \"0.1.0\"\n")
        .write("src/lib.rs", "pub fn a() {}\n")
        .write("src/b.rs", "pub fn b() {}\n")
        .write("src/c.rs", "pub fn c() {}\n")
        .write("go.mod", "module example.com/x\n\ngo 1.22\n")
        .write(
            "package.json",
            "{\"scripts\": {\"build\": \"tsc\", \"test\": \"echo \\\"Error: no test specified\\\" && exit 1\"}}\n",
        )
        .write("pnpm-lock.yaml", "lockfileVersion: '9.0'\n")
        .write("tests/test_x.py", "def test_x():\n    assert True\n")
        .write("assets/big.bin", vec![7u8; 4096]);
    repo.commit("a polyglot project");
    assert_eq!(discern(&repo, &["init", "--json"])["ok"], true);
    let text = std::fs::read_to_string(repo.path().join("discern.toml")).unwrap();
    for enabled in [
        "[jobs.cargo_build]\nstage = \"build\"\nrun = \"cargo build --all-targets\"\n",
        "[jobs.cargo_test]\nstage = \"test\"\nrun = \"cargo test\"\n",
        "[jobs.go_test]\nstage = \"test\"\nrun = \"go test ./...\"\n",
        "[jobs.pnpm_build]\nstage = \"build\"\nrun = \"pnpm run build\"\n",
    ] {
        assert!(
            text.contains(&format!("\n{enabled}")),
            "{enabled} missing:\n{text}"
        );
    }
    for commented in ["# [jobs.pnpm_test]\n", "# [jobs.pytest]\n"] {
        assert!(text.contains(commented), "{commented} missing:\n{text}");
    }
    // The file-size Standard leaves the source to the longest-file Standard.
    assert!(
        text.contains(":(exclude)**/*.rs") && text.contains("[standards.largest_file_bytes]"),
        "{text}"
    );
    let config = discern::testing::config::Config::parse(&text).unwrap();
    let sized = config.standard("largest_file_bytes").unwrap();
    assert_eq!(
        sized.limit, 4096.0,
        "the binary asset, not a source file: {text}"
    );
}
