//! A maximum names the file behind it: `builtin:extent`'s `max_lines` and `builtin:file-size`'s
//! `max_bytes` each report one finding, the file that holds the maximum, so `--explain`, CI
//! annotations and a proposal's responsible paths name that file and no other.

use serde_json::{Value, json};

use crate::support::Fixture;

const CONFIG: &str = r#"
[standards.longest]
direction = "down"
limit = 4
producer = "builtin:extent"
config = { paths = ["src/**"] }
metric = "max_lines"

[standards.largest]
direction = "down"
limit = 1000
producer = "builtin:file-size"
config = { paths = ["src/**"] }
metric = "max_bytes"
"#;

/// The trunk's longest file (`src/lib.rs`, 4 lines) made 6 lines long on a branch that also
/// edits `src/main.rs`.
fn grown() -> Fixture {
    let fixture = Fixture::new(CONFIG);
    fixture.repo.git(&["checkout", "-q", "-b", "agent/grow"]);
    fixture.repo.write(
        "src/lib.rs",
        "// TODO: one\npub fn a() {}\n// TODO: two\npub fn b() {}\npub fn c() {}\npub fn d() {}\n",
    );
    fixture
        .repo
        .write("src/main.rs", "fn main() {\n    lib::b();\n}\n");
    fixture.repo.commit("grow");
    fixture
}

fn explained(fixture: &Fixture, name: &str) -> Vec<Value> {
    let run = fixture.run(&["standards", "--explain", name, "--json"]);
    let json = run.json();
    json["data"]["all"]
        .as_array()
        .unwrap_or_else(|| panic!("{}", run.stdout))
        .clone()
}

#[test]
fn explain_annotations_and_proposals_name_the_file_behind_a_maximum() {
    let fixture = grown();
    let longest = explained(&fixture, "longest");
    assert_eq!(longest.len(), 1, "one finding per maximum: {longest:?}");
    assert_eq!(longest[0]["path"], "src/lib.rs");
    assert_eq!(longest[0]["message"], "src/lib.rs: 6 lines");
    assert_eq!(longest[0]["new"], true, "it grew: {longest:?}");
    let text = fixture.run(&["standards", "--explain", "longest"]).stdout;
    assert!(text.contains("src/lib.rs: 6 lines"), "{text}");
    assert!(!text.contains("reported no findings"), "{text}");

    let largest = explained(&fixture, "largest");
    assert_eq!(largest.len(), 1, "{largest:?}");
    assert_eq!(largest[0]["path"], "src/lib.rs");
    let size = std::fs::metadata(fixture.path().join("src/lib.rs"))
        .unwrap()
        .len();
    assert_eq!(largest[0]["message"], format!("src/lib.rs: {size} bytes"));

    let github = fixture
        .run(&["standards", "--output-format", "github"])
        .stdout;
    let annotation = github
        .lines()
        .find(|l| l.starts_with("::error file=src/lib.rs"))
        .unwrap_or_else(|| panic!("no annotation on src/lib.rs:\n{github}"));
    assert!(annotation.contains("src/lib.rs: 6 lines"), "{annotation}");
    assert!(!github.contains("file=src/main.rs"), "{github}");

    let reason = "The parser keeps its tables inline until the generator lands.";
    let run = fixture.run(&[
        "standards",
        "propose",
        "longest",
        "--reason",
        reason,
        "--json",
    ]);
    let json = run.json();
    assert_eq!(json["ok"], true, "{}", run.stdout);
    let store = fixture
        .path()
        .join(".git/discern/standard-limit-proposals.json");
    let records: Value = serde_json::from_str(&std::fs::read_to_string(store).unwrap()).unwrap();
    let record = &records["proposals"][0];
    assert_eq!(record["standard"], "longest");
    assert_eq!(
        record["evidence_paths"],
        json!(["src/lib.rs"]),
        "the longest file alone, not every changed file: {record}"
    );
}

#[test]
fn a_longest_file_unchanged_is_no_new_finding() {
    let fixture = Fixture::new(CONFIG);
    fixture.repo.git(&["checkout", "-q", "-b", "agent/other"]);
    fixture.repo.write("src/other.rs", "pub fn o() {}\n");
    fixture.repo.commit("another file");
    let longest = explained(&fixture, "longest");
    assert_eq!(longest.len(), 1, "{longest:?}");
    assert_eq!(longest[0]["path"], "src/lib.rs");
    assert_eq!(longest[0]["new"], false, "{longest:?}");
}
