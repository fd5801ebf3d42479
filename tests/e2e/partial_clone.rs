//! A blobless partial clone (`git clone --filter=blob:none`, here with a sparse checkout that
//! leaves `src/` out): a Standard over `**` needs blobs the clone never fetched. discern fetches
//! them from the promisor remote in one request before any producer runs and reads the same
//! number as a full clone and `git grep`; with `--no-remote`, or with the remote gone, it fails
//! closed naming what fetches them, and fetches nothing.

use std::path::{Path, PathBuf};

use crate::support::Fixture;
use crate::support::config::{Config, Standard};

fn config() -> Config {
    Config::new()
        .repository("pin_on_done", "false")
        .standard(Standard::pattern("todo", "TODO", &["**"]).limit(9))
}

/// The fixture pushed to a bare forge that serves filtered clones (as GitHub does).
fn forge() -> (Fixture, PathBuf) {
    let fixture = Fixture::new(config());
    let forge = fixture.repo.parent().join("forge.git");
    let path = forge.to_str().unwrap();
    fixture.git_in(fixture.path(), &["clone", "-q", "--bare", ".", path]);
    for key in ["uploadpack.allowFilter", "uploadpack.allowAnySHA1InWant"] {
        fixture.git_in(&forge, &["config", key, "true"]);
    }
    (fixture, forge)
}

/// A clone of `forge` into `name`: blobless with `src/` left out of its sparse checkout, or full.
fn clone(fixture: &Fixture, forge: &Path, name: &str, blobless: bool) -> PathBuf {
    let dir = fixture.repo.parent().join(name);
    let url = format!("file://{}", forge.display());
    let mut args = vec!["clone", "-q"];
    if blobless {
        args.extend(["--filter=blob:none", "--sparse"]);
    }
    args.extend([url.as_str(), dir.to_str().unwrap()]);
    fixture.git_in(fixture.repo.parent(), &args);
    dir
}

/// How many blobs HEAD names that the clone lacks.
fn missing(fixture: &Fixture, dir: &Path) -> usize {
    let listed = fixture.git_out(dir, &["rev-list", "--objects", "--missing=print", "HEAD"]);
    listed.lines().filter(|l| l.starts_with('?')).count()
}

fn todo_value(json: &serde_json::Value) -> f64 {
    json["data"]["standards"][0]["value"]
        .as_f64()
        .unwrap_or(-1.0)
}

#[test]
fn a_blobless_clone_fetches_what_a_standard_reads_and_agrees_with_a_full_one() {
    let (fixture, forge) = forge();
    let full = clone(&fixture, &forge, "full", false);
    let partial = clone(&fixture, &forge, "partial", true);
    assert!(missing(&fixture, &partial) >= 2, "src/ is not fetched");
    let run = fixture.run_in(&full, &["standards", "--json"], &[]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    let expected = todo_value(&run.json());
    // `git grep -c` over the commit, the reference the pattern agrees with.
    let grep = fixture.git_out(&full, &["grep", "-c", "TODO", "HEAD"]);
    let counted: f64 = grep
        .lines()
        .filter_map(|l| l.rsplit(':').next()?.parse::<f64>().ok())
        .sum();
    assert_eq!(expected, counted, "{grep}");

    let run = fixture.run_in(&partial, &["standards", "--json"], &[]);
    assert_eq!(run.code, 0, "{}", run.stdout);
    assert_eq!(todo_value(&run.json()), expected, "{}", run.stdout);
    assert_eq!(missing(&fixture, &partial), 0, "fetched in one request");
}

#[test]
fn offline_or_with_the_remote_gone_a_blobless_clone_refuses_naming_the_fetch() {
    let (fixture, forge) = forge();
    let partial = clone(&fixture, &forge, "partial", true);
    let before = missing(&fixture, &partial);
    let run = fixture.run_in(&partial, &["standards", "--no-remote", "--json"], &[]);
    let json = run.json();
    assert_eq!(run.code, 1, "{json}");
    let note = json["data"]["standards"][0]["note"].to_string();
    assert!(note.contains("--no-remote forbids fetching"), "{json}");
    assert!(
        note.contains("fetch origin") && note.contains("--stdin"),
        "{json}"
    );
    assert_eq!(missing(&fixture, &partial), before, "nothing was fetched");
    assert!(json["data"]["standards"][0]["value"].is_null(), "{json}");

    // The forge gone: the fetch fails, and so does the reading, naming the remote.
    std::fs::rename(&forge, forge.with_extension("gone")).unwrap();
    let run = fixture.run_in(&partial, &["standards", "--json"], &[]);
    let json = run.json();
    assert_eq!(run.code, 1, "{json}");
    let note = json["data"]["standards"][0]["note"].to_string();
    assert!(
        note.contains("could not be fetched from the promisor remote origin"),
        "{json}"
    );
    assert!(json["data"]["standards"][0]["value"].is_null(), "{json}");
}
