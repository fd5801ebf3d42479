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
mod tests;
