//! What the snapshot itself says about a batch before anything is judged: tracked paths it
//! could not show (names that are not UTF-8), and pathspecs that match no tracked file, which
//! would otherwise read 0 and pass in silence.

use serde_json::Value;

use crate::config::{Per, ProducerRef, StandardDef};
use crate::snapshot::Snapshot;

/// The built-ins whose `config.paths` lists the files they measure.
const LISTING_BUILTINS: [&str; 3] = ["extent", "pattern", "file-size"];

/// One advisory per pathspec list of `selected` that matches nothing in `snapshot`, and one
/// naming the paths the snapshot skipped.
pub(super) fn advisories(selected: &[&StandardDef], snapshot: &Snapshot) -> Vec<String> {
    let mut advisories: Vec<String> = snapshot.skipped_advisory().into_iter().collect();
    for standard in selected {
        if let ProducerRef::Builtin(name) = &standard.producer
            && LISTING_BUILTINS.contains(&name.as_str())
            && let Some(paths) = config_paths(&standard.config)
            && matches_nothing(snapshot, &paths)
        {
            advisories.push(format!(
                "standards.{}: config.paths {} match no tracked file, so builtin:{name} reads 0 there; check the pathspecs (`git ls-files -- ':(glob)<pathspec>'` lists what one matches)",
                standard.name,
                quoted(&paths)
            ));
        }
        if let Some(Per::Extent { kind, paths }) = &standard.per
            && matches_nothing(snapshot, paths)
        {
            advisories.push(format!(
                "standards.{}: per.{} {} match no tracked file, so the rate has nothing to divide by; check the pathspecs",
                standard.name,
                kind.as_str(),
                quoted(paths)
            ));
        }
    }
    advisories
}

pub(super) fn config_paths(config: &Value) -> Option<Vec<String>> {
    match config.get("paths")? {
        Value::String(s) => Some(vec![s.clone()]),
        Value::Array(items) => items
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect(),
        _ => None,
    }
}

fn matches_nothing(snapshot: &Snapshot, paths: &[String]) -> bool {
    snapshot
        .pathspec(paths)
        .is_ok_and(|spec| snapshot.matching(&spec).next().is_none())
}

fn quoted(paths: &[String]) -> String {
    let quoted: Vec<String> = paths.iter().map(|p| format!("{p:?}")).collect();
    format!("[{}]", quoted.join(", "))
}
