//! An effort's port: the first in `[worktree].ports` that no other registered effort holds (its
//! task metadata records the port it took at `start`). Chosen under the writer lock, inside
//! the fork, so two concurrent starts never take the same one; recorded, so it is stable for
//! the effort's life.

use std::path::Path;

/// The port for a new effort whose git dir is `own`, from `band`; `Ok(None)` without a band.
/// Every port of the band held by another effort is an error naming the band.
pub(crate) fn choose(
    common_dir: &Path,
    band: Option<(u16, u16)>,
    own: &Path,
) -> Result<Option<u16>, String> {
    let Some((first, last)) = band else {
        return Ok(None);
    };
    let held = held(common_dir, own)?;
    (first..=last)
        .find(|p| !held.contains(p))
        .map(Some)
        .ok_or_else(|| {
            format!(
                "every port of [worktree].ports = [{first}, {last}] is held by another effort ({} efforts); widen the band in discern.toml or abandon an effort you no longer need",
                held.len()
            )
        })
}

/// The ports other registered efforts hold.
fn held(common_dir: &Path, own: &Path) -> Result<Vec<u16>, String> {
    let admin = common_dir.join("worktrees");
    let entries = match std::fs::read_dir(&admin) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("cannot list {}: {e}", admin.display())),
    };
    let own = std::fs::canonicalize(own).unwrap_or_else(|_| own.to_owned());
    // A sibling whose metadata cannot be read may hold any port: refused, never counted free.
    let mut held = Vec::new();
    for git_dir in entries.flatten().map(|e| e.path()) {
        if std::fs::canonicalize(&git_dir).is_ok_and(|d| d == own) {
            continue;
        }
        held.extend(crate::task::read_from(&git_dir)?.and_then(|task| task.port));
    }
    Ok(held)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn effort(common: &Path, name: &str, port: Option<u16>) -> std::path::PathBuf {
        let git_dir = common.join("worktrees").join(name);
        let task = crate::task::TaskMetadata {
            version: crate::task::VERSION,
            id: name.to_owned(),
            title: None,
            brief: None,
            created_from: crate::task::CreatedFrom {
                reference: "main".into(),
                commit: "0".repeat(40),
            },
            port,
        };
        crate::task::save(&git_dir, &task).unwrap();
        git_dir
    }

    #[test]
    fn a_new_effort_takes_the_first_port_no_other_effort_holds() {
        let dir = tempfile::tempdir().unwrap();
        let common = dir.path();
        effort(common, "a", Some(4100));
        effort(common, "b", None);
        let own = effort(common, "c", None);
        assert_eq!(choose(common, Some((4100, 4101)), &own), Ok(Some(4101)));
        assert_eq!(choose(common, None, &own), Ok(None));
        effort(common, "d", Some(4101));
        let full = choose(common, Some((4100, 4101)), &own).unwrap_err();
        assert!(full.contains("[4100, 4101]"), "{full}");
    }
}
