//! A finding's fingerprint as results carry it (`data.standards[].findings`, SARIF
//! `partialFingerprints`, GitLab Code Quality): for a finding with a place, where it is — its
//! path, its line's normalized content, that line's rank among the identical lines of the file
//! (as GitHub code scanning's `primaryLocationLineHash` counts them), its message, and its
//! occurrence among the findings of the reading with the same place and message (two matches on
//! one line are two findings). No line number: a finding keeps its fingerprint when lines above
//! it are added or removed. A finding without a place keeps the producer's fingerprint.
//!
//! The digest: sha256 over the parts, each as its length (8 bytes, little-endian) then its
//! bytes — the tag `discern-finding/2`, the path, the 32-byte sha256 of the normalized line,
//! the rank and the occurrence in decimal, the message — of which the first 16 bytes, in hex.

use std::cell::{Cell, OnceCell};
use std::collections::HashMap;

use crate::digest::Digest;

use super::Place;
use super::lines::Line;
use crate::runtime::Finding;

/// What the parts are hashed under: a new scheme gets a new tag.
const TAG: &str = "discern-finding/2";

/// The fingerprints of one list of findings, each made when it is asked for: a result shows a
/// few of thousands, so the first few occurrences are counted by a scan of the findings before
/// them, and only a caller that asks for many (`--explain`) has them all counted at once.
pub(crate) struct Fingerprints<'a> {
    findings: &'a [Finding],
    places: &'a [Option<Place>],
    /// Each placed finding's occurrence among those with the same place and message, once
    /// enough fingerprints were asked for to make counting them all cheaper.
    occurrences: OnceCell<Vec<usize>>,
    asked: Cell<usize>,
}

/// How many fingerprints are made by scanning before every occurrence is counted at once.
const SCANNED: usize = 64;

impl<'a> Fingerprints<'a> {
    /// The fingerprints of `findings`, `places` giving each one's place (same indices).
    pub(crate) fn new(findings: &'a [Finding], places: &'a [Option<Place>]) -> Self {
        Self {
            findings,
            places,
            occurrences: OnceCell::new(),
            asked: Cell::new(0),
        }
    }

    /// The fingerprint of finding `index`.
    pub(crate) fn get(&self, index: usize) -> String {
        let finding = &self.findings[index];
        match &self.places[index] {
            Some(
                place @ Place {
                    path,
                    text: Some(text),
                    ..
                },
            ) => of_place(
                (path, text),
                &finding.message,
                self.occurrence(index, place),
            ),
            // A place whose line was never read (see `place::complete`) is not known well
            // enough to name: the producer's fingerprint stands.
            _ => finding.fingerprint.clone(),
        }
    }

    /// Finding `index`'s occurrence among the findings with its `place` and message.
    fn occurrence(&self, index: usize, place: &Place) -> usize {
        if let Some(all) = self.occurrences.get() {
            return all[index];
        }
        self.asked.set(self.asked.get() + 1);
        if self.asked.get() > SCANNED {
            return self.occurrences.get_or_init(|| self.count_all())[index];
        }
        let message = &self.findings[index].message;
        (0..index)
            .filter(|&j| {
                self.places[j]
                    .as_ref()
                    .is_some_and(|other| other.line == place.line && other.path == place.path)
                    && self.findings[j].message == *message
            })
            .count()
    }

    /// Every placed finding's occurrence among those with the same place and message.
    fn count_all(&self) -> Vec<usize> {
        let mut seen: HashMap<(&str, u32, &str), usize> = HashMap::new();
        self.findings
            .iter()
            .zip(self.places)
            .map(|(finding, place)| match place {
                Some(place) => {
                    let key = (place.path.as_str(), place.line, finding.message.as_str());
                    let occurrence = seen.entry(key).or_insert(0);
                    *occurrence += 1;
                    *occurrence - 1
                }
                None => 0,
            })
            .collect()
    }
}

fn of_place((path, text): (&str, &Line), message: &str, occurrence: usize) -> String {
    Digest::of_parts(&[
        TAG.as_bytes(),
        path.as_bytes(),
        &text.content,
        text.rank.to_string().as_bytes(),
        occurrence.to_string().as_bytes(),
        message.as_bytes(),
    ])
    .short_hex()
}

#[cfg(test)]
mod tests;
