//! SHA-256 digests: component identity, cache keys, artifact contents.

use sha2::{Digest as _, Sha256};

#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest([u8; 32]);

impl Digest {
    pub fn of(bytes: &[u8]) -> Self {
        Self(Sha256::digest(bytes).into())
    }

    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The digest of `parts`, each prefixed with its length, so no two lists of parts meet.
    pub fn of_parts(parts: &[&[u8]]) -> Self {
        let mut hasher = Parts::default();
        for part in parts {
            hasher.part(&[part]);
        }
        hasher.finish()
    }

    pub fn hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The first 16 bytes in hex: a fingerprint's length.
    pub fn short_hex(&self) -> String {
        self.0[..16].iter().map(|b| format!("{b:02x}")).collect()
    }
}

impl std::fmt::Display for Digest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.hex())
    }
}

impl std::fmt::Debug for Digest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Digest({})", self.hex())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_value() {
        assert_eq!(
            Digest::of(b"abc").hex(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}

/// [`Digest::of_parts`], fed one part at a time (a long list is not gathered first).
#[derive(Default)]
pub(crate) struct Parts(Sha256);

impl Parts {
    /// One part, the concatenation of `pieces`.
    pub(crate) fn part(&mut self, pieces: &[&[u8]]) {
        let len: usize = pieces.iter().map(|p| p.len()).sum();
        self.0.update((len as u64).to_le_bytes());
        for piece in pieces {
            self.0.update(piece);
        }
    }

    pub(crate) fn finish(self) -> Digest {
        Digest(self.0.finalize().into())
    }
}
