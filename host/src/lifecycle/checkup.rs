//! `doctor`'s checks: what this checkout needs and has, one line each with its result and, when
//! it fails, the fix. The binary, git, the config and its trunk, the signers file, each wired
//! agent client (its file, its command, its answer to MCP `initialize`), the guidance, the
//! caches, the worktrees; the remote cache and registries the config names (`checkup_remote`).

use std::path::Path;

use super::check_line::{Check, Status, check, ok};
use crate::agents::clients::Client;
use crate::agents::guidance::Tool;
use crate::config::Config;
use crate::workspace::Workspace;

pub(crate) fn checks(ws: &Workspace, tools: &[Tool]) -> Vec<Check> {
    let root = ws.repo.root();
    let config = Config::load(root);
    let mut checks = vec![binary(), git()];
    checks.extend(configured(ws, &config));
    if let Ok(Some(config)) = &config {
        let cache_dir = ws.settings.cache_dir.as_deref();
        checks.extend(super::checkup_remote::checks(config, cache_dir));
    }
    checks.extend(clients(root));
    if let Some(stale) = crate::agents::stale_guidance(root, tools) {
        let fix = Some("`discern agents` writes it again");
        checks.push(check("guidance", Status::Warn, stale, fix));
    }
    checks.push(compile_cache(ws));
    let evidence = ws.repo.common_dir().join("discern").join("evidence");
    checks.push(store("evidence", &evidence));
    checks.push(worktrees(ws));
    checks
}

fn binary() -> Check {
    let version = discern_version::long(env!("CARGO_PKG_VERSION"));
    let path = std::env::current_exe().map_or_else(|e| e.to_string(), |p| p.display().to_string());
    ok("binary", format!("discern {version} at {path}"))
}

fn git() -> Check {
    match crate::git::command().arg("--version").output() {
        Ok(out) if out.status.success() => ok(
            "git",
            String::from_utf8_lossy(&out.stdout).trim().to_owned(),
        ),
        Ok(out) => check(
            "git",
            Status::Fail,
            String::from_utf8_lossy(&out.stderr).trim().to_owned(),
            Some("install git (2.38 or later) on PATH"),
        ),
        Err(e) => check(
            "git",
            Status::Fail,
            format!("git does not run: {e}"),
            Some("install git (2.38 or later) on PATH"),
        ),
    }
}

/// The config, its trunk and its signers file.
fn configured(
    ws: &Workspace,
    config: &Result<Option<Config>, crate::config::ConfigError>,
) -> Vec<Check> {
    let config = match config {
        Ok(Some(config)) => config,
        Ok(None) => {
            let result = "no discern.toml".to_owned();
            return vec![check(
                "config",
                Status::Fail,
                result,
                Some("`discern init` writes one"),
            )];
        }
        Err(e) => {
            let fix = Some("fix discern.toml where the message says");
            return vec![check("config", Status::Fail, e.to_string(), fix)];
        }
    };
    let valid = format!(
        "valid: {} Standard(s), {} job(s)",
        config.standards.len(),
        config.jobs.iter().filter(|j| !j.run.is_empty()).count()
    );
    vec![
        ok("config", valid),
        trunk(ws, config),
        signers(ws.repo.root(), config),
    ]
}

fn trunk(ws: &Workspace, config: &Config) -> Check {
    let trunk = ws.trunk(Some(config));
    match ws.repo.resolve_trunk(&trunk) {
        Ok(Some(resolved)) => ok(
            "trunk",
            format!(
                "{} at {}",
                resolved.reference,
                crate::git::short(&resolved.commit.to_string())
            ),
        ),
        Ok(None) => check(
            "trunk",
            Status::Fail,
            format!("no branch `{trunk}` here"),
            Some(&format!(
                "fetch it (`git fetch origin {trunk}:{trunk}`), or set [repository].trunk"
            )),
        ),
        Err(e) => check(
            "trunk",
            Status::Fail,
            e.to_string(),
            Some("repair the repository"),
        ),
    }
}

fn signers(root: &Path, config: &Config) -> Check {
    let Some(file) = &config.allowed_signers else {
        return ok(
            "signers",
            "none configured ([acceptance].allowed_signers)".to_owned(),
        );
    };
    let fix = Some("write the owner's keys there in git's allowed-signers format");
    match std::fs::read_to_string(root.join(file)) {
        Ok(text) => match crate::approval::signers::parse(&text) {
            Ok(keys) => ok("signers", format!("{file}: {} key(s)", keys.len())),
            Err(e) => check("signers", Status::Fail, format!("{file}: {e}"), fix),
        },
        Err(e) => check("signers", Status::Fail, format!("{file}: {e}"), fix),
    }
}

/// Each client wired here (its file, its command, its answer to `initialize`), and each found
/// on PATH but not wired.
fn clients(root: &Path) -> Vec<Check> {
    let mut checks = Vec::new();
    for client in Client::ALL {
        let name = format!("client {}", client.as_str());
        let fix = format!(
            "`discern agents --client {}` writes it again",
            client.as_str()
        );
        let file = client.file();
        let entry = match crate::agents::read(&root.join(file)) {
            Ok(Some(text)) => crate::agents::entry(client, &text),
            Ok(None) => Ok(None),
            Err(e) => Err(e),
        };
        checks.push(match entry {
            Ok(Some(entry)) => match crate::agents::probe::initialize(&entry, root) {
                Ok(server) => ok(&name, format!("{file}: answers initialize ({server})")),
                Err(why) => check(&name, Status::Fail, format!("{file}: {why}"), Some(&fix)),
            },
            Ok(None) if crate::agents::launch::installed(client.programs()) => check(
                &name,
                Status::Warn,
                format!("found on PATH, not wired in {file}"),
                Some(&format!("`discern agents --client {}`", client.as_str())),
            ),
            Ok(None) => continue,
            Err(e) => check(&name, Status::Fail, format!("{file}: {e}"), Some(&fix)),
        });
    }
    checks
}

fn compile_cache(ws: &Workspace) -> Check {
    let dir = ws
        .settings
        .cache_dir
        .clone()
        .or_else(crate::runtime::CompileCache::default_dir);
    match dir {
        Some(dir) => store("compile cache", &dir),
        None => check(
            "compile cache",
            Status::Warn,
            "no folder for it (no HOME, XDG_CACHE_HOME or DISCERN_CACHE_DIR)".to_owned(),
            Some("set DISCERN_CACHE_DIR"),
        ),
    }
}

/// A cache folder: its size, and whether this process can write in it.
fn store(name: &str, dir: &Path) -> Check {
    let size = size_of(dir);
    let probe = dir.join(format!(
        "{}doctor-{}",
        crate::fsutil::TEMP_PREFIX,
        std::process::id()
    ));
    let writable = std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::write(&probe, b""))
        .and_then(|()| std::fs::remove_file(&probe));
    match (writable, size) {
        (Ok(()), Ok(size)) => ok(
            name,
            format!(
                "{}: {:.1} MiB, writable",
                dir.display(),
                size as f64 / 1048576.0
            ),
        ),
        (Ok(()), Err(e)) => check(
            name,
            Status::Warn,
            format!(
                "{}: writable, but its size cannot be read ({e})",
                dir.display()
            ),
            Some("give this user read access to everything in it"),
        ),
        (Err(e), _) => check(
            name,
            Status::Fail,
            format!("{}: not writable ({e})", dir.display()),
            Some("give this user write access to it"),
        ),
    }
}

/// The bytes under `dir` (0 for a folder not made yet); an error for one that cannot be read,
/// never a made-up 0.
fn size_of(dir: &Path) -> std::io::Result<u64> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let mut total = 0;
    for entry in entries {
        let entry = entry?;
        total += match entry.file_type()?.is_dir() {
            true => size_of(&entry.path())?,
            false => entry.metadata()?.len(),
        };
    }
    Ok(total)
}

fn worktrees(ws: &Workspace) -> Check {
    match ws.repo.worktrees() {
        Ok(listed) => {
            let broken: Vec<String> = listed
                .iter()
                .filter(|w| w.prunable || !w.path.exists())
                .map(|w| w.path.display().to_string())
                .collect();
            match broken.is_empty() {
                true => ok(
                    "worktrees",
                    format!("{} worktree(s), none broken", listed.len()),
                ),
                false => check(
                    "worktrees",
                    Status::Fail,
                    format!("missing their folder: {}", broken.join(", ")),
                    Some("the owner prunes them (`git worktree prune`) or restores the folders"),
                ),
            }
        }
        Err(e) => check(
            "worktrees",
            Status::Fail,
            format!("cannot be listed: {e}"),
            Some("repair the repository (`git worktree list` says what is wrong)"),
        ),
    }
}

/// One report line: the outcome, the check, its result, the fix.
pub(crate) fn line(check: &Check) -> String {
    let status = match check.status {
        Status::Ok => "ok  ",
        Status::Warn => "WARN",
        Status::Fail => "FAIL",
    };
    let fix = check
        .fix
        .as_deref()
        .map_or_else(String::new, |f| format!(" — fix: {f}"));
    format!("{status} {}: {}{fix}", check.check, check.result)
}
