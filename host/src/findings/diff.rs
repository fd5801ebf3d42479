//! The multiset difference of two finding lists, with findings paired across renames.

use std::collections::HashMap;

use super::Renames;
use crate::runtime::Finding;

/// What changed from the baseline's findings to this commit's, as indices into each list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diff {
    /// Indices into this commit's findings of the new ones, in order.
    pub new: Vec<usize>,
    /// Indices into the baseline's findings of the fixed ones, in order.
    pub fixed: Vec<usize>,
}

/// `head` versus `base`: a finding is new when its fingerprint has more occurrences in `head`
/// than in `base` (the later occurrences are the new ones), fixed in the opposite case. Then a
/// new finding in a renamed file and a fixed one in the file it was renamed from, with the same
/// message (the old path in it read as the new one), are the same finding moved: neither.
pub fn diff(head: &[Finding], base: &[Finding], renames: &Renames) -> Diff {
    let mut left: HashMap<&str, usize> = HashMap::with_capacity(base.len());
    for finding in base {
        *left.entry(finding.fingerprint.as_str()).or_default() += 1;
    }
    let mut new = Vec::new();
    for (index, finding) in head.iter().enumerate() {
        match left.get_mut(finding.fingerprint.as_str()) {
            Some(count) if *count > 0 => *count -= 1,
            _ => new.push(index),
        }
    }
    let mut fixed = Vec::new();
    for (index, finding) in base.iter().enumerate() {
        if let Some(count) = left.get_mut(finding.fingerprint.as_str())
            && *count > 0
        {
            *count -= 1;
            fixed.push(index);
        }
    }
    if !renames.is_empty() {
        pair_renamed(head, base, renames, &mut new, &mut fixed);
    }
    Diff { new, fixed }
}

/// Drop the new/fixed pairs that are one finding whose file was renamed.
fn pair_renamed(
    head: &[Finding],
    base: &[Finding],
    renames: &Renames,
    new: &mut Vec<usize>,
    fixed: &mut Vec<usize>,
) {
    let mut fixed_by_key: HashMap<(String, String), Vec<usize>> = HashMap::new();
    for &index in fixed.iter() {
        if let Some(path) = &base[index].path {
            fixed_by_key
                .entry((path.clone(), base[index].message.clone()))
                .or_default()
                .push(index);
        }
    }
    for list in fixed_by_key.values_mut() {
        list.reverse();
    }
    let mut paired_fixed = std::collections::HashSet::new();
    new.retain(|&index| {
        let finding = &head[index];
        let Some((path, old)) = finding
            .path
            .as_deref()
            .and_then(|path| Some((path, renames.old_path(path)?)))
        else {
            return true;
        };
        let key = (old.to_owned(), finding.message.replace(path, old));
        match fixed_by_key.get_mut(&key).and_then(Vec::pop) {
            Some(pair) => {
                paired_fixed.insert(pair);
                false
            }
            None => true,
        }
    });
    fixed.retain(|index| !paired_fixed.contains(index));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(fingerprint: &str, path: &str, message: &str) -> Finding {
        Finding {
            fingerprint: fingerprint.into(),
            path: Some(path.into()),
            line: None,
            column: None,
            severity: None,
            message: message.into(),
        }
    }

    #[test]
    fn a_swap_is_one_new_and_one_fixed_and_duplicates_count_twice() {
        let base = [f("a", "x", "A"), f("b", "x", "B"), f("b", "x", "B")];
        let head = [
            f("b", "x", "B"),
            f("c", "x", "C"),
            f("b", "x", "B"),
            f("b", "x", "B"),
        ];
        let d = diff(&head, &base, &Renames::default());
        // c is new, the third b is new; a is fixed.
        assert_eq!(
            d,
            Diff {
                new: vec![1, 3],
                fixed: vec![0]
            }
        );
    }

    #[test]
    fn a_renamed_file_brings_its_findings_along_but_not_a_changed_one() {
        let base = [
            f("1", "old.rs", "MARK one"),
            f("2", "old.rs", "old.rs: no header"),
        ];
        let head = [
            f("3", "new.rs", "MARK one"),
            f("4", "new.rs", "new.rs: no header"),
            f("5", "new.rs", "MARK two"),
        ];
        let renames = Renames::from_pairs([("old.rs", "new.rs")]);
        let d = diff(&head, &base, &renames);
        assert_eq!(
            d,
            Diff {
                new: vec![2],
                fixed: vec![]
            }
        );
        // Without the rename, every finding moved is new and fixed.
        let d = diff(&head, &base, &Renames::default());
        assert_eq!((d.new.len(), d.fixed.len()), (3, 2));
    }
}
