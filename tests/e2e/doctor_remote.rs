//! `doctor`'s checks of what the config names outside the checkout, against real servers: a
//! registry producer cached or not, its registry (Debian's docker-registry) up or down, and a
//! remote evidence cache nobody answers at.

use serde_json::Value;

use crate::oci_registry::Registry;
use crate::support::Fixture;

/// `doctor --quick --json` with `cache` as the per-user cache: the check named `name`, and
/// whether the call passed.
fn doctor(fixture: &Fixture, cache: &std::path::Path) -> Value {
    let env = [("DISCERN_CACHE_DIR", cache.to_str().unwrap())];
    fixture
        .run_with(&["doctor", "--quick", "--json"], &env)
        .json()
}

fn check(json: &Value, prefix: &str) -> Value {
    json["data"]["checks"]
        .as_array()
        .and_then(|checks| {
            checks
                .iter()
                .find(|c| c["check"].as_str().is_some_and(|n| n.starts_with(prefix)))
        })
        .cloned()
        .unwrap_or_else(|| panic!("no {prefix} check: {json}"))
}

#[test]
fn doctor_says_whether_a_registry_producer_and_the_remote_cache_can_be_had() {
    let mut registry = Registry::start();
    let fixture = Fixture::new("");
    let file = fixture.repo.home().join("emitter.wasm");
    std::fs::write(&file, discern_tests::HOSTILE_WASM).unwrap();
    let to = registry.reference("acme/emitter", "1.0");
    let publish = ["producers", "publish", file.to_str().unwrap(), "--to", &to];
    let published = fixture.run(&[&publish[..], &["--json"]].concat()).json();
    let reference = published["data"]["reference"].as_str().unwrap().to_owned();
    fixture.repo.write(
        "discern.toml",
        format!(
            "[evidence]\nremote = \"http://127.0.0.1:1/cache\"\n\n[standards.emitted]\ndirection = \"up\"\nlimit = 1\nproducer = \"{reference}\"\nconfig = {{ mode = \"emit\", emit = {{ emitted = 7 }} }}\n"
        ),
    );
    fixture
        .repo
        .commit("a registry producer and a remote cache");
    let cache = tempfile::tempdir().unwrap();

    let json = doctor(&fixture, cache.path());
    let answers = check(&json, "registry 127.0.0.1");
    assert_eq!(answers["status"], "ok", "{json}");
    assert!(
        answers["result"]
            .to_string()
            .contains("fetched on the first measurement")
    );
    let remote = check(&json, "remote cache");
    assert_eq!(remote["status"], "fail", "{json}");
    assert!(
        remote["fix"].to_string().contains("--no-remote"),
        "{remote}"
    );
    assert_eq!(json["error"], "precondition_failed", "{json}");

    // Cached, the registry down: measuring still works, so a warning.
    let env = [("DISCERN_CACHE_DIR", cache.path().to_str().unwrap())];
    assert_eq!(fixture.run_with(&["producers", "fetch"], &env).code, 0);
    registry.stop();
    let down = check(&doctor(&fixture, cache.path()), "registry 127.0.0.1");
    assert_eq!(down["status"], "warn", "{down}");
    // Not cached and down: it fails, naming the fetch.
    let empty = tempfile::tempdir().unwrap();
    let gone = check(&doctor(&fixture, empty.path()), "registry 127.0.0.1");
    assert_eq!(gone["status"], "fail", "{gone}");
    assert!(
        gone["fix"].to_string().contains("discern producers fetch"),
        "{gone}"
    );
}
