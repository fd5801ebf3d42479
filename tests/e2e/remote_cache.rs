//! The remote evidence cache against a real Bazel HTTP cache: nginx with WebDAV ([`Nginx`]).
//! The server is untrusted storage: whatever is changed behind the client's back is refused
//! or missed, never taken, and never a hang.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use discern::testing::digest::Digest;
use discern::testing::evidence::bundle::{Bundle, remote_key};
use discern::testing::evidence::remote::{
    ActionResult, BlobDigest, Client, ENTRY, FINDINGS, Options, OutputFile, RemoteError, SIGNATURE,
};
use prost::Message;

use crate::nginx::{Nginx, TOKEN};

fn options() -> Options {
    Options {
        timeout: Duration::from_secs(10),
        connect_timeout: Duration::from_secs(2),
        proxy_from_env: false,
        ..Options::default()
    }
}

fn connect(url: &str) -> Client {
    Client::new(url, options()).expect("a client")
}

fn bundle(seed: &str, findings: bool) -> Bundle {
    Bundle {
        entry: format!("{{\"version\":3,\"identity\":\"{seed}\"}}").into_bytes(),
        findings: findings.then(|| format!("finding of {seed}\n").repeat(500).into_bytes()),
        signature: format!("-----BEGIN SSH SIGNATURE-----\n{seed}\n-----END SSH SIGNATURE-----\n")
            .into_bytes(),
    }
}

fn key(seed: &str) -> Digest {
    remote_key("acme/app", seed, "0123456789abcdef0123456789abcdef01234567")
}

fn hex(bytes: &[u8]) -> String {
    Digest::of(bytes).hex()
}

/// The action result nginx keeps under `key`.
fn stored_result(server: &Nginx, key: &Digest) -> ActionResult {
    let bytes = std::fs::read(server.file("ac", &key.hex())).expect("the action result is stored");
    ActionResult::decode(bytes.as_slice()).expect("a protobuf ActionResult")
}

fn write_result(server: &Nginx, key: &Digest, result: &ActionResult) {
    std::fs::write(server.file("ac", &key.hex()), result.encode_to_vec()).expect("written");
}

#[test]
fn a_bundle_round_trips_as_blobs_and_an_action_result() {
    let server = Nginx::start();
    let client = connect(&server.url());
    let (with, without) = (bundle("a", true), bundle("b", false));
    client.put(&key("a"), &with).expect("stored");
    client.put(&key("b"), &without).expect("stored");
    assert_eq!(client.get(&key("a")).expect("read"), Some(with.clone()));
    assert_eq!(client.get(&key("b")).expect("read"), Some(without));
    assert_eq!(client.get(&key("never stored")).expect("a miss"), None);

    // What a Bazel cache holds: a real ActionResult naming each part, each part a CAS blob.
    let result = stored_result(&server, &key("a"));
    let findings = with.findings.clone().expect("findings");
    let expected = [
        (ENTRY, &with.entry),
        (FINDINGS, &findings),
        (SIGNATURE, &with.signature),
    ];
    assert_eq!(result.output_files.len(), 3);
    for (file, (path, bytes)) in result.output_files.iter().zip(expected) {
        assert_eq!(file.path, path);
        let digest = file.digest.as_ref().expect("a digest");
        assert_eq!(digest.hash, hex(bytes));
        assert_eq!(digest.size_bytes, bytes.len() as i64);
        let blob = std::fs::read(server.file("cas", &digest.hash)).expect("the blob is stored");
        assert_eq!(&blob, bytes);
    }
    assert_eq!(result.exit_code, 0);
}

#[test]
fn a_tampered_blob_is_refused() {
    let server = Nginx::start();
    let client = connect(&server.url());
    let original = bundle("t", true);
    client.put(&key("t"), &original).expect("stored");
    let entry = server.file("cas", &hex(&original.entry));

    // Same size, one byte changed: the SHA-256 differs.
    let mut same_size = original.entry.clone();
    same_size[2] ^= 1;
    std::fs::write(&entry, &same_size).expect("tampered");
    let read = client.get(&key("t"));
    assert!(
        matches!(read, Err(RemoteError::Mismatch { path: ENTRY, .. })),
        "{read:?}"
    );

    // Shorter: the size differs.
    std::fs::write(&entry, &original.entry[..4]).expect("tampered");
    let read = client.get(&key("t"));
    assert!(
        matches!(read, Err(RemoteError::Mismatch { .. })),
        "{read:?}"
    );

    // Far longer than the action result says: cut off at the claimed size, never read whole.
    std::fs::write(&entry, vec![b'x'; 4 << 20]).expect("tampered");
    let read = client.get(&key("t"));
    assert!(
        matches!(read, Err(RemoteError::TooLarge { .. })),
        "{read:?}"
    );

    // Put back, it reads again; a blob gone (evicted) is a miss.
    std::fs::write(&entry, &original.entry).expect("restored");
    assert_eq!(client.get(&key("t")).expect("read"), Some(original.clone()));
    std::fs::remove_file(server.file("cas", &hex(&original.signature))).expect("evicted");
    assert_eq!(client.get(&key("t")).expect("a miss"), None);
}

#[test]
fn an_action_result_naming_another_digest_is_refused() {
    let server = Nginx::start();
    let client = connect(&server.url());
    let original = bundle("d", false);
    client.put(&key("d"), &original).expect("stored");
    let good = stored_result(&server, &key("d"));
    let with_entry_digest = |digest: BlobDigest| {
        let mut result = good.clone();
        result.output_files[0].digest = Some(digest);
        write_result(&server, &key("d"), &result);
        client.get(&key("d"))
    };

    // The entry's hash with another size.
    let mut wrong_size = BlobDigest::of(&original.entry);
    wrong_size.size_bytes += 1;
    let read = with_entry_digest(wrong_size);
    assert!(
        matches!(read, Err(RemoteError::Mismatch { .. })),
        "{read:?}"
    );

    // A blob stored under a digest that is not its own.
    let other = b"{\"version\":3,\"identity\":\"x\"}".to_vec();
    let claimed = BlobDigest::of(&other);
    std::fs::write(
        server.file("cas", &claimed.hash),
        &original.entry[..other.len()],
    )
    .expect("a lying blob");
    let read = with_entry_digest(claimed);
    assert!(
        matches!(read, Err(RemoteError::Mismatch { .. })),
        "{read:?}"
    );

    // A digest no blob has: a miss.
    let read = with_entry_digest(BlobDigest::of(b"never stored"));
    assert_eq!(read.expect("a miss"), None);

    // A hash that is no SHA-256 is refused before anything is fetched (no path in the URL).
    let read = with_entry_digest(BlobDigest {
        hash: format!("../ac/{}", key("d").hex()),
        size_bytes: 10,
    });
    assert!(
        matches!(read, Err(RemoteError::Malformed { .. })),
        "{read:?}"
    );

    // A size over the cap is refused before anything is fetched.
    let read = with_entry_digest(BlobDigest {
        hash: hex(&original.entry),
        size_bytes: 1 << 40,
    });
    assert!(
        matches!(read, Err(RemoteError::Malformed { .. })),
        "{read:?}"
    );

    // An unknown or repeated output, or a missing signature.
    let edits: [fn(&mut ActionResult); 3] = [
        |r| r.output_files.push(OutputFile::of("../../x", b"x")),
        |r| r.output_files.push(r.output_files[0].clone()),
        |r| r.output_files.retain(|f| f.path != SIGNATURE),
    ];
    for edit in edits {
        let mut result = good.clone();
        edit(&mut result);
        write_result(&server, &key("d"), &result);
        let read = client.get(&key("d"));
        assert!(
            matches!(read, Err(RemoteError::Malformed { .. })),
            "{read:?}"
        );
    }

    write_result(&server, &key("d"), &good);
    assert_eq!(client.get(&key("d")).expect("read"), Some(original));
}

#[test]
fn a_truncated_garbage_or_oversize_action_result_is_refused() {
    let server = Nginx::start();
    let client = connect(&server.url());
    client.put(&key("g"), &bundle("g", true)).expect("stored");
    let path = server.file("ac", &key("g").hex());
    let good = std::fs::read(&path).expect("stored");
    let truncations = [good.len() / 2, good.len() - 1, 1, 0];
    for cut in truncations {
        std::fs::write(&path, &good[..cut]).expect("truncated");
        let read = client.get(&key("g"));
        assert!(
            matches!(read, Err(RemoteError::Malformed { .. })),
            "cut at {cut}: {read:?}"
        );
    }
    for garbage in [
        b"<html><body>502 Bad Gateway</body></html>".to_vec(),
        vec![0xff; 64],
    ] {
        std::fs::write(&path, &garbage).expect("garbage");
        let read = client.get(&key("g"));
        assert!(
            matches!(read, Err(RemoteError::Malformed { .. })),
            "{read:?}"
        );
    }
    std::fs::write(&path, vec![0u8; 2 << 20]).expect("oversize");
    let read = client.get(&key("g"));
    assert!(
        matches!(read, Err(RemoteError::TooLarge { .. })),
        "{read:?}"
    );
}

#[test]
fn an_unreachable_or_silent_server_is_an_error_in_bounded_time() {
    let quick = Options {
        timeout: Duration::from_secs(1),
        connect_timeout: Duration::from_secs(1),
        ..options()
    };
    // Nothing listens.
    let closed = TcpListener::bind(("127.0.0.1", 0)).expect("a port");
    let port = closed.local_addr().expect("its address").port();
    drop(closed);
    let client =
        Client::new(&format!("http://127.0.0.1:{port}/cache"), quick.clone()).expect("a client");
    let started = Instant::now();
    let read = client.get(&key("u"));
    assert!(
        matches!(read, Err(RemoteError::Transport { .. })),
        "{read:?}"
    );
    let write = client.put(&key("u"), &bundle("u", false));
    assert!(
        matches!(write, Err(RemoteError::Transport { .. })),
        "{write:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));

    // Something accepts and never answers.
    let silent = TcpListener::bind(("127.0.0.1", 0)).expect("a port");
    let port = silent.local_addr().expect("its address").port();
    let client = Client::new(&format!("http://127.0.0.1:{port}/cache"), quick).expect("a client");
    let started = Instant::now();
    let read = client.get(&key("s"));
    assert!(matches!(read, Err(RemoteError::Timeout { .. })), "{read:?}");
    let write = client.put(&key("s"), &bundle("s", true));
    assert!(
        matches!(write, Err(RemoteError::Timeout { .. })),
        "{write:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    drop(silent);

    // A server that went away.
    let server = Nginx::start();
    let client = connect(&server.url());
    client.put(&key("w"), &bundle("w", false)).expect("stored");
    drop(server);
    let read = client.get(&key("w"));
    assert!(
        matches!(read, Err(RemoteError::Transport { .. })),
        "{read:?}"
    );
}

#[test]
fn two_writers_of_one_key_leave_a_whole_bundle() {
    let server = Nginx::start();
    let url = server.url();
    let (a, b) = (bundle("one", true), bundle("two", false));
    let shared = key("shared");
    std::thread::scope(|scope| {
        for bundle in [&a, &b] {
            let url = url.clone();
            scope.spawn(move || {
                let client = connect(&url);
                for _ in 0..25 {
                    client.put(&shared, bundle).expect("stored");
                }
            });
        }
        scope.spawn(|| {
            let client = connect(&url);
            for _ in 0..50 {
                // Any read is a miss (before the first write) or one whole bundle.
                match client.get(&shared).expect("never a broken entry") {
                    None => {}
                    Some(read) => assert!(read == a || read == b, "{read:?}"),
                }
            }
        });
    });
    let last = connect(&url).get(&shared).expect("read").expect("stored");
    assert!(last == a || last == b);
    // Only the action result and the blobs: no stray temporary file under the storage root.
    assert_eq!(server.stored().len(), 1 + 3 + 2);
}

#[test]
fn the_authorization_header_is_sent() {
    let server = Nginx::start();
    let anonymous = connect(&server.private_url());
    let write = anonymous.put(&key("p"), &bundle("p", true));
    assert!(
        matches!(write, Err(RemoteError::Status { status: 401, .. })),
        "{write:?}"
    );
    let read = anonymous.get(&key("p"));
    assert!(
        matches!(read, Err(RemoteError::Status { status: 401, .. })),
        "{read:?}"
    );
    let options = Options {
        authorization: Some(format!("Bearer {TOKEN}")),
        ..options()
    };
    let client = Client::new(&server.private_url(), options).expect("a client");
    client.put(&key("p"), &bundle("p", true)).expect("stored");
    assert_eq!(
        client.get(&key("p")).expect("read"),
        Some(bundle("p", true))
    );
}

/// A CA and a server certificate for 127.0.0.1 it issued, made by `openssl` in `dir`:
/// (the CA's PEM, the server's certificate, its key).
fn team_ca(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
    discern_tests::ensure_debian_tool("openssl", "openssl");
    let openssl = |args: &[&str]| {
        let out = std::process::Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .expect("openssl (Debian's openssl package)");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
    ];
    openssl(
        &[
            &["req", "-x509"][..],
            &ec,
            &[
                "-keyout",
                "ca.key",
                "-out",
                "ca.pem",
                "-days",
                "2",
                "-subj",
                "/CN=discern test CA",
                "-addext",
                "basicConstraints=critical,CA:TRUE",
                "-addext",
                "keyUsage=critical,keyCertSign",
            ],
        ]
        .concat(),
    );
    openssl(
        &[
            &["req"][..],
            &ec,
            &[
                "-keyout",
                "server.key",
                "-out",
                "server.csr",
                "-subj",
                "/CN=127.0.0.1",
            ],
        ]
        .concat(),
    );
    std::fs::write(
        dir.join("server.ext"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .expect("the extensions");
    openssl(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "2",
        "-extfile",
        "server.ext",
    ]);
    (
        dir.join("ca.pem"),
        dir.join("server.pem"),
        dir.join("server.key"),
    )
}

/// A cache behind a team's own CA over `https://`: with that CA's PEM file the bundle round-trips
/// (and misses); without it (the web's roots only) the certificate is
/// refused, and the error names the variable that trusts the team's CA; a file holding no
/// certificate is refused before anything is sent.
#[test]
fn an_https_cache_behind_a_teams_own_ca_round_trips_with_that_ca_only() {
    let dir = tempfile::tempdir().expect("a folder for the certificates");
    let (ca, certificate, server_key) = team_ca(dir.path());
    let server = Nginx::start_https(&crate::nginx::Tls {
        certificate: &certificate,
        key: &server_key,
    });
    assert!(server.url().starts_with("https://"));
    let trusting = Client::new(
        &server.url(),
        Options {
            ca_file: Some(ca.clone()),
            ..options()
        },
    )
    .expect("a client that trusts the team's CA");
    let with = bundle("tls", true);
    trusting.put(&key("tls"), &with).expect("stored over https");
    assert_eq!(trusting.get(&key("tls")).expect("read"), Some(with));
    assert_eq!(trusting.get(&key("never stored")).expect("a miss"), None);

    let web_roots = connect(&server.url());
    let refused = web_roots
        .get(&key("tls"))
        .expect_err("an untrusted certificate");
    let message = refused.to_string();
    assert!(
        matches!(refused, RemoteError::Transport { .. })
            && message.contains("DISCERN_REMOTE_CACHE_CA"),
        "{message}"
    );

    let empty = dir.path().join("empty.pem");
    std::fs::write(&empty, "not a certificate\n").expect("a file");
    let unusable = Client::new(
        &server.url(),
        Options {
            ca_file: Some(empty),
            ..options()
        },
    )
    .expect_err("a CA file without a certificate");
    assert!(matches!(unusable, RemoteError::Trust { .. }), "{unusable}");
    assert!(
        unusable.to_string().contains("holds no CERTIFICATE"),
        "{unusable}"
    );
}
