//! `init --merge-driver`: git's merge driver for `discern.toml` installed in this clone.

use super::NotWritten;
use crate::result::{ErrorSlug, Hint, HintId, Refused, Reply, Report, Section};
use crate::workspace::Workspace;

/// `data` of `init --merge-driver`: the driver's command and what was changed.
#[derive(serde::Serialize)]
struct DriverData<'a> {
    merge_driver: &'a str,
    changed: Vec<String>,
}

/// The merge driver for `discern.toml`: the `.gitattributes` line (to commit, so every clone
/// asks for it) and this clone's `merge.discern.*` config (each clone runs it once), naming
/// what changed.
pub(super) fn install_driver(ws: &Workspace) -> Result<Reply, Refused> {
    const LINE: &str = "discern.toml merge=discern";
    let mut changed = Vec::new();
    let attributes = ws.root().join(".gitattributes");
    // Rewritten from what is read: a file that cannot be read is never taken as empty.
    let existing = match crate::fsutil::read_or_empty(&attributes) {
        Ok(text) => text,
        Err(e) => {
            return Err(NotWritten::Write {
                path: attributes,
                source: e,
            }
            .into());
        }
    };
    if !existing.lines().any(|l| l.trim() == LINE) {
        let separator = if existing.is_empty() || existing.ends_with('\n') {
            ""
        } else {
            "\n"
        };
        let text = format!("{existing}{separator}{LINE}\n");
        if let Err(e) = std::fs::write(&attributes, text) {
            return Err(NotWritten::Write {
                path: attributes,
                source: e,
            }
            .into());
        }
        changed.push(format!(".gitattributes: added `{LINE}` (commit it)"));
    }
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "discern".to_owned());
    let driver = format!("'{}' merge-driver %O %A %B %P", exe.replace('\'', "'\\''"));
    for (key, value) in [
        (
            "merge.discern.name",
            "discern: discern.toml merged by meaning",
        ),
        ("merge.discern.driver", driver.as_str()),
    ] {
        if let Err(e) = ws.repo.git(&["config", key, value]) {
            return Err(Refused::new(
                ErrorSlug::PreconditionFailed,
                format!("This clone's git config cannot be written ({key}): {e}."),
                Hint::next_step(
                    HintId::CheckRepository,
                    "Fix the repository's config, then install again",
                ),
            ));
        }
        changed.push(format!("this clone's git config: {key} = {value}"));
    }
    let data = DriverData {
        merge_driver: &driver,
        changed: changed.clone(),
    };
    Ok(Reply::new(
        data,
        Report {
            state: "discern's merge driver is installed: git merges discern.toml by meaning in this clone (forges run no driver: use `discern resolve` there).".to_owned(),
            sections: vec![Section {
                table: None,
                title: "Changed".to_owned(),
                lines: changed,
            }],
        },
    ))
}
