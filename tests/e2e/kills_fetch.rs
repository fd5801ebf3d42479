//! A registry fetch killed (issues 49 and 52): `discern producers fetch` verifies the manifest
//! and the component against their digests and only then writes them into the per-user cache.
//! Killed at a random moment — every other round with its process group — the cache never holds
//! a file under a digest it does not hash to, and the next fetch completes it: the component
//! then measures with the registry down.

use std::path::Path;

use crate::kills::{jitter, kill_with, rounds};
use crate::oci_registry::Registry;
use crate::support::Fixture;

#[test]
fn a_fetch_killed_at_a_random_moment_never_leaves_a_wrong_or_partial_component() {
    let mut registry = Registry::start();
    let fixture = Fixture::new("");
    let component = fixture.repo.home().join("component.wasm");
    std::fs::write(&component, discern_tests::HOSTILE_WASM).unwrap();
    let to = registry.reference("acme/emitter", "1.0");
    let args = [
        "producers",
        "publish",
        component.to_str().unwrap(),
        "--to",
        &to,
        "--json",
    ];
    let published = fixture.run(&args).json();
    let reference = published["data"]["reference"].as_str().unwrap().to_owned();
    fixture.repo.write(
        "discern.toml",
        format!(
            "[standards.emitted]\ndirection = \"up\"\nlimit = 1\nproducer = \"{reference}\"\nconfig = {{ mode = \"emit\", emit = {{ emitted = 7 }} }}\n"
        ),
    );
    fixture.repo.commit("a registry producer");
    let mut killed = 0;
    let mut caches = Vec::new();
    for round in 0..rounds() {
        let cache = tempfile::tempdir().unwrap();
        let env = [("DISCERN_CACHE_DIR", cache.path().to_str().unwrap())];
        killed += usize::from(kill_with(
            &fixture,
            (fixture.path(), &["producers", "fetch"], &env),
            jitter(round, 150),
            round % 2 == 0,
        ));
        every_file_hashes_to_its_name(&cache.path().join("oci"), round);
        let again = fixture.run_with(&["producers", "fetch", "--json"], &env);
        assert_eq!(again.code, 0, "round {round}: {}", again.stdout);
        every_file_hashes_to_its_name(&cache.path().join("oci"), round);
        caches.push(cache);
    }
    registry.stop();
    for (round, cache) in caches.iter().enumerate() {
        let env = [("DISCERN_CACHE_DIR", cache.path().to_str().unwrap())];
        let run = fixture.run_with(&["standards", "--json"], &env);
        assert_eq!(run.json()["ok"], true, "round {round}: {}", run.stdout);
    }
    eprintln!("producers fetch: {} rounds, {killed} killed", rounds());
}

/// Every file of the store named by a digest (`…/sha256/<hex>`) hashes to it; discern's own
/// temp files (a write cut short) are the only other files.
fn every_file_hashes_to_its_name(store: &Path, round: usize) {
    use sha2::Digest as _;
    for kind in ["manifests", "blobs"] {
        let dir = store.join(kind).join("sha256");
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with(".discern-tmp-") {
                continue;
            }
            let bytes = std::fs::read(entry.path()).unwrap();
            let hex: String = sha2::Sha256::digest(&bytes)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            assert_eq!(hex, name, "round {round}: {kind}/{name} holds other bytes");
        }
    }
}
