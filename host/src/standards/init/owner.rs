//! `init --owner-key PATH`: signed approval from the first commit. The owner's SSH public key
//! becomes the allowed-signers file's line (git's format, limited to discern's approval
//! namespace), and `[acceptance]` names the file, `approval = "signed"` and the repository a
//! signature is bound to — so no loosened limit or change to the gate is ever approved through
//! a terminal prompt an agent could answer, not even the switch to signatures.

use std::path::{Path, PathBuf};

use crate::workspace::Workspace;

/// Where `init` writes the allowed-signers file.
pub(super) const SIGNERS: &str = ".discern/allowed_signers";

/// The owner as `init` writes them: the signers file's text and the repository's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Owner {
    pub signers: String,
    pub principal: String,
    pub repository: String,
}

/// Why no owner could be written.
#[derive(Debug, thiserror::Error)]
pub(super) enum NoOwner {
    #[error("{} cannot be read: {source}", .path.display())]
    Unreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{} is not an SSH public key ({why}); pass the `.pub` file of the key you sign approvals with",
        .path.display()
    )]
    NotAKey { path: PathBuf, why: String },
    #[error(
        "The repository a signed approval names cannot be told: {0}. Name it with --repository HOST/OWNER/NAME (e.g. github.com/acme/app)."
    )]
    NoRepository(String),
}

/// The owner whose key is at `key` in the repository `repository` (else `origin`'s name).
pub(super) fn owner(
    ws: &Workspace,
    key: &Path,
    repository: Option<&str>,
) -> Result<Owner, NoOwner> {
    let text = std::fs::read_to_string(key).map_err(|source| NoOwner::Unreadable {
        path: key.to_owned(),
        source,
    })?;
    let not_a_key = |why: String| NoOwner::NotAKey {
        path: key.to_owned(),
        why,
    };
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .ok_or_else(|| not_a_key("it is empty".to_owned()))?;
    let public = ssh_key::PublicKey::from_openssh(line).map_err(|e| not_a_key(e.to_string()))?;
    let comment = public.comment().to_owned();
    let email = ws
        .repo
        .git(&["config", "user.email"])
        .ok()
        .map(|e| e.trim().to_owned());
    let principal = [email.as_deref(), Some(comment.as_str())]
        .into_iter()
        .flatten()
        .find(|p| !p.is_empty() && p.contains('@') && !p.contains(char::is_whitespace))
        .unwrap_or("owner")
        .to_owned();
    let key_text = public.to_openssh().map_err(|e| not_a_key(e.to_string()))?;
    let signers = format!(
        "# Whose SSH signature approves a loosened limit or a change to the gate (git's\n\
         # allowed-signers format: principal, options, key type, key, comment). Add a key by adding\n\
         # its line, in a change the owner approves.\n\
         {principal} namespaces=\"{}\" {}\n",
        crate::approval::NAMESPACE,
        key_text.trim()
    );
    crate::approval::signers::parse(&signers).map_err(|e| not_a_key(e.to_string()))?;
    let repository = match repository {
        Some(name) => name.to_owned(),
        None => origin_name(ws)?,
    };
    Ok(Owner {
        signers,
        principal,
        repository,
    })
}

/// `origin`'s name as a signed approval names a repository: `github.com/acme/app`.
fn origin_name(ws: &Workspace) -> Result<String, NoOwner> {
    let url = ws
        .repo
        .git(&["config", "remote.origin.url"])
        .map(|u| u.trim().to_owned())
        .ok()
        .filter(|u| !u.is_empty())
        .ok_or_else(|| NoOwner::NoRepository("this clone has no `origin` remote".to_owned()))?;
    named(&url)
        .ok_or_else(|| NoOwner::NoRepository(format!("`origin` ({url}) names no host and path")))
}

/// `host/path` of a remote URL (`https://`, `ssh://`, scp-like `git@host:path`), without
/// credentials, port or `.git`; `None` for a local path.
fn named(url: &str) -> Option<String> {
    let rest = match url.split_once("://") {
        Some((scheme, rest)) if scheme != "file" => rest,
        Some(_) => return None,
        None => {
            let (host, path) = url.split_once(':')?;
            if host.contains('/') {
                return None;
            }
            return joined(host, path);
        }
    };
    let (host, path) = rest.split_once('/')?;
    let host = host.rsplit('@').next()?;
    let host = host.split(':').next()?;
    joined(host, path)
}

fn joined(host: &str, path: &str) -> Option<String> {
    let host = host.rsplit('@').next()?;
    let path = path.trim_matches('/').trim_end_matches(".git");
    (!host.is_empty() && !path.is_empty() && !format!("{host}{path}").contains(char::is_whitespace))
        .then(|| format!("{host}/{path}"))
}

/// The `[acceptance]` keys of signed approval, with their comment.
pub(super) fn acceptance_keys(owner: &Owner) -> String {
    format!(
        "# Signed approval from the first commit: only a signature by a key in {SIGNERS}\n\
         # (`discern approve`) approves a loosened limit or a change to the gate, never a prompt.\n\
         approval = \"signed\"\n\
         allowed_signers = \"{SIGNERS}\"\n\
         repository = {:?}\n",
        owner.repository
    )
}

/// How to add signed approval later, for `init` without `--owner-key`.
pub(super) const LATER: &str = "Approvals here are interactive: a terminal prompt, which an agent with a shell can answer. For signed approval from the first commit, move discern.toml away and run `discern init --owner-key ~/.ssh/id_ed25519.pub` before committing it; later, the same `[acceptance]` keys (approval = \"signed\", allowed_signers, repository) and the signers file land as a change the owner approves";

#[cfg(test)]
mod tests {
    use super::named;

    #[test]
    fn a_remote_url_names_its_repository() {
        for (url, name) in [
            (
                "https://github.com/acme/app.git",
                Some("github.com/acme/app"),
            ),
            ("git@github.com:acme/app.git", Some("github.com/acme/app")),
            (
                "ssh://git@gitlab.com:2222/group/sub/app",
                Some("gitlab.com/group/sub/app"),
            ),
            (
                "https://user:token@example.com/a/b",
                Some("example.com/a/b"),
            ),
            ("/srv/git/app.git", None),
            ("file:///srv/git/app.git", None),
            ("../app", None),
        ] {
            assert_eq!(named(url).as_deref(), name, "{url}");
        }
    }
}
