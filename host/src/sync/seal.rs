//! What every git child of `sync` runs with: no evidence key, and none of the configuration that
//! makes git run a program.
//!
//! A clone's own config is the repository's to write: a test the measure step ran can set
//! `remote.origin.uploadpack` to a tracked script, add a hook or an fsmonitor, a credential
//! helper or an include, and the next git that `sync` runs would run it. So each git child gets
//! `-c` overrides through `GIT_CONFIG_COUNT` (they come last, and win): no hooks
//! (`core.hooksPath`), no fsmonitor, no `ext::` transport, no automatic maintenance, no
//! submodule recursion, no push signing; the upload and receive programs are named on the
//! command line (git takes the *first* `uploadpack` of a remote's config, so no override
//! reaches it). The evidence key's variable is removed from every child's environment.
//!
//! While this process holds the key ([`KEY_VAR`] set), a child is **sealed** besides: the system
//! and global config are not read (`GIT_CONFIG_NOSYSTEM`, `GIT_CONFIG_GLOBAL=/dev/null`),
//! credential helpers are reset, `core.sshCommand` is plain `ssh`, `core.askPass` is empty,
//! the environment variables that name programs are removed, and before the first git runs,
//! the configuration git would read (the clone's, with what it includes) is checked in-process
//! for what no override can undo — a remote helper, a proxy command, an alternate-refs command,
//! a URL rewritten to a local path: `sync` refuses, naming the key and the fix. The process is
//! also made undumpable (Linux), so no other process of the user reads the key from its memory
//! or `/proc/<pid>/environ`. A developer's sync (no key) keeps the global config: its
//! credential helpers and `ssh` command are the user's own.

use std::process::Command;

use super::KEY_VAR;
use super::SyncError;
use crate::git::Repo;

/// The overrides every git child of `sync` runs with.
const ALWAYS: [(&str, &str); 8] = [
    ("core.hooksPath", "/dev/null"),
    ("core.fsmonitor", "false"),
    ("protocol.ext.allow", "never"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("fetch.recurseSubmodules", "false"),
    ("push.recurseSubmodules", "no"),
    ("push.gpgSign", "false"),
];

/// The overrides a sealed child runs with besides.
const SEALED: [(&str, &str); 3] = [
    // An empty helper resets the list, URL-specific helpers included.
    ("credential.helper", ""),
    ("core.sshCommand", "ssh"),
    ("core.askPass", ""),
];

/// Environment variables that name a program git or ssh would run, or config git would read
/// besides the clone's: removed from a sealed child.
const PROGRAMS: [&str; 10] = [
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "GIT_PROXY_COMMAND",
    "GIT_EXEC_PATH",
    "GIT_EXTERNAL_DIFF",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG",
    "GIT_CONFIG_SYSTEM",
];

/// How `sync` runs git: sealed while this process holds the evidence key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Seal {
    sealed: bool,
}

impl Seal {
    /// The seal for this process: sealed when [`KEY_VAR`] is set, and then only once the
    /// configuration git would read holds nothing that runs a program no override undoes.
    pub(super) fn for_process(repo: &Repo) -> Result<Self, SyncError> {
        let sealed = std::env::var_os(KEY_VAR).is_some_and(|v| !v.is_empty());
        let seal = Self { sealed };
        if sealed {
            undumpable()?;
            seal.check(repo)?;
        }
        Ok(seal)
    }

    /// A git command for `repo` with this seal's environment and overrides.
    pub(super) fn git(&self, repo: &Repo) -> Command {
        let mut cmd = crate::git::command();
        cmd.current_dir(repo.root())
            .env_remove(KEY_VAR)
            .env("GIT_TERMINAL_PROMPT", "0");
        let mut overrides: Vec<(&str, &str)> = ALWAYS.to_vec();
        if self.sealed {
            overrides.extend(SEALED);
            for var in PROGRAMS {
                cmd.env_remove(var);
            }
            cmd.env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null");
        }
        cmd.env("GIT_CONFIG_COUNT", overrides.len().to_string());
        for (i, (key, value)) in overrides.iter().enumerate() {
            cmd.env(format!("GIT_CONFIG_KEY_{i}"), key)
                .env(format!("GIT_CONFIG_VALUE_{i}"), value);
        }
        cmd
    }

    /// Refuse what the configuration a sealed git reads (with its includes) holds that makes
    /// git run a program no override undoes.
    fn check(&self, repo: &Repo) -> Result<(), SyncError> {
        let output = self
            .git(repo)
            .args(["config", "--list", "-z", "--show-scope", "--includes"])
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| SyncError::Git(format!("git cannot be run ({e})")))?;
        // No config at all is a success with nothing listed; anything else is "cannot tell".
        if !output.status.success() {
            return Err(SyncError::Unsafe {
                key: "the clone's git config".to_owned(),
                why: format!(
                    "`git config --list` cannot read it ({})",
                    String::from_utf8_lossy(&output.stderr).trim()
                ),
                fix: "repair `.git/config`".to_owned(),
            });
        }
        match entries(&output.stdout)
            .find_map(|(scope, key, value)| unsafe_entry(scope, key, value))
        {
            Some(refusal) => Err(refusal),
            None => Ok(()),
        }
    }

    /// The option that names the program git runs on the remote's side for `what` (`fetch`,
    /// `ls-remote`: upload-pack; `push`: receive-pack), so the clone's config cannot name one.
    pub(super) fn program_option(what: &str) -> &'static str {
        match what {
            "push" => "--receive-pack=git-receive-pack",
            _ => "--upload-pack=git-upload-pack",
        }
    }
}

/// Make this process undumpable: its memory and `/proc/<pid>/environ` (which hold the key) are
/// then readable by root only, not by a program of the same user.
#[cfg(target_os = "linux")]
fn undumpable() -> Result<(), SyncError> {
    use rustix::process::{DumpableBehavior, set_dumpable_behavior};
    set_dumpable_behavior(DumpableBehavior::NotDumpable)
        .map_err(|e| SyncError::Undumpable(e.to_string()))
}

/// Elsewhere (macOS) a program of the same user can read this process's environment, the key
/// with it (`sysctl` `KERN_PROCARGS2`), and there is no call that stops it: refused.
#[cfg(not(target_os = "linux"))]
fn undumpable() -> Result<(), SyncError> {
    Err(SyncError::Undumpable(
        "this system lets a program of the same user read a process's environment".to_owned(),
    ))
}

/// The `(scope, key, value)` entries of `git config --list -z --show-scope`.
fn entries(listing: &[u8]) -> impl Iterator<Item = (&str, &str, &str)> {
    let mut fields = listing
        .split(|b| *b == 0)
        .map(|f| std::str::from_utf8(f).unwrap_or(""));
    std::iter::from_fn(move || {
        let scope = fields.next().filter(|s| !s.is_empty())?;
        let entry = fields.next()?;
        let (key, value) = entry.split_once('\n').unwrap_or((entry, ""));
        Some((scope, key, value))
    })
}

/// The refusal an entry of the config a sealed git reads calls for: what makes git run a
/// program, set anywhere but on discern's own command line.
fn unsafe_entry(scope: &str, key: &str, value: &str) -> Option<SyncError> {
    if scope == "command" {
        return None;
    }
    // Section and variable names are lowercase in git's listing; a subsection keeps its case.
    let (section, rest) = key.split_once('.')?;
    let (subsection, variable) = match rest.rsplit_once('.') {
        Some((sub, var)) => (Some(sub), var),
        None => (None, rest),
    };
    let why = match (section, subsection, variable) {
        ("remote", Some(_), "vcs") => "it makes git run a remote helper (`git-remote-<vcs>`)",
        ("remote", Some(_), "url" | "pushurl") if helper_url(value) => {
            "it makes git run a remote helper (`<transport>::<address>`)"
        }
        ("core", None, "gitproxy") => "it makes git run a proxy command",
        ("core", None, "alternaterefscommand") => "it makes git run a command for alternates",
        ("url", Some(base), "insteadof" | "pushinsteadof") if !network(base) => {
            "it rewrites the remote's address to a local path or a helper"
        }
        _ => return None,
    };
    Some(SyncError::Unsafe {
        key: format!("{key} = {value:?} ({scope} config)"),
        why: why.to_owned(),
        fix: format!("remove it (`git config --{scope} --unset-all {key}`)"),
    })
}

/// Whether `url` names a remote helper: `<transport>::<address>`.
fn helper_url(url: &str) -> bool {
    url.split_once("::").is_some_and(|(transport, _)| {
        !transport.is_empty()
            && transport
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    })
}

/// Whether `url` is a network address git reaches without a local program of the clone's
/// choosing: `http(s)://`, `ssh://`, `git://`, or the scp-like `[user@]host:path`.
fn network(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    let schemes = [
        "https://",
        "http://",
        "ssh://",
        "git://",
        "git+ssh://",
        "ssh+git://",
    ];
    if schemes.iter().any(|s| lower.starts_with(s)) {
        return true;
    }
    if helper_url(url) || url.contains("://") {
        return false;
    }
    // scp-like: a host (no slash) before the first colon, and not a path.
    match url.split_once(':') {
        Some((host, _)) => {
            let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
            !host.is_empty() && !host.contains('/') && !url.starts_with(['/', '.', '~'])
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_network_addresses_are_network() {
        for url in [
            "https://github.com/",
            "ssh://git@host/x",
            "git@github.com:",
            "host:path",
            "GIT://h/x",
        ] {
            assert!(network(url), "{url}");
        }
        for url in [
            "/tmp/fake.git",
            "./fake",
            "../fake",
            "~/fake",
            "file:///tmp/fake",
            "ext::sh -c x",
            "fd::3",
            "fake",
            "/a:b",
        ] {
            assert!(!network(url), "{url}");
        }
    }

    #[test]
    fn what_no_override_undoes_is_refused_and_the_rest_is_not() {
        let refused = [
            ("local", "remote.origin.vcs", "evil"),
            ("local", "remote.origin.url", "ext::sh -c evil"),
            ("local", "remote.origin.pushurl", "evil::x"),
            ("worktree", "core.gitproxy", "evil"),
            ("local", "core.alternaterefscommand", "evil"),
            (
                "local",
                "url./tmp/fake.git.insteadof",
                "https://github.com/",
            ),
            (
                "local",
                "url.file:///tmp/f.pushinsteadof",
                "https://github.com/",
            ),
        ];
        for (scope, key, value) in refused {
            let refusal = unsafe_entry(scope, key, value).map(|e| e.to_string());
            assert!(
                refusal.as_deref().is_some_and(|r| r.contains(key)),
                "{key}: {refusal:?}"
            );
        }
        let allowed = [
            ("command", "remote.origin.vcs", "x"),
            ("local", "remote.origin.url", "file:///srv/forge.git"),
            ("local", "remote.origin.url", "ssh://[::1]/x"),
            (
                "local",
                "remote.origin.uploadpack",
                "overridden-on-the-command-line",
            ),
            ("local", "core.sshcommand", "overridden"),
            ("local", "credential.https://x.helper", "reset"),
            (
                "local",
                "url.https://token@github.com/.insteadof",
                "https://github.com/",
            ),
            ("local", "include.path", "/tmp/x"),
            (
                "local",
                "http.https://github.com/.extraheader",
                "AUTHORIZATION: basic x",
            ),
        ];
        for (scope, key, value) in allowed {
            assert!(unsafe_entry(scope, key, value).is_none(), "{key}");
        }
    }

    #[test]
    fn the_listing_is_read_entry_by_entry() {
        let listing = b"local\0core.bare\nfalse\0local\0remote.origin.vcs\nx\0command\0a.b\n\0";
        let read: Vec<_> = entries(listing).collect();
        assert_eq!(
            read,
            [
                ("local", "core.bare", "false"),
                ("local", "remote.origin.vcs", "x"),
                ("command", "a.b", ""),
            ]
        );
    }
}
