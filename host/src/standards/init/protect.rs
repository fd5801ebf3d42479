//! What `init` protects besides `discern.toml`: the files that define the gate too — the CI
//! definitions that run discern, and every tracked file a job's or a Standard's `run` command
//! names (`sh scripts/count.sh` makes `scripts/count.sh` a protected path): editing one changes
//! what the gate measures as surely as editing the limit.

use crate::snapshot::Snapshot;

/// CI definitions, protected where the repository has them.
const CI_DEFINITIONS: &[(&str, &str)] = &[
    (".github/workflows/", ".github/workflows/**"),
    (".gitlab-ci.yml", ".gitlab-ci.yml"),
    (".circleci/", ".circleci/**"),
    ("azure-pipelines.yml", "azure-pipelines.yml"),
    ("Jenkinsfile", "Jenkinsfile"),
];

/// The pathspecs `[acceptance].protected` starts with: the CI definitions present, and the
/// tracked files `commands` name, sorted.
pub(super) fn protected_paths(snapshot: &Snapshot, commands: &[&str]) -> Vec<String> {
    let mut paths: Vec<String> = CI_DEFINITIONS
        .iter()
        .filter(|(prefix, _)| {
            snapshot
                .entries()
                .iter()
                .any(|e| match prefix.ends_with('/') {
                    true => e.path.starts_with(prefix),
                    false => e.path == *prefix,
                })
        })
        .map(|(_, spec)| (*spec).to_owned())
        .collect();
    paths.extend(
        commands
            .iter()
            .flat_map(|command| named_files(command))
            .filter(|path| snapshot.entry(path).is_some()),
    );
    paths.sort();
    paths.dedup();
    paths
}

/// The words of a shell command that could be repository files (`./x.sh` as `x.sh`).
fn named_files(command: &str) -> Vec<String> {
    command
        .split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')'))
        .map(|word| word.trim_matches(['"', '\'']))
        .map(|word| word.strip_prefix("./").unwrap_or(word))
        .filter(|word| !word.is_empty() && !word.starts_with('-') && !word.contains('='))
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::named_files;

    #[test]
    fn the_words_of_a_command_that_may_be_files() {
        assert_eq!(
            named_files("sh ./scripts/count.sh --fast && python3 'ci/m.py' X=1"),
            ["sh", "scripts/count.sh", "python3", "ci/m.py"]
        );
    }
}
