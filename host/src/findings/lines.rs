//! A file's lines as findings are placed on them: `git grep`'s line model (split at `\n`; a
//! final newline ends the last line, it does not start an empty one; `\r` is part of its line),
//! each line's normalized content, and its rank among the lines of the file with the same
//! normalized content (0 for the first such line, 1 for the second, …), as GitHub code
//! scanning's `primaryLocationLineHash` counts identical lines.
//!
//! Normalized content: the line's words (runs of bytes other than ASCII whitespace) joined by one
//! space, so indentation, trailing blanks and a `\r` do not change what a line is.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};

use sha2::{Digest, Sha256};

/// The sha256 of a line's normalized content.
pub(super) type Content = [u8; 32];

/// What one line of a file is, for a finding placed on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Line {
    pub content: Content,
    /// How many earlier lines of the file have the same normalized content.
    pub rank: u32,
}

/// The lines `wanted` (1-based) of the file `content`; a number past the last line has no
/// entry. Every line up to the last one wanted is looked at, since a rank counts the identical
/// lines before it, but only a line that may read like a wanted one (the same first and last
/// byte once trimmed, which normalizing keeps) is normalized and compared.
pub(super) fn lines(content: &[u8], wanted: &BTreeSet<u32>) -> HashMap<u32, Line> {
    let mut found = HashMap::with_capacity(wanted.len());
    let Some(&last_wanted) = wanted.last() else {
        return found;
    };
    if content.is_empty() {
        return found;
    }
    let body = content.strip_suffix(b"\n").unwrap_or(content);
    let numbered = || {
        body.split(|&b| b == b'\n')
            .zip(1..=last_wanted)
            .map(|(line, number)| (number, line))
    };
    // The wanted lines' contents, each with its digest and how many lines read so far.
    let mut contents: HashMap<Cow<[u8]>, (Content, u32)> = HashMap::new();
    let mut ends = Ends::default();
    for (_, line) in numbered().filter(|(n, _)| wanted.contains(n)) {
        ends.insert(line);
        contents
            .entry(normalized(line))
            .or_insert_with_key(|key| (Sha256::digest(key).into(), 0));
    }
    for (number, line) in numbered() {
        if !ends.contains(line) {
            continue;
        }
        if let Some((content, seen)) = contents.get_mut(&normalized(line)) {
            if wanted.contains(&number) {
                let (content, rank) = (*content, *seen);
                found.insert(number, Line { content, rank });
            }
            *seen += 1;
        }
    }
    found
}

/// A set of lines' first and last bytes once trimmed (what normalizing leaves as they are), as
/// a bitmap: looked up for every line of a file, so no hashing.
struct Ends {
    pairs: Box<[u64; 1024]>,
    blank: bool,
}

impl Default for Ends {
    fn default() -> Self {
        Self {
            pairs: Box::new([0; 1024]),
            blank: false,
        }
    }
}

impl Ends {
    /// The bit of a line (`None`: a blank line).
    fn bit(line: &[u8]) -> Option<usize> {
        let trimmed = line.trim_ascii();
        let (first, last) = (trimmed.first()?, trimmed.last()?);
        Some(usize::from(*first) << 8 | usize::from(*last))
    }

    fn insert(&mut self, line: &[u8]) {
        match Self::bit(line) {
            Some(bit) => self.pairs[bit / 64] |= 1 << (bit % 64),
            None => self.blank = true,
        }
    }

    fn contains(&self, line: &[u8]) -> bool {
        match Self::bit(line) {
            Some(bit) => self.pairs[bit / 64] & (1 << (bit % 64)) != 0,
            None => self.blank,
        }
    }
}

/// `line`'s words joined by single spaces; borrowed when it already is that (most lines, once
/// their indentation is cut).
pub(super) fn normalized(line: &[u8]) -> Cow<'_, [u8]> {
    let trimmed = line.trim_ascii();
    let collapsed = trimmed
        .windows(2)
        .all(|pair| !(pair[0].is_ascii_whitespace() && pair[1].is_ascii_whitespace()))
        && trimmed
            .iter()
            .all(|&b| b == b' ' || !b.is_ascii_whitespace());
    if collapsed {
        return Cow::Borrowed(trimmed);
    }
    let words: Vec<&[u8]> = trimmed
        .split(u8::is_ascii_whitespace)
        .filter(|w| !w.is_empty())
        .collect();
    Cow::Owned(words.join(&b' '))
}

#[cfg(test)]
mod tests;
