//! What one producer run read: the input closure that evidence reuse and proposal attribution
//! are built on. Recorded by the host's snapshot implementation, so it is complete by
//! construction: a producer can read nothing else.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReadSet {
    /// Every distinct glob list the producer listed, with the entries it matched (path → blob id).
    pub listings: Vec<Listing>,
    /// Every path the producer read (whole or a range): its blob id, or `None` if it was absent.
    pub reads: BTreeMap<String, Option<String>>,
    /// Every artifact the producer asked for: the sha256 of its content, or `None` if absent.
    pub artifacts: BTreeMap<String, Option<String>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Listing {
    pub globs: Vec<String>,
    pub matched: BTreeMap<String, String>,
}

impl ReadSet {
    pub(crate) fn record_listing(&mut self, globs: &[String], matched: BTreeMap<String, String>) {
        if !self.listings.iter().any(|l| l.globs == globs) {
            self.listings.push(Listing {
                globs: globs.to_vec(),
                matched,
            });
        }
    }

    /// Add everything `other` read.
    pub fn merge(&mut self, other: &ReadSet) {
        for listing in &other.listings {
            self.record_listing(&listing.globs, listing.matched.clone());
        }
        self.reads
            .extend(other.reads.iter().map(|(k, v)| (k.clone(), v.clone())));
        self.artifacts
            .extend(other.artifacts.iter().map(|(k, v)| (k.clone(), v.clone())));
    }

    /// Every snapshot path this run depended on: listed or read.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        let listed = self
            .listings
            .iter()
            .flat_map(|l| l.matched.keys().map(String::as_str));
        let read = self.reads.keys().map(String::as_str);
        listed.chain(read)
    }
}
