//! Class 20 (issue 44, class 1): the repository's own code runs in the clone — a job a
//! Standard needs, the gate's test job — and rewrites an object of the snapshot in place,
//! under the same id, so that a producer reading it afterwards counts nothing. Every Standard
//! that needs no job is measured before the first job starts; one that needs a job reads
//! objects re-hashed as they are read, and a rewritten one fails it.

use std::path::Path;

use serde_json::Value;

use super::*;
use crate::support::config::Config;
use crate::support::{Fixture, standard};

/// The trunk's tests: every `tests/*.sh` of the repository runs, and the job reports how many
/// failed (a Standard `needs` it, so it runs in CI).
const TESTS_JOB: &str = r#"
[jobs.tests]
stage = "test"
run = 'n=0; for t in tests/*.sh; do [ -e "$t" ] || continue; sh "$t" || n=$((n+1)); done; printf "DISCERN_METRIC failures %s\n" "$n"'

[standards.failures]
direction = "down"
limit = 0
producer = "builtin:discern-metric"
needs = ["jobs.tests"]
"#;

/// A test script of the pull request: it points the object id of `$1` at the bytes of `$2` —
/// in a pack, by rewriting the index's offset in place (a reader that mapped it sees the new
/// value); loose, by copying the object file over — so that the blob the tree names reads
/// back as another file's content.
const REWRITE_SH: &str = r#"target=$(git rev-parse "HEAD:$1") source=$(git rev-parse "HEAD:$2") || exit 0
exec perl -e '
my ($target, $source) = @ARGV;
my $loose = sub { ".git/objects/" . substr($_[0], 0, 2) . "/" . substr($_[0], 2) };
if (-e $loose->($target) && -e $loose->($source)) {
  chmod 0644, $loose->($target);
  open(my $in, "<:raw", $loose->($source)) or die; local $/; my $bytes = <$in>;
  open(my $out, "+<:raw", $loose->($target)) or die; truncate($out, 0); print $out $bytes; exit 0;
}
for my $idx (glob(".git/objects/pack/*.idx")) {
  chmod 0644, $idx;
  open(my $fh, "+<:raw", $idx) or die; local $/; my $data = <$fh>;
  my $n = unpack("N", substr($data, 8 + 255 * 4, 4));
  my $names = 8 + 256 * 4; my $offsets = $names + 24 * $n;
  my ($t, $s);
  for my $i (0 .. $n - 1) {
    my $id = unpack("H*", substr($data, $names + 20 * $i, 20));
    $t = $i if $id eq $target; $s = $i if $id eq $source;
  }
  next unless defined $t && defined $s;
  seek($fh, $offsets + 4 * $t, 0); print $fh substr($data, $offsets + 4 * $s, 4); exit 0;
}
' "$target" "$source"
"#;

/// The pull request: four more TODOs (6 against the limit of 5), a file without any, and a
/// "test" that makes the first read as the second.
fn tampering_pull_request(forge: &Forge, branch: &str) -> String {
    forge.pull_request(
        branch,
        &[
            (
                "src/more.rs",
                format!("{TODOS}pub fn more() {{}}\n").as_bytes(),
            ),
            ("src/clean.rs", b"pub fn clean() {}\npub fn cleaner() {}\n"),
            ("tests/rewrite.sh", REWRITE_SH.as_bytes()),
            (
                "tests/run.sh",
                b"sh tests/rewrite.sh src/more.rs src/clean.rs\n",
            ),
        ],
        &[],
        false,
    )
}

/// The rewrite works as the attack needs: after the "tests" ran in a CI clone, git itself
/// reads the TODO file's blob as the clean file's content.
#[test]
fn class_20_the_rewrite_makes_git_read_another_content() {
    let forge = Forge::new(signed_config(TESTS_JOB, ""), &[]);
    tampering_pull_request(&forge, "agent/rewrite");
    let clone = forge.ci_clone("agent/rewrite");
    let blob = forge.out(&clone, &["rev-parse", "HEAD:src/more.rs"]);
    assert!(
        forge
            .out(&clone, &["cat-file", "-p", &blob])
            .contains("TODO")
    );
    run_sh(&forge, &clone, "tests/run.sh");
    assert!(
        !forge
            .out(&clone, &["cat-file", "-p", &blob])
            .contains("TODO"),
        "the rewrite did not take: the attack below would prove nothing"
    );
}

/// `sh script` in `dir`, hermetically; panics when it fails.
fn run_sh(forge: &Forge, dir: &Path, script: &str) {
    let mut cmd = std::process::Command::new("sh");
    cmd.arg(script).current_dir(dir);
    discern_tests::hermetic(&mut cmd, forge.fixture.repo.home());
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Class 20a: pull-request CI runs the trunk's test job (a Standard needs it); the pull
/// request's test rewrites the blob of its TODO file in place. The TODO Standard is read before
/// the job ran: 6, failing, as the commit holds.
#[test]
fn class_20a_a_test_that_rewrites_a_blob_does_not_change_pr_ci() {
    let forge = Forge::new(signed_config(TESTS_JOB, ""), &[]);
    tampering_pull_request(&forge, "agent/rewrite");
    let run = forge.pr_ci("agent/rewrite");
    let json = refused(&run, "a pull request whose test rewrites a blob");
    assert_eq!(standard(&json, "todo")["value"], 6.0, "{json}");
    assert_eq!(standard(&json, "todo")["verdict"], "regressed", "{json}");
}

/// Class 20b: the push check after such a pull request was merged (it fails the same way).
#[test]
fn class_20b_a_test_that_rewrites_a_blob_does_not_change_the_push_check() {
    let forge = Forge::new(signed_config(TESTS_JOB, ""), &[]);
    let head = tampering_pull_request(&forge, "agent/rewrite");
    let before = forge.main();
    forge.push_commit(&head);
    let json = refused(&forge.push_ci(&before), "the push of a blob-rewriting test");
    assert_eq!(standard(&json, "todo")["value"], 6.0, "{json}");
}

/// A Standard that reads the snapshot after its job: the pattern built-in over `src/`, after
/// the tests ran.
const AFTER_TESTS: &str = r#"
[standards.todo_after_tests]
direction = "down"
limit = 5
producer = "builtin:pattern"
config = { pattern = "TODO", paths = ["src/**"] }
metric = "matches"
needs = ["jobs.tests"]
"#;

/// Class 20c: a Standard that needs a job reads the snapshot after it: the blob the job
/// rewrote fails that reading (never a count of the other content), naming the rewrite.
#[test]
fn class_20c_a_blob_rewritten_by_a_job_fails_a_reading_taken_after_it() {
    let config = signed_config(&format!("{TESTS_JOB}{AFTER_TESTS}"), "");
    let forge = Forge::new(&config, &[]);
    tampering_pull_request(&forge, "agent/rewrite");
    let clone = forge.ci_clone("agent/rewrite");
    let run = forge.ci(&clone, &["standards", "--json"], &[]);
    let json = refused(&run, "a reading after a blob-rewriting job");
    let after = standard(&json, "todo_after_tests");
    assert_eq!(after["measurement"], "failed", "{json}");
    assert!(
        after["note"]
            .as_str()
            .unwrap_or("")
            .contains("object store was changed"),
        "{json}"
    );
}

/// A trunk whose gate runs a test job that leaves a mark beside the repository.
fn marking_fixture() -> (Fixture, std::path::PathBuf) {
    let fixture = Fixture::new(Config::landing().job("test", "touch \"$HOME/job-ran\""));
    let mark = fixture.repo.home().join("job-ran");
    (fixture, mark)
}

/// `done` on a failing Standard returns before any job runs; `--all` runs them, and still
/// fails.
#[test]
fn done_stops_at_a_failing_standard_before_any_job() {
    let (fixture, mark) = marking_fixture();
    let effort = effort(&fixture, "todos", &[("src/more.rs", TODOS.as_bytes())]);
    let run = fixture.run_in(&effort, &["done", "--json"], &[]);
    let json = refused(&run, "done on a failing Standard");
    assert_eq!(json["data"]["failed_stage"], "standards", "{json}");
    assert!(
        !mark.exists(),
        "a job ran before the failing Standard was reported"
    );
    let steps: Vec<&str> = json["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["label"].as_str())
        .collect();
    assert!(steps.contains(&"standard:todo"), "{steps:?}");
    assert!(!steps.iter().any(|s| s.starts_with("job:")), "{steps:?}");

    let run = fixture.run_in(&effort, &["done", "--all", "--json"], &[]);
    let json: Value = refused(&run, "done --all on a failing Standard");
    assert_eq!(json["data"]["failed_stage"], "standards", "{json}");
    assert!(mark.exists(), "--all ran no job: {json}");
}
