use sha2::{Digest, Sha256};

/// A stable fingerprint for a finding: rule + path + whitespace-normalized content +
/// occurrence, hashed (sha256, first 16 bytes, hex). Never a line number.
pub fn fingerprint(rule: &str, path: &str, content: &str, occurrence: usize) -> String {
    let mut hasher = Sha256::new();
    part(&mut hasher, rule.as_bytes());
    part(&mut hasher, path.as_bytes());
    normalized_part(&mut hasher, content);
    let mut digits = [0u8; 20];
    part(&mut hasher, decimal(occurrence, &mut digits));
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut hex = String::with_capacity(32);
    for b in &hasher.finalize()[..16] {
        hex.push(char::from(HEX[usize::from(b >> 4)]));
        hex.push(char::from(HEX[usize::from(b & 0x0f)]));
    }
    hex
}

/// One part of the hashed text: its length, then its bytes.
fn part(hasher: &mut Sha256, bytes: &[u8]) {
    hasher.update((bytes.len() as u64).to_le_bytes());
    hasher.update(bytes);
}

/// `content`'s words joined by single spaces, as one part, hashed where they lie: a finding is
/// made for every match, so no joined copy is built.
fn normalized_part(hasher: &mut Sha256, content: &str) {
    // Nearly every match is ASCII without whitespace: already normalized.
    if content.bytes().all(|b| b.is_ascii_graphic()) {
        return part(hasher, content.as_bytes());
    }
    let (words, bytes) = content
        .split_whitespace()
        .fold((0usize, 0usize), |(n, len), w| (n + 1, len + w.len()));
    hasher.update(((bytes + words.saturating_sub(1)) as u64).to_le_bytes());
    for (i, word) in content.split_whitespace().enumerate() {
        if i > 0 {
            hasher.update(b" ");
        }
        hasher.update(word.as_bytes());
    }
}

/// `n` in decimal, as `to_string` writes it, in `buffer`.
fn decimal(mut n: usize, buffer: &mut [u8; 20]) -> &[u8] {
    let mut at = buffer.len();
    loop {
        at -= 1;
        buffer[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buffer[at..];
        }
    }
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

    /// The streamed hash is the one the definition gives: the words joined, the occurrence
    /// written out.
    #[test]
    fn the_streamed_hash_is_the_joined_one() {
        let joined = |rule: &str, path: &str, content: &str, occurrence: usize| {
            let words: Vec<&str> = content.split_whitespace().collect();
            let mut hasher = Sha256::new();
            for part in [rule, path, &words.join(" "), &occurrence.to_string()] {
                hasher.update((part.len() as u64).to_le_bytes());
                hasher.update(part.as_bytes());
            }
            let digest = hasher.finalize();
            digest[..16]
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
        };
        let contents = [
            "",
            " ",
            "MARK",
            "// MARK   fix",
            "\tx\u{a0}y\u{3000}",
            "  a  b  ",
            "é ü",
            "x\r\n",
        ];
        for content in contents {
            for occurrence in [0, 7, 10, 12345, usize::MAX] {
                assert_eq!(
                    fingerprint("r", "p.rs", content, occurrence),
                    joined("r", "p.rs", content, occurrence),
                    "{content:?} {occurrence}"
                );
            }
        }
    }

    #[test]
    fn parts_cannot_be_shifted_into_each_other() {
        assert_ne!(
            fingerprint("ab", "c", "x", 0),
            fingerprint("a", "bc", "x", 0)
        );
    }
}
