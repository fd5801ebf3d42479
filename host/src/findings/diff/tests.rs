use std::collections::BTreeSet;

use super::*;
use crate::findings::line_map::Hunk;
use crate::findings::lines::lines;

/// One version of a file and its findings: `(line, message)`.
struct Version {
    findings: Vec<Finding>,
    places: Vec<Option<Place>>,
}

fn version(path: &str, text: &str, at: &[(u32, &str)]) -> Version {
    let wanted: BTreeSet<u32> = at.iter().map(|(l, _)| *l).collect();
    let found = lines(text.as_bytes(), &wanted);
    let blob = gix::ObjectId::null(gix::hash::Kind::Sha1);
    let findings = at
        .iter()
        .map(|&(line, message)| Finding {
            // The pattern producer's kind: every match of one text in a file alike but
            // for its occurrence, so an added one shifts the rest.
            fingerprint: format!("{message}#{line}"),
            path: Some(path.into()),
            line: Some(line),
            column: None,
            severity: None,
            message: message.into(),
        })
        .collect();
    let places = at
        .iter()
        .map(|(line, _)| {
            Some(Place {
                path: path.into(),
                blob,
                line: *line,
                text: Some(found[line]),
            })
        })
        .collect();
    Version { findings, places }
}

fn side(v: &Version) -> Side<'_> {
    Side {
        findings: &v.findings,
        places: &v.places,
    }
}

fn hunk(old_start: u32, old_len: u32, new_start: u32, new_len: u32) -> Hunk {
    Hunk {
        old_start,
        old_len,
        new_start,
        new_len,
    }
}

fn compared(head: &Version, base: &Version, path: &str, hunks: Vec<Hunk>) -> Diff {
    let maps = HashMap::from([(path.to_owned(), LineMap::from_hunks(hunks))]);
    diff(side(head), side(base), &Renames::default(), &maps)
}

#[test]
fn of_identical_lines_the_one_the_diff_added_is_new() {
    let base = version("a.rs", "// TODO\nx\n// TODO\n", &[(1, "TODO"), (3, "TODO")]);
    // A TODO added between the two: git's diff adds lines 3 and 4.
    let text = "// TODO\nx\n// TODO\ny\n// TODO\n";
    let head = version("a.rs", text, &[(1, "TODO"), (3, "TODO"), (5, "TODO")]);
    let d = compared(&head, &base, "a.rs", vec![hunk(2, 0, 3, 2)]);
    assert_eq!(
        d,
        Diff {
            new: vec![1],
            fixed: vec![]
        }
    );
    // Added after the last one instead.
    let text = "// TODO\nx\n// TODO\n// TODO\n";
    let head = version("a.rs", text, &[(1, "TODO"), (3, "TODO"), (4, "TODO")]);
    let d = compared(&head, &base, "a.rs", vec![hunk(3, 0, 4, 1)]);
    assert_eq!(
        d,
        Diff {
            new: vec![2],
            fixed: vec![]
        }
    );
}

#[test]
fn an_edited_line_keeps_a_finding_with_the_same_message_and_a_rewritten_one_is_new() {
    let base = version("a.rs", "f(); // TODO: x\n", &[(1, "TODO: x")]);
    // The code on the line edited, the TODO as it was.
    let edited = version("a.rs", "g(); // TODO: x\n", &[(1, "TODO: x")]);
    let d = compared(&edited, &base, "a.rs", vec![hunk(1, 1, 1, 1)]);
    assert_eq!(d, Diff::default());
    // The TODO rewritten: another finding.
    let rewritten = version("a.rs", "f(); // TODO: y\n", &[(1, "TODO: y")]);
    let d = compared(&rewritten, &base, "a.rs", vec![hunk(1, 1, 1, 1)]);
    assert_eq!(
        d,
        Diff {
            new: vec![0],
            fixed: vec![0]
        }
    );
    // One line rewritten as two: the first keeps the finding, the second is new.
    let two = version(
        "a.rs",
        "g(); // TODO: x\n// TODO: x\n",
        &[(1, "TODO: x"), (2, "TODO: x")],
    );
    let d = compared(&two, &base, "a.rs", vec![hunk(1, 1, 1, 2)]);
    assert_eq!(
        d,
        Diff {
            new: vec![1],
            fixed: vec![]
        }
    );
    // Re-indented: the same line, by its normalized content.
    let indented = version("a.rs", "    f(); // TODO: x\n", &[(1, "TODO: x")]);
    let d = compared(&indented, &base, "a.rs", vec![hunk(1, 1, 1, 1)]);
    assert_eq!(d, Diff::default());
}

#[test]
fn a_line_only_added_is_not_paired_with_an_edit_elsewhere() {
    let base = version("a.rs", "// TODO\nx\n", &[(1, "TODO")]);
    // Line 1 deleted, a different TODO line added at the end: two changes, no pairing.
    let head = version("a.rs", "x\n// TODO: later\n", &[(2, "TODO")]);
    let d = compared(
        &head,
        &base,
        "a.rs",
        vec![hunk(1, 1, 0, 0), hunk(2, 0, 2, 1)],
    );
    assert_eq!(
        d,
        Diff {
            new: vec![0],
            fixed: vec![0]
        }
    );
}

#[test]
fn on_a_kept_line_a_new_message_with_the_tool_s_fingerprint_is_the_same_finding() {
    let base = version("a.rs", "fn f() {\n", &[(1, "complexity 16 > 15")]);
    let mut head = version("a.rs", "fn f() {\n", &[(1, "complexity 17 > 15")]);
    // Another fingerprint too: another finding.
    let d = compared(&head, &base, "a.rs", vec![]);
    assert_eq!(
        d,
        Diff {
            new: vec![0],
            fixed: vec![0]
        }
    );
    head.findings[0].fingerprint = base.findings[0].fingerprint.clone();
    let d = compared(&head, &base, "a.rs", vec![]);
    assert_eq!(d, Diff::default());
}

#[test]
fn a_moved_block_brings_its_findings_along() {
    let base = version(
        "a.rs",
        "fn a() {\n    // TODO\n}\nfn b() {}\n// TODO\n",
        &[(2, "TODO"), (5, "TODO")],
    );
    // `fn a` moved below `fn b`: deleted at the top, added at the end.
    let head = version(
        "a.rs",
        "fn b() {}\n// TODO\nfn a() {\n    // TODO\n}\n",
        &[(2, "TODO"), (4, "TODO")],
    );
    let d = compared(
        &head,
        &base,
        "a.rs",
        vec![hunk(1, 3, 0, 0), hunk(5, 0, 3, 3)],
    );
    assert_eq!(d, Diff::default());
}

#[test]
fn findings_follow_a_rename_with_the_old_path_in_their_message() {
    let base = version(
        "old.rs",
        "// TODO\n// TODO\n",
        &[(1, "TODO"), (2, "old.rs: TODO")],
    );
    let head = version(
        "new.rs",
        "// TODO\n// TODO\n// TODO\n",
        &[(1, "TODO"), (2, "new.rs: TODO"), (3, "TODO")],
    );
    let renames = Renames::from_pairs([("old.rs", "new.rs")]);
    let maps = HashMap::from([(
        "new.rs".to_owned(),
        LineMap::from_hunks(vec![hunk(2, 0, 3, 1)]),
    )]);
    let d = diff(side(&head), side(&base), &renames, &maps);
    assert_eq!(
        d,
        Diff {
            new: vec![2],
            fixed: vec![]
        }
    );
    // Without the rename, every finding is new and every one of the baseline fixed.
    let d = diff(side(&head), side(&base), &Renames::default(), &maps);
    assert_eq!((d.new.len(), d.fixed.len()), (3, 2));
}

fn unplaced(fingerprint: &str, path: &str, message: &str) -> Finding {
    Finding {
        fingerprint: fingerprint.into(),
        path: Some(path.into()),
        line: None,
        column: None,
        severity: None,
        message: message.into(),
    }
}

fn without_places(findings: &[Finding]) -> Vec<Option<Place>> {
    vec![None; findings.len()]
}

#[test]
fn without_places_a_swap_is_one_new_and_one_fixed_and_duplicates_count_twice() {
    let base = [
        unplaced("a", "x", "A"),
        unplaced("b", "x", "B"),
        unplaced("b", "x", "B"),
    ];
    let head = [
        unplaced("b", "x", "B"),
        unplaced("c", "x", "C"),
        unplaced("b", "x", "B"),
        unplaced("b", "x", "B"),
    ];
    let (hp, bp) = (without_places(&head), without_places(&base));
    let d = diff(
        Side {
            findings: &head,
            places: &hp,
        },
        Side {
            findings: &base,
            places: &bp,
        },
        &Renames::default(),
        &HashMap::new(),
    );
    // c is new, the third b is new; a is fixed.
    assert_eq!(
        d,
        Diff {
            new: vec![1, 3],
            fixed: vec![0]
        }
    );
}

#[test]
fn without_places_a_renamed_file_brings_its_findings_along_but_not_a_changed_one() {
    let base = [
        unplaced("1", "old.rs", "MARK one"),
        unplaced("2", "old.rs", "old.rs: no header"),
    ];
    let head = [
        unplaced("3", "new.rs", "MARK one"),
        unplaced("4", "new.rs", "new.rs: no header"),
        unplaced("5", "new.rs", "MARK two"),
    ];
    let (hp, bp) = (without_places(&head), without_places(&base));
    let (head, base) = (
        Side {
            findings: &head,
            places: &hp,
        },
        Side {
            findings: &base,
            places: &bp,
        },
    );
    let renames = Renames::from_pairs([("old.rs", "new.rs")]);
    let d = diff(head, base, &renames, &HashMap::new());
    assert_eq!(
        d,
        Diff {
            new: vec![2],
            fixed: vec![]
        }
    );
    let d = diff(head, base, &Renames::default(), &HashMap::new());
    assert_eq!((d.new.len(), d.fixed.len()), (3, 2));
}

/// Whatever is paired, the totals are exact: every finding is paired once or listed.
#[test]
fn the_totals_are_exact_new_minus_fixed_is_the_growth() {
    let base = version("a.rs", "// TODO\n// TODO\nx\n", &[(1, "TODO"), (2, "TODO")]);
    let head = version(
        "a.rs",
        "x\n// TODO\n// TODO\n// TODO\n",
        &[(2, "TODO"), (3, "TODO"), (4, "TODO")],
    );
    for hunks in [
        vec![hunk(0, 0, 1, 1), hunk(3, 1, 4, 1)],
        vec![hunk(1, 2, 0, 0), hunk(3, 0, 2, 3)],
        vec![],
    ] {
        let d = compared(&head, &base, "a.rs", hunks);
        assert_eq!(d.new.len() as i64 - d.fixed.len() as i64, 1, "{d:?}");
    }
}
