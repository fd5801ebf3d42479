//! A published evidence entry: the unit that travels between clones (the git evidence ref) and
//! through a remote cache (the Bazel HTTP protocol), always signed.
//!
//! A bundle is the entry's JSON exactly as the local store keeps it, its findings file if it has
//! one, and an SSH signature (namespace [`NAMESPACE`]) over the [`Bundle::manifest`], which names
//! the repository the evidence was made for and the digest of each part. Readers treat every
//! source as untrusted storage: a bundle counts only when its signature verifies against the
//! trunk's allowed-signers file in this namespace, its manifest names this repository, and its
//! entry is valid on the snapshot by its read set; anything else is a miss and the producer runs.

use crate::digest::Digest;

/// The SSH signature namespace of published evidence. A key allowed only for approvals
/// (`namespaces="discern-approval"`) cannot sign evidence, and an evidence key cannot approve.
pub const NAMESPACE: &str = "discern-evidence";

/// The format tag in every manifest and remote key.
pub(crate) const FORMAT: &str = "discern-evidence/v1";

/// One published entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bundle {
    /// The entry's JSON (the store's `<digest>.json`).
    pub entry: Vec<u8>,
    /// Its findings file (`<digest>.findings`), when the entry has findings.
    pub findings: Option<Vec<u8>>,
    /// The armored SSH signature (`-----BEGIN SSH SIGNATURE-----`) over [`Bundle::manifest`].
    pub signature: Vec<u8>,
}

impl Bundle {
    /// The bytes a publisher signs: the format, the repository the evidence is for, and the
    /// digests of the entry and its findings. Changing any byte of either part, or replaying
    /// the bundle into another repository, breaks the signature.
    pub fn manifest(repository: &str, entry: &[u8], findings: Option<&[u8]>) -> Vec<u8> {
        let findings = findings.map_or_else(|| "none".to_owned(), |f| Digest::of(f).hex());
        format!(
            "{FORMAT}\nrepository {repository}\nentry {}\nfindings {findings}\n",
            Digest::of(entry).hex()
        )
        .into_bytes()
    }

    /// This bundle's manifest for `repository`.
    pub fn manifest_for(&self, repository: &str) -> Vec<u8> {
        Self::manifest(repository, &self.entry, self.findings.as_deref())
    }
}

/// The key a remote cache keeps the bundles of (`identity`, `commit`) under (a Bazel action
/// cache key): one per execution identity and measured commit, in one repository.
pub fn remote_key(repository: &str, identity: &str, commit: &str) -> Digest {
    Digest::of_parts(&[
        FORMAT.as_bytes(),
        repository.as_bytes(),
        identity.as_bytes(),
        commit.as_bytes(),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manifest_names_the_repository_and_each_part() {
        let a = Bundle::manifest("acme/app", b"{}", None);
        assert_ne!(a, Bundle::manifest("acme/other", b"{}", None));
        assert_ne!(a, Bundle::manifest("acme/app", b"{ }", None));
        assert_ne!(a, Bundle::manifest("acme/app", b"{}", Some(b"")));
    }

    #[test]
    fn remote_keys_differ_by_each_part() {
        let k = remote_key("r", "i", "c");
        assert_ne!(k, remote_key("r2", "i", "c"));
        assert_ne!(k, remote_key("r", "i2", "c"));
        assert_ne!(k, remote_key("r", "i", "c2"));
    }
}
