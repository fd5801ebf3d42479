use super::*;
use crate::findings::lines::normalized;
use sha2::Digest as _;

fn place(path: &str, line: u32, text: &str, rank: u32) -> Place {
    Place {
        path: path.into(),
        blob: gix::ObjectId::null(gix::hash::Kind::Sha1),
        line,
        text: Some(Line {
            content: sha2::Sha256::digest(&*normalized(text.as_bytes())).into(),
            rank,
        }),
    }
}

fn finding(message: &str) -> Finding {
    Finding {
        fingerprint: "from-the-producer".into(),
        path: Some("a.rs".into()),
        line: Some(1),
        column: None,
        severity: None,
        message: message.into(),
    }
}

fn fingerprints(findings: &[Finding], places: &[Option<Place>]) -> Vec<String> {
    let ids = Fingerprints::new(findings, places);
    (0..findings.len()).map(|i| ids.get(i)).collect()
}

#[test]
fn a_fingerprint_is_where_the_finding_is_never_its_line_number() {
    let one = |p: Place, message: &str| fingerprints(&[finding(message)], &[Some(p)]);
    let base = one(place("a.rs", 3, "// TODO", 0), "TODO");
    // Moved down by lines added above, or re-indented: the same finding.
    assert_eq!(base, one(place("a.rs", 9, "    // TODO ", 0), "TODO"));
    // Another rank among identical lines, another file, another line, another message.
    assert_ne!(base, one(place("a.rs", 3, "// TODO", 1), "TODO"));
    assert_ne!(base, one(place("b.rs", 3, "// TODO", 0), "TODO"));
    assert_ne!(base, one(place("a.rs", 3, "// TODO: x", 0), "TODO"));
    assert_ne!(base, one(place("a.rs", 3, "// TODO", 0), "TODO:"));
    // The scheme is part of the contract: it changes only with a release note. (The value
    // as Python's hashlib computes it from the definition in the module docs.)
    assert_eq!(base, ["733d44d4d51cd641af1438e962862f31"]);
}

#[test]
fn occurrences_scanned_for_a_few_and_counted_for_many_agree() {
    let findings: Vec<Finding> = (0..3 * SCANNED)
        .map(|i| finding(["TODO", "FIXME"][i % 2]))
        .collect();
    let places: Vec<Option<Place>> = (0..3 * SCANNED)
        .map(|i| Some(place(["a.rs", "b.rs"][i % 3 % 2], (i % 5) as u32, "x", 0)))
        .collect();
    let ids = Fingerprints::new(&findings, &places);
    let counted = ids.count_all();
    for (i, place) in places.iter().enumerate() {
        let place = place.as_ref().expect("placed");
        assert_eq!(ids.occurrence(i, place), counted[i], "finding {i}");
    }
    assert!(
        ids.occurrences.get().is_some(),
        "counted once many were asked for"
    );
}

#[test]
fn two_findings_on_one_line_differ_and_one_without_a_place_keeps_the_producer_s() {
    let p = place("a.rs", 1, "TODO TODO", 0);
    let ids = fingerprints(
        &[finding("TODO"), finding("TODO"), finding("TODO")],
        &[Some(p.clone()), Some(p), None],
    );
    assert_ne!(ids[0], ids[1]);
    assert_eq!(ids[2], "from-the-producer");
}
