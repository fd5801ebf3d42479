//! `[evidence]`: the repository name published evidence is signed for, which runs publish,
//! a remote cache, and how long published entries are kept.

use toml_edit::Item;

use super::{EVIDENCE_KEYS, Reader, span_of};
use crate::config::{EvidenceSettings, Publish};

/// The longest `keep_days`: ten years.
const MAX_KEEP_DAYS: f64 = 3650.0;

impl Reader<'_> {
    pub(super) fn evidence(&mut self, item: Option<&Item>) -> EvidenceSettings {
        let table = self.table(item, "evidence", EVIDENCE_KEYS);
        let repository = self.string(table, "evidence", "repository");
        if repository
            .as_deref()
            .is_some_and(|r| r.trim().is_empty() || r.contains('\n'))
        {
            self.issue_at(
                "evidence",
                Some("repository"),
                span_of(table, "repository"),
                "must name the repository on one line, e.g. \"github.com/acme/app\"".to_owned(),
            );
        }
        let publish = match self.string(table, "evidence", "publish").as_deref() {
            None | Some("never") => Publish::Never,
            Some("trunk-ci") => Publish::TrunkCi,
            Some(other) => {
                self.issue_at(
                    "evidence",
                    Some("publish"),
                    span_of(table, "publish"),
                    format!("must be \"never\" or \"trunk-ci\", found {other:?}"),
                );
                Publish::Never
            }
        };
        if publish == Publish::TrunkCi && repository.is_none() {
            self.issue_at(
                "evidence",
                Some("publish"),
                span_of(table, "publish"),
                "\"trunk-ci\" needs repository: the name published signatures are bound to, e.g. repository = \"github.com/acme/app\"".to_owned(),
            );
        }
        let remote = self.remote_url(table);
        let keep_days = self
            .number(table, "evidence", "keep_days")
            .and_then(|days| {
                if (1.0..=MAX_KEEP_DAYS).contains(&days) && days.fract() == 0.0 {
                    Some(days as u32)
                } else {
                    self.issue_at(
                        "evidence",
                        Some("keep_days"),
                        span_of(table, "keep_days"),
                        format!(
                            "must be a whole number of days from 1 to {MAX_KEEP_DAYS}, found {days}"
                        ),
                    );
                    None
                }
            });
        EvidenceSettings {
            repository,
            publish,
            remote,
            keep_days,
        }
    }
}
