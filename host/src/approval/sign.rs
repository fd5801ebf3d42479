//! Signed approvals: the owner's SSH key signs exactly what is approved, through
//! `ssh-keygen -Y sign -n discern-approval`, and anyone verifies it against the trunk's
//! allowed-signers file (git's format) in-process (SSHSIG through `ssh-key`, as `ssh-keygen -Y
//! verify` checks it): no program found on `PATH` decides whether a signature is good.
//! Published evidence is signed in-process ([`sign_in_process`]): CI's key never reaches a
//! program.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// The signature namespace: a signature made for anything else (a git commit, a file) never
/// verifies as an approval.
pub const NAMESPACE: &str = "discern-approval";

#[derive(Debug, thiserror::Error)]
pub enum SignError {
    #[error("ssh-keygen cannot be run ({0}); install OpenSSH's client (Debian: openssh-client)")]
    Missing(std::io::Error),
    #[error("ssh-keygen could not sign with {key}: {message}")]
    Sign { key: String, message: String },
    #[error("the signature does not verify against the allowed signers: {0}")]
    Invalid(String),
    #[error("cannot stage the file ssh-keygen reads: {0}")]
    Io(#[from] std::io::Error),
}

/// Who signed, as the allowed-signers file names them, and the key's fingerprint.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Signer {
    pub principal: String,
    pub fingerprint: String,
}

/// Sign `payload` with the private key at `key` (or the agent's key for a public key file).
pub fn sign(key: &Path, payload: &str) -> Result<String, SignError> {
    sign_for(NAMESPACE, key, payload)
}

/// [`sign`] for `namespace` (published evidence signs for its own).
pub fn sign_for(namespace: &str, key: &Path, payload: &str) -> Result<String, SignError> {
    let output = run(
        Command::new("ssh-keygen")
            .args(["-Y", "sign", "-n", namespace, "-f"])
            .arg(key),
        payload.as_bytes(),
    )?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    if !output.status.success() || !text.contains("BEGIN SSH SIGNATURE") {
        return Err(SignError::Sign {
            key: key.display().to_string(),
            message: last_line(&output.stderr),
        });
    }
    Ok(text)
}

/// Sign `payload` for `namespace` in this process with `key`, an OpenSSH private key's text
/// (`-----BEGIN OPENSSH PRIVATE KEY-----`, Ed25519 or ECDSA, no passphrase): the armored SSHSIG
/// `ssh-keygen -Y sign` would write (SHA-512), with no program run and no file written, so the
/// key never meets a child process.
pub fn sign_in_process(namespace: &str, key: &str, payload: &str) -> Result<String, SignError> {
    let cannot = |message: String| SignError::Sign {
        key: "the key given".to_owned(),
        message,
    };
    let key = ssh_key::PrivateKey::from_openssh(key.trim())
        .map_err(|e| cannot(format!("it is not an OpenSSH private key ({e})")))?;
    if key.is_encrypted() {
        return Err(cannot(
            "it is protected by a passphrase; a CI signing key has none".to_owned(),
        ));
    }
    // ssh-key 0.6 rebuilds an RSA key from the wrong primes and cannot sign with it.
    if matches!(key.algorithm(), ssh_key::Algorithm::Rsa { .. }) {
        return Err(cannot(
            "it is an RSA key, which cannot sign here; make the CI key an Ed25519 or ECDSA one (`ssh-keygen -t ed25519`)".to_owned(),
        ));
    }
    let signature = key
        .sign(namespace, ssh_key::HashAlg::Sha512, payload.as_bytes())
        .map_err(|e| cannot(format!("signing failed ({e})")))?;
    signature
        .to_pem(ssh_key::LineEnding::LF)
        .map(|pem| format!("{}\n", pem.trim_end()))
        .map_err(|e| cannot(format!("the signature cannot be encoded ({e})")))
}

/// Verify `signature` over `payload` against `signers` (the allowed-signers file's content)
/// for the approval namespace.
pub fn verify(signers: &[u8], payload: &str, signature: &str) -> Result<Signer, SignError> {
    verify_for(NAMESPACE, signers, payload, signature)
}

/// [`verify`] against the allowed-signers file at `path` (its content `signers`): a malformed
/// line is refused naming the file and the line.
pub(crate) fn verify_file(
    (path, signers): (&str, &[u8]),
    payload: &str,
    signature: &str,
) -> Result<Signer, SignError> {
    verify_listed(NAMESPACE, Some(path), signers, payload, signature)
}

/// Verify `signature` over `payload`, made for `namespace`, against `signers`: the signature
/// must be an SSHSIG for exactly that namespace, by a key a line of the file lists, and that
/// line must allow the namespace now (`namespaces=`, `valid-after`, `valid-before`; a
/// `cert-authority` line signs certificates, which discern does not accept).
pub fn verify_for(
    namespace: &str,
    signers: &[u8],
    payload: &str,
    signature: &str,
) -> Result<Signer, SignError> {
    verify_listed(namespace, None, signers, payload, signature)
}

fn verify_listed(
    namespace: &str,
    path: Option<&str>,
    signers: &[u8],
    payload: &str,
    signature: &str,
) -> Result<Signer, SignError> {
    let text = std::str::from_utf8(signers)
        .map_err(|_| SignError::Invalid("the allowed-signers file is not UTF-8".to_owned()))?;
    let listed = super::signers::parse(text).map_err(|e| {
        let e = match path {
            Some(path) => e.in_file(path),
            None => e,
        };
        SignError::Invalid(e.to_string())
    })?;
    let sig = ssh_key::SshSig::from_pem(signature.trim())
        .map_err(|e| SignError::Invalid(format!("it is not an SSH signature ({e})")))?;
    let lines: Vec<_> = listed
        .iter()
        .filter(|l| l.key.key_data() == sig.public_key())
        .collect();
    let Some(line) = lines.iter().find(|l| l.allows(namespace)) else {
        return Err(SignError::Invalid(match lines.first() {
            None => "its key is not in the allowed signers".to_owned(),
            Some(l) => format!(
                "the allowed-signers line of {} does not let its key sign for {namespace:?} now",
                l.principals
            ),
        }));
    };
    line.key
        .verify(namespace, payload.as_bytes(), &sig)
        .map_err(|e| SignError::Invalid(format!("the signature does not verify ({e})")))?;
    Ok(Signer {
        principal: line.principals.clone(),
        fingerprint: line.key.fingerprint(ssh_key::HashAlg::Sha256).to_string(),
    })
}

fn run(command: &mut Command, input: &[u8]) -> Result<std::process::Output, SignError> {
    let mut child = command
        .env("LC_ALL", "C")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(SignError::Missing)?;
    if let Some(mut stdin) = child.stdin.take() {
        // A child that exits before reading everything is judged by its status below.
        let _ = stdin.write_all(input);
    }
    Ok(child.wait_with_output()?)
}

fn last_line(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    text.lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty() && !l.starts_with("Signing data"))
        .unwrap_or("no reason given")
        .to_owned()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_signers_file_that_cannot_be_read_is_named_in_the_refusal() {
        let refused = super::verify_file(
            (
                ".discern/allowed_signers",
                b"owner ssh-ed25519 AAAA-not-base64\n",
            ),
            "payload",
            "not a signature",
        )
        .unwrap_err()
        .to_string();
        assert!(
            refused.contains("line 1 of the allowed-signers file .discern/allowed_signers"),
            "{refused}"
        );
    }
}
