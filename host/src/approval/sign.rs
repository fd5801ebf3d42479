//! Signed approvals: the owner's SSH key signs exactly what is approved, through
//! `ssh-keygen -Y sign -n discern-approval`, and anyone verifies it against the trunk's
//! allowed-signers file (git's format) with `ssh-keygen -Y verify`.

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
    let output = run(
        Command::new("ssh-keygen")
            .args(["-Y", "sign", "-n", NAMESPACE, "-f"])
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

/// Verify `signature` over `payload` against `signers` (the allowed-signers file's content).
pub fn verify(signers: &[u8], payload: &str, signature: &str) -> Result<Signer, SignError> {
    let dir = tempfile::tempdir()?;
    let (signers_path, signature_path) = (dir.path().join("signers"), dir.path().join("sig"));
    std::fs::write(&signers_path, signers)?;
    std::fs::write(&signature_path, signature)?;
    let found = run(
        Command::new("ssh-keygen")
            .args(["-Y", "find-principals", "-s"])
            .arg(&signature_path)
            .arg("-f")
            .arg(&signers_path),
        b"",
    )?;
    let principals = String::from_utf8_lossy(&found.stdout).into_owned();
    let Some(principal) = principals.lines().map(str::trim).find(|p| !p.is_empty()) else {
        return Err(SignError::Invalid(
            "its key is not in the allowed signers".to_owned(),
        ));
    };
    let verified = run(
        Command::new("ssh-keygen")
            .args(["-Y", "verify", "-n", NAMESPACE, "-I", principal, "-f"])
            .arg(&signers_path)
            .arg("-s")
            .arg(&signature_path),
        payload.as_bytes(),
    )?;
    let said = String::from_utf8_lossy(&verified.stdout).into_owned();
    if !verified.status.success() || !said.starts_with("Good ") {
        return Err(SignError::Invalid(last_line(&verified.stderr)));
    }
    let fingerprint = said
        .split_whitespace()
        .find(|w| w.starts_with("SHA256:"))
        .unwrap_or("unknown")
        .to_owned();
    Ok(Signer {
        principal: principal.to_owned(),
        fingerprint,
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
