use super::*;

fn m(specs: &[&str], path: &str) -> bool {
    Pathspec::parse(specs, Some("/repo"))
        .unwrap_or_else(|e| panic!("{specs:?}: {e}"))
        .matches(path)
}

fn refused(spec: &str) -> String {
    match Pathspec::parse(&[spec], Some("/repo")) {
        Ok(_) => panic!("{spec:?} was accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn glob_dialect() {
    assert!(m(&["src/*.rs"], "src/a.rs"));
    assert!(!m(&["src/*.rs"], "src/x/a.rs"));
    assert!(m(&["src/**/*.rs"], "src/a.rs"));
    assert!(m(&["src/**/*.rs"], "src/x/y/a.rs"));
    assert!(m(&["**"], "a/b/c"));
    assert!(m(&["*"], "top"));
    assert!(!m(&["*"], "dir/file"));
    assert!(m(&["*.[ch]"], "x.h"));
    assert!(m(&[":(glob)**/*.md"], "docs/a.md"));
}

#[test]
fn literal_names_and_directories() {
    assert!(m(&["src"], "src/x/a.rs"));
    assert!(m(&["src/"], "src/a.rs"));
    assert!(!m(&["src"], "srcfile"));
    assert!(m(&["a.rs"], "a.rs"));
    // A trailing slash names directories only, as in git.
    assert!(!m(&["a.rs/"], "a.rs"));
    // A glob also matches its own text literally (git's prefix comparison comes first).
    assert!(m(&["a[1].txt"], "a[1].txt"));
    assert!(m(&["a[1].txt"], "a1.txt"));
    assert!(m(&["a[1]"], "a[1]/f"));
}

#[test]
fn normalised_as_git_does() {
    assert!(m(&["./src"], "src/a.rs"));
    assert!(m(&["."], "anything/at/all"));
    assert!(m(&["./"], "x"));
    assert!(m(&["src/../d"], "d/e"));
    assert!(m(&["src//a.rs"], "src/a.rs"));
    assert!(m(&["src/."], "src/a.rs"));
    assert!(m(&["/repo/d"], "d/e"));
    assert!(m(&["/repo"], "d/e"));
    assert!(m(&["./src/*.rs"], "src/a.rs"));
}

#[test]
fn magic() {
    assert!(m(&[":(icase)SRC/*.rs"], "src/a.rs"));
    assert!(m(&[":(icase)src/A.rs"], "src/a.rs"));
    assert!(!m(&["SRC/*.rs"], "src/a.rs"));
    assert!(m(&[":(literal)a[1].txt"], "a[1].txt"));
    assert!(!m(&[":(literal)a[1].txt"], "a1.txt"));
    assert!(!m(&[":(literal)src/*"], "src/a"));
    assert!(m(&[":/d"], "d/e"));
    assert!(m(&[":(top)d"], "d/e"));
    assert!(m(&[":/"], "x/y"));
    assert!(m(&[":"], "x/y"));
    assert!(m(&[":(top,icase)D"], "d/e"));
}

#[test]
fn exclusions() {
    assert!(!m(&["**", ":!vendor"], "vendor/x.rs"));
    assert!(m(&["**", ":^vendor"], "src/x.rs"));
    assert!(m(&[":(exclude)*.md"], "src/x.rs"));
    assert!(!m(&[":(exclude)*.md"], "README.md"));
    assert!(!m(&[":(exclude,glob)src/**"], "src/a.rs"));
    assert!(m(&[":(exclude,glob)src/**"], "d/e"));
    assert!(!m(&[":!/src"], "src/a"));
    assert!(!m(&[":/!src"], "src/a"));
    assert!(!m(&[":!:src"], "src/a"));
    assert!(!m(&[":(icase,exclude)SRC"], "src/a"));
    assert!(m(&[":(icase,exclude)SRC"], "Src.RS"));
    assert!(!m(&[] as &[&str], "anything"));
}

#[test]
fn refusals_say_how_to_write_it() {
    assert!(refused("../x").contains("outside the repository"));
    assert!(refused("a/../../x").contains("outside the repository"));
    assert!(refused("/elsewhere/x").contains("outside the repository"));
    assert!(refused("/repository/x").contains("outside the repository"));
    let braces = refused("src/*.{rs,toml}");
    assert!(braces.contains("\"src/*.rs\", \"src/*.toml\""), "{braces}");
    assert!(refused(":(attr:x)d").contains("\"attr:x\" is not supported"));
    assert!(refused(":(foo)x").contains("\"foo\""));
    assert!(refused(":(glob,literal)x").contains("incompatible"));
    assert!(refused(":(glob").contains("not closed"));
    assert!(refused("").contains("\"**\""));
    let absolute = Pathspec::parse(&["/repo/src"], None)
        .unwrap_err()
        .to_string();
    assert!(
        absolute.contains("relative to the repository root"),
        "{absolute}"
    );
    // Literal magic takes braces as they are.
    assert!(m(&[":(literal)x.{rs,toml}"], "x.{rs,toml}"));
}

#[test]
fn lenient_parse_matches_nothing_for_a_bad_spec() {
    let spec = Pathspec::new(&["../x"]);
    assert!(!spec.matches("x"));
    let spec = Pathspec::new(&["**", ":(attr:x)y"]);
    assert!(spec.matches("y/z"));
}

#[test]
fn a_walk_skips_only_folders_nothing_below_can_match() {
    let below = |specs: &[&str], dir: &str| {
        Pathspec::parse(specs, Some("/repo"))
            .unwrap_or_else(|e| panic!("{specs:?}: {e}"))
            .may_match_below(dir)
    };
    assert!(below(&["scripts/**"], "scripts"));
    assert!(below(&["scripts/**"], "scripts/sub"));
    assert!(!below(&["scripts/**"], "src"));
    assert!(!below(&["scripts/**"], "scr"));
    assert!(!below(&["scripts/**"], "scripts2"));
    assert!(below(&[".github/workflows/**"], ".github"));
    assert!(below(&["ci/run.sh"], "ci"));
    assert!(!below(&["ci/run.sh"], "cid"));
    assert!(!below(&["sc"], "scripts"));
    assert!(below(&["scripts"], "scripts/sub"));
    assert!(below(&["**/*.sh"], "anywhere/at/all"));
    assert!(below(&["tools/*/bin/*"], "tools/x"));
    assert!(!below(&["tools/*/bin/*"], "other"));
    assert!(below(&[":(icase)Scripts/**"], "scripts"));
    assert!(below(&[":!docs"], "src"));
    assert!(below(&["."], "src"));
    // Every folder holding a match says so.
    for (spec, path) in [
        ("scripts/**", "scripts/a/b.sh"),
        ("**/x", "a/b/x"),
        ("a/*/c", "a/b/c"),
    ] {
        let mut dir = String::new();
        for part in path.split('/').take(path.split('/').count() - 1) {
            dir = if dir.is_empty() {
                part.to_owned()
            } else {
                format!("{dir}/{part}")
            };
            assert!(below(&[spec], &dir), "{spec} below {dir}");
        }
    }
}
