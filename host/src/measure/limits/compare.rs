//! What the trunk changed since a branch forked: the Standards it added, tightened or
//! redefined, which apply to the branch once it brings the trunk in.

use crate::config::Config;
use crate::git::RepoError;
use crate::protected::{self, tighter};

/// The Standards `new` added, tightened or redefined versus `old`: what a branch forked
/// before them does not have yet.
/// An error when the two configs cannot be compared: never read as "nothing arrived".
pub(super) fn arrived(old: &Config, new: &Config) -> Result<Vec<String>, RepoError> {
    let no_blob = |_: &str| Ok(None);
    let redefined: Vec<String> = protected::compare(old, &no_blob, new, &no_blob)?
        .protected
        .iter()
        .filter_map(|change| change.standard().map(str::to_owned))
        .collect();
    Ok(new
        .standards
        .iter()
        .filter_map(|after| match old.standard(&after.name) {
            None => Some(format!("{} added", after.name)),
            Some(_) if redefined.contains(&after.name) => Some(format!("{} redefined", after.name)),
            Some(before) if tighter(after.direction, after.limit, before.limit) => Some(format!(
                "{} tightened {} -> {}",
                after.name, before.limit, after.limit
            )),
            Some(_) => None,
        })
        .collect())
}
