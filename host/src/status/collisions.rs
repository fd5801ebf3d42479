//! Collisions: efforts whose commits since they forked from the trunk change the same files,
//! named on both sides, so the owner sees them before `update` or `accept` does.

use std::collections::BTreeSet;

use super::observation::{Collision, FleetRow};

/// Name on every effort row the other efforts whose committed changes touch its files.
pub(super) fn mark(fleet: &mut [FleetRow]) {
    let changed: Vec<(String, BTreeSet<&str>)> = fleet
        .iter()
        .map(|r| {
            let paths = r.committed_paths.iter().map(String::as_str).collect();
            (name(r), paths)
        })
        .collect();
    let found: Vec<Vec<Collision>> = changed
        .iter()
        .enumerate()
        .map(|(i, (_, mine))| {
            changed
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .filter_map(|(_, (effort, theirs))| {
                    let paths: Vec<String> =
                        mine.intersection(theirs).map(|p| (*p).to_owned()).collect();
                    (!paths.is_empty()).then(|| Collision {
                        effort: effort.clone(),
                        files: paths.len(),
                        paths,
                    })
                })
                .collect()
        })
        .collect();
    for (row, collisions) in fleet.iter_mut().zip(found) {
        row.collisions = collisions;
    }
}

/// How a row names its effort: its id, else its branch.
pub(super) fn name(row: &FleetRow) -> String {
    match row.id.is_empty() {
        false => row.id.clone(),
        true => row.branch.clone().unwrap_or_else(|| "?".to_owned()),
    }
}

/// What a fleet row's report line says of its collisions: `; collides with b (2 files)`, the
/// paths themselves in the full view.
pub(super) fn note(row: &FleetRow, verbose: bool) -> String {
    if row.collisions.is_empty() {
        return String::new();
    }
    let each: Vec<String> = row
        .collisions
        .iter()
        .map(|c| match verbose {
            true => format!("{}: {}", c.effort, c.paths.join(", ")),
            false => format!("{} ({} file(s))", c.effort, c.files),
        })
        .collect();
    format!("; changes the same files as {}", each.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::observation::GitCount;

    fn row(id: &str, paths: &[&str]) -> FleetRow {
        FleetRow {
            path: format!("/w/{id}"),
            branch: Some(format!("agent/{id}")),
            clean: Some(true),
            changed_files: Some(0),
            ahead: Some(GitCount::Known(1)),
            behind: Some(GitCount::Known(0)),
            id: id.to_owned(),
            committed_paths: paths.iter().map(|p| (*p).to_owned()).collect(),
            ..FleetRow::default()
        }
    }

    #[test]
    fn two_efforts_changing_one_file_each_name_the_other_and_a_third_names_none() {
        let mut fleet = vec![
            row("a", &["src/x.rs", "src/a.rs"]),
            row("b", &["src/x.rs", "src/b.rs"]),
            row("c", &["src/c.rs"]),
        ];
        mark(&mut fleet);
        let names = |r: &FleetRow| -> Vec<(String, Vec<String>)> {
            r.collisions
                .iter()
                .map(|c| (c.effort.clone(), c.paths.clone()))
                .collect()
        };
        assert_eq!(
            names(&fleet[0]),
            [("b".to_owned(), vec!["src/x.rs".to_owned()])]
        );
        assert_eq!(
            names(&fleet[1]),
            [("a".to_owned(), vec!["src/x.rs".to_owned()])]
        );
        assert!(fleet[2].collisions.is_empty());
        assert_eq!(
            note(&fleet[0], false),
            "; changes the same files as b (1 file(s))"
        );
        assert_eq!(
            note(&fleet[0], true),
            "; changes the same files as b: src/x.rs"
        );
    }
}
