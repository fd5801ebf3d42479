//! New and fixed findings: this commit's findings paired with the baseline's, each pair one
//! finding that is still there. What is left unpaired is new (this commit's) or fixed (the
//! baseline's), so the totals are exact whatever is paired: `new − fixed` is always the growth
//! of the list.
//!
//! Findings are paired by where they are, in four steps, each on what the earlier ones left:
//!
//! 1. **Kept lines.** A finding on a line git's diff keeps from the baseline (its file renamed
//!    with `-M` first, `renames.rs`) is paired with a finding of the baseline on the line it
//!    was, with the same message (else, for a tool that keeps its fingerprint while its message
//!    changes, the same producer fingerprint). So of identical lines (every `TODO` reads "TODO"),
//!    the one the change added is new and the untouched ones are not.
//! 2. **Moved lines.** A finding on a line the diff added is paired with one on a line it
//!    deleted in the same file, whose normalized content and message are the same, in order: a
//!    block moved within a file (a deletion and an addition to a line diff) brings its findings
//!    along, and re-indenting a line does not make its findings new.
//! 3. **Edited lines.** A finding on a line one change of the diff rewrote is paired with one
//!    on a line the same change replaced, with the same message, in order: editing the code
//!    around a `TODO` or an `unwrap()` on its line keeps that finding, as its message (the
//!    matched text) says it is the same one. A line only added (a change that replaces nothing)
//!    has nothing to pair with: its findings are new.
//! 4. **Without a place** (no path or line, a file the snapshot does not hold), by the
//!    producer's fingerprint as a multiset, then across renames by message (the old path in it
//!    read as the new one).
//!
//! Text moved from one file to another is a fix in the one and a new finding in the other.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};

use super::lines::Content;
use super::{LineMap, Place, Renames};
use crate::runtime::Finding;

/// What changed from the baseline's findings to this commit's, as indices into each list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Diff {
    /// Indices into this commit's findings of the new ones, in order.
    pub new: Vec<usize>,
    /// Indices into the baseline's findings of the fixed ones, in order.
    pub fixed: Vec<usize>,
}

/// One commit's findings and the place of each (same indices; see `place.rs`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Side<'a> {
    pub findings: &'a [Finding],
    pub places: &'a [Option<Place>],
}

/// `head` versus `base`. `maps` holds git's line map for each of this commit's paths whose
/// file (at its baseline path) has placed findings on both sides.
pub(super) fn diff(
    head: Side,
    base: Side,
    renames: &Renames,
    maps: &HashMap<String, LineMap>,
) -> Diff {
    let mut pairs = Pairs::new(head.findings.len(), base.findings.len());
    let keys = Keys { head, renames };
    kept(&keys, base, maps, &mut pairs);
    moved(&keys, base, &mut pairs);
    edited(&keys, base, maps, &mut pairs);
    unplaced(head, base, renames, &mut pairs);
    Diff {
        new: pairs.unpaired_head(),
        fixed: pairs.unpaired_base(),
    }
}

/// Which findings of each side are paired so far.
struct Pairs {
    head: Vec<bool>,
    base: Vec<bool>,
}

impl Pairs {
    fn new(head: usize, base: usize) -> Self {
        Self {
            head: vec![false; head],
            base: vec![false; base],
        }
    }

    fn pair(&mut self, head: usize, base: usize) {
        self.head[head] = true;
        self.base[base] = true;
    }

    fn unpaired_head(&self) -> Vec<usize> {
        (0..self.head.len()).filter(|&i| !self.head[i]).collect()
    }

    fn unpaired_base(&self) -> Vec<usize> {
        (0..self.base.len()).filter(|&i| !self.base[i]).collect()
    }
}

/// This commit's findings as the baseline would name them: their path before a rename, and
/// their message with the new path read as the old one.
struct Keys<'a> {
    head: Side<'a>,
    renames: &'a Renames,
}

impl<'a> Keys<'a> {
    /// The baseline's path of this commit's path.
    fn old_path<'p>(&'p self, path: &'p str) -> &'p str {
        self.renames.old_path(path).unwrap_or(path)
    }

    fn message(&self, index: usize) -> Cow<'a, str> {
        let finding = &self.head.findings[index];
        match finding
            .path
            .as_deref()
            .and_then(|path| Some((path, self.renames.old_path(path)?)))
        {
            Some((path, old)) => Cow::Owned(finding.message.replace(path, old)),
            None => Cow::Borrowed(finding.message.as_str()),
        }
    }
}

/// Step 1: a finding on a line the diff kept, paired with one of the baseline on that line with
/// the same message, else with the same producer fingerprint.
fn kept(keys: &Keys, base: Side, maps: &HashMap<String, LineMap>, pairs: &mut Pairs) {
    let mut at: HashMap<(&str, u32), Vec<usize>> = HashMap::new();
    for (index, place) in base.places.iter().enumerate() {
        if let Some(place) = place {
            at.entry((&place.path, place.line)).or_default().push(index);
        }
    }
    // Each of this commit's findings on a kept line, with the baseline's on the line it was.
    let kept: Vec<(usize, &Vec<usize>)> = keys
        .head
        .places
        .iter()
        .enumerate()
        .filter_map(|(index, place)| {
            let place = place.as_ref()?;
            let old_line = maps.get(&place.path)?.old_line(place.line)?;
            Some((index, at.get(&(keys.old_path(&place.path), old_line))?))
        })
        .collect();
    // By message first; then by the producer's fingerprint, which a tool may keep when its
    // message changes (a count in it, say) while the line does not.
    for by_message in [true, false] {
        for &(index, there) in &kept {
            if pairs.head[index] {
                continue;
            }
            let message = keys.message(index);
            let fingerprint = &keys.head.findings[index].fingerprint;
            let same = there.iter().copied().find(|&b| {
                !pairs.base[b]
                    && if by_message {
                        base.findings[b].message == message
                    } else {
                        &base.findings[b].fingerprint == fingerprint
                    }
            });
            if let Some(b) = same {
                pairs.pair(index, b);
            }
        }
    }
}

/// Step 2: what step 1 left with a place, paired by file, line content and message, in order
/// (a file left unread is unchanged: step 1 paired its findings).
fn moved(keys: &Keys, base: Side, pairs: &mut Pairs) {
    type Key<'k> = (&'k str, Content, Cow<'k, str>);
    let mut left: HashMap<Key, VecDeque<usize>> = HashMap::new();
    for (index, place) in base.places.iter().enumerate() {
        let Some(place) = place.as_ref().filter(|_| !pairs.base[index]) else {
            continue;
        };
        if let Some(text) = place.text {
            let message = Cow::Borrowed(base.findings[index].message.as_str());
            left.entry((&place.path, text.content, message))
                .or_default()
                .push_back(index);
        }
    }
    for (index, place) in keys.head.places.iter().enumerate() {
        let Some((place, text)) = place
            .as_ref()
            .filter(|_| !pairs.head[index])
            .and_then(|p| Some((p, p.text?)))
        else {
            continue;
        };
        let key = (
            keys.old_path(&place.path),
            text.content,
            keys.message(index),
        );
        if let Some(b) = left.get_mut(&key).and_then(VecDeque::pop_front) {
            pairs.pair(index, b);
        }
    }
}

/// Step 3: what is left on a line a change rewrote, paired with what is left on a line the same
/// change replaced, by message, in order.
fn edited(keys: &Keys, base: Side, maps: &HashMap<String, LineMap>, pairs: &mut Pairs) {
    // The baseline's maps by the baseline's path: a change is found from either side.
    let by_old_path: HashMap<&str, &LineMap> = maps
        .iter()
        .map(|(path, map)| (keys.old_path(path), map))
        .collect();
    let mut left: HashMap<(&str, usize, Cow<str>), VecDeque<usize>> = HashMap::new();
    for (index, place) in base.places.iter().enumerate() {
        let Some(place) = place.as_ref().filter(|_| !pairs.base[index]) else {
            continue;
        };
        let change = by_old_path
            .get(place.path.as_str())
            .and_then(|map| map.change_of_old(place.line));
        if let Some(change) = change {
            let message = Cow::Borrowed(base.findings[index].message.as_str());
            left.entry((&place.path, change, message))
                .or_default()
                .push_back(index);
        }
    }
    for (index, place) in keys.head.places.iter().enumerate() {
        let Some(place) = place.as_ref().filter(|_| !pairs.head[index]) else {
            continue;
        };
        let Some(change) = maps
            .get(&place.path)
            .and_then(|m| m.change_of_new(place.line))
        else {
            continue;
        };
        let key = (keys.old_path(&place.path), change, keys.message(index));
        if let Some(b) = left.get_mut(&key).and_then(VecDeque::pop_front) {
            pairs.pair(index, b);
        }
    }
}

/// Step 4: findings without a place on both sides, by the producer's fingerprint, then across
/// renames by message.
fn unplaced(head: Side, base: Side, renames: &Renames, pairs: &mut Pairs) {
    let head_left: Vec<usize> = (0..head.findings.len())
        .filter(|&i| head.places[i].is_none())
        .collect();
    let base_left: Vec<usize> = (0..base.findings.len())
        .filter(|&i| base.places[i].is_none())
        .collect();
    let mut count: HashMap<&str, VecDeque<usize>> = HashMap::new();
    for &index in &base_left {
        count
            .entry(base.findings[index].fingerprint.as_str())
            .or_default()
            .push_back(index);
    }
    let mut new = Vec::new();
    for &index in &head_left {
        match count
            .get_mut(head.findings[index].fingerprint.as_str())
            .and_then(VecDeque::pop_front)
        {
            Some(b) => pairs.pair(index, b),
            None => new.push(index),
        }
    }
    if renames.is_empty() {
        return;
    }
    let fixed: Vec<usize> = base_left.into_iter().filter(|&b| !pairs.base[b]).collect();
    for (h, b) in paired_across_renames(head.findings, base.findings, renames, &new, &fixed) {
        pairs.pair(h, b);
    }
}

/// The new/fixed pairs (by index) that are one finding whose file was renamed: the same message,
/// the old path in it read as the new one.
fn paired_across_renames(
    head: &[Finding],
    base: &[Finding],
    renames: &Renames,
    new: &[usize],
    fixed: &[usize],
) -> Vec<(usize, usize)> {
    let mut fixed_by_key: HashMap<(&str, Cow<str>), VecDeque<usize>> = HashMap::new();
    for &index in fixed {
        if let Some(path) = &base[index].path {
            fixed_by_key
                .entry((path, Cow::Borrowed(&base[index].message)))
                .or_default()
                .push_back(index);
        }
    }
    let mut pairs = Vec::new();
    for &index in new {
        let finding = &head[index];
        let Some((path, old)) = finding
            .path
            .as_deref()
            .and_then(|path| Some((path, renames.old_path(path)?)))
        else {
            continue;
        };
        let message = Cow::Owned(finding.message.replace(path, old));
        if let Some(b) = fixed_by_key
            .get_mut(&(old, message))
            .and_then(VecDeque::pop_front)
        {
            pairs.push((index, b));
        }
    }
    pairs
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;
    use crate::findings::line_map::Hunk;
    use crate::findings::lines::lines;

    /// One version of a file and its findings: `(line, message)`.
    struct Version {
        findings: Vec<Finding>,
        places: Vec<Option<Place>>,
    }

    fn version(path: &str, text: &str, at: &[(u32, &str)]) -> Version {
        let wanted: BTreeSet<u32> = at.iter().map(|(l, _)| *l).collect();
        let found = lines(text.as_bytes(), &wanted);
        let blob = gix::ObjectId::null(gix::hash::Kind::Sha1);
        let findings = at
            .iter()
            .map(|&(line, message)| Finding {
                // The pattern producer's kind: every match of one text in a file alike but
                // for its occurrence, so an added one shifts the rest.
                fingerprint: format!("{message}#{line}"),
                path: Some(path.into()),
                line: Some(line),
                column: None,
                severity: None,
                message: message.into(),
            })
            .collect();
        let places = at
            .iter()
            .map(|(line, _)| {
                Some(Place {
                    path: path.into(),
                    blob,
                    line: *line,
                    text: Some(found[line]),
                })
            })
            .collect();
        Version { findings, places }
    }

    fn side(v: &Version) -> Side<'_> {
        Side {
            findings: &v.findings,
            places: &v.places,
        }
    }

    fn hunk(old_start: u32, old_len: u32, new_start: u32, new_len: u32) -> Hunk {
        Hunk {
            old_start,
            old_len,
            new_start,
            new_len,
        }
    }

    fn compared(head: &Version, base: &Version, path: &str, hunks: Vec<Hunk>) -> Diff {
        let maps = HashMap::from([(path.to_owned(), LineMap::from_hunks(hunks))]);
        diff(side(head), side(base), &Renames::default(), &maps)
    }

    #[test]
    fn of_identical_lines_the_one_the_diff_added_is_new() {
        let base = version("a.rs", "// TODO\nx\n// TODO\n", &[(1, "TODO"), (3, "TODO")]);
        // A TODO added between the two: git's diff adds lines 3 and 4.
        let text = "// TODO\nx\n// TODO\ny\n// TODO\n";
        let head = version("a.rs", text, &[(1, "TODO"), (3, "TODO"), (5, "TODO")]);
        let d = compared(&head, &base, "a.rs", vec![hunk(2, 0, 3, 2)]);
        assert_eq!(
            d,
            Diff {
                new: vec![1],
                fixed: vec![]
            }
        );
        // Added after the last one instead.
        let text = "// TODO\nx\n// TODO\n// TODO\n";
        let head = version("a.rs", text, &[(1, "TODO"), (3, "TODO"), (4, "TODO")]);
        let d = compared(&head, &base, "a.rs", vec![hunk(3, 0, 4, 1)]);
        assert_eq!(
            d,
            Diff {
                new: vec![2],
                fixed: vec![]
            }
        );
    }

    #[test]
    fn an_edited_line_keeps_a_finding_with_the_same_message_and_a_rewritten_one_is_new() {
        let base = version("a.rs", "f(); // TODO: x\n", &[(1, "TODO: x")]);
        // The code on the line edited, the TODO as it was.
        let edited = version("a.rs", "g(); // TODO: x\n", &[(1, "TODO: x")]);
        let d = compared(&edited, &base, "a.rs", vec![hunk(1, 1, 1, 1)]);
        assert_eq!(d, Diff::default());
        // The TODO rewritten: another finding.
        let rewritten = version("a.rs", "f(); // TODO: y\n", &[(1, "TODO: y")]);
        let d = compared(&rewritten, &base, "a.rs", vec![hunk(1, 1, 1, 1)]);
        assert_eq!(
            d,
            Diff {
                new: vec![0],
                fixed: vec![0]
            }
        );
        // One line rewritten as two: the first keeps the finding, the second is new.
        let two = version(
            "a.rs",
            "g(); // TODO: x\n// TODO: x\n",
            &[(1, "TODO: x"), (2, "TODO: x")],
        );
        let d = compared(&two, &base, "a.rs", vec![hunk(1, 1, 1, 2)]);
        assert_eq!(
            d,
            Diff {
                new: vec![1],
                fixed: vec![]
            }
        );
        // Re-indented: the same line, by its normalized content.
        let indented = version("a.rs", "    f(); // TODO: x\n", &[(1, "TODO: x")]);
        let d = compared(&indented, &base, "a.rs", vec![hunk(1, 1, 1, 1)]);
        assert_eq!(d, Diff::default());
    }

    #[test]
    fn a_line_only_added_is_not_paired_with_an_edit_elsewhere() {
        let base = version("a.rs", "// TODO\nx\n", &[(1, "TODO")]);
        // Line 1 deleted, a different TODO line added at the end: two changes, no pairing.
        let head = version("a.rs", "x\n// TODO: later\n", &[(2, "TODO")]);
        let d = compared(
            &head,
            &base,
            "a.rs",
            vec![hunk(1, 1, 0, 0), hunk(2, 0, 2, 1)],
        );
        assert_eq!(
            d,
            Diff {
                new: vec![0],
                fixed: vec![0]
            }
        );
    }

    #[test]
    fn on_a_kept_line_a_new_message_with_the_tool_s_fingerprint_is_the_same_finding() {
        let base = version("a.rs", "fn f() {\n", &[(1, "complexity 16 > 15")]);
        let mut head = version("a.rs", "fn f() {\n", &[(1, "complexity 17 > 15")]);
        // Another fingerprint too: another finding.
        let d = compared(&head, &base, "a.rs", vec![]);
        assert_eq!(
            d,
            Diff {
                new: vec![0],
                fixed: vec![0]
            }
        );
        head.findings[0].fingerprint = base.findings[0].fingerprint.clone();
        let d = compared(&head, &base, "a.rs", vec![]);
        assert_eq!(d, Diff::default());
    }

    #[test]
    fn a_moved_block_brings_its_findings_along() {
        let base = version(
            "a.rs",
            "fn a() {\n    // TODO\n}\nfn b() {}\n// TODO\n",
            &[(2, "TODO"), (5, "TODO")],
        );
        // `fn a` moved below `fn b`: deleted at the top, added at the end.
        let head = version(
            "a.rs",
            "fn b() {}\n// TODO\nfn a() {\n    // TODO\n}\n",
            &[(2, "TODO"), (4, "TODO")],
        );
        let d = compared(
            &head,
            &base,
            "a.rs",
            vec![hunk(1, 3, 0, 0), hunk(5, 0, 3, 3)],
        );
        assert_eq!(d, Diff::default());
    }

    #[test]
    fn findings_follow_a_rename_with_the_old_path_in_their_message() {
        let base = version(
            "old.rs",
            "// TODO\n// TODO\n",
            &[(1, "TODO"), (2, "old.rs: TODO")],
        );
        let head = version(
            "new.rs",
            "// TODO\n// TODO\n// TODO\n",
            &[(1, "TODO"), (2, "new.rs: TODO"), (3, "TODO")],
        );
        let renames = Renames::from_pairs([("old.rs", "new.rs")]);
        let maps = HashMap::from([(
            "new.rs".to_owned(),
            LineMap::from_hunks(vec![hunk(2, 0, 3, 1)]),
        )]);
        let d = diff(side(&head), side(&base), &renames, &maps);
        assert_eq!(
            d,
            Diff {
                new: vec![2],
                fixed: vec![]
            }
        );
        // Without the rename, every finding is new and every one of the baseline fixed.
        let d = diff(side(&head), side(&base), &Renames::default(), &maps);
        assert_eq!((d.new.len(), d.fixed.len()), (3, 2));
    }

    fn unplaced(fingerprint: &str, path: &str, message: &str) -> Finding {
        Finding {
            fingerprint: fingerprint.into(),
            path: Some(path.into()),
            line: None,
            column: None,
            severity: None,
            message: message.into(),
        }
    }

    fn without_places(findings: &[Finding]) -> Vec<Option<Place>> {
        vec![None; findings.len()]
    }

    #[test]
    fn without_places_a_swap_is_one_new_and_one_fixed_and_duplicates_count_twice() {
        let base = [
            unplaced("a", "x", "A"),
            unplaced("b", "x", "B"),
            unplaced("b", "x", "B"),
        ];
        let head = [
            unplaced("b", "x", "B"),
            unplaced("c", "x", "C"),
            unplaced("b", "x", "B"),
            unplaced("b", "x", "B"),
        ];
        let (hp, bp) = (without_places(&head), without_places(&base));
        let d = diff(
            Side {
                findings: &head,
                places: &hp,
            },
            Side {
                findings: &base,
                places: &bp,
            },
            &Renames::default(),
            &HashMap::new(),
        );
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
    fn without_places_a_renamed_file_brings_its_findings_along_but_not_a_changed_one() {
        let base = [
            unplaced("1", "old.rs", "MARK one"),
            unplaced("2", "old.rs", "old.rs: no header"),
        ];
        let head = [
            unplaced("3", "new.rs", "MARK one"),
            unplaced("4", "new.rs", "new.rs: no header"),
            unplaced("5", "new.rs", "MARK two"),
        ];
        let (hp, bp) = (without_places(&head), without_places(&base));
        let (head, base) = (
            Side {
                findings: &head,
                places: &hp,
            },
            Side {
                findings: &base,
                places: &bp,
            },
        );
        let renames = Renames::from_pairs([("old.rs", "new.rs")]);
        let d = diff(head, base, &renames, &HashMap::new());
        assert_eq!(
            d,
            Diff {
                new: vec![2],
                fixed: vec![]
            }
        );
        let d = diff(head, base, &Renames::default(), &HashMap::new());
        assert_eq!((d.new.len(), d.fixed.len()), (3, 2));
    }

    /// Whatever is paired, the totals are exact: every finding is paired once or listed.
    #[test]
    fn the_totals_are_exact_new_minus_fixed_is_the_growth() {
        let base = version("a.rs", "// TODO\n// TODO\nx\n", &[(1, "TODO"), (2, "TODO")]);
        let head = version(
            "a.rs",
            "x\n// TODO\n// TODO\n// TODO\n",
            &[(2, "TODO"), (3, "TODO"), (4, "TODO")],
        );
        for hunks in [
            vec![hunk(0, 0, 1, 1), hunk(3, 1, 4, 1)],
            vec![hunk(1, 2, 0, 0), hunk(3, 0, 2, 3)],
            vec![],
        ] {
            let d = compared(&head, &base, "a.rs", hunks);
            assert_eq!(d.new.len() as i64 - d.fixed.len() as i64, 1, "{d:?}");
        }
    }
}
