/// Lines in `bytes`: newline-terminated lines plus a final line without a newline.
pub fn count_lines(bytes: &[u8]) -> u64 {
    let mut counter = TextCounter::default();
    counter.feed(bytes);
    counter.finish().lines
}

/// Words in `bytes`: maximal runs of non-whitespace bytes (ASCII whitespace, as `wc -w`).
pub fn count_words(bytes: &[u8]) -> u64 {
    let mut counter = TextCounter::default();
    counter.feed(bytes);
    counter.finish().words
}

/// Git's heuristic: a file with a NUL byte in its first 8,000 bytes is binary.
pub fn is_binary(bytes: &[u8]) -> bool {
    bytes.iter().take(8000).any(|&b| b == 0)
}

/// Line, word and byte counts of one text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TextStats {
    pub lines: u64,
    pub words: u64,
    pub bytes: u64,
}

/// Counts lines and words over a text fed in chunks of any size, so a file larger than
/// memory can be streamed through [`read_range`](crate::Snapshot::read_range).
#[derive(Debug, Default, Clone)]
pub struct TextCounter {
    stats: TextStats,
    in_word: bool,
    last: Option<u8>,
}

impl TextCounter {
    pub fn feed(&mut self, chunk: &[u8]) {
        let mut words = 0;
        let mut in_word = self.in_word;
        let mut newlines = 0;
        for &b in chunk {
            newlines += u64::from(b == b'\n');
            let space = b.is_ascii_whitespace();
            words += u64::from(!space && !in_word);
            in_word = !space;
        }
        self.in_word = in_word;
        self.stats.lines += newlines;
        self.stats.words += words;
        self.stats.bytes += chunk.len() as u64;
        if let Some(&b) = chunk.last() {
            self.last = Some(b);
        }
    }

    pub fn finish(mut self) -> TextStats {
        if matches!(self.last, Some(b) if b != b'\n') {
            self.stats.lines += 1;
        }
        self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines() {
        assert_eq!(count_lines(b""), 0);
        assert_eq!(count_lines(b"a"), 1);
        assert_eq!(count_lines(b"a\n"), 1);
        assert_eq!(count_lines(b"a\nb"), 2);
        assert_eq!(count_lines(b"\n\n"), 2);
    }

    #[test]
    fn words() {
        assert_eq!(count_words(b""), 0);
        assert_eq!(count_words(b"  one two\tthree\nfour  "), 4);
        assert_eq!(count_words("héllo wörld".as_bytes()), 2);
    }

    #[test]
    fn chunk_boundaries_do_not_change_counts() {
        let text = b"alpha beta\ngamma  delta\nepsilon";
        let whole = {
            let mut c = TextCounter::default();
            c.feed(text);
            c.finish()
        };
        for split in 0..text.len() {
            let mut c = TextCounter::default();
            c.feed(&text[..split]);
            c.feed(&text[split..]);
            assert_eq!(c.finish(), whole, "split at {split}");
        }
        assert_eq!(
            whole,
            TextStats {
                lines: 3,
                words: 5,
                bytes: text.len() as u64
            }
        );
    }

    #[test]
    fn binary() {
        assert!(is_binary(b"ab\0c"));
        assert!(!is_binary(b"plain text"));
    }
}
