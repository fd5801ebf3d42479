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
    // 2 TODOs over 8 lines, per 1,000: a rate that rounding would have turned into a gain.
    assert_eq!(limit("todo_density"), Some(250.0), "{limits:?}");

    repo.commit("add discern.toml");
    let run = discern(&repo, &["standards", "--json"]);
    assert_eq!(run["ok"], true, "{run}");
    for standard in run["data"]["standards"].as_array().unwrap() {
        assert_eq!(standard["verdict"], "held", "{standard}");
    }
}

#[test]
fn a_rate_that_is_not_round_is_held_on_the_first_run() {
    let repo = TestRepo::new();
    repo.write("src/lib.rs", "// TODO a\nfn a() {}\nfn b() {}\n")
        .write(
            "src/more.rs",
            "fn c() {}\nfn d() {}\nfn e() {}\nfn f() {}\n",
        );
    repo.commit("seven lines");
    assert_eq!(discern(&repo, &["init", "--json"])["ok"], true);
    let text = std::fs::read_to_string(repo.path().join("discern.toml")).unwrap();
    assert!(text.contains("limit = 142.85714285714286"), "{text}");
    repo.commit("add discern.toml");
    let run = discern(&repo, &["standards", "--json"]);
    for standard in run["data"]["standards"].as_array().unwrap() {
        assert_eq!(standard["verdict"], "held", "{standard}");
    }
}
