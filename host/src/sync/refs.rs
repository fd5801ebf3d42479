//! The refs `discern sync` carries, how a path both clones wrote is settled on each, and where
//! their remote-tracking copies live: under `refs/notes/remotes/<remote>/` and
//! `refs/discern/remotes/<remote>/`, beside the local refs, never over them.

use super::merge::Rule;
use crate::evidence::shared::tree;

/// One synced ref.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Synced {
    pub name: &'static str,
    pub rule: Rule,
}

/// Every ref `discern sync` carries: the Proof notes, the approval notes, published evidence.
pub(crate) const SYNCED: [Synced; 3] = [
    Synced {
        name: crate::commit::NOTES_REF,
        rule: Rule::Ours,
    },
    Synced {
        name: crate::approval::NOTES_REF,
        rule: Rule::Ours,
    },
    Synced {
        name: tree::REF,
        rule: Rule::Smaller,
    },
];

/// The remote-tracking copy of `name` from `remote`.
pub(crate) fn tracking(name: &str, remote: &str) -> String {
    match name.strip_prefix("refs/notes/") {
        Some(rest) => format!("refs/notes/remotes/{remote}/{rest}"),
        None => match name.strip_prefix("refs/discern/") {
            Some(rest) => format!("refs/discern/remotes/{remote}/{rest}"),
            None => format!("refs/discern/remotes/{remote}/{name}"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracking_refs_sit_beside_the_local_ones() {
        assert_eq!(
            tracking("refs/notes/discern", "origin"),
            "refs/notes/remotes/origin/discern"
        );
        assert_eq!(
            tracking("refs/discern/evidence", "up"),
            "refs/discern/remotes/up/evidence"
        );
    }
}
