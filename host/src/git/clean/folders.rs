//! The index's tracked folders: each with its tracked files (found by a key of their first
//! bytes, then by name) and its tracked subfolders, read from the index's sorted paths in one
//! pass. A folder names its files by their entries (four bytes each), whose paths the index
//! holds already.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use gix::index::State;

/// The index's paths, by entry.
pub(super) trait Paths {
    /// The path of entry `index`.
    fn path(&self, index: usize) -> &[u8];
}

impl Paths for State {
    fn path(&self, index: usize) -> &[u8] {
        self.entries()[index].path(self).as_ref()
    }
}

impl Paths for [&[u8]] {
    fn path(&self, index: usize) -> &[u8] {
        self[index]
    }
}

/// One tracked folder, as the index knows it.
pub(super) struct Folder<'a> {
    /// Empty for the root, else ending in `/`.
    pub(super) prefix: Vec<u8>,
    /// The entries of the tracked files directly in it, sorted by name (an index counts its
    /// entries in 32 bits).
    pub(super) files: Vec<u32>,
    /// The [`name_key`] of each of `files`, in the same order (so sorted too).
    keys: Vec<u64>,
    /// Names of tracked subfolders, sorted.
    subfolders: Vec<&'a [u8]>,
}

impl Folder<'_> {
    /// The name in this folder of the tracked file at `files[at]`, whose paths are `paths`.
    fn name<'p, P: Paths + ?Sized>(&self, paths: &'p P, at: usize) -> &'p [u8] {
        &paths.path(self.files[at] as usize)[self.prefix.len()..]
    }

    /// Where in `files` the tracked file `name` is: found among the keys (one word each), and
    /// only then among the names that share its key (read from `paths`).
    pub(super) fn file<P: Paths + ?Sized>(&self, paths: &P, name: &[u8]) -> Option<usize> {
        let key = name_key(name);
        let from = self.keys.partition_point(|k| *k < key);
        let to = from + self.keys[from..].partition_point(|k| *k == key);
        let at = from + partition_point(from..to, |at| self.name(paths, at) < name);
        (at < to && self.name(paths, at) == name).then_some(at)
    }

    pub(super) fn has_subfolder(&self, name: &[u8]) -> bool {
        self.subfolders.binary_search(&name).is_ok()
    }
}

/// The first 8 bytes of `name` as one big-endian word, zero-padded: names in byte order have
/// their keys in order (a name holds no NUL, so a shorter name's padding sorts first).
fn name_key(name: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    let n = name.len().min(8);
    word[..n].copy_from_slice(&name[..n]);
    u64::from_be_bytes(word)
}

/// Every tracked folder below `prefix`, whose sorted index paths are entries `range` of
/// `paths`, in one pass: a subfolder's paths are a contiguous run, skipped with a binary search.
pub(super) fn tracked_folders<'a, P: Paths + ?Sized>(
    paths: &'a P,
    prefix: Vec<u8>,
    range: Range<usize>,
    folders: &mut Vec<Folder<'a>>,
) {
    let mut folder = Folder {
        prefix,
        files: Vec::new(),
        keys: Vec::new(),
        subfolders: Vec::new(),
    };
    let mut below = Vec::new();
    let mut at = range.start;
    while at < range.end {
        let path = paths.path(at);
        let rest = &path[folder.prefix.len()..];
        match rest.iter().position(|b| *b == b'/') {
            Some(slash) => {
                let sub = &path[..folder.prefix.len() + slash + 1];
                let len = partition_point(at..range.end, |i| paths.path(i).starts_with(sub));
                folder.subfolders.push(&rest[..slash]);
                below.push((sub.to_vec(), at..at + len));
                at += len;
            }
            None => {
                // The caller holds an index of fewer than 2^32 entries (`walk_only`).
                folder.files.push(at as u32);
                at += 1;
            }
        }
    }
    // Index order is byte order of whole paths: the files come sorted, the subfolders need
    // not (`b-c/…` sorts before `b/…`).
    let skip = folder.prefix.len();
    folder.files.sort_unstable_by(|&a, &b| {
        paths.path(a as usize)[skip..].cmp(&paths.path(b as usize)[skip..])
    });
    folder.keys = (folder.files.iter())
        .map(|&at| name_key(&paths.path(at as usize)[skip..]))
        .collect();
    folder.files.shrink_to_fit();
    folder.subfolders.sort_unstable();
    folders.push(folder);
    for (sub, range) in below {
        tracked_folders(paths, sub, range, folders);
    }
}

/// How many of the entries `range` (from its start) `holds`: those that do come first.
fn partition_point(range: Range<usize>, holds: impl Fn(usize) -> bool) -> usize {
    let (mut low, mut high) = (range.start, range.end);
    while low < high {
        let mid = low + (high - low) / 2;
        match holds(mid) {
            true => low = mid + 1,
            false => high = mid,
        }
    }
    low - range.start
}

/// The folders of `folders` that hold one of `paths`: the deepest tracked folder each path is
/// in, and the tracked folder a path names (with or without its trailing `/`).
pub(super) fn holding<'a>(folders: Vec<Folder<'a>>, paths: &[String]) -> Vec<Folder<'a>> {
    let at: HashMap<&[u8], usize> = folders
        .iter()
        .enumerate()
        .map(|(i, f)| (f.prefix.as_slice(), i))
        .collect();
    let mut wanted = HashSet::new();
    for path in paths {
        let mut prefix = Vec::new();
        for part in path.trim_end_matches('/').split('/') {
            let mut deeper = prefix.clone();
            deeper.extend_from_slice(part.as_bytes());
            deeper.push(b'/');
            if !at.contains_key(deeper.as_slice()) {
                break;
            }
            prefix = deeper;
        }
        wanted.extend(at.get(prefix.as_slice()).copied());
    }
    folders
        .into_iter()
        .enumerate()
        .filter(|(i, _)| wanted.contains(i))
        .map(|(_, f)| f)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{Folder, tracked_folders};

    /// Names that share their first 8 bytes, shorter than 8, one a prefix of another, and
    /// past ASCII: the keyed lookup finds exactly the names a plain search finds.
    #[test]
    fn a_folder_finds_exactly_its_tracked_names() {
        let names: Vec<String> = [
            "a",
            "ab",
            "abcdefgh",
            "abcdefgh.rs",
            "abcdefghi",
            "abcdefgz",
            "component_alpha.rs",
            "component_beta.rs",
            "component_",
            "z",
            "\u{e9}t\u{e9}.md",
            "\u{e9}t\u{e9}",
            "~",
        ]
        .iter()
        .map(|n| format!("src/{n}"))
        .collect();
        let mut paths: Vec<&[u8]> = names.iter().map(|n| n.as_bytes()).collect();
        paths.sort_unstable();
        let mut folders = Vec::new();
        let paths: &[&[u8]] = &paths;
        tracked_folders(paths, Vec::new(), 0..paths.len(), &mut folders);
        let src: &Folder = folders.iter().find(|f| f.prefix == b"src/").unwrap();
        assert_eq!(src.files.len(), names.len());
        for at in 0..src.files.len() {
            let name = src.name(paths, at);
            assert_eq!(
                src.file(paths, name),
                Some(at),
                "{}",
                String::from_utf8_lossy(name)
            );
        }
        for absent in [
            "",
            "abcdefg",
            "abcdefgh.r",
            "abcdefgha",
            "component",
            "component_g",
            "zz",
        ] {
            assert_eq!(src.file(paths, absent.as_bytes()), None, "{absent}");
        }
    }
}
