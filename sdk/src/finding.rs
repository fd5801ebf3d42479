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
mod tests;
