//! Signed approvals are verified in-process, and agree with OpenSSH's own `ssh-keygen -Y
//! verify` on every case: the key listed or not, the namespace, the payload, the line's
//! `namespaces=` and validity options, the key types people use.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use discern::testing::approval::{NAMESPACE, verify_for};

const PAYLOAD: &str = "discern-approval-v1\ntrunk main\n";

fn keygen(dir: &Path, name: &str, kind: &[&str]) -> PathBuf {
    let path = dir.join(name);
    let status = Command::new("ssh-keygen")
        .args(["-q", "-N", "", "-C", name, "-f"])
        .arg(&path)
        .args(kind)
        .status()
        .expect("ssh-keygen (Debian: openssh-client) runs");
    assert!(status.success());
    path
}

/// A signature by `key` over `payload` for `namespace`, made by ssh-keygen.
fn sign(dir: &Path, key: &Path, namespace: &str, payload: &str) -> String {
    let file = dir.join(format!("payload-{namespace}"));
    std::fs::write(&file, payload).unwrap();
    let status = Command::new("ssh-keygen")
        .args(["-Y", "sign", "-q", "-n", namespace, "-f"])
        .arg(key)
        .arg(&file)
        .status()
        .unwrap();
    assert!(status.success());
    let signature = std::fs::read_to_string(file.with_extension("sig")).unwrap();
    std::fs::remove_file(file.with_extension("sig")).unwrap();
    signature
}

/// What `ssh-keygen -Y verify` says: whether the signature is good for `principal`.
fn openssh_verifies(
    dir: &Path,
    signers: &str,
    principal: &str,
    signature: &str,
    payload: &str,
) -> bool {
    let (signers_file, signature_file) = (dir.join("allowed"), dir.join("sig"));
    std::fs::write(&signers_file, signers).unwrap();
    std::fs::write(&signature_file, signature).unwrap();
    let mut child = Command::new("ssh-keygen")
        .args(["-Y", "verify", "-n", NAMESPACE, "-I", principal, "-f"])
        .arg(&signers_file)
        .arg("-s")
        .arg(&signature_file)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // ssh-keygen may decide (and exit) before reading the message, e.g. on a principal it
    // does not find: a broken pipe then is its answer, not the test's failure.
    let written = std::io::Write::write_all(&mut child.stdin.take().unwrap(), payload.as_bytes());
    if let Err(e) = written {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    child.wait().unwrap().success()
}

fn line(principal: &str, options: &str, key: &Path) -> String {
    let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
    let public: Vec<&str> = public.split_whitespace().take(2).collect();
    format!("{principal} {options} {}\n", public.join(" ")).replace("  ", " ")
}

#[test]
fn in_process_verification_agrees_with_ssh_keygen() {
    discern_tests::ensure_debian_tool("ssh-keygen", "openssh-client");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let owner = keygen(d, "owner", &["-t", "ed25519"]);
    let ecdsa = keygen(d, "ecdsa", &["-t", "ecdsa", "-b", "256"]);
    let rsa = keygen(d, "rsa", &["-t", "rsa", "-b", "2048"]);
    let stranger = keygen(d, "stranger", &["-t", "ed25519"]);
    let good = sign(d, &owner, NAMESPACE, PAYLOAD);
    let cases: Vec<(&str, String, String, &str, bool)> = vec![
        (
            "listed key",
            line("owner@x", "", &owner),
            good.clone(),
            PAYLOAD,
            true,
        ),
        (
            "ecdsa key",
            line("e@x", "", &ecdsa),
            sign(d, &ecdsa, NAMESPACE, PAYLOAD),
            PAYLOAD,
            true,
        ),
        (
            "rsa key",
            line("r@x", "", &rsa),
            sign(d, &rsa, NAMESPACE, PAYLOAD),
            PAYLOAD,
            true,
        ),
        (
            "key not listed",
            line("owner@x", "", &stranger),
            good.clone(),
            PAYLOAD,
            false,
        ),
        (
            "another namespace",
            line("owner@x", "", &owner),
            sign(d, &owner, "git", PAYLOAD),
            PAYLOAD,
            false,
        ),
        (
            "changed payload",
            line("owner@x", "", &owner),
            good.clone(),
            "discern-approval-v1\ntrunk evil\n",
            false,
        ),
        (
            "namespaces allows it",
            line("owner@x", "namespaces=\"git,discern-*\"", &owner),
            good.clone(),
            PAYLOAD,
            true,
        ),
        (
            "namespaces excludes it",
            line("owner@x", "namespaces=\"discern-evidence\"", &owner),
            good.clone(),
            PAYLOAD,
            false,
        ),
        (
            "expired",
            line("owner@x", "valid-before=\"20200101\"", &owner),
            good.clone(),
            PAYLOAD,
            false,
        ),
        (
            "valid since",
            line("owner@x", "valid-after=\"20200101\"", &owner),
            good.clone(),
            PAYLOAD,
            true,
        ),
        (
            "garbage signature",
            line("owner@x", "", &owner),
            "-----BEGIN SSH SIGNATURE-----\nAAAA\n-----END SSH SIGNATURE-----\n".to_owned(),
            PAYLOAD,
            false,
        ),
    ];
    for (name, signers, signature, payload, expected) in cases {
        let principal = signers.split_whitespace().next().unwrap();
        let openssh = openssh_verifies(d, &signers, principal, &signature, payload);
        let ours = verify_for(NAMESPACE, signers.as_bytes(), payload, &signature);
        assert_eq!(openssh, expected, "{name}: ssh-keygen -Y verify");
        assert_eq!(ours.is_ok(), expected, "{name}: discern ({ours:?})");
        if let Ok(signer) = ours {
            assert_eq!(signer.principal, principal, "{name}");
            assert!(signer.fingerprint.starts_with("SHA256:"), "{name}");
        }
    }
}

#[test]
fn a_pasted_public_key_file_is_refused_with_its_line_number() {
    discern_tests::ensure_debian_tool("ssh-keygen", "openssh-client");
    let dir = tempfile::tempdir().unwrap();
    let owner = keygen(dir.path(), "owner", &["-t", "ed25519"]);
    let signature = sign(dir.path(), &owner, NAMESPACE, PAYLOAD);
    let pasted = std::fs::read_to_string(owner.with_extension("pub")).unwrap();
    let signers = format!("# the owner\n{pasted}");
    let err = verify_for(NAMESPACE, signers.as_bytes(), PAYLOAD, &signature).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("line 2"), "{text}");
    assert!(text.contains("for example"), "{text}");
}

/// Evidence is signed in-process (`sign_in_process`): OpenSSH verifies what it makes, for the
/// key types it signs with; an RSA key (which ssh-key 0.6 cannot sign with) and a key behind a
/// passphrase are refused, saying why, rather than signing wrongly or prompting.
#[test]
fn in_process_signatures_verify_with_ssh_keygen() {
    discern_tests::ensure_debian_tool("ssh-keygen", "openssh-client");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (name, kind) in [
        ("ed", vec!["-t", "ed25519"]),
        ("ecdsa", vec!["-t", "ecdsa", "-b", "256"]),
    ] {
        let key = keygen(d, name, &kind);
        let text = std::fs::read_to_string(&key).unwrap();
        let signature = discern::testing::approval::sign_in_process(NAMESPACE, &text, PAYLOAD)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let signers = line("ci@example.com", "", &key);
        assert!(
            openssh_verifies(d, &signers, "ci@example.com", &signature, PAYLOAD),
            "{name}: ssh-keygen -Y verify refuses {signature}"
        );
        assert!(
            verify_for(NAMESPACE, signers.as_bytes(), PAYLOAD, &signature).is_ok(),
            "{name}"
        );
    }
    let rsa = keygen(d, "rsa", &["-t", "rsa", "-b", "2048"]);
    let text = std::fs::read_to_string(&rsa).unwrap();
    let refused = discern::testing::approval::sign_in_process(NAMESPACE, &text, PAYLOAD)
        .unwrap_err()
        .to_string();
    assert!(refused.contains("Ed25519"), "{refused}");
    let locked = d.join("locked");
    let status = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "a passphrase", "-f"])
        .arg(&locked)
        .status()
        .unwrap();
    assert!(status.success());
    let text = std::fs::read_to_string(&locked).unwrap();
    let refused = discern::testing::approval::sign_in_process(NAMESPACE, &text, PAYLOAD)
        .unwrap_err()
        .to_string();
    assert!(refused.contains("passphrase"), "{refused}");
}
