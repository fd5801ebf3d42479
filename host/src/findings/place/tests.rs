use super::*;
use discern_tests::TestRepo;

fn finding(path: Option<&str>, line: Option<u32>) -> Finding {
    Finding {
        fingerprint: "p".into(),
        path: path.map(str::to_owned),
        line,
        column: None,
        severity: None,
        message: "TODO".into(),
    }
}

fn text(place: &Option<Place>) -> Option<(u32, lines::Line)> {
    place.as_ref().and_then(|p| Some((p.line, p.text?)))
}

#[test]
fn findings_are_placed_on_their_lines_and_the_unplaceable_are_not() {
    let repo = TestRepo::new();
    repo.write("a.rs", "// TODO\nfn a() {}\n  // TODO\n");
    let head = repo.commit("a");
    let snapshot = Snapshot::open(repo.path(), &head).unwrap();
    let findings = [
        finding(Some("a.rs"), Some(3)),
        finding(Some("a.rs"), Some(1)),
        finding(Some("a.rs"), Some(4)),
        finding(Some("a.rs"), None),
        finding(Some("target/report.txt"), Some(1)),
        finding(None, None),
    ];
    let mut read = ReadLines::default();
    let placed = places(&snapshot, &findings, &mut read, &|_, _| false);
    let (first, third) = (text(&placed[1]).unwrap(), text(&placed[0]).unwrap());
    assert_eq!((first.0, first.1.rank), (1, 0));
    assert_eq!((third.0, third.1.rank), (3, 1));
    assert_eq!(first.1.content, third.1.content);
    assert_eq!(
        placed[0].as_ref().unwrap().blob,
        placed[1].as_ref().unwrap().blob
    );
    assert!(placed[2..].iter().all(Option::is_none), "{placed:?}");
    // A copy of the file under another path, other lines asked: the blob's lines are read
    // again for both, and the first path's stay answered.
    repo.write("b.rs", "// TODO\nfn a() {}\n  // TODO\n");
    let head = repo.commit("b");
    let snapshot = Snapshot::open(repo.path(), &head).unwrap();
    let both = [
        finding(Some("a.rs"), Some(3)),
        finding(Some("b.rs"), Some(2)),
    ];
    let again = places(&snapshot, &both, &mut read, &|_, _| false);
    assert_eq!(text(&again[0]).map(|(l, t)| (l, t.rank)), Some((3, 1)));
    assert_eq!(text(&again[1]).map(|(l, t)| (l, t.rank)), Some((2, 0)));
    assert_eq!(read.by_blob.len(), 1);
}

#[test]
fn an_unread_file_is_placed_without_text_until_completed() {
    let repo = TestRepo::new();
    repo.write("a.rs", "// TODO\nfn a() {}\n  // TODO\n");
    let head = repo.commit("a");
    let snapshot = Snapshot::open(repo.path(), &head).unwrap();
    let findings = [
        finding(Some("a.rs"), Some(3)),
        finding(Some("a.rs"), Some(9)),
        finding(Some("a.rs"), Some(1)),
    ];
    let mut read = ReadLines::default();
    let mut placed = places(&snapshot, &findings, &mut read, &|path, _| path == "a.rs");
    assert!(read.by_blob.is_empty(), "nothing read");
    assert!(
        placed
            .iter()
            .all(|p| p.as_ref().is_some_and(|p| p.text.is_none()))
    );
    complete(&snapshot, (&findings, &mut placed), &[0, 1], &mut read);
    assert_eq!(text(&placed[0]).map(|(l, t)| (l, t.rank)), Some((3, 1)));
    assert_eq!(placed[1], None, "past the end: no place");
    assert!(
        placed[2].as_ref().is_some_and(|p| p.text.is_none()),
        "not asked"
    );
}
