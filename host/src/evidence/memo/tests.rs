use super::*;
use crate::runtime::Finding;

fn finding(i: u32) -> Finding {
    Finding {
        fingerprint: format!("f{i}"),
        path: Some("a.rs".into()),
        line: Some(i + 1),
        column: Some(1),
        severity: None,
        message: "TODO".into(),
    }
}

fn part(findings: Option<Vec<Finding>>, kept: usize) -> Part {
    let metric = |name: &str, findings: Option<Vec<Finding>>, kept| PartMetric {
        records: findings.map(|f| Records::encode(&f).unwrap()),
        kept,
        ..PartMetric::new(Metric {
            name: name.into(),
            value: 2.0,
            findings: Vec::new(),
            findings_dropped: 0,
            counted: true,
        })
        .unwrap()
    };
    Part {
        metrics: vec![
            metric("matches", findings, kept),
            metric("files", Some(Vec::new()), 0),
        ],
        reads: vec![0],
        listings: vec![vec!["**".into()]],
        fuel: 7,
        room: 100,
    }
}

fn memo() -> Memo {
    Memo {
        identity: "id".into(),
        parts: HashMap::from([
            ("0a".to_owned(), part(Some(vec![finding(1), finding(2)]), 2)),
            ("0b".to_owned(), part(None, 2)),
            ("0c".to_owned(), part(Some(Vec::new()), 0)),
        ]),
    }
}

fn all(memo: &Memo) -> HashSet<String> {
    memo.parts.keys().cloned().collect()
}

#[test]
fn a_memo_reads_back_as_written_and_anything_else_is_a_miss() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().join(DIR);
    assert_eq!(
        read(&dir, "id"),
        Memo {
            identity: "id".into(),
            ..Memo::default()
        }
    );
    write(&dir, memo(), &all(&memo())).unwrap();
    assert_eq!(read(&dir, "id"), memo());
    assert!(read(&dir, "other").parts.is_empty());
    // A part cut short is missing; the others still read.
    let path = dir.join("0a.part");
    let bytes = std::fs::read(&path).unwrap();
    for cut in [0, 8, 20, bytes.len() - 1] {
        std::fs::write(&path, &bytes[..cut]).unwrap();
        let back = read(&dir, "id");
        assert_eq!(back.parts.len(), 2, "cut at {cut}");
        assert!(!back.parts.contains_key("0a"));
    }
    // A part of the version before (reads named by path, magic ending in 3) is missing too.
    let mut older = bytes.clone();
    older[7] = 3;
    std::fs::write(&path, &older).unwrap();
    assert!(!read(&dir, "id").parts.contains_key("0a"));
    // Only the parts a run made are written; a part of no group of it is removed.
    std::fs::write(&path, &bytes).unwrap();
    let mut next = memo();
    next.parts.remove("0c");
    next.parts
        .insert("0d".to_owned(), part(Some(vec![finding(3)]), 1));
    let made = HashSet::from(["0d".to_owned()]);
    std::fs::write(dir.join("0b.part"), b"left as it was").unwrap();
    write(&dir, next, &made).unwrap();
    let back = read(&dir, "id");
    let mut keys: Vec<&str> = back.parts.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["0a", "0d"], "0b was not rewritten, 0c was removed");
    assert!(dir.join("0b.part").exists() && !dir.join("0c.part").exists());
}
