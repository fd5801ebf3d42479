//! Class 22: the change makes its own branch a release line. Which branches are release lines
//! (`[repository].release`) is read from the trunk's tip only, and a line judges a branch only
//! when the trunk declares it: a pull request that declares a pattern in its own config, pushes
//! a branch of that shape holding its loosening and names it as its base (`GITHUB_BASE_REF`, or a
//! merge queue's branch for that line), is judged against the trunk it came from, naming the
//! loosening — in CI and locally.

use super::*;

/// The trunk's config with `release` in `[repository]` (when given) and the limit 5 loosened to
/// 9 (when `loose`).
fn config(release: Option<&str>, loose: bool) -> String {
    let mut text = signed_config("", "");
    if loose {
        text = text.replace("limit = 5", "limit = 9");
    }
    if let Some(release) = release {
        text = text.replace(
            "pin_on_done = false",
            &format!("pin_on_done = false\nrelease = [{release:?}]"),
        );
    }
    text
}

/// The attacker's line `line` (its config declaring `pattern` a release line, the limit loosened
/// and the breach in), then its branch `attack` one harmless commit on top; both pushed. A CI
/// clone of `attack` with the line fetched, as the README's fetch of a pull request's base does.
fn own_line(forge: &Forge, pattern: &str, line: &str) -> PathBuf {
    let a = &forge.contributor;
    forge.git(a, &["fetch", "-q", "origin"]);
    forge.git(a, &["checkout", "-q", "-B", "attack", "origin/main"]);
    let loosened = config(Some(pattern), true);
    let files: [File; 2] = [
        ("discern.toml", loosened.as_bytes()),
        ("src/more.rs", TODOS.as_bytes()),
    ];
    let cut = forge.commit(a, &files, &[], "declare a release line and loosen");
    forge.git(
        a,
        &[
            "push",
            "-q",
            "-f",
            "origin",
            &format!("{cut}:refs/heads/{line}"),
        ],
    );
    forge.commit(a, &[("src/other.rs", b"pub fn o() {}\n")], &[], "work");
    forge.git(a, &["push", "-q", "-f", "origin", "HEAD:refs/heads/attack"]);
    let clone = forge.ci_clone("attack");
    let base = format!("+refs/heads/{line}:refs/remotes/origin/{line}");
    forge.git(&clone, &["fetch", "-q", "origin", &base]);
    clone
}

#[test]
fn class_22_a_branch_that_declares_itself_a_release_line_is_judged_against_the_trunk() {
    for (trunk_declares, pattern, line) in [
        (None, "line/*", "line/evil"),
        (Some("release/*"), "attack*", "attack-base"),
    ] {
        let forge = Forge::new(config(trunk_declares, false), &[]);
        let clone = own_line(&forge, pattern, line);
        for env in [
            vec![("GITHUB_BASE_REF", line)],
            vec![
                ("GITHUB_EVENT_NAME", "merge_group"),
                (
                    "GITHUB_REF",
                    &*format!("refs/heads/gh-readonly-queue/{line}/pr-1-0a"),
                ),
            ],
            vec![],
        ] {
            let run = forge.ci(&clone, &["standards", "--json"], &env);
            let json = refused_naming(&run, &format!("{line} as the base ({env:?})"), "todo");
            assert_eq!(json["data"]["limits"]["trunk"], "main", "{json}");
        }
        // Locally, with the line as a branch of the attacker's clone, the same.
        let run = forge
            .fixture
            .run_in(&forge.contributor, &["standards", "--json"], &[]);
        let json = refused(&run, "the attacker's own clone");
        assert_eq!(json["data"]["limits"]["trunk"], "main", "{json}");
    }
}
