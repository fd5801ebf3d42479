//! The protected set covers every key the config schema allows: a change to any of them, on
//! its own, is a protected change or a loosening, never nothing.

use super::{GateChanges, compare};
use crate::config::{Config, SCHEMA};

const BASE: &str = r#"
[jobs.count]
stage = "test"
run = "true"

[standards.s]
direction = "down"
limit = 5
producer = "builtin:pattern"
config = { pattern = "TODO", paths = ["src/**"] }
metric = "matches"
"#;

/// A config that differs from `BASE` in `table.key` (and what that key needs to be valid).
fn variant(table: &str, key: &str) -> Option<String> {
    let standard = |line: &str| {
        Some(BASE.replace(
            "metric = \"matches\"",
            &format!("metric = \"matches\"\n{line}"),
        ))
    };
    let job = |line: &str| Some(BASE.replace("run = \"true\"", &format!("run = \"true\"\n{line}")));
    let table_line = |line: &str| Some(format!("{BASE}\n[{table}]\n{line}\n"));
    match (table, key) {
        ("repository", "trunk") => table_line("trunk = \"develop\""),
        ("repository", "release") => table_line("release = [\"release/*\"]"),
        ("repository", "branch_prefix") => table_line("branch_prefix = \"work/\""),
        ("repository", "require_trunk") => table_line("require_trunk = true"),
        ("repository", "pin_on_done") => table_line("pin_on_done = false"),
        ("acceptance", "pre_authorized") => table_line("pre_authorized = [\"docs/**\"]"),
        ("acceptance", "approval") => table_line("approval = \"interactive\""),
        ("acceptance", "allowed_signers") => table_line("allowed_signers = \".discern/s\""),
        ("acceptance", "protected") => table_line("protected = [\"scripts/**\"]"),
        ("acceptance", "repository") => table_line("repository = \"example.com/a\""),
        ("map", "dir") => table_line("dir = \"docs/other\""),
        ("evidence", "repository") => table_line("repository = \"example.com/a\""),
        ("evidence", "publish") => {
            table_line("repository = \"example.com/a\"\npublish = \"trunk-ci\"")
        }
        ("evidence", "remote") => table_line("remote = \"http://cache.example.com/\""),
        ("evidence", "keep_days") => table_line("keep_days = 30"),
        ("worktree", "setup") => table_line("setup = [\"npm ci\"]"),
        ("worktree", "ensure") => table_line("ensure = [\"git submodule update --init\"]"),
        ("worktree", "env_files") => table_line("env_files = [\".env\"]"),
        ("worktree", "ports") => table_line("ports = [4100, 4199]"),
        ("jobs.*", "stage") => Some(BASE.replace("stage = \"test\"", "stage = \"check\"")),
        ("jobs.*", "run") => Some(BASE.replace("run = \"true\"", "run = \"false\"")),
        ("jobs.*", "artifacts") => job("artifacts = [\"out.txt\"]"),
        ("jobs.*", "inputs") => job("inputs = [\"src/**\"]"),
        ("jobs.*", "timeout") => job("timeout = 10"),
        ("standards.*", "direction") => Some(BASE.replace("\"down\"", "\"up\"")),
        ("standards.*", "limit") => Some(BASE.replace("limit = 5", "limit = 6")),
        ("standards.*", "producer") => Some(BASE.replace("\"builtin:pattern\"", "\"tools/p.wasm\"")),
        ("standards.*", "config") => Some(BASE.replace("\"TODO\"", "\"FIXME\"")),
        ("standards.*", "metric") => Some(BASE.replace("\"matches\"", "\"files\"")),
        ("standards.*", "per") => standard("per = { lines = [\"src/**\"] }"),
        ("standards.*", "scale") => standard("per = { lines = [\"src/**\"] }\nscale = 1000"),
        ("standards.*", "margin") => standard("margin = 1"),
        ("standards.*", "timeout") => standard("timeout = 10"),
        ("standards.*", "needs") => standard("needs = [\"jobs.count\"]"),
        ("standards.*", "artifact") => Some(
            BASE.replace("run = \"true\"", "run = \"true\"\nartifacts = [\"out.txt\"]")
                .replace("metric = \"matches\"", "metric = \"matches\"\nneeds = [\"jobs.count\"]\nartifact = \"out.txt\""),
        ),
        ("standards.*", "inputs") => standard("inputs = [\"src/**\"]"),
        ("standards.*", "run") => Some(BASE.replace(
            "producer = \"builtin:pattern\"\nconfig = { pattern = \"TODO\", paths = [\"src/**\"] }\n",
            "run = \"sh count.sh\"\n",
        )),
        ("standards.*", "findings") => standard("findings = \"count\""),
        _ => None,
    }
}

fn changes(old: &str, new: &str) -> GateChanges {
    let parse = |text: &str| Config::parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let no_blob = |_: &str| Ok(None);
    compare(&parse(old), &no_blob, &parse(new), &no_blob).expect("no blob is read")
}

#[test]
fn protected_set_covers_every_key_of_the_schema() {
    for (table, keys) in SCHEMA {
        for key in *keys {
            let new = variant(table, key).unwrap_or_else(|| {
                panic!("{table}.{key}: the protected-set test has no change for this key; add one")
            });
            let found = changes(BASE, &new);
            assert!(
                !found.is_empty(),
                "{table}.{key}: changing it is not protected"
            );
            // Undoing the change is judged too (a key removed is a change).
            assert!(
                !changes(&new, BASE).is_empty() || (*table, *key) == ("standards.*", "limit"),
                "{table}.{key}: removing it is not protected"
            );
        }
    }
}

#[test]
fn a_tightened_limit_is_free_and_a_loosened_one_is_a_loosening() {
    let tighter = BASE.replace("limit = 5", "limit = 4");
    assert!(changes(BASE, &tighter).is_empty());
    let looser = BASE.replace("limit = 5", "limit = 6");
    let found = changes(BASE, &looser);
    assert_eq!(found.loosened.len(), 1);
    assert!(found.protected.is_empty());
}

#[test]
fn a_redefined_standard_protects_its_limit_and_a_deleted_one_is_one_change() {
    let redefined = BASE
        .replace("\"TODO\"", "\"FIXME\"")
        .replace("limit = 5", "limit = 50");
    let found = changes(BASE, &redefined);
    assert!(
        found.loosened.is_empty(),
        "numbers are not compared once the meaning changed"
    );
    let keys: Vec<&str> = found.protected.iter().map(|c| c.key.as_str()).collect();
    assert_eq!(keys, ["standards.s.config", "standards.s.limit"]);
    let deleted = BASE.split("[standards.s]").next().unwrap_or_default();
    let found = changes(BASE, deleted);
    assert_eq!(found.protected.len(), 1);
    assert!(found.protected[0].deletes_standard());
    assert!(found.protected[0].describe().contains("its ceiling was 5"));
}

#[test]
fn the_first_config_protects_nothing_yet() {
    assert!(changes("", BASE).is_empty());
}

#[test]
fn a_new_standard_that_runs_something_is_protected_and_a_new_builtin_one_is_free() {
    let with = |table: &str| format!("{BASE}\n{table}");
    let builtin = with(
        "[standards.more]\ndirection = \"down\"\nlimit = 1\nproducer = \"builtin:pattern\"\nconfig = { pattern = \"XXX\", paths = [\"src/**\"] }\nmetric = \"matches\"\n",
    );
    assert!(
        changes(BASE, &builtin).is_empty(),
        "a new built-in Standard only tightens"
    );
    let run = with("[standards.probe]\ndirection = \"down\"\nlimit = 1\nrun = \"sh probe.sh\"\n");
    let needs = with(
        "[standards.hacks]\ndirection = \"down\"\nlimit = 1\nproducer = \"builtin:discern-metric\"\nneeds = [\"jobs.count\"]\n",
    );
    let component = with(
        "[standards.own]\ndirection = \"down\"\nlimit = 1\nproducer = \"tools/p.wasm\"\nmetric = \"m\"\n",
    );
    for (name, config, shows) in [
        ("probe", &run, "run \"sh probe.sh\""),
        ("hacks", &needs, "needs [\"jobs.count\"]"),
        ("own", &component, "producer \"tools/p.wasm\""),
    ] {
        let found = changes(BASE, config);
        assert!(found.loosened.is_empty());
        assert_eq!(found.protected.len(), 1, "{name}: {found:?}");
        let change = &found.protected[0];
        assert_eq!(change.key, format!("standards.{name}"));
        assert!(change.adds_standard() && !change.deletes_standard());
        assert!(change.new.get("limit").is_none() && change.new.get("margin").is_none());
        let described = change.describe();
        assert!(
            described.starts_with(&format!("Standard {name} is new and runs"))
                && described.contains(shows),
            "{described}"
        );
        assert_eq!(super::describe_all(&found.protected), [described]);
        // A pin or a margin on the new Standard leaves the item (and its token) as it was.
        let pinned = config.replace("limit = 1\n", "limit = 0\nmargin = 0.5\n");
        assert_eq!(changes(BASE, &pinned).protected, found.protected);
    }
    // Its command changed again on the branch: another item, another token.
    let other = run.replace("sh probe.sh", "sh other.sh");
    assert_ne!(
        changes(BASE, &other).protected,
        changes(BASE, &run).protected
    );
}

#[test]
fn a_new_job_is_protected() {
    let added = format!("{BASE}\n[jobs.extra]\nstage = \"test\"\nrun = \"sh extra.sh\"\n");
    let found = changes(BASE, &added);
    let keys: Vec<&str> = found.protected.iter().map(|c| c.key.as_str()).collect();
    assert_eq!(keys, ["jobs.extra"]);
    let plain = format!("{BASE}\n[jobs]\nlint = \"cargo clippy\"\n");
    let found = changes(BASE, &plain);
    assert!(
        found.protected.iter().any(|c| c.key == "jobs.lint"),
        "{found:?}"
    );
}

#[test]
fn a_registry_components_digest_is_protected_and_its_tag_is_not() {
    let digest = |d: char| d.to_string().repeat(64);
    let oci = |tag: &str, d: char| {
        BASE.replace(
            "\"builtin:pattern\"",
            &format!("\"oci://127.0.0.1:5000/acme/p:{tag}@sha256:{}\"", digest(d)),
        )
    };
    let base = oci("1.0", 'a');
    assert!(
        changes(&base, &oci("1.1", 'a')).is_empty(),
        "another tag on the same digest runs the same bytes"
    );
    let found = changes(&base, &oci("1.0", 'b'));
    let keys: Vec<&str> = found.protected.iter().map(|c| c.key.as_str()).collect();
    assert_eq!(keys, ["standards.s.producer"]);
    let added = format!(
        "{BASE}\n[standards.own]\ndirection = \"down\"\nlimit = 1\nproducer = \"oci://ghcr.io/acme/p:1@sha256:{}\"\nmetric = \"m\"\n",
        digest('c')
    );
    let found = changes(BASE, &added);
    assert_eq!(found.protected.len(), 1, "{found:?}");
    assert!(found.protected[0].adds_standard());
}
