//! The owner's signing key: `--key PATH`, or git's `user.signingkey` as git reads it for
//! `gpg.format = ssh`; the signature made through `ssh-keygen` and verified in-process against
//! the trunk's signers, as `accept` and CI will.

use std::path::{Path, PathBuf};

use super::refused::NotApproved;
use crate::approval;
use crate::git::Repo;
use crate::result::Refused;

/// Whether git's `user.signingkey` names a key here (the owner then needs no `--key`).
pub(super) fn configured(repo: &Repo) -> bool {
    signing_key(repo).is_ok()
}

/// Sign `payload` with the owner's key and verify it as `accept` and CI will.
pub(super) fn signed(
    repo: &Repo,
    policy: &approval::Policy,
    key: Option<&Path>,
    payload: &str,
) -> Result<(approval::Signer, String), Refused> {
    let key = match key {
        Some(key) => Staged::Path(key.to_owned()),
        None => signing_key(repo)?,
    };
    let failed = |e: approval::SignError| Refused::from(NotApproved::NotSigned(e));
    let signature = approval::sign(key.path(), payload).map_err(failed)?;
    let signers = policy
        .signers
        .as_ref()
        .map(|(_, bytes)| bytes.as_slice())
        .unwrap_or_default();
    let signer = approval::verify(signers, payload, &signature).map_err(failed)?;
    Ok((signer, signature))
}

/// A key file for ssh-keygen: a path, or git's `key::` literal staged in a temporary file.
enum Staged {
    Path(PathBuf),
    Literal(tempfile::NamedTempFile),
}

impl Staged {
    fn path(&self) -> &Path {
        match self {
            Staged::Path(path) => path,
            Staged::Literal(file) => file.path(),
        }
    }
}

/// git's `user.signingkey`, as git reads it for `gpg.format = ssh` (a path, `~/` expanded,
/// or a `key::` literal public key whose private half is in the agent).
fn signing_key(repo: &Repo) -> Result<Staged, Refused> {
    let missing = || Refused::from(NotApproved::NoSigningKey);
    let output = crate::git::command()
        .arg("-C")
        .arg(repo.root())
        .args(["config", "--get", "user.signingkey"])
        .output()
        .map_err(|_| missing())?;
    let value = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    if !output.status.success() || value.is_empty() {
        return Err(missing());
    }
    if let Some(literal) = value.strip_prefix("key::") {
        let mut file = tempfile::NamedTempFile::new().map_err(|_| missing())?;
        std::io::Write::write_all(&mut file, format!("{literal}\n").as_bytes())
            .map_err(|_| missing())?;
        return Ok(Staged::Literal(file));
    }
    let path = match value.strip_prefix("~/") {
        Some(rest) => std::env::var_os("HOME")
            .map_or_else(|| PathBuf::from(&value), |h| PathBuf::from(h).join(rest)),
        None => PathBuf::from(&value),
    };
    Ok(Staged::Path(path))
}
