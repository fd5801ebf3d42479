use super::*;
use crate::evidence::findings::{Kept, encode};
use crate::findings::compare::tests::{Commits, scan, seeded, text_of};
use crate::findings::{Fingerprints, ReadLines, Side, compare, places};
use crate::runtime::Metric;

/// `findings` kept encoded, as a reused reading or a grouped run keeps them.
fn kept(findings: &[Finding]) -> Kept {
    let metric = Metric {
        name: "matches".into(),
        value: findings.len() as f64,
        findings: findings.to_vec(),
        findings_dropped: 0,
        counted: true,
    };
    Kept::parse(encode(&[metric]).unwrap().unwrap()).unwrap()
}

/// A comparison's new and fixed findings, each with its fingerprint, and the fingerprints of
/// the first `shown` of this commit's.
type Shown = (Vec<(Finding, String)>, Vec<(Finding, String)>, Vec<String>);

fn shown(baseline: &Baseline, head: &[Finding], base: &[Finding], first: usize) -> Shown {
    let (head_snapshot, base_snapshot) = (baseline.head, baseline.snapshot.unwrap());
    let unread = |path: &str, blob| base_snapshot.entry(path).is_some_and(|e| e.id == blob);
    let mut read = ReadLines::default();
    let mut head_places = places(head_snapshot, head, &mut read, &unread);
    let side = Side {
        findings: head,
        places: &head_places,
    };
    let compared = compare(baseline, side, base, &mut read).unwrap();
    let mut base_places = compared.base_places.clone();
    let all = |n: usize| (0..n).collect::<Vec<_>>();
    crate::findings::complete(
        head_snapshot,
        (head, &mut head_places),
        &all(head.len()),
        &mut read,
    );
    crate::findings::complete(
        base_snapshot,
        (base, &mut base_places),
        &all(base.len()),
        &mut read,
    );
    let head_ids = Fingerprints::new(head, &head_places);
    let base_ids = Fingerprints::new(base, &base_places);
    let new = compared
        .diff
        .new
        .iter()
        .map(|&i| (head[i].clone(), head_ids.get(i)));
    let fixed = compared
        .diff
        .fixed
        .iter()
        .map(|&i| (base[i].clone(), base_ids.get(i)));
    let first = (0..first.min(head.len()))
        .map(|i| head_ids.get(i))
        .collect();
    (new.collect(), fixed.collect(), first)
}

#[test]
fn the_findings_a_comparison_reads_compare_as_every_finding_does() {
    for seed in [0x2545_f491_u64, 0x9e37_79b9, 0xdead_beef, 7] {
        let repo = discern_tests::TestRepo::new();
        seeded(&repo, seed, 12, |f| format!("f{f:02}.rs"));
        let base_commit = repo.commit("base");
        // One file edited (a TODO added, a line rewritten), one removed, one added.
        let f5 = text_of(seed ^ (5 * 0x51), 16);
        let (top, rest) = f5.split_at(f5.len() / 2);
        repo.write(
            "f05.rs",
            format!("{top}// TODO\n{}", rest.replacen("code", "// FIXME", 1)),
        );
        repo.remove("f08.rs");
        repo.write("g.rs", "// TODO\n// FIXME\n");
        let head_commit = repo.commit("head");
        let commits = Commits::of(&repo, &base_commit, &head_commit);
        let baseline = commits.baseline();
        let (head_findings, base_findings) = (scan(&commits.head), scan(&commits.base));
        let (head_kept, base_kept) = (kept(&head_findings), kept(&base_findings));
        let ofs = (head_kept.of("matches"), base_kept.of("matches"));
        let part = sparse(&baseline, ofs, 3).expect("the files left alone agree");

        // Most findings are left out, as many on each side.
        assert!(part.head.len() < head_findings.len() / 2, "seed {seed:#x}");
        assert_eq!(part.head.len() + part.omitted, head_findings.len());
        assert_eq!(part.base.len() + part.omitted, base_findings.len());
        // The first findings a result shows are the first of the list.
        assert_eq!(part.head[..3], head_findings[..3]);
        // New and fixed, and every fingerprint shown, as the whole lists give them.
        let whole = shown(&baseline, &head_findings, &base_findings, 3);
        assert!(!whole.0.is_empty() && !whole.1.is_empty(), "seed {seed:#x}");
        assert_eq!(
            shown(&baseline, &part.head, &part.base, 3),
            whole,
            "seed {seed:#x}"
        );

        // A file left alone whose findings differ, and a list cut short (as a cap cuts it):
        // those files' findings take part, and the comparison is still the whole lists'.
        let mut other = base_findings.clone();
        let i = other
            .iter()
            .position(|f| f.path.as_deref() == Some("f10.rs"))
            .unwrap();
        other[i].message = "FIXED".into();
        other.truncate(other.len() - 3);
        let other_kept = kept(&other);
        let ofs = (head_kept.of("matches"), other_kept.of("matches"));
        let part = sparse(&baseline, ofs, 3).unwrap();
        assert!(part.base.iter().any(|f| f.message == "FIXED"));
        assert!(part.head.len() < head_findings.len() / 2, "seed {seed:#x}");
        let whole = shown(&baseline, &head_findings, &other, 3);
        assert_eq!(
            shown(&baseline, &part.head, &part.base, 3),
            whole,
            "seed {seed:#x}"
        );
    }
}

/// `findings` with `extra` put in at `at` (an index into the list).
fn with(findings: &[Finding], at: usize, extra: Finding) -> Vec<Finding> {
    let mut out = findings.to_vec();
    out.insert(at.min(out.len()), extra);
    out
}

fn finding(path: Option<&str>, line: Option<u32>, message: &str) -> Finding {
    Finding {
        fingerprint: format!("extra:{message}"),
        path: path.map(str::to_owned),
        line,
        column: None,
        severity: None,
        message: message.into(),
    }
}

#[test]
fn lists_in_path_order_are_compared_a_file_at_a_time_as_the_indexed_comparison_does() {
    for seed in [0x2545_f491_u64, 0x9e37_79b9, 0xdead_beef, 7] {
        let repo = discern_tests::TestRepo::new();
        seeded(&repo, seed, 12, |f| format!("f{f:02}.rs"));
        let base_commit = repo.commit("base");
        let f5 = text_of(seed ^ (5 * 0x51), 16);
        repo.write("f05.rs", format!("// TODO\n{f5}"));
        repo.remove("f08.rs");
        repo.write("g.rs", "// TODO\n// FIXME\n");
        let head_commit = repo.commit("head");
        let commits = Commits::of(&repo, &base_commit, &head_commit);
        let baseline = commits.baseline();
        let (head, base) = (scan(&commits.head), scan(&commits.base));
        let on = |findings: &[Finding], path: &str| {
            findings
                .iter()
                .position(|f| f.path.as_deref() == Some(path))
                .unwrap()
        };
        let mut differs = base.clone();
        differs[on(&base, "f10.rs")].message = "FIXED".into();
        let cut = base[..base.len() - 3].to_vec();
        let cases: Vec<(&str, Vec<Finding>, Vec<Finding>)> = vec![
            ("as scanned", head.clone(), base.clone()),
            ("a file left alone differs", head.clone(), differs),
            ("the baseline's list cut short", head.clone(), cut),
            (
                "findings that name no file, first and within a file's",
                with(&head, 0, finding(None, None, "nowhere")),
                with(&base, on(&base, "f03.rs") + 1, finding(None, Some(1), "x")),
            ),
            (
                "a finding on a file left alone without a line, on one side",
                with(
                    &head,
                    on(&head, "f02.rs"),
                    finding(Some("f02.rs"), None, "f"),
                ),
                base.clone(),
            ),
            (
                "a file with findings on one side only",
                with(&head, 0, finding(Some("a.rs"), Some(1), "a")),
                with(&base, base.len(), finding(Some("z.rs"), Some(1), "z")),
            ),
        ];
        for (case, head, base) in cases {
            let (head_kept, base_kept) = (kept(&head), kept(&base));
            let sides = (head_kept.of("matches"), base_kept.of("matches"));
            assert!(sides.0.in_path_order() && sides.1.in_path_order(), "{case}");
            for shown in [0, 3, 1000] {
                let streamed = stretches::sparse(&baseline, sides, shown);
                let indexed = indexed(&baseline, sides, shown);
                assert!(indexed.is_some(), "{case}, seed {seed:#x}");
                assert_eq!(streamed, indexed, "{case}, shown {shown}, seed {seed:#x}");
                assert_eq!(sparse(&baseline, sides, shown), indexed, "{case}");
            }
            let part = sparse(&baseline, sides, 3).unwrap();
            assert!(part.omitted > head.len() / 2, "{case}, seed {seed:#x}");
        }
    }
}

#[test]
fn a_list_out_of_path_order_is_compared_by_the_index() {
    let repo = discern_tests::TestRepo::new();
    seeded(&repo, 7, 6, |f| format!("f{f:02}.rs"));
    let base_commit = repo.commit("base");
    repo.write("g.rs", "// TODO\n");
    let head_commit = repo.commit("head");
    let commits = Commits::of(&repo, &base_commit, &head_commit);
    let baseline = commits.baseline();
    let (head, base) = (scan(&commits.head), scan(&commits.base));
    // The files in reverse order, each one's findings in its own.
    let mut reversed = head.clone();
    reversed.sort_by(|a, b| b.path.cmp(&a.path));
    let (head_kept, base_kept) = (kept(&reversed), kept(&base));
    let sides = (head_kept.of("matches"), base_kept.of("matches"));
    assert!(!sides.0.in_path_order() && sides.1.in_path_order());
    let part = sparse(&baseline, sides, 0).unwrap();
    assert_eq!(Some(&part), indexed(&baseline, sides, 0).as_ref());
    assert!(part.omitted > 0);
}
