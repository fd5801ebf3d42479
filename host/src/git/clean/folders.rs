//! The index's tracked folders: each with its tracked files (found by a key of their first
//! bytes, then by name) and its tracked subfolders, read from the index's sorted paths in one
//! pass.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

/// One tracked folder, as the index knows it.
pub(super) struct Folder<'a> {
    /// Empty for the root, else ending in `/`.
    pub(super) prefix: Vec<u8>,
    /// Tracked files directly in it, sorted by name: name and index of the entry.
    pub(super) files: Vec<(&'a [u8], usize)>,
    /// The [`name_key`] of each of `files`, in the same order (so sorted too).
    keys: Vec<u64>,
    /// Names of tracked subfolders, sorted.
    subfolders: Vec<&'a [u8]>,
}

impl Folder<'_> {
    /// Where in `files` the tracked file `name` is: found among the keys (one word each), and
    /// only then among the names that share its key.
    pub(super) fn file(&self, name: &[u8]) -> Option<usize> {
        let key = name_key(name);
        let from = self.keys.partition_point(|k| *k < key);
        let to = from + self.keys[from..].partition_point(|k| *k == key);
        let at = self.files[from..to].binary_search_by(|(n, _)| (*n).cmp(name));
        at.ok().map(|at| from + at)
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

/// Every tracked folder below `prefix`, whose sorted index paths are `range`, in one pass:
/// a subfolder's paths are a contiguous run, skipped with a binary search.
pub(super) fn tracked_folders<'a>(
    paths: &[&'a [u8]],
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
        let path = paths[at];
        let rest = &path[folder.prefix.len()..];
        match rest.iter().position(|b| *b == b'/') {
            Some(slash) => {
                let sub = &path[..folder.prefix.len() + slash + 1];
                let len = paths[at..range.end].partition_point(|p| p.starts_with(sub));
                folder.subfolders.push(&rest[..slash]);
                below.push((sub.to_vec(), at..at + len));
                at += len;
            }
            None => {
                folder.files.push((rest, at));
                at += 1;
            }
        }
    }
    // Index order is byte order of whole paths: the files come sorted, the subfolders need
    // not (`b-c/…` sorts before `b/…`).
    folder.files.sort_unstable();
    folder.keys = folder
        .files
        .iter()
        .map(|(name, _)| name_key(name))
        .collect();
    folder.subfolders.sort_unstable();
    folders.push(folder);
    for (sub, range) in below {
        tracked_folders(paths, sub, range, folders);
    }
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
        tracked_folders(&paths, Vec::new(), 0..paths.len(), &mut folders);
        let src: &Folder = folders.iter().find(|f| f.prefix == b"src/").unwrap();
        for (at, (name, _)) in src.files.iter().enumerate() {
            assert_eq!(
                src.file(name),
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
            assert_eq!(src.file(absent.as_bytes()), None, "{absent}");
        }
    }
}
