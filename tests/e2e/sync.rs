//! Team scale through git: trunk CI publishes signed evidence, `discern sync` carries it and
//! the notes between clones, and only what the trunk's allowed signers signed — with a key
//! allowed for evidence, for this repository — is ever reused. A bare repository plays the
//! forge; every actor has its own clone.

use std::path::Path;

use serde_json::Value;

use crate::support::Fixture;
use crate::support::config::Config;
use crate::support::forge::keygen;

mod team;

use team::REPOSITORY;
pub(crate) use team::{Team, runs};

fn standard<'j>(json: &'j Value, name: &str) -> &'j Value {
    json["data"]["standards"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("{name} in {json}"))
}

#[test]
fn a_fresh_shallow_clone_reuses_what_trunk_ci_published_and_runs_no_producer() {
    let team = Team::new();
    let (_, published) = team.trunk_ci();
    assert_eq!(published["data"]["publish"]["published"], 2, "{published}");
    assert_eq!(published["data"]["pushed"], true, "{published}");

    let dev = team.shallow_clone("dev");
    // A depth-1 clone fetches the published ref into its tracking copy and takes it.
    let (code, sync) = team.discern(&dev, &["sync", "--json"], &[]);
    assert_eq!(code, 0, "{sync}");
    let tracking = team.out(&dev, &["rev-parse", "refs/discern/remotes/origin/evidence"]);
    assert_eq!(
        tracking,
        team.out(&dev, &["rev-parse", "refs/discern/evidence"])
    );
    assert_eq!(
        tracking,
        team.out(&team.origin, &["rev-parse", "refs/discern/evidence"])
    );
    let (code, json) = team.discern(&dev, &["standards", "--json"], &[]);
    assert_eq!(code, 0, "{json}");
    assert_eq!(
        runs(&json),
        0,
        "every reading came from CI's evidence: {json}"
    );
    let todo = standard(&json, "todo");
    assert_eq!(todo["measurement"], "reused", "{json}");
    let from = todo["reused_evidence"].as_str().unwrap_or_default();
    assert!(
        from.contains("signed by ci@example.com") && from.contains("refs/discern/evidence"),
        "the reading says where it came from: {json}"
    );
    let text = team.fixture.run_in(&dev, &["standards"], &[]).stdout;
    assert!(text.contains("signed by ci@example.com"), "{text}");

    // --no-remote measures without what was fetched (even once imported).
    let (code, local) = team.discern(&dev, &["standards", "--no-remote", "--json"], &[]);
    assert_eq!(code, 0, "{local}");
    assert_eq!(runs(&local), 2, "{local}");
}

#[test]
fn a_pull_request_reuses_the_trunks_evidence_where_it_did_not_touch_the_read_set() {
    let team = Team::new();
    team.trunk_ci();
    let contributor = team.dir.join("contributor");
    team.git(
        &team.dir,
        &["clone", "-q", &team.url(), contributor.to_str().unwrap()],
    );
    team.git(&contributor, &["checkout", "-q", "-b", "docs-only"]);
    std::fs::write(contributor.join("docs/guide.md"), "# Guide\nWritten.\n").unwrap();
    team.git(&contributor, &["commit", "-qam", "docs"]);
    team.git(&contributor, &["push", "-q", "origin", "docs-only"]);

    let pr = team.ci_clone("pr", "refs/heads/docs-only");
    // A PR job holding a key still publishes nothing: its HEAD is not the trunk's tip.
    let key = team.ci_key.to_str().unwrap();
    let (code, sync) = team.discern(
        &pr,
        &["sync", "--push", "--json"],
        &[("CI", "true"), ("DISCERN_EVIDENCE_KEY", key)],
    );
    assert_eq!(code, 0, "{sync}");
    let why = sync["data"]["publish"]["not_published"]
        .as_str()
        .unwrap_or_default();
    assert!(why.contains("not the tip of the trunk"), "{sync}");
    let (code, json) = team.discern(&pr, &["standards", "--json"], &[("CI", "true")]);
    assert_eq!(code, 0, "{json}");
    assert_eq!(standard(&json, "todo")["measurement"], "reused", "{json}");
    assert_eq!(
        standard(&json, "doc_todo")["measurement"],
        "measured",
        "{json}"
    );
    assert_eq!(
        runs(&json),
        1,
        "only the Standard whose reads changed ran: {json}"
    );
    // Having measured, naming its own branch the trunk still publishes nothing: publishing
    // reads the config's trunk.
    team.git(&pr, &["branch", "docs-only", "HEAD"]);
    let (code, sync) = team.discern(
        &pr,
        &["sync", "--push", "--json"],
        &[
            ("CI", "true"),
            ("DISCERN_EVIDENCE_KEY", key),
            ("DISCERN_TRUNK", "docs-only"),
        ],
    );
    assert_eq!(code, 0, "{sync}");
    assert_eq!(sync["data"]["publish"]["published"], 0, "{sync}");
}

/// Replace the published ref in `clone` with one holding `bundle` for (`commit`, the identity
/// the first published entry has), and push it over the origin's: what a hostile pusher can do.
fn plant(team: &Team, clone: &Path, bundle: discern::testing::evidence::bundle::Bundle) {
    use discern::testing::commit::shared_refs::{edit_tree, set_ref, write_commit};
    use discern::testing::evidence::shared::tree;
    let repo = discern::Repo::discover(clone).unwrap();
    let entry: discern::testing::evidence::Entry = serde_json::from_slice(&bundle.entry).unwrap();
    let commit: gix::ObjectId = entry.commit.parse().unwrap();
    let dir = tree::dir(commit, &entry.identity);
    let files: Vec<(String, Vec<u8>)> = tree::files(&bundle, 1)
        .into_iter()
        .map(|(name, bytes)| (format!("{dir}/{name}"), bytes))
        .collect();
    let tree_id = edit_tree(&repo, None, &files, &[]).unwrap();
    let planted = write_commit(&repo, tree_id, &[], "planted").unwrap();
    let old = repo.resolve_ref(tree::REF).unwrap().map(|r| r.commit);
    set_ref(&repo, tree::REF, old, planted, "plant").unwrap();
    team.git(
        clone,
        &[
            "push",
            "-q",
            "-f",
            "origin",
            &format!("{}:{}", tree::REF, tree::REF),
        ],
    );
}

/// The bundles CI published for the trunk's tip, read back from its clone.
fn published(clone: &Path) -> Vec<discern::testing::evidence::bundle::Bundle> {
    use discern::testing::evidence::shared::tree;
    let repo = discern::Repo::discover(clone).unwrap();
    let tip = repo.resolve_ref(tree::REF).unwrap().unwrap().commit;
    let head = repo.head().unwrap().unwrap();
    tree::read(&repo.local(), tip, &[head])
        .into_values()
        .flatten()
        .map(|f| f.bundle)
        .collect()
}

fn sign(key: &Path, manifest: &[u8]) -> Vec<u8> {
    discern::testing::approval::sign_for(
        discern::testing::evidence::bundle::NAMESPACE,
        key,
        std::str::from_utf8(manifest).unwrap(),
    )
    .unwrap()
    .into_bytes()
}

/// After `plant`, a fresh clone syncs and measures: every producer runs, nothing planted is
/// reused.
fn nothing_planted_counts(team: &Team, what: &str) {
    let dev = team.shallow_clone(&format!("dev-{}", what.replace(' ', "-")));
    let (code, sync) = team.discern(&dev, &["sync", "--json"], &[]);
    assert_eq!(code, 0, "{what}: {sync}");
    let (code, json) = team.discern(&dev, &["standards", "--json"], &[]);
    assert_eq!(code, 0, "{what}: {json}");
    assert_eq!(
        runs(&json),
        2,
        "{what}: the planted entry is a miss: {json}"
    );
    assert_eq!(
        standard(&json, "todo")["value"].as_f64(),
        Some(2.0),
        "{what}: the true reading: {json}"
    );
}

#[test]
fn poisoned_replayed_and_wrongly_signed_entries_are_misses_and_change_no_verdict() {
    let team = Team::new();
    let (ci, _) = team.trunk_ci();
    let genuine = published(&ci)
        .into_iter()
        .find(|b| String::from_utf8_lossy(&b.entry).contains("\"matches\""))
        .unwrap();
    // Poisoned: the right key's signature, a different value (0 TODOs).
    let mut entry: Value = serde_json::from_slice(&genuine.entry).unwrap();
    entry["metrics"][0]["value"] = 0.into();
    let poisoned = discern::testing::evidence::bundle::Bundle {
        entry: serde_json::to_vec(&entry).unwrap(),
        ..genuine.clone()
    };
    plant(&team, &ci, poisoned.clone());
    nothing_planted_counts(&team, "poisoned");

    // The poisoned value signed afresh, but by the owner's key, allowed only for approvals.
    let manifest = discern::testing::evidence::bundle::Bundle::manifest(
        REPOSITORY,
        &poisoned.entry,
        poisoned.findings.as_deref(),
    );
    let by_owner = discern::testing::evidence::bundle::Bundle {
        signature: sign(&team.owner_key, &manifest),
        ..poisoned.clone()
    };
    plant(&team, &ci, by_owner);
    nothing_planted_counts(&team, "approval key");

    // Replayed from another repository: CI's own key, signed for another repository's name.
    let elsewhere = discern::testing::evidence::bundle::Bundle::manifest(
        "example.com/acme/other",
        &poisoned.entry,
        poisoned.findings.as_deref(),
    );
    let replayed = discern::testing::evidence::bundle::Bundle {
        signature: sign(&team.ci_key, &elsewhere),
        ..poisoned.clone()
    };
    plant(&team, &ci, replayed);
    nothing_planted_counts(&team, "replayed");

    // A key nobody listed (a pull request's own), signing for the right repository.
    let stranger = keygen(&team.dir, "stranger");
    let unknown = discern::testing::evidence::bundle::Bundle {
        signature: sign(&stranger, &manifest),
        ..poisoned
    };
    plant(&team, &ci, unknown);
    nothing_planted_counts(&team, "unknown key");
}

#[test]
fn notes_from_two_clones_are_merged_never_overwritten_and_pushes_race_safely() {
    let team = Team::new();
    let a = team.dir.join("a");
    let b = team.dir.join("b");
    for clone in [&a, &b] {
        team.git(
            &team.dir,
            &["clone", "-q", &team.url(), clone.to_str().unwrap()],
        );
    }
    // Each clone lands its own commit with a note, unpushed; the commits reach the origin
    // by plain pushes, the notes only through sync.
    let mut commits = Vec::new();
    for (clone, name) in [(&a, "a"), (&b, "b")] {
        team.git(clone, &["checkout", "-q", "-b", name]);
        std::fs::write(clone.join(format!("{name}.txt")), name).unwrap();
        team.git(clone, &["add", "-A"]);
        team.git(clone, &["commit", "-qm", name]);
        team.git(
            clone,
            &[
                "notes",
                "--ref=discern",
                "add",
                "-m",
                &format!("proof {name}"),
                "HEAD",
            ],
        );
        team.git(clone, &["push", "-q", "origin", name]);
        commits.push(team.out(clone, &["rev-parse", "HEAD"]));
    }
    // Both push at once, several rounds, each adding a note on its own commit.
    for round in 0..4 {
        let bin = env!("CARGO_BIN_EXE_discern");
        let spawn = |dir: &Path| {
            let mut cmd = std::process::Command::new(bin);
            cmd.args(["sync", "--push", "--json"]).current_dir(dir);
            discern_tests::hermetic(&mut cmd, team.fixture.repo.home());
            cmd.stdout(std::process::Stdio::piped()).spawn().unwrap()
        };
        let (ra, rb) = (spawn(&a), spawn(&b));
        for run in [
            ra.wait_with_output().unwrap(),
            rb.wait_with_output().unwrap(),
        ] {
            let text = String::from_utf8_lossy(&run.stdout);
            assert!(run.status.success(), "round {round}: {text}");
        }
        // Each clone then records something new on its own commit for the next round.
        for (clone, name) in [(&a, "a"), (&b, "b")] {
            let text = format!("{name}{round}");
            team.git(
                clone,
                &[
                    "notes",
                    "--ref=discern-approvals",
                    "add",
                    "-f",
                    "-m",
                    &text,
                    "HEAD",
                ],
            );
        }
    }
    // A last sync each, then both clones and the origin hold every note.
    for clone in [&a, &b, &a] {
        let (code, json) = team.discern(clone, &["sync", "--push", "--json"], &[]);
        assert_eq!(code, 0, "{json}");
    }
    let origin_notes = team.out(&team.origin, &["notes", "--ref=discern", "list"]);
    for commit in &commits {
        assert!(
            origin_notes.contains(commit.as_str()),
            "{commit} in {origin_notes}"
        );
        for clone in [&a, &b] {
            let shown = team.out(clone, &["notes", "--ref=discern", "show", commit]);
            assert!(shown.starts_with("proof "), "{shown}");
        }
    }
    let approvals = team.out(&team.origin, &["notes", "--ref=discern-approvals", "list"]);
    assert_eq!(approvals.lines().count(), 2, "{approvals}");
    // No tracking ref was written over a local one, and the local refs equal the origin's.
    for name in ["refs/notes/discern", "refs/notes/discern-approvals"] {
        let tip = team.out(&team.origin, &["rev-parse", name]);
        assert_eq!(team.out(&a, &["rev-parse", name]), tip);
        assert_eq!(team.out(&b, &["rev-parse", name]), tip);
    }
}

#[test]
fn sync_refuses_a_missing_remote_and_names_what_to_do() {
    let team = Team::new();
    let (code, json) = team.discern(team.fixture.path(), &["sync", "nowhere", "--json"], &[]);
    assert_ne!(code, 0, "{json}");
    let message = json["message"].as_str().unwrap_or_default();
    assert!(message.contains("no remote named \"nowhere\""), "{json}");
}

#[test]
fn status_names_what_is_unpushed_until_sync_pushes_it() {
    let team = Team::new();
    let a = team.dir.join("a");
    team.git(
        &team.dir,
        &["clone", "-q", &team.url(), a.to_str().unwrap()],
    );
    team.git(
        &a,
        &["notes", "--ref=discern", "add", "-m", "proof", "HEAD"],
    );
    let run = team.fixture.run_in(&a, &["status"], &[]);
    assert!(
        run.stdout
            .contains("Unpushed: refs/notes/discern (share them: `discern sync --push`)"),
        "{}",
        run.stdout
    );
    let (code, json) = team.discern(&a, &["sync", "--push", "--json"], &[]);
    assert_eq!(code, 0, "{json}");
    let run = team.fixture.run_in(&a, &["status"], &[]);
    assert!(!run.stdout.contains("Unpushed"), "{}", run.stdout);
    assert_eq!(
        team.out(&team.origin, &["notes", "--ref=discern", "show", "main"]),
        "proof"
    );
}

/// The published bundles' `.time` files in `clone`'s published ref.
fn times(team: &Team, clone: &Path) -> Vec<String> {
    team.out(
        clone,
        &["ls-tree", "-r", "--name-only", "refs/discern/evidence"],
    )
    .lines()
    .filter(|p| p.ends_with(".time"))
    .map(str::to_owned)
    .collect()
}

#[test]
fn prune_drops_old_evidence_everywhere_and_a_merge_never_brings_it_back() {
    use discern::testing::commit::shared_refs::{edit_tree, set_ref, tree_of, write_commit};
    let team = Team::new();
    let (ci, _) = team.trunk_ci();
    let published = times(&team, &ci);
    assert_eq!(published.len(), 2, "{published:?}");
    // One bundle was published long ago (its time is unsigned; only pruning reads it).
    let repo = discern::Repo::discover(&ci).unwrap();
    let tip = repo
        .resolve_ref("refs/discern/evidence")
        .unwrap()
        .unwrap()
        .commit;
    let old = vec![(published[0].clone(), b"1\n".to_vec())];
    let tree = edit_tree(&repo, Some(tree_of(&repo, tip).unwrap()), &old, &[]).unwrap();
    let aged = write_commit(&repo, tree, &[tip], "aged").unwrap();
    set_ref(&repo, "refs/discern/evidence", Some(tip), aged, "aged").unwrap();
    let (code, json) = team.discern(&ci, &["sync", "--push", "--json"], &[]);
    assert_eq!(code, 0, "{json}");
    // A developer has both.
    let dev = team.shallow_clone("dev");
    team.discern(&dev, &["sync", "--json"], &[]);
    assert_eq!(times(&team, &dev).len(), 2);

    let (code, json) = team.discern(&ci, &["sync", "--prune", "--push", "--json"], &[]);
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["data"]["pruned"], 1, "{json}");
    assert_eq!(times(&team, &team.origin), vec![published[1].clone()]);
    // The developer's clone still had it: the merge takes the deletion, and pushes nothing
    // back.
    let (code, json) = team.discern(&dev, &["sync", "--push", "--json"], &[]);
    assert_eq!(code, 0, "{json}");
    assert_eq!(times(&team, &dev), vec![published[1].clone()]);
    assert_eq!(times(&team, &team.origin), vec![published[1].clone()]);
}

#[cfg(feature = "remote-cache")]
#[test]
fn trunk_ci_fills_the_remote_cache_and_a_clone_that_never_synced_reuses_what_verifies() {
    let nginx = crate::nginx::Nginx::start();
    let team = Team::with(&format!("remote = \"{}\"\n", nginx.url()));
    let (_, published) = team.trunk_ci();
    assert_eq!(published["data"]["publish"]["cached"], 2, "{published}");

    // A fresh clone that never ran sync: the cache answers, and the reading says so.
    let dev = team.shallow_clone("dev");
    let (code, json) = team.discern(&dev, &["standards", "--json"], &[]);
    assert_eq!(code, 0, "{json}");
    assert_eq!(runs(&json), 0, "{json}");
    let from = standard(&json, "todo")["reused_evidence"]
        .as_str()
        .unwrap_or_default();
    assert!(
        from.contains("signed by ci@example.com") && from.contains(&nginx.url()),
        "{json}"
    );

    // The server is untrusted storage: every stored blob flipped behind discern's back is a
    // miss (measured, true readings) and named, never taken.
    for file in nginx
        .stored()
        .into_iter()
        .filter(|f| f.to_string_lossy().contains("/cas/"))
    {
        let mut bytes = std::fs::read(&file).unwrap();
        bytes[0] ^= 1;
        std::fs::write(&file, bytes).unwrap();
    }
    let other = team.shallow_clone("other");
    let (code, json) = team.discern(&other, &["standards", "--json"], &[]);
    assert_eq!(code, 0, "{json}");
    assert_eq!(runs(&json), 2, "{json}");
    assert_eq!(
        standard(&json, "todo")["value"].as_f64(),
        Some(2.0),
        "{json}"
    );
    assert!(
        json.to_string().contains("Shared evidence was not read"),
        "{json}"
    );
    // --no-remote never asks.
    let third = team.shallow_clone("third");
    let (_, json) = team.discern(&third, &["standards", "--no-remote", "--json"], &[]);
    assert!(!json.to_string().contains("Shared evidence"), "{json}");
}

/// The contract: `sync`'s envelope and text, before and after a push.
#[test]
fn the_sync_envelope_and_text_are_snapshotted() {
    let fixture = Fixture::new(Config::landing());
    let origin = fixture.repo.parent().join("origin.git");
    let url = origin.to_str().unwrap();
    fixture.git_in(
        fixture.repo.parent(),
        &["init", "-q", "--bare", "-b", "main", url],
    );
    fixture.repo.git(&["remote", "add", "origin", url]);
    fixture.repo.git(&["push", "-q", "origin", "main"]);
    fixture
        .repo
        .git(&["notes", "--ref=discern", "add", "-m", "proof", "HEAD"]);
    let fetched = fixture.run(&["sync", "--json"]).stdout;
    let text = fixture.run(&["sync"]).stdout;
    let pushed = fixture.run(&["sync", "--push", "--json"]).stdout;
    let filters = [
        (
            regex::escape(fixture.repo.parent().to_str().unwrap()),
            "[tmp]".to_owned(),
        ),
        (r"[0-9a-f]{40}".to_owned(), "[commit]".to_owned()),
        (r"\b[0-9a-f]{12}\b".to_owned(), "[short]".to_owned()),
        (r"R1-[0-9A-F-]{12}".to_owned(), "[handle]".to_owned()),
    ];
    let filters: Vec<(&str, &str)> = filters
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    insta::with_settings!({ filters => filters }, {
        insta::assert_snapshot!("sync_json_unpushed", fetched);
        insta::assert_snapshot!("sync_text_unpushed", text);
        insta::assert_snapshot!("sync_json_pushed", pushed);
    });
}

/// Push CI reuses what the previous push published: its candidates are the new tip, its merge
/// base and the trunk's tip (all the new tip on a push), and `--baseline` (the previous tip,
/// which the publish job of the last push filed its entries under). A reading whose inputs the
/// push did not touch runs no producer; the one whose inputs changed is measured.
#[test]
fn push_ci_reuses_what_the_previous_push_published_where_its_inputs_did_not_change() {
    let team = Team::new();
    let (_, published) = team.trunk_ci();
    assert_eq!(published["data"]["publish"]["published"], 2, "{published}");
    let before = team.out(&team.origin, &["rev-parse", "main"]);

    let dev = team.dir.join("dev-push");
    team.git(
        &team.dir,
        &["clone", "-q", &team.url(), dev.to_str().unwrap()],
    );
    std::fs::write(dev.join("docs/guide.md"), "# Guide\nWritten.\n").unwrap();
    team.git(&dev, &["commit", "-qam", "docs"]);
    team.git(&dev, &["push", "-q", "origin", "main"]);

    // The push job as the README writes it: checkout, sync, standards --baseline BEFORE.
    let push = team.ci_clone("push", "refs/heads/main");
    let (code, sync) = team.discern(&push, &["sync", "--json"], &[("CI", "true")]);
    assert_eq!(code, 0, "{sync}");
    let (code, json) = team.discern(
        &push,
        &["standards", "--baseline", &before, "--json"],
        &[("CI", "true")],
    );
    assert_eq!(code, 0, "{json}");
    let todo = standard(&json, "todo");
    assert_eq!(todo["measurement"], "reused", "{json}");
    assert!(
        todo["reused_evidence"]
            .as_str()
            .is_some_and(|from| from.contains("signed by ci@example.com")),
        "{json}"
    );
    assert_eq!(
        standard(&json, "doc_todo")["measurement"],
        "measured",
        "{json}"
    );
    assert_eq!(standard(&json, "doc_todo")["value"].as_f64(), Some(0.0));
}
