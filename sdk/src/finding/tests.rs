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
