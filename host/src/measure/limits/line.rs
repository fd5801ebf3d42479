//! Release lines: `[repository].release` on the trunk's tip names branches (`release/*`) that
//! are protected lines of their own. HEAD is judged against the line it came from: the release
//! branch whose merge base with HEAD is newer than the trunk's (a branch of `release/1.x`, a
//! pull request to it, its merge queue's entry, a push to it). Which branches are lines is read
//! from the trunk tip's config only, never HEAD's, so a branch cannot make itself a line; the
//! line's own tip then gives the config and signers it is judged under, as the trunk's tip does
//! for the trunk. In CI only remote-tracking refs count, as for the trunk. A branch that could
//! be several lines at once (two release branches at the same fork point) is judged against
//! the trunk.

use gix::ObjectId;

use super::name;
use crate::config::Config;
use crate::git::Repo;

/// The release line HEAD came from (its branch name, `release/1.x`), when the trunk `trunk`
/// declares release lines: the one the forge names as the base in CI (`forge_base`); else the
/// one whose merge base with HEAD is newer than the trunk's, or, at the same merge base, whose
/// tip HEAD has while it lacks the trunk's.
pub(crate) fn release_line(
    repo: &Repo,
    trunk: &str,
    head: ObjectId,
    ci: bool,
    forge_base: Option<&str>,
) -> Option<String> {
    let found = name::resolve(repo, trunk, ci).ok().flatten()?.trunk;
    let patterns = match Config::at(repo, found.commit) {
        Ok(Some(config)) if !config.release.is_empty() => config.release,
        _ => return None,
    };
    let lines = discern_pathspec::Pathspec::new(&patterns);
    let trunk_name = short_name(repo, &found.reference)?;
    // In CI the forge names the base (a pull request's, a queue's): it decides, when it names
    // the trunk or one of its lines.
    match forge_base.filter(|_| ci) {
        Some(base) if base == trunk_name => return None,
        // Unfetched, it is still the line: the check then names the fetch, never the trunk.
        Some(base) if lines.matches(base) => return Some(base.to_owned()),
        _ => {}
    }
    let trunk_base = repo.merge_base(found.commit, head);
    let mut best: Option<(String, ObjectId)> = None;
    let mut tied = false;
    for (reference, tip) in name::branches(&repo.local()).ok()? {
        if ci && !reference.starts_with("refs/remotes/") {
            continue;
        }
        let Some(line) = short_name(repo, &reference) else {
            continue;
        };
        if line == trunk_name || !lines.matches(&line) {
            continue;
        }
        // A line of this trunk shares its history, and HEAD left it later than the trunk.
        let (Some(_), Some(base)) = (
            repo.merge_base(tip, found.commit),
            repo.merge_base(tip, head),
        ) else {
            continue;
        };
        // At the trunk's own merge base, only a HEAD that has the line's tip and not the
        // trunk's left from the line (a branch of a line not yet moved since it was cut).
        let from_line = match trunk_base {
            Some(t) if t == base => {
                repo.is_ancestor(tip, head) && !repo.is_ancestor(found.commit, head)
            }
            Some(t) => repo.is_ancestor(t, base),
            None => true,
        };
        if !from_line {
            continue;
        }
        match &best {
            None => best = Some((line, base)),
            Some((name, at)) if *at == base => tied |= *name != line,
            Some((_, at)) if repo.is_ancestor(*at, base) => {
                best = Some((line, base));
                tied = false;
            }
            Some((_, at)) if repo.is_ancestor(base, *at) => {}
            Some(_) => tied = true,
        }
    }
    best.filter(|_| !tied).map(|(line, _)| line)
}

/// A branch ref's name without `refs/heads/` or `refs/remotes/<remote>/`.
fn short_name(repo: &Repo, reference: &str) -> Option<String> {
    if let Some(local) = reference.strip_prefix("refs/heads/") {
        return Some(local.to_owned());
    }
    let remote = reference.strip_prefix("refs/remotes/")?;
    repo.remote_names()
        .iter()
        .find_map(|r| remote.strip_prefix(&format!("{r}/")).map(str::to_owned))
}

/// The line work at `head` is judged against and lands on: the runner's `DISCERN_TRUNK` when
/// set; else the release line `head` came from; else `trunk` (`[repository].trunk`).
pub(crate) fn landing_line(
    ws: &crate::workspace::Workspace,
    trunk: String,
    head: Option<ObjectId>,
) -> String {
    if ws.settings.trunk_override.is_some() {
        return trunk;
    }
    let base = ws.settings.base_ref.as_deref();
    head.and_then(|head| release_line(&ws.repo, &trunk, head, ws.settings.ci, base))
        .unwrap_or(trunk)
}
