//! Producers from an OCI registry (`producer = "oci://…@sha256:…"`) against a real registry
//! (Debian's docker-registry, `oci_registry.rs`): published with `discern producers publish`,
//! measured from a fresh clone with an empty cache, refused when tampered with, measured
//! offline once cached, shared by repositories, and pinned as a protected change.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::oci_registry::Registry;
use crate::support::{Fixture, Run, standard};

/// A real component the suite builds (`tests/components/hostile`), in its `emit` mode.
fn component() -> &'static [u8] {
    discern_tests::HOSTILE_WASM
}

/// The same producer with other bytes (a custom section appended): another digest.
fn other_component() -> Vec<u8> {
    let mut bytes = component().to_vec();
    bytes.extend_from_slice(&[0x00, 0x05, 0x04, b'n', b'o', b't', b'e']);
    bytes
}

fn config(reference: &str) -> String {
    format!(
        "[standards.emitted]\ndirection = \"up\"\nlimit = 1\nproducer = \"{reference}\"\nconfig = {{ mode = \"emit\", emit = {{ emitted = 7 }} }}\n"
    )
}

/// A Standard whose producer reads `src/**` (so its reading describes other commits too).
fn reading(reference: &str) -> String {
    format!(
        "[standards.files]\ndirection = \"up\"\nlimit = 1\nproducer = \"{reference}\"\nconfig = {{ mode = \"read-all\", paths = [\"src/**\"] }}\n"
    )
}

/// `discern producers publish` of `bytes` to `to`: its JSON data.
fn publish(fixture: &Fixture, bytes: &[u8], to: &str) -> Value {
    let file = fixture.repo.home().join(format!("{}.wasm", sha(bytes)));
    std::fs::write(&file, bytes).unwrap();
    let run = fixture.run(&[
        "producers",
        "publish",
        file.to_str().unwrap(),
        "--to",
        to,
        "--json",
    ]);
    let json = run.json();
    assert_eq!(json["ok"], true, "{}\n{}", run.stdout, run.stderr);
    json["data"].clone()
}

fn sha(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A per-test, empty per-user cache.
fn empty_cache() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn measure(fixture: &Fixture, dir: &Path, cache: &Path) -> Run {
    fixture.run_in(
        dir,
        &["standards", "--json"],
        &[("DISCERN_CACHE_DIR", cache.to_str().unwrap())],
    )
}

/// Every file under `dir`.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            match entry.path().is_dir() {
                true => stack.push(entry.path()),
                false => found.push(entry.path()),
            }
        }
    }
    found
}

fn cached_blob(cache: &Path, hex: &str) -> PathBuf {
    cache.join("oci/blobs/sha256").join(hex)
}

#[test]
fn a_pinned_component_measures_from_a_fresh_clone_and_a_moved_tag_changes_nothing() {
    let registry = Registry::start();
    let fixture = Fixture::new("");
    let to = registry.reference("acme/emitter", "1.0");
    let published = publish(&fixture, component(), &to);
    let reference = published["reference"].as_str().unwrap().to_owned();
    assert!(
        reference.starts_with(&format!("{to}@sha256:")),
        "{reference}"
    );
    assert_eq!(published["producer"], format!("producer = \"{reference}\""));
    fixture.repo.write("discern.toml", config(&reference));
    fixture.repo.commit("a registry producer");
    assert_eq!(
        fixture.repo.git(&["ls-files", "*.wasm"]),
        "",
        "nothing but discern.toml names it"
    );

    // The tag moves to other bytes: the pinned digest still fetches the first.
    let moved = publish(&fixture, &other_component(), &to);
    assert_ne!(moved["reference"], published["reference"]);

    let clone = fixture.repo.home().join("clone");
    let path = fixture.path().to_str().unwrap();
    fixture.git_in(
        fixture.repo.home(),
        &["clone", "-q", path, clone.to_str().unwrap()],
    );
    let cache = empty_cache();
    let run = measure(&fixture, &clone, cache.path());
    let json = run.json();
    assert_eq!(json["ok"], true, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(standard(&json, "emitted")["value"], 7.0);
    assert!(cached_blob(cache.path(), &sha(component())).is_file());
    assert!(!cached_blob(cache.path(), &sha(&other_component())).exists());
    // The listing shows it as a registry component, with the Standard that names it.
    let env = [("DISCERN_CACHE_DIR", cache.path().to_str().unwrap())];
    let listing = fixture
        .run_in(&clone, &["producers", "--json"], &env)
        .json();
    let rows = listing["data"]["producers"].as_array().unwrap();
    let row = rows.iter().find(|r| r["name"] == reference.as_str());
    let row = row.unwrap_or_else(|| panic!("{listing}"));
    assert_eq!(
        (&row["source"], &row["standards"][0]),
        (&Value::from("registry"), &Value::from("emitted"))
    );
    assert_eq!(row["sha256"], sha(component()));
    let manifest = reference.rsplit("sha256:").next().unwrap();
    assert!(
        cache
            .path()
            .join("oci/manifests/sha256")
            .join(manifest)
            .is_file()
    );
}

#[test]
fn a_tampered_layer_is_refused_and_nothing_is_cached() {
    let registry = Registry::start();
    let fixture = Fixture::new("");
    let published = publish(
        &fixture,
        component(),
        &registry.reference("acme/emitter", "1.0"),
    );
    let reference = published["reference"].as_str().unwrap();
    fixture.repo.write("discern.toml", config(reference));
    fixture.repo.commit("a registry producer");
    // The registry serves other bytes under the layer's digest: first as many, then more.
    let blob = registry.blob_file(published["component_sha256"].as_str().unwrap());
    let mut tampered = component().to_vec();
    let middle = tampered.len() / 2;
    tampered[middle] ^= 0xff;
    std::fs::write(&blob, &tampered).unwrap();

    let cache = empty_cache();
    let run = measure(&fixture, fixture.path(), cache.path());
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stdout
            .contains("the registry sent the component layer of")
            && run
                .stdout
                .contains(&format!("whose sha256 is sha256:{}", sha(&tampered)))
            && run.stdout.contains("nothing was cached and nothing runs"),
        "{}",
        run.stdout
    );
    std::fs::write(&blob, other_component()).unwrap();
    let run = measure(&fixture, fixture.path(), cache.path());
    let more = format!(
        "the registry sent more than {} bytes for the component layer",
        component().len()
    );
    assert!(run.stdout.contains(&more), "{}", run.stdout);
    assert_eq!(
        files(cache.path())
            .iter()
            .filter(|f| f.starts_with(cache.path().join("oci")))
            .count(),
        0
    );
    let fetch = fixture.run_with(
        &["producers", "fetch"],
        &[("DISCERN_CACHE_DIR", cache.path().to_str().unwrap())],
    );
    assert_eq!(fetch.code, 1, "{}", fetch.stdout);
    insta::with_settings!({ filters => vec![
        (r"127\.0\.0\.1:\d+", "[registry]"),
        (r"\b[0-9a-f]{64}\b", "[hex]"),
        (r"\b\d+ bytes", "[n] bytes"),
    ] }, {
        insta::assert_snapshot!("registry_tampered_fetch", fetch.stdout);
    });
    assert!(!cache.path().join("oci").exists());
}

#[test]
fn offline_a_cached_digest_measures_in_every_repository_and_an_uncached_one_is_refused() {
    let mut registry = Registry::start();
    let first = Fixture::new("");
    let cached = publish(
        &first,
        component(),
        &registry.reference("acme/emitter", "1.0"),
    );
    let cached = cached["reference"].as_str().unwrap().to_owned();
    let uncached = publish(
        &first,
        &other_component(),
        &registry.reference("acme/emitter", "2.0"),
    );
    let uncached = uncached["reference"].as_str().unwrap().to_owned();
    first.repo.write("discern.toml", config(&cached));
    first.repo.commit("a registry producer");
    let cache = empty_cache();
    let fetch = first.run_with(
        &["producers", "fetch", "--json"],
        &[("DISCERN_CACHE_DIR", cache.path().to_str().unwrap())],
    );
    let json = fetch.json();
    assert_eq!(json["data"]["components"][0]["source"], "fetched", "{json}");
    assert_eq!(json["data"]["components"][0]["standards"][0], "emitted");

    registry.stop();
    let run = measure(&first, first.path(), cache.path());
    assert_eq!(run.json()["ok"], true, "{}", run.stdout);
    // Another repository pinning the same digest shares the one fetch.
    let second = Fixture::new(config(&cached));
    let run = measure(&second, second.path(), cache.path());
    assert_eq!(
        standard(&run.json(), "emitted")["value"],
        7.0,
        "{}",
        run.stdout
    );

    // A digest never fetched cannot be measured while the registry is down.
    let second = Fixture::new(config(&uncached));
    let run = measure(&second, second.path(), cache.path());
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stdout.contains(&format!(
            "{uncached} is not in the component cache and the registry cannot be reached"
        )) && run
            .stdout
            .contains("run `discern producers fetch` once 127.0.0.1"),
        "{}",
        run.stdout
    );
    let env = [("DISCERN_CACHE_DIR", cache.path().to_str().unwrap())];
    let fetch = second.run_with(&["producers", "fetch"], &env);
    assert_eq!(fetch.code, 1);
    insta::with_settings!({ filters => vec![
        (r"127\.0\.0\.1:\d+", "[registry]"),
        (r"\b[0-9a-f]{64}\b", "[hex]"),
        (r"\b\d+ bytes", "[n] bytes"),
        (r"fetching the manifest: [^;]*\);", "fetching the manifest: [why]);"),
    ] }, {
        insta::assert_snapshot!("registry_down_fetch", fetch.stdout);
    });

    // Back up: fetched once, then it measures offline too.
    registry.restart();
    assert_eq!(second.run_with(&["producers", "fetch"], &env).code, 0);
    registry.stop();
    let run = measure(&second, second.path(), cache.path());
    assert_eq!(run.json()["ok"], true, "{}", run.stdout);
}

#[test]
fn a_tag_alone_is_refused_and_fetch_names_the_digest_to_pin() {
    let registry = Registry::start();
    let fixture = Fixture::new("");
    let to = registry.reference("acme/emitter", "1.0");
    let published = publish(&fixture, component(), &to);
    fixture.repo.write("discern.toml", config(&to));
    fixture.repo.commit("a tag alone");
    let run = fixture.run(&["standards"]);
    assert_eq!(run.code, 1);
    let filters = vec![
        (r"127\.0\.0\.1:\d+", "[registry]"),
        (r"\b[0-9a-f]{64}\b", "[hex]"),
        (r"\b\d+ bytes", "[n] bytes"),
    ];
    insta::with_settings!({ filters => filters.clone() }, {
        insta::assert_snapshot!("registry_tag_alone", run.stdout);
    });
    let cache = empty_cache();
    let env = [("DISCERN_CACHE_DIR", cache.path().to_str().unwrap())];
    let fetch = fixture.run_with(&["producers", "fetch", &to], &env);
    assert_eq!(fetch.code, 0, "{}", fetch.stderr);
    assert!(
        fetch
            .stdout
            .contains(&published["producer"].as_str().unwrap().to_owned()),
        "{}",
        fetch.stdout
    );
    insta::with_settings!({ filters => filters.clone() }, {
        insta::assert_snapshot!("registry_fetch_tag", fetch.stdout);
    });
    // Publishing the same bytes again pushes the same manifest: the same line.
    let file = format!("{}.wasm", sha(component()));
    let args = ["producers", "publish", file.as_str(), "--to", &to];
    let again = fixture.run_in(fixture.repo.home(), &args, &[]);
    assert_eq!(again.code, 0, "{}", again.stdout);
    assert!(
        again
            .stdout
            .contains(published["producer"].as_str().unwrap())
    );
    insta::with_settings!({ filters => filters }, {
        insta::assert_snapshot!("registry_publish", again.stdout);
    });
}

#[test]
fn a_new_digest_on_a_branch_is_a_protected_change_and_a_new_tag_is_not() {
    let registry = Registry::start();
    let fixture = Fixture::new("");
    let first = publish(
        &fixture,
        component(),
        &registry.reference("acme/emitter", "1.0"),
    );
    let first = first["reference"].as_str().unwrap().to_owned();
    let second = publish(
        &fixture,
        &other_component(),
        &registry.reference("acme/emitter", "2.0"),
    );
    let second = second["reference"].as_str().unwrap().to_owned();
    fixture.repo.write("discern.toml", reading(&first));
    fixture.repo.commit("a registry producer");
    let runs = |json: &Value| -> u64 {
        let executions = json["data"]["producer_executions"].as_object().unwrap();
        executions.values().map(|n| n.as_u64().unwrap()).sum()
    };
    let json = fixture.run(&["standards", "--json"]).json();
    assert_eq!(
        (json["ok"].as_bool(), runs(&json)),
        (Some(true), 1),
        "{json}"
    );

    fixture.repo.git(&["checkout", "-q", "-b", "agent/retag"]);
    let retagged = first.replace(":1.0@", ":stable@");
    fixture.repo.write("discern.toml", reading(&retagged));
    fixture.repo.commit("another tag, the same digest");
    // Evidence is keyed by the component's digest, not its name: the reading is reused.
    let json = fixture.run(&["standards", "--json"]).json();
    assert_eq!(
        (json["ok"].as_bool(), runs(&json)),
        (Some(true), 0),
        "{json}"
    );
    let json = fixture.run(&["approve", "--dry-run", "--json"]).json();
    assert_eq!(
        json["data"]["required"]["protected"],
        Value::Array(vec![]),
        "{json}"
    );

    fixture
        .repo
        .git(&["checkout", "-q", "-b", "agent/rebuild", "main"]);
    fixture.repo.write("discern.toml", reading(&second));
    fixture.repo.commit("another digest");
    let json = fixture.run(&["approve", "--dry-run", "--json"]).json();
    let protected = json["data"]["required"]["protected"].as_array().unwrap();
    let keys: Vec<&str> = protected
        .iter()
        .map(|p| p["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["standards.files.producer"], "{json}");
}

/// A registry that answers every request the way `answer` says, on a loopback port: what a
/// hostile or broken registry can do.
fn hostile_registry(answer: fn(&str) -> Vec<u8>) -> u16 {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream);
            let mut head = String::new();
            while reader.read_line(&mut head).is_ok_and(|n| n > 2) {}
            let path = head.split_whitespace().nth(1).unwrap_or("").to_owned();
            let mut stream = reader.into_inner();
            let _ = stream.write_all(&answer(&path));
        }
    });
    port
}

#[test]
fn a_hostile_registry_gets_a_bounded_refusal_never_a_reading() {
    let fixture = Fixture::new("");
    let digest = "ab".repeat(32);
    let fetch = |port: u16| {
        let reference = format!("oci://127.0.0.1:{port}/acme/p:1@sha256:{digest}");
        let cache = empty_cache();
        let env = [("DISCERN_CACHE_DIR", cache.path().to_str().unwrap())];
        let run = fixture.run_with(&["producers", "fetch", &reference], &env);
        assert_eq!(run.code, 1, "{}", run.stdout);
        assert!(run.stdout.contains(&reference), "{}", run.stdout);
        assert!(!cache.path().join("oci").exists(), "nothing cached");
        run.stdout
    };
    // A redirect loop: a few redirects followed, then refused.
    let looping = hostile_registry(|path| {
        format!("HTTP/1.1 307 Temporary Redirect\r\nLocation: {path}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").into_bytes()
    });
    let text = fetch(looping);
    assert!(text.contains("redirect"), "{text}");
    // A manifest without end: refused at the cap.
    let huge = hostile_registry(|_| {
        let mut answer =
            b"HTTP/1.1 200 OK\r\nContent-Length: 8388608\r\nConnection: close\r\n\r\n".to_vec();
        answer.resize(answer.len() + (2 << 20), b' ');
        answer
    });
    let text = fetch(huge);
    assert!(
        text.contains("more than 1048576 bytes for the manifest"),
        "{text}"
    );
    // A manifest that is not the one pinned.
    let other = hostile_registry(|_| {
        let body = "{\"schemaVersion\":2}";
        format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .into_bytes()
    });
    let text = fetch(other);
    assert!(
        text.contains("the registry sent the manifest of")
            && text.contains(&format!("not sha256:{digest}")),
        "{text}"
    );
}

/// A registry that refuses every request with a Basic challenge, sending every request's
/// `Authorization` header (or `-`) down the channel.
fn recording_registry() -> (u16, std::sync::mpsc::Receiver<String>) {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let (sender, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream);
            let (mut line, mut authorization) = (String::new(), "-".to_owned());
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                if let Some(value) = line
                    .strip_prefix("authorization: ")
                    .or_else(|| line.strip_prefix("Authorization: "))
                {
                    authorization = value.trim().to_owned();
                }
                line.clear();
            }
            let _ = sender.send(authorization);
            let answer = "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"r\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
            let _ = reader.into_inner().write_all(answer.as_bytes());
        }
    });
    (port, received)
}

#[test]
fn the_token_goes_only_to_the_registry_named_for_it() {
    let fixture = Fixture::new("");
    let (port, received) = recording_registry();
    let reference = format!("oci://127.0.0.1:{port}/acme/p:1@sha256:{}", "cd".repeat(32));
    let fetch = |env: &[(&str, &str)]| {
        let run = fixture.run_with(&["producers", "fetch", &reference], env);
        assert_eq!(run.code, 1, "{}", run.stdout);
        (run.stdout, received.try_iter().collect::<Vec<_>>())
    };
    // A branch naming another registry: the token stays home.
    let (text, sent) = fetch(&[
        ("DISCERN_OCI_TOKEN", "secret"),
        ("DISCERN_OCI_REGISTRY", "ghcr.io"),
    ]);
    assert_eq!(sent, ["-"], "{text}");
    assert!(
        text.contains("(HTTP 401)") && text.contains("DISCERN_OCI_TOKEN is sent only to ghcr.io"),
        "{text}"
    );
    // The registry named: the token as a bearer, then as the password Basic asks for.
    let address = format!("127.0.0.1:{port}");
    let (_, sent) = fetch(&[
        ("DISCERN_OCI_TOKEN", "secret"),
        ("DISCERN_OCI_REGISTRY", &address),
    ]);
    assert_eq!(sent, ["Bearer secret", "Basic ZGlzY2VybjpzZWNyZXQ="]);
}

#[test]
fn a_registry_that_never_answers_is_refused_in_time() {
    let fixture = Fixture::new("");
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    // Accepted, read, never answered.
    std::thread::spawn(move || {
        let held: Vec<_> = listener.incoming().flatten().collect();
        drop(held);
    });
    let reference = format!("oci://127.0.0.1:{port}/acme/p:1@sha256:{}", "ef".repeat(32));
    let started = std::time::Instant::now();
    let run = fixture.run_with(
        &["producers", "fetch", &reference],
        &[("DISCERN_OCI_TIMEOUT", "1")],
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stdout.contains(&reference) && run.stdout.to_lowercase().contains("timeout"),
        "{}",
        run.stdout
    );
}
