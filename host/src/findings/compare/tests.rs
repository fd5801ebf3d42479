use std::collections::BTreeSet;

use super::*;
use crate::findings::line_map::Hunk;
use crate::findings::lines::lines;

/// Findings `(line, message)` of `path` holding `text`, each placed.
fn file(path: &str, text: &str, at: &[(u32, &str)]) -> Vec<(Finding, Option<Place>)> {
    let wanted: BTreeSet<u32> = at.iter().map(|(l, _)| *l).collect();
    let found = lines(text.as_bytes(), &wanted);
    let blob = gix::ObjectId::null(gix::hash::Kind::Sha1);
    at.iter()
        .map(|&(line, message)| {
            let finding = Finding {
                fingerprint: format!("{message}#{line}"),
                path: Some(path.into()),
                line: Some(line),
                column: None,
                severity: None,
                message: message.into(),
            };
            let place = found.get(&line).map(|&text| Place {
                path: path.into(),
                blob,
                line,
                text: Some(text),
            });
            (finding, place)
        })
        .collect()
}

fn unplaced(fingerprint: &str) -> (Finding, Option<Place>) {
    let finding = Finding {
        fingerprint: fingerprint.into(),
        path: None,
        line: None,
        column: None,
        severity: None,
        message: "somewhere".into(),
    };
    (finding, None)
}

/// A file the change left alone: lines of `TODO` and `FIXME` picked by `seed`.
fn alone(path: &str, seed: u64) -> Vec<(Finding, Option<Place>)> {
    let mut text = String::new();
    let mut at = Vec::new();
    for line in 1..=12u32 {
        let word = match (seed >> line) % 3 {
            0 => "TODO",
            1 => "FIXME",
            _ => "code",
        };
        text.push_str(&format!("// {word}\n"));
        if word != "code" {
            at.push((line, word));
        }
    }
    let at: Vec<(u32, &str)> = at.to_vec();
    file(path, &text, &at)
}

fn both(v: &[(Finding, Option<Place>)]) -> (Vec<Finding>, Vec<Option<Place>>) {
    v.iter().cloned().unzip()
}

#[test]
fn pairing_the_touched_files_only_gives_the_whole_pairing() {
    let maps_of = |touched: Vec<Hunk>| {
        let mut maps: HashMap<String, LineMap> = ["a.rs", "b.rs", "c.rs"]
            .into_iter()
            .map(|p| (p.to_owned(), LineMap::unchanged()))
            .collect();
        maps.insert("m.rs".into(), LineMap::from_hunks(touched));
        maps
    };
    // The touched file: a TODO added between two, one fixed, one moved down.
    let base_m = file(
        "m.rs",
        "// TODO\nx\n// TODO\n// FIXME\n",
        &[(1, "TODO"), (3, "TODO"), (4, "FIXME")],
    );
    let head_m = file(
        "m.rs",
        "// TODO\n// TODO\nx\n// TODO\n",
        &[(1, "TODO"), (2, "TODO"), (4, "TODO")],
    );
    let hunks = vec![
        Hunk {
            old_start: 1,
            old_len: 0,
            new_start: 2,
            new_len: 1,
        },
        Hunk {
            old_start: 4,
            old_len: 1,
            new_start: 5,
            new_len: 0,
        },
    ];
    for seed in [0x2545_f491_u64, 0x9e37_79b9, 0xdead_beef, 7, 1 << 20] {
        let (a, b, c) = (
            alone("a.rs", seed),
            alone("b.rs", seed * 3),
            alone("c.rs", !seed),
        );
        let whole = |m: &[(Finding, Option<Place>)], extra: &str| {
            let mut v = [a.clone(), m.to_vec(), b.clone(), c.clone()].concat();
            v.push(unplaced(extra));
            both(&v)
        };
        let (head_findings, head_places) = whole(&head_m, "u1");
        let (base_findings, base_places) = whole(&base_m, "u2");
        let head = Side {
            findings: &head_findings,
            places: &head_places,
        };
        let base = Side {
            findings: &base_findings,
            places: &base_places,
        };
        let (renames, maps) = (Renames::default(), maps_of(hunks.clone()));
        let expected = diff::diff(head, base, &renames, &maps);
        let mut untouched = |path: &str| path != "m.rs";
        let reduced = diff_touched(head, base, &renames, &maps, &mut untouched);
        assert_eq!(reduced, Some(expected.clone()), "seed {seed:#x}");
        assert!(!expected.new.is_empty() && !expected.fixed.is_empty());
        // A file said to be left alone whose findings differ: the whole lists are paired.
        let mut wrongly = |path: &str| path != "a.rs";
        assert_eq!(
            diff_touched(head, base, &renames, &maps, &mut wrongly),
            None,
            "seed {seed:#x}"
        );
    }
}

/// A file of `TODO`, `FIXME` and code lines picked by `seed`.
pub(in crate::findings) fn text_of(seed: u64, lines: u64) -> String {
    (1..=lines)
        .map(
            |line| match (seed ^ line).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 62 {
                0 => "// TODO\n",
                1 => "// FIXME\n",
                _ => "code\n",
            },
        )
        .collect()
}

/// `count` files named by `name`, each of 16 lines picked by `seed` and its number
/// ([`text_of`]).
pub(in crate::findings) fn seeded(
    repo: &discern_tests::TestRepo,
    seed: u64,
    count: u64,
    name: impl Fn(u64) -> String,
) {
    for f in 0..count {
        repo.write(&name(f), text_of(seed ^ (f * 0x51), 16));
    }
}

/// Every `TODO` and `FIXME` of the snapshot's files, as a pattern producer lists them,
/// and two it cannot place (no path; a path outside the snapshot).
pub(in crate::findings) fn scan(snapshot: &Snapshot) -> Vec<Finding> {
    let mut reader = snapshot.reader();
    let mut found = Vec::new();
    let paths: Vec<String> = snapshot
        .entries()
        .iter()
        .map(|e| e.path().to_string())
        .collect();
    for path in paths {
        let (_, bytes) = reader.read(&path).unwrap();
        for (i, line) in String::from_utf8_lossy(&bytes).lines().enumerate() {
            for word in ["TODO", "FIXME"].into_iter().filter(|w| line.contains(w)) {
                found.push(Finding {
                    fingerprint: format!("{word}#{path}"),
                    path: Some(path.clone()),
                    line: Some(u32::try_from(i).unwrap() + 1),
                    column: None,
                    severity: None,
                    message: word.into(),
                });
            }
        }
    }
    found.push(unplaced("u").0);
    let mut outside = unplaced("o").0;
    (outside.path, outside.line) = (Some("target/report.txt".into()), Some(1));
    found.push(outside);
    found
}

/// A baseline commit and the one measured, in a test repository, as a comparison reads them.
pub(in crate::findings) struct Commits {
    git: Repo,
    pub(in crate::findings) head: Snapshot,
    pub(in crate::findings) base: Snapshot,
    changed: Vec<String>,
    renames: Renames,
}

impl Commits {
    pub(in crate::findings) fn of(repo: &discern_tests::TestRepo, base: &str, head: &str) -> Self {
        let head_snapshot = Snapshot::open(repo.path(), head).unwrap();
        Commits {
            git: Repo::discover(repo.path()).unwrap(),
            changed: head_snapshot.changed_since(base).unwrap(),
            head: head_snapshot,
            base: Snapshot::open(repo.path(), base).unwrap(),
            renames: Renames::default(),
        }
    }

    pub(in crate::findings) fn baseline(&self) -> Baseline<'_> {
        Baseline {
            repo: &self.git,
            head: &self.head,
            snapshot: Some(&self.base),
            renames: &self.renames,
            changed: Some(&self.changed),
        }
    }
}

#[test]
fn comparing_the_touched_findings_alone_pairs_as_the_whole_comparison_does() {
    for seed in [0x2545_f491_u64, 0x9e37_79b9, 0xdead_beef, 7] {
        let repo = discern_tests::TestRepo::new();
        seeded(&repo, seed, 8, |f| format!("f{f}.rs"));
        let base_commit = repo.commit("base");
        // Two files edited (a line added in the middle; lines removed and rewritten), one
        // removed, one added.
        let f1 = text_of(seed ^ 0x51, 16);
        let (top, rest) = f1.split_at(f1.len() / 2);
        repo.write("f1.rs", format!("{top}// TODO\n{rest}"));
        let f4: Vec<String> = text_of(seed ^ (4 * 0x51), 16)
            .lines()
            .enumerate()
            .filter(|(i, _)| i % 5 != 2)
            .map(|(i, l)| match i % 7 {
                3 => format!("{l} edited\n"),
                _ => format!("{l}\n"),
            })
            .collect();
        repo.write("f4.rs", f4.concat());
        repo.remove("f6.rs");
        repo.write("g.rs", "// TODO\n// FIXME\n");
        let head_commit = repo.commit("head");
        let commits = Commits::of(&repo, &base_commit, &head_commit);
        let (head, base, baseline) = (&commits.head, &commits.base, commits.baseline());
        let (head_findings, base_findings) = (scan(head), scan(base));
        let unread = |path: &str, blob| base.entry(path).is_some_and(|e| e.id == blob);
        let mut read = ReadLines::default();
        let head_places = places(head, &head_findings, &mut read, &unread);
        let side = Side {
            findings: &head_findings,
            places: &head_places,
        };
        let whole = compare(&baseline, side, &base_findings, &mut read).unwrap();
        assert!(!whole.diff.new.is_empty() && !whole.diff.fixed.is_empty());

        let left = touched(&baseline, &head_findings, &base_findings).unwrap();
        assert!(left.head.len() < head_findings.len() / 2, "{left:?}");
        let mut read = ReadLines::default();
        let head_places = places_at(head, (&head_findings, &left.head), &mut read, &unread);
        let side = Side {
            findings: &head_findings,
            places: &head_places,
        };
        let alone = compare_touched(&baseline, side, &base_findings, &left, &mut read);
        assert_eq!(alone.unwrap().diff, whole.diff, "seed {seed:#x}");

        // A file left alone whose findings differ: no split, every finding takes part.
        let mut other = base_findings.clone();
        let i = other
            .iter()
            .position(|f| f.path.as_deref() == Some("f0.rs"))
            .unwrap();
        other[i].message = "FIXED".into();
        assert_eq!(touched(&baseline, &head_findings, &other), None);
    }
}
