mod lanes;

/// Lines in `bytes`: newline-terminated lines plus a final line without a newline.
pub fn count_lines(bytes: &[u8]) -> u64 {
    let mut counter = TextCounter::default();
    counter.feed(bytes);
    counter.finish().lines
}

/// Words in `bytes`, as `wc -w` counts them under `LC_ALL=C.UTF-8` (GNU coreutils 9, as Debian
/// ships it): maximal runs of characters that are not separators. See [`is_word_separator`].
pub fn count_words(bytes: &[u8]) -> u64 {
    let mut counter = TextCounter::default();
    counter.feed(bytes);
    counter.finish().words
}

/// Git's heuristic: a file with a NUL byte in its first 8,000 bytes is binary.
pub fn is_binary(bytes: &[u8]) -> bool {
    memchr::memchr(0, &bytes[..bytes.len().min(8000)]).is_some()
}

/// Line, word and byte counts of one text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TextStats {
    pub lines: u64,
    pub words: u64,
    pub bytes: u64,
}

/// The characters that separate words, as `wc -w` sees them under `LC_ALL=C.UTF-8` (coreutils
/// 9.1 with glibc: `iswspace` or a no-break space): the ASCII space, `\t`, `\n`, `\v`, `\f`,
/// `\r`, and U+00A0, U+1680, U+2000 to U+200A, U+202F, U+205F, U+2060 and U+3000. Every other
/// character belongs to a word. A byte that is not part of a valid UTF-8 character is passed
/// over as `wc` passes over it: it neither starts a word nor ends one (`a\xffb` is one word,
/// `\xff` alone none).
pub fn is_word_separator(c: char) -> bool {
    matches!(
        c,
        ' ' | '\t' | '\n' | '\u{0b}' | '\u{0c}' | '\r' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}' | '\u{202f}' | '\u{205f}' | '\u{2060}' | '\u{3000}'
    )
}

/// Counts lines and words over a text fed in chunks of any size, so a file larger than
/// memory can be streamed through [`read_range`](crate::Snapshot::read_range). Lines are
/// newline-terminated lines plus a final line without a newline; words as [`count_words`].
#[derive(Debug, Default, Clone)]
pub struct TextCounter {
    stats: TextStats,
    in_word: bool,
    last: Option<u8>,
    /// The start of a UTF-8 character cut by the end of the previous chunk.
    pending: Vec<u8>,
}

impl TextCounter {
    pub fn feed(&mut self, chunk: &[u8]) {
        self.stats.lines += lanes::newlines(chunk);
        self.stats.bytes += chunk.len() as u64;
        if let Some(&b) = chunk.last() {
            self.last = Some(b);
        }
        // Only a character cut by the previous chunk needs the bytes joined; otherwise the
        // chunk is walked where it lies.
        if self.pending.is_empty() {
            self.walk(chunk, false);
        } else {
            let mut data = std::mem::take(&mut self.pending);
            data.extend_from_slice(chunk);
            self.walk(&data, false);
        }
    }

    /// Every character of `data`, a cut one at its end kept pending unless `data` is the end of
    /// the text. ASCII, nearly every byte of source code, is judged without decoding (the same
    /// answer `is_word_separator` gives).
    fn walk(&mut self, data: &[u8], end: bool) {
        let mut i = 0;
        while i < data.len() {
            if let Some(words) = data.get(i..i + lanes::BLOCK).and_then(lanes::word_bytes) {
                // A word starts at a word byte after a separator (or after the previous
                // bytes' separator, for the first).
                let after = (words << 1) | u64::from(self.in_word);
                self.stats.words += u64::from((words & !after).count_ones());
                self.in_word = words >> 63 == 1;
                i += lanes::BLOCK;
                continue;
            }
            if let Some(eight) = data.get(i..i + 8)
                && let Some(ascii) = Ascii8::new(eight)
            {
                self.stats.words += ascii.word_starts(self.in_word);
                self.in_word = ascii.ends_in_word();
                i += 8;
                continue;
            }
            let lead = data[i];
            if lead.is_ascii() {
                self.word_boundary(lanes::separates(lead));
                i += 1;
                continue;
            }
            let len = utf8_len(lead);
            if i + len > data.len() && !end {
                self.pending = data[i..].to_vec();
                return;
            }
            match data.get(i..i + len).map(std::str::from_utf8) {
                Some(Ok(text)) => {
                    self.word_boundary(text.chars().all(is_word_separator));
                    i += len;
                }
                // Not a character (or cut short by the end): the byte is passed over.
                _ => i += 1,
            }
        }
    }

    fn word_boundary(&mut self, separator: bool) {
        self.stats.words += u64::from(!separator && !self.in_word);
        self.in_word = !separator;
    }

    pub fn finish(mut self) -> TextStats {
        let pending = std::mem::take(&mut self.pending);
        self.walk(&pending, true);
        if matches!(self.last, Some(b) if b != b'\n') {
            self.stats.lines += 1;
        }
        self.stats
    }
}

/// Eight ASCII bytes judged at once (SWAR): which are word separators, and where words start.
struct Ascii8 {
    /// The high bit of each byte that is not a separator.
    in_word: u64,
}

impl Ascii8 {
    const HIGH: u64 = 0x8080_8080_8080_8080;

    /// `None` unless all eight bytes are ASCII.
    fn new(eight: &[u8]) -> Option<Self> {
        let x = u64::from_le_bytes(eight.try_into().ok()?);
        if x & Self::HIGH != 0 {
            return None;
        }
        let lanes = |b: u8| u64::from_le_bytes([b; 8]);
        // Each byte is below 0x80 and each constant below 0x80: no sum carries into the next.
        let space = x ^ lanes(b' ');
        let is_space = !(((space & lanes(0x7f)) + lanes(0x7f)) | space) & Self::HIGH;
        let from_tab = x + lanes(0x80 - 0x09); // high bit: byte >= \t
        let past_cr = x + lanes(0x80 - 0x0e); // high bit: byte > \r
        let separator = (is_space | (from_tab & !past_cr)) & Self::HIGH;
        Some(Self {
            in_word: !separator & Self::HIGH,
        })
    }

    /// Words that start in these bytes: a word byte after a separator (or after the previous
    /// chunk's separator, when `in_word` is false).
    fn word_starts(&self, in_word: bool) -> u64 {
        // Byte k follows a separator when byte k - 1 is no word byte; byte 0 follows the
        // previous bytes.
        let first = if in_word { 0 } else { 0x80 };
        let after_separator = (!(self.in_word << 8) & Self::HIGH & !0x80) | first;
        u64::from((self.in_word & after_separator).count_ones())
    }

    fn ends_in_word(&self) -> bool {
        self.in_word >> 63 == 1
    }
}

/// The length of the UTF-8 sequence `lead` starts (1 for ASCII and for invalid bytes).
fn utf8_len(lead: u8) -> usize {
    match lead {
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ascii_shortcut_is_the_separator_set() {
        for b in 0u8..0x80 {
            let fast = lanes::separates(b);
            assert_eq!(fast, is_word_separator(char::from(b)), "byte {b:#x}");
        }
    }

    #[test]
    fn chunks_of_any_size_count_the_same() {
        let mut bytes = "a\u{a0}b  ç\u{3000}d\te".as_bytes().to_vec();
        bytes.extend_from_slice(&[0xff, b'x', 0xe3, 0x80]);
        let whole = {
            let mut c = TextCounter::default();
            c.feed(&bytes);
            c.finish()
        };
        for size in 1..bytes.len() {
            let mut c = TextCounter::default();
            for chunk in bytes.chunks(size) {
                c.feed(chunk);
            }
            assert_eq!(c.finish(), whole, "chunks of {size}");
        }
    }

    /// The SWAR shortcut and the chunking agree with the definition, decoded character by
    /// character, over pseudo-random texts of separators, ASCII, multi-byte and invalid bytes.
    #[test]
    fn words_agree_with_the_separator_set_on_random_texts() {
        let pieces: [&[u8]; 13] = [
            b" ",
            b"\t",
            b"\n",
            b"\x0b",
            b"\x0c",
            b"\r",
            b"a",
            b"word",
            b"\xff",
            "\u{3000}".as_bytes(),
            "é".as_bytes(),
            b"\x1f",
            // Long enough that whole blocks of ASCII are judged at once.
            b"fn main() {\n    let quick = brown(fox);\r\n\tjumps\x0bover\x0c}\n",
        ];
        for b in 0u8..0x80 {
            let text = [b'a', b, b'a', b' ', b, b, b'x', b, b];
            let reference = characters(&text)
                .split(is_word_separator)
                .filter(|w| !w.is_empty())
                .count() as u64;
            assert_eq!(count_words(&text), reference, "byte {b:#x}");
        }
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..2000 {
            let mut text = Vec::new();
            for _ in 0..(state % 96) {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                text.extend_from_slice(pieces[(state % 13) as usize]);
            }
            let reference = characters(&text)
                .split(is_word_separator)
                .filter(|w| !w.is_empty())
                .count() as u64;
            assert_eq!(count_words(&text), reference, "{text:?}");
            let mut c = TextCounter::default();
            for chunk in text.chunks(1 + (state % 11) as usize) {
                c.feed(chunk);
            }
            assert_eq!(c.finish().words, reference, "chunked {text:?}");
        }
    }

    /// The characters of `text`, the bytes that are none left out (as `wc` passes over them).
    fn characters(text: &[u8]) -> String {
        text.utf8_chunks().map(|chunk| chunk.valid()).collect()
    }

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
    fn words_split_as_wc_does_in_c_utf8() {
        assert_eq!(count_words(b"a\x0bb\x0cc\rd"), 4);
        for separator in ["\u{a0}", "\u{2003}", "\u{3000}", "\u{2060}", "\u{202f}"] {
            assert_eq!(
                count_words(format!("a{separator}b").as_bytes()),
                2,
                "{separator:?}"
            );
        }
        for joiner in ["\u{85}", "\u{200b}", "\u{2028}", "é"] {
            assert_eq!(
                count_words(format!("a{joiner}b").as_bytes()),
                1,
                "{joiner:?}"
            );
        }
        // Bytes that are no character are passed over (coreutils 9.1, checked by hand).
        assert_eq!(count_words(b"a\xffb c"), 2);
        assert_eq!(count_words(b"\xe3\x80"), 0);
        assert_eq!(count_words(b"\xff\x80 x"), 1);
        assert_eq!(count_words(b"\xe3\x80a"), 1);
        assert_eq!(count_words(b"\xe3\x80\xe3\x80\x80"), 0);
        assert_eq!(count_words(b"\xed\xa0\x80"), 0);
        assert_eq!(count_words(b"a\xc3 b"), 2);
    }

    #[test]
    fn chunk_boundaries_do_not_change_counts() {
        let text = "alpha beta\ngamma\u{3000}delta\nepsilon".as_bytes();
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
            let mut bytewise = TextCounter::default();
            text.iter().for_each(|b| bytewise.feed(&[*b]));
            assert_eq!(bytewise.finish(), whole);
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
