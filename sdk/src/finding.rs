use sha2::{Digest, Sha256};

/// A stable fingerprint for a finding: rule + path + whitespace-normalized content +
/// occurrence, hashed (sha256, first 16 bytes, hex). Never a line number.
pub fn fingerprint(rule: &str, path: &str, content: &str, occurrence: usize) -> String {
    let normalized: Vec<&str> = content.split_whitespace().collect();
    let mut hasher = Sha256::new();
    for part in [rule, path, &normalized.join(" "), &occurrence.to_string()] {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut hex = String::with_capacity(32);
    for b in &hasher.finalize()[..16] {
        hex.push(char::from(HEX[usize::from(b >> 4)]));
        hex.push(char::from(HEX[usize::from(b & 0x0f)]));
    }
    hex
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whitespace_does_not_change_identity_but_content_does() {
        let a = fingerprint("todo", "a.rs", "// TODO   fix", 0);
        assert_eq!(a, fingerprint("todo", "a.rs", "  // TODO fix\t", 0));
        assert_ne!(a, fingerprint("todo", "a.rs", "// TODO fix it", 0));
        assert_ne!(a, fingerprint("todo", "b.rs", "// TODO fix", 0));
        assert_ne!(a, fingerprint("todo", "a.rs", "// TODO fix", 1));
        assert_eq!(a.len(), 32);
        // The identity of a finding is part of the contract: it never changes.
        assert_eq!(
            fingerprint("todo", "a.rs", "MARK", 0),
            "55b08313032551e79003e92fe010b060"
        );
    }

    #[test]
    fn parts_cannot_be_shifted_into_each_other() {
        assert_ne!(
            fingerprint("ab", "c", "x", 0),
            fingerprint("a", "bc", "x", 0)
        );
    }
}
