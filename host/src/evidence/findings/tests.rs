use super::*;

// The one-pass decode the tests read a whole file back with (the library reads `Kept`).

/// One metric's findings, as stored: how many were dropped, and those kept.
#[derive(Debug, Clone, Default, PartialEq)]
struct MetricFindings {
    dropped: usize,
    findings: Vec<Finding>,
}

/// Metric name → its findings.
#[derive(Debug, Clone, Default, PartialEq)]
struct File(BTreeMap<String, MetricFindings>);

impl File {
    /// Give each of `metrics` its stored findings.
    fn fill(self, metrics: &mut [Metric]) {
        let mut by_name = self.0;
        for metric in metrics {
            if let Some(stored) = by_name.remove(&metric.name) {
                metric.findings_dropped = stored.dropped;
                metric.findings = stored.findings;
            }
        }
    }
}

/// The findings `bytes` hold, or `None` when they are damaged: decoded in one pass (a caller
/// that may need only some of them reads them as [`Kept`]).
fn decode(bytes: &[u8]) -> Option<File> {
    let mut input = Input(bytes.strip_prefix(MAGIC)?);
    let mut file = BTreeMap::new();
    for _ in 0..input.u32()? {
        let name = input.str()?.to_owned();
        let dropped = usize::try_from(input.u64()?).ok()?;
        let count = input.u32()? as usize;
        // Each finding takes at least 9 bytes: never reserve more than the input can hold.
        let mut findings = Vec::with_capacity(count.min(input.0.len() / 9));
        for _ in 0..count {
            findings.push(input.parts()?.finding());
        }
        if file
            .insert(name, MetricFindings { dropped, findings })
            .is_some()
        {
            return None;
        }
    }
    input.0.is_empty().then_some(File(file))
}

fn metric(name: &str, findings: Vec<Finding>, dropped: usize) -> Metric {
    Metric {
        name: name.into(),
        value: (findings.len() + dropped) as f64,
        findings,
        findings_dropped: dropped,
        counted: true,
    }
}

fn finding(i: u32) -> Finding {
    Finding {
        fingerprint: format!("fp{i}"),
        path: i.is_multiple_of(2).then(|| format!("src/é{i}.rs")),
        line: (!i.is_multiple_of(3)).then_some(i + 1),
        column: (!i.is_multiple_of(5)).then_some(i + 2),
        severity: [
            None,
            Some(Severity::Error),
            Some(Severity::Warning),
            Some(Severity::Note),
        ][i as usize % 4],
        message: format!("message \"{i}\"\n"),
    }
}

#[test]
fn records_cut_and_joined_make_the_file_encode_makes_of_the_same_findings() {
    let all: Vec<Finding> = (0..40).map(finding).collect();
    let (a, b) = all.split_at(15);
    let head = Records::encode(a).unwrap();
    let tail = Records::encode(b).unwrap().first(20).unwrap();
    let joined = Records::checked([head.bytes(), tail.bytes()].concat(), 35).unwrap();
    assert_eq!(joined.len(), 35);
    assert_eq!(Records::checked(joined.bytes().to_vec(), 34), None);
    let cut = joined.bytes().len() - 1;
    assert_eq!(Records::checked(joined.bytes()[..cut].to_vec(), 35), None);
    let none = Records::default();
    // The matches given as the two parts they were joined from.
    let kept = Kept::of_records(&[
        ("matches", 5, &[&head, &tail]),
        ("files", 0, &[&none]),
        ("lines", 2, &[]),
    ])
    .unwrap()
    .unwrap();
    let metrics = [
        metric("matches", all[..35].to_vec(), 5),
        metric("files", Vec::new(), 0),
        metric("lines", Vec::new(), 2),
    ];
    let encoded = encode(&metrics).unwrap().unwrap();
    assert_eq!(kept.bytes(), &encoded[..]);
    assert_eq!(Some(kept), Kept::parse(encoded));
    assert_eq!(Kept::of_records(&[("files", 0, &[&none])]).unwrap(), None);
}

#[test]
fn findings_read_back_as_written_and_damage_is_a_miss() {
    let metrics = vec![
        metric("matches", (0..50).map(finding).collect(), 3),
        metric("files", Vec::new(), 0),
        metric("lines", Vec::new(), 7),
    ];
    let bytes = encode(&metrics).unwrap().unwrap();
    let mut back: Vec<Metric> = metrics
        .iter()
        .map(|m| metric(&m.name, Vec::new(), 0))
        .collect();
    decode(&bytes).unwrap().fill(&mut back);
    for (back, metric) in back.iter_mut().zip(&metrics) {
        back.value = metric.value;
    }
    assert_eq!(back, metrics);
    assert_eq!(encode(&[metric("files", Vec::new(), 0)]).unwrap(), None);
    for cut in [0, 7, 8, 20, bytes.len() - 1] {
        assert_eq!(decode(&bytes[..cut]), None, "cut at {cut}");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert_eq!(decode(&longer), None);
    assert_eq!(decode(b"{\"matches\":{\"findings\":[]}}"), None);
    for cut in [0, 7, 8, 20, bytes.len() - 1] {
        assert_eq!(Kept::parse(bytes[..cut].to_vec()), None, "cut at {cut}");
    }
    assert_eq!(Kept::parse(longer), None);
}

#[test]
fn kept_findings_decode_as_asked_what_decode_reads_whole() {
    let findings: Vec<Finding> = (0..50).map(finding).collect();
    let metrics = vec![
        metric("matches", findings.clone(), 3),
        metric("lines", Vec::new(), 7),
    ];
    let kept = Kept::parse(encode(&metrics).unwrap().unwrap()).unwrap();
    let of = kept.of("matches");
    assert_eq!((of.len(), of.dropped()), (50, 3));
    assert_eq!(of.first(5).unwrap(), findings[..5]);
    assert_eq!(of.first(500).unwrap(), findings);
    let mut paths = Vec::new();
    assert!(of.every_path(|path| {
        paths.push(path);
        true
    }));
    let expected: Vec<Option<&str>> = findings.iter().map(|f| f.path.as_deref()).collect();
    assert_eq!(paths, expected);
    assert!(!of.every_path(|path| path != Some("src/é48.rs")));
    let lines = kept.of("lines");
    assert_eq!(
        (lines.len(), lines.dropped(), lines.first(3)),
        (0, 7, Some(vec![]))
    );
    assert!(kept.of("files").is_empty() && kept.of("files").every_path(|_| false));
    let mut filled: Vec<Metric> = ["matches", "lines", "files"]
        .map(|name| metric(name, Vec::new(), 0))
        .into();
    kept.fill(&mut filled).unwrap();
    assert_eq!(
        (
            &filled[0].findings,
            filled[0].findings_dropped,
            filled[1].findings_dropped
        ),
        (&findings, 3, 7)
    );
}
