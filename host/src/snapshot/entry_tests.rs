use std::cell::Cell;

use discern_tests::TestRepo;

use super::Snapshot;

#[test]
fn an_entry_is_found_from_a_hint_as_a_search_finds_it() {
    let repo = TestRepo::new();
    for i in 0..40 {
        repo.write(&format!("d{}/f{i:02}.rs", i % 3), "x\n");
    }
    repo.commit("files");
    let snapshot = Snapshot::open(repo.path(), "HEAD").unwrap();
    let paths: Vec<String> = snapshot
        .entries()
        .iter()
        .map(|e| e.path().to_string())
        .collect();
    // In listing order, backwards, by leaps, and paths the listing does not hold.
    let forward = paths.iter().map(String::as_str);
    let backward = paths.iter().rev().map(String::as_str);
    let leaps = paths.iter().step_by(7).map(String::as_str);
    let absent = ["a.rs", "d1", "d1/f00.rsx", "zzz"].into_iter();
    let near = Cell::new(0);
    for path in forward.chain(backward).chain(leaps).chain(absent) {
        let found = snapshot
            .entry_from(path, &near)
            .map(|(at, e)| (at, e.path()));
        let searched = paths.iter().position(|p| p == path);
        assert_eq!(found, searched.map(|at| (at, path)), "{path}");
    }
}
