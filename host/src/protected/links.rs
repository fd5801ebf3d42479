//! What a protected path holds, as the protected set compares it: a file's blob (and its
//! executable bit), a submodule's commit, and for a symbolic link its text together with what
//! its target holds in the same tree — so an edit of the file a protected link points at is a
//! change of the link. A link whose target the repository cannot show (outside it, inside a
//! submodule, a loop) cannot be compared: it is refused on the side being judged, whatever the
//! other side holds.

use gix::ObjectId;
use serde_json::{Value, json};

use crate::git::{Held, Repo, RepoError};

/// How many links one resolution follows before it calls the chain a loop.
const MAX_HOPS: usize = 8;

/// What `path` holds at `commit` (`null`: nothing there).
pub(super) fn value(repo: &Repo, commit: ObjectId, path: &str) -> Result<Value, RepoError> {
    Ok(match repo.held_at(commit, path)? {
        None => Value::Null,
        Some(Held::Link { target }) => {
            let (to, holds) = resolve(repo, commit, path, &target)?;
            json!({ "link": target, "target": to, "holds": holds })
        }
        Some(other) => plain(&other),
    })
}

/// Whether `path` holds anything but a file on either side (a link, a submodule, a folder).
pub(super) fn not_a_file(
    repo: &Repo,
    commits: [ObjectId; 2],
    path: &str,
) -> Result<bool, RepoError> {
    for commit in commits {
        if let Some(held) = repo.held_at(commit, path)?
            && !matches!(held, Held::File { .. })
        {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Why a value (as [`value`] gives it) cannot be compared: a link whose target the repository
/// cannot show.
pub(super) fn refused(value: &Value) -> Option<&str> {
    value.get("holds")?.get("outside")?.as_str()
}

/// A held entry's value; a file that is not executable is its blob id alone (as the protected
/// set always wrote it).
fn plain(held: &Held) -> Value {
    match held {
        Held::File {
            id,
            executable: false,
        } => json!(id.to_string()),
        Held::File {
            id,
            executable: true,
        } => json!({ "file": id.to_string(), "executable": true }),
        Held::Gitlink(id) => json!({ "gitlink": id.to_string() }),
        Held::Folder(id) => json!({ "folder": id.to_string() }),
        Held::Link { target } => json!({ "link": target }),
    }
}

fn outside(why: &str) -> Value {
    json!({ "outside": why })
}

/// Where the link at `link` (text `target`) leads at `commit`, and what is there (`null`:
/// nothing; `{"outside": why}`: what the repository cannot show).
fn resolve(
    repo: &Repo,
    commit: ObjectId,
    link: &str,
    target: &str,
) -> Result<(Value, Value), RepoError> {
    let Some(mut path) = joined(parent(link), target) else {
        return Ok((Value::Null, outside(&escapes(target))));
    };
    let mut hops = 0;
    'follow: loop {
        if path.is_empty() {
            return Ok((json!(""), outside("it points at the whole repository")));
        }
        let parts: Vec<String> = path.split('/').map(str::to_owned).collect();
        let mut at = String::new();
        for (i, part) in parts.iter().enumerate() {
            at = match at.is_empty() {
                true => part.clone(),
                false => format!("{at}/{part}"),
            };
            let last = i + 1 == parts.len();
            match repo.held_at(commit, &at)? {
                None => return Ok((json!(path), Value::Null)),
                Some(Held::Folder(_)) if !last => {}
                Some(Held::Link { target }) => {
                    hops += 1;
                    if hops > MAX_HOPS {
                        let why =
                            format!("its links form a loop or a chain of more than {MAX_HOPS}");
                        return Ok((json!(path), outside(&why)));
                    }
                    let Some(next) = joined(parent(&at), &target) else {
                        return Ok((json!(path), outside(&escapes(&target))));
                    };
                    let rest = parts[i + 1..].join("/");
                    path = match (next.is_empty(), rest.is_empty()) {
                        (_, true) => next,
                        (true, false) => rest,
                        (false, false) => format!("{next}/{rest}"),
                    };
                    continue 'follow;
                }
                Some(held) if last => return Ok((json!(path), plain(&held))),
                Some(Held::Gitlink(_)) => {
                    return Ok((json!(path), outside("it points into a submodule")));
                }
                // A file where a folder would be: nothing is there.
                Some(_) => return Ok((json!(path), Value::Null)),
            }
        }
        return Ok((json!(path), Value::Null));
    }
}

/// Why a link's text leads out of the repository.
fn escapes(target: &str) -> String {
    match target.contains('\u{FFFD}') {
        true => "its target is not UTF-8".to_owned(),
        false => format!("it points outside the repository ({target})"),
    }
}

/// The folder holding `path` (`""`: the root).
fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// `target` read from the folder `dir`, normalised (`.` and empty parts dropped, `..` taken
/// back); `None` when it is absolute, climbs above the root or is not UTF-8.
fn joined(dir: &str, target: &str) -> Option<String> {
    if target.starts_with('/') || target.contains('\u{FFFD}') {
        return None;
    }
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for part in target.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            name => parts.push(name),
        }
    }
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::joined;

    #[test]
    fn a_links_text_is_read_from_its_folder() {
        assert_eq!(
            joined("scripts", "../lib/x.sh").as_deref(),
            Some("lib/x.sh")
        );
        assert_eq!(joined("scripts", "x.sh").as_deref(), Some("scripts/x.sh"));
        assert_eq!(joined("", "./a//b").as_deref(), Some("a/b"));
        assert_eq!(joined("a", "..").as_deref(), Some(""));
        assert_eq!(joined("a", "../../x"), None);
        assert_eq!(joined("a", "/etc/passwd"), None);
    }
}
