//! `[worktree]`: setup and ensure commands, env files, and the port band.

use toml_edit::Item;

use super::{Reader, WORKTREE_KEYS, kind, path_problem, span_of};
use crate::config::WorktreeSettings;

impl Reader<'_> {
    pub(super) fn worktree(&mut self, item: Option<&Item>) -> WorktreeSettings {
        let table = self.table(item, "worktree", WORKTREE_KEYS);
        let setup = self.string_list(table, "worktree", "setup", true);
        let ensure = self.string_list(table, "worktree", "ensure", true);
        let env_files = self.string_list(table, "worktree", "env_files", true);
        for file in env_files.iter().flatten() {
            if let Some(problem) = path_problem(file) {
                self.issue_at(
                    "worktree",
                    Some("env_files"),
                    span_of(table, "env_files"),
                    problem,
                );
            }
        }
        let ports = table
            .and_then(|t| t.get("ports"))
            .and_then(|item| self.ports(item));
        WorktreeSettings {
            setup: setup.unwrap_or_default(),
            ensure: ensure.unwrap_or_default(),
            env_files: env_files.unwrap_or_default(),
            ports,
        }
    }

    /// `ports = [first, last]`: two port numbers, 1024–65535, first ≤ last.
    fn ports(&mut self, item: &Item) -> Option<(u16, u16)> {
        let port = |v: &toml_edit::Value| {
            v.as_integer()
                .and_then(|n| u16::try_from(n).ok())
                .filter(|n| *n >= 1024)
        };
        let band = item
            .as_array()
            .and_then(|a| match a.iter().collect::<Vec<_>>()[..] {
                [first, last] => Some((port(first)?, port(last)?)),
                _ => None,
            });
        match band {
            Some((first, last)) if first <= last => Some((first, last)),
            _ => {
                self.issue_at(
                    "worktree",
                    Some("ports"),
                    item.span(),
                    format!(
                        "must be [first, last]: two port numbers from 1024 to 65535, the first \
                         not above the last (e.g. [4100, 4199]), found {}",
                        kind(item)
                    ),
                );
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{Config, WorktreeSettings};

    fn problems(source: &str) -> Vec<String> {
        match Config::parse(source) {
            Ok(_) => Vec::new(),
            Err(e) => e.issues.iter().map(ToString::to_string).collect(),
        }
    }

    #[test]
    fn the_worktree_table_is_read_whole() {
        let config = Config::parse(
            "[worktree]\nsetup = [\"bun install --frozen-lockfile\"]\n\
             ensure = [\"git submodule update --init\"]\nenv_files = [\".env\", \"web/.env.local\"]\n\
             ports = [4100, 4199]\n",
        )
        .expect("valid");
        assert_eq!(
            config.worktree,
            WorktreeSettings {
                setup: vec!["bun install --frozen-lockfile".into()],
                ensure: vec!["git submodule update --init".into()],
                env_files: vec![".env".into(), "web/.env.local".into()],
                ports: Some((4100, 4199)),
            }
        );
        assert!(Config::parse("").expect("valid").worktree.is_empty());
    }

    #[test]
    fn a_bad_worktree_table_is_named_key_by_key() {
        let found = problems(
            "[worktree]\nsetup = \"npm ci\"\nenv_files = [\"../.env\"]\nports = [5000, 4000]\nroot = \"x\"\n",
        );
        assert_eq!(found.len(), 4, "{found:?}");
        assert!(
            found
                .iter()
                .any(|p| p.contains("setup") && p.contains("list")),
            "{found:?}"
        );
        assert!(
            found
                .iter()
                .any(|p| p.contains("env_files") && p.contains("relative")),
            "{found:?}"
        );
        assert!(
            found
                .iter()
                .any(|p| p.contains("ports") && p.contains("[first, last]")),
            "{found:?}"
        );
        assert!(found.iter().any(|p| p.contains("unknown key")), "{found:?}");
        for ports in ["[80, 90]", "[4000]", "[4000, 70000]", "\"4000-4999\""] {
            let found = problems(&format!("[worktree]\nports = {ports}\n"));
            assert_eq!(found.len(), 1, "{ports}: {found:?}");
        }
    }
}
