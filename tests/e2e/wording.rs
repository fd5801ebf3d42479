//! Messages that say what is wrong and where: a mistyped component path, `--force` on the
//! trunk, the approval items' order.

use crate::support::Fixture;
use crate::support::config::Config;

/// A `producer` path the commit does not hold, and no file at that path either: not "commit
/// it", but that the path does not exist, with the close names the commit holds.
#[test]
fn a_mistyped_component_path_is_named_as_missing_with_close_names() {
    let fixture = Fixture::new(
        "[standards.lic]\ndirection = \"down\"\nlimit = 3\nproducer = \"tools/lisence.wasm\"\nmetric = \"m\"\n",
    );
    fixture.repo.write("tools/license.wasm", b"\0asm");
    fixture.repo.commit("the component");
    for args in [&["standards"][..], &["standards", "--force"][..]] {
        let run = fixture.run(args);
        let said = format!("{}{}", run.stdout, run.stderr);
        assert!(
            said.contains("tools/lisence.wasm does not exist in the measured commit"),
            "{args:?}: {said}"
        );
        assert!(said.contains("did you mean tools/license.wasm?"), "{said}");
        assert!(!said.contains("commit it"), "{said}");
    }
}

/// `--force` on the trunk's tip compares the work tree's findings with the commit it sits on:
/// no "no merge base" warning where HEAD is the trunk.
#[test]
fn force_on_the_trunk_compares_with_head_without_a_merge_base_warning() {
    let fixture = Fixture::new(Config::landing());
    fixture
        .repo
        .write("src/lib.rs", "// TODO: one\n// TODO: two\n// TODO: new\n");
    let run = fixture.run(&["standards", "--force", "--json"]);
    let json = run.json();
    let said = format!("{}{}", run.stdout, run.stderr);
    assert!(!said.contains("merge base"), "{said}");
    let todo = crate::support::standard(&json, "todo");
    assert_eq!(todo["findings"]["new_total"], 1, "{todo}");
    assert_eq!(todo["findings"]["new"][0]["path"], "src/lib.rs", "{todo}");
}
